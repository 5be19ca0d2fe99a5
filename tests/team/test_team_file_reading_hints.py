"""Reading a team file: a 5,000-job file is refused in about the time PyYAML's C loader reads
it (it was parsed for 10–16 s first), a .json team file's syntax errors say JSON, and a name
YAML read as true/false is told the words that read so, not the number example "1e3"."""

from __future__ import annotations

import pytest
import yaml
from time_limit import cpu_ratio

from planner.team import TeamPlanError, load_team_plan

PLAN = """name: {name}
jobs:
  - name: a
    workload: {{model: gpt2, tokens: 2B}}
    earliest_start: 2027-03-01
    deadline: 2027-04-01
"""




def _error(source, catalog) -> str:
    with pytest.raises(TeamPlanError) as info:
        load_team_plan(source, catalog=catalog)
    message = str(info.value)
    assert "\n" not in message and "To fix" in message, message
    return message


@pytest.mark.parametrize(("word", "words"), [
    ("off", '"off" or "no"'), ("no", '"off" or "no"'), ("yes", '"on" or "yes"'),
    ("On", '"on" or "yes"'),
])
def test_a_name_read_as_a_boolean_is_told_the_words(catalog, word, words):
    message = _error(PLAN.format(name=word), catalog)
    assert "team.yaml: name: expected a non-empty string" in message
    assert f"write the name in quotes, e.g. {words}" in message and "1e3" not in message
    assert ("off, no and false" if word.lower() in ("off", "no") else "on, yes and true") \
        in message, message


def test_a_name_read_as_a_number_keeps_the_number_example(catalog):
    assert 'YAML read it as a number: write the name in quotes, e.g. "1e3"' in _error(
        PLAN.format(name="1e3"), catalog)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml")
def test_5000_jobs_are_refused_quickly(catalog):
    """Refused after 6–9 s of CPU in the pure-Python YAML parser (10–16 s of wall time on a
    busy machine); now in about the time PyYAML's CSafeLoader takes to read the file (under a
    second, seconds measured as a ratio to hold on a busy machine)."""
    job = ("  - name: job-{i:05d}\n    workload: {{model: llama3-8b, tokens: 1T}}\n"
           "    earliest_start: 2027-03-01\n    deadline: 2027-04-15\n    team: research\n")
    text = "jobs:\n" + "".join(job.format(i=i) for i in range(5_000))
    assert "5,000 jobs; at most 500 are allowed in one plan" in _error(text, catalog)
    ours, reference = cpu_ratio(lambda: _error(text, catalog),
                                lambda: yaml.load(text, Loader=yaml.CSafeLoader))  # noqa: S506
    assert ours < 3 * reference, (ours, reference)


@pytest.mark.parametrize(("text", "says"), [
    ('{"jobs": ' + "[" * 40 + "]" * 40 + "}",
     "invalid JSON at line 1, column 41: nesting deeper than 32 levels. To fix: nest at most "
     "32 levels."),
    ('{"jobs": [{"name": "a",, }]}', "invalid JSON at line 1, column 24"),
    ('{"jobs": [{"name": "a", "priority": ' + "1" * 45 + "}]}",
     "a 45-digit number (at most 40 digits). To fix: write a smaller number."),
])
def test_a_json_team_file_says_json_and_the_fix_of_its_limit(tmp_path, catalog, text, says):
    path = tmp_path / "team.json"
    path.write_text(text)
    message = _error(path, catalog)
    assert message.startswith(f"{path}: ") and says in message, message
    assert "YAML at" not in message and "quote values" not in message, message
