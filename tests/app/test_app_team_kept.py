"""The Team page after leaving it and coming back: Streamlit drops the state of a page's
widgets (the edited tables, the "Jobs from" choice, the uploaded file) while another page is
shown, and the page came back with the default jobs beside the result of the edited ones
("The jobs changed since this allocation"). What the user gave is kept, and the result shown
is the result of what the page shows."""

from __future__ import annotations

from ._apptest import app, assert_clean, everything, plain, upload_team
from .test_app_inputs_team import edited

TEAM = """\
jobs:
  - name: small
    workload: {model: gpt2, tokens: 1B}
    earliest_start: 2027-01-04
    deadline: 2027-01-30
"""
CONFIG = """\
jobs:
  - name: from-config
    workload: {config: my/config.json, tokens: 1B}
    earliest_start: 2027-01-04
    deadline: 2027-01-30
"""
CHANGED = "The jobs changed since this allocation"


def away_and_back(at):
    at.switch_page("app_pages/catalog.py").run()
    at.switch_page("app_pages/team.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def total(at) -> str:
    return next(m.value for m in at.metric if m.label == "Total cost")


def table_cells(at, n: int) -> list:
    """Every filled cell of the ``n``-th table on the page (the jobs editor is the first;
    a blank cell of a nullable column, pd.NA, cannot be compared with `in`)."""
    import pandas as pd

    return [v for v in at.dataframe[n].value.to_numpy().ravel().tolist() if v is not pd.NA]


def test_edited_jobs_and_their_result_survive_leaving_the_page():
    """Row 1's tokens 50B → 60B, allocated; after Catalog and back the table said 50B again
    beside the 60B result, captioned "The jobs changed since this allocation"."""
    at = app("app_pages/team.py")
    at.session_state["team_jobs"] = edited({"tokens": "60B"})
    at.run()
    at.button(key="team_run").click().run()
    cost = total(at)
    away_and_back(at)
    assert_clean(at)
    assert "60B" in table_cells(at, 0) and "50B" not in table_cells(at, 0)
    assert CHANGED not in everything(at)
    assert total(at) == cost
    at.session_state["team_jobs"] = edited({"tokens": "70B"})  # the kept table edited again
    at.run()
    assert CHANGED in everything(at)


def test_an_added_row_is_kept_once():
    """The kept table (with the added row) seeds the editor once its edits are gone: given
    with them still held, the row would be added twice."""
    at = app("app_pages/team.py")
    at.session_state["team_jobs"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"name": "extra", "model": "gpt2", "tokens": "1B", "earliest_start": "2027-01-04",
         "deadline": "2027-01-30"}]}
    at.run()
    at.button(key="team_run").click().run()
    jobs = next(m.value for m in at.metric if m.label == "Jobs")
    assert jobs == "3"
    away_and_back(at)
    at.button(key="team_run").click().run()
    assert next(m.value for m in at.metric if m.label == "Jobs") == jobs
    assert CHANGED not in everything(at)


def test_an_edited_budget_survives_leaving_the_page():
    at = app("app_pages/team.py")
    at.session_state["team_budgets"] = edited({"usd": 12_345.0})
    at.run()
    at.button(key="team_run").click().run()
    away_and_back(at)
    assert 12_345.0 in table_cells(at, 1)
    assert CHANGED not in everything(at) and at.metric


def test_an_uploaded_team_file_is_still_the_source_after_leaving_the_page():
    """The radio came back as "Edit a table" and the file was gone; an uploader cannot be given
    its file back, so the page says which file it still uses."""
    at = upload_team(TEAM, name="mine.yaml")
    cost = total(at)
    away_and_back(at)
    assert at.radio(key="team_source").value == "yaml"
    assert "Using mine.yaml, uploaded earlier" in plain(everything(at))
    assert CHANGED not in everything(at)
    assert total(at) == cost
    at.button(key="team_run").click().run()  # the kept file is used on the next run too
    assert total(at) == cost and CHANGED not in everything(at)


def test_a_removed_upload_is_not_brought_back():
    at = upload_team(TEAM)
    at.file_uploader(key="team_yaml").set_value(None).run()
    assert "Upload a team plan to allocate it." in [i.value for i in at.info]
    away_and_back(at)
    assert "Upload a team plan to allocate it." in [i.value for i in at.info]


def test_an_uploaded_config_is_kept_with_its_plan():
    """The plan was kept, but the config.json it names was asked for again."""
    from app_pages._inputs import for_upload

    at = app("app_pages/team.py")
    at.radio(key="team_source").set_value("yaml").run()
    at.file_uploader(key="team_yaml").set_value(("team.yaml", CONFIG.encode(), "text/yaml")).run()
    config = b'{"model_type": "gpt2", "n_layer": 12, "n_head": 12, "n_embd": 768, ' \
             b'"vocab_size": 50257, "n_positions": 1024}'
    at.file_uploader(key=for_upload("team_config", b"my/config.json")).set_value(
        ("config.json", config, "application/json")).run()
    at.button(key="team_run").click().run()
    assert_clean(at)
    cost = total(at)
    away_and_back(at)
    assert not at.info, [i.value for i in at.info]  # not asked for again
    assert total(at) == cost and CHANGED not in everything(at)
