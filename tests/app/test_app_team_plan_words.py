"""The Team page's messages about a team plan name what is in the plan: its ``overrides:``
entry (not the GPUPLAN_OVERRIDES file or a CLI command), a non-UTF-8 file's byte value and
offset (as the CLI), and a file's name once."""

from __future__ import annotations

from ._apptest import errors, upload_team

PLAN = """name: t
overrides: /etc/passwd
jobs:
  - name: j1
    team: a
    workload: {model: llama3-8b, tokens: 100B}
    earliest_start: 2027-03-01
    deadline: 2027-04-15
"""


def test_a_plans_overrides_error_names_its_overrides_entry():
    at = upload_team(PLAN)
    said = errors(at)
    assert said, said
    assert "GPUPLAN_OVERRIDES" not in said[0] and "gpuplan" not in said[0], said
    assert "overrides" in said[0], said


def test_a_non_utf8_plan_says_the_byte_and_where():
    """It said "not UTF-8 text (byte 0)": the offset alone, called the byte."""
    from ._apptest import app

    at = app("app_pages/team.py")
    at.radio(key="team_source").set_value("yaml").run()
    at.file_uploader(key="team_yaml").set_value(("team.yaml", b"\xb7name: t\n",
                                                 "text/yaml")).run()
    assert not at.exception
    said = errors(at)
    assert said and "byte 0xb7 at byte offset 0, line 1" in said[0], said


SAME = """name: t
jobs:
  - name: j0
    team: a
    workload: {config: same.json, tokens: 1B}
    earliest_start: 2027-03-01
    deadline: 2027-04-15
"""


def test_a_binary_config_is_named_once():
    """It said "same.json: model config same.json: …"."""
    from app_pages._inputs import for_upload

    from ._apptest import app

    at = app("app_pages/team.py")
    at.radio(key="team_source").set_value("yaml").run()
    at.file_uploader(key="team_yaml").set_value(("team.yaml", SAME.encode(), "text/yaml")).run()
    at.file_uploader(key=for_upload("team_config", b"same.json")).set_value(
        ("same.json", b"\x00\x01\x02\xff\xfe binary", "application/json")).run()
    at.button(key="team_run").click().run()
    assert not at.exception
    said = errors(at)
    assert said and said[0].count("same.json") == 1, said
