"""What applying a price overrides file notes (a rate 100× below its list price, a rate
adding an offer where the catalog sells none) went to stderr alone: `plan --json`'s notes,
`report --json` and a written report carried no trace of it. It is kept on the catalog: plan's
notes (JSON and table) list each note once, the team report's jobs warn of the note on the
price their plan uses, and stderr still says each note once."""

from __future__ import annotations

import json

import pytest
import yaml
from cli_terminal import run

import planner.cli._report_cmds  # noqa: F401  (registers `report` on the app)

CHEAP = ("prices[1]: $0.5504/h for p5.48xlarge us-east-1 on_demand is 100× below its listed "
         "$55.04/h; plans use it. If it is a typo (cents for dollars, a per-GPU or monthly "
         "figure), correct prices[1]")
NEW_REGION = "prices[2]: the catalog sells p5.48xlarge in ap-northeast-1"
OVERRIDES = ("prices:\n"
             "  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1, pricing: on_demand,"
             " usd_per_hour: 0.5504}\n"
             "  - {cloud: aws, instance_type: p5.48xlarge, region: eu-south-2, pricing: "
             "on_demand, usd_per_hour: 30}\n")
TEAM = {"name": "notes", "jobs": [
    {"name": "j1", "workload": {"model": "llama3-8b", "tokens": "20B"}, "clouds": ["aws"],
     "accelerators": ["H100"], "earliest_start": "2027-03-01", "deadline": "2027-03-20"}]}
PLAN = ("plan", "--model", "llama3-8b", "--tokens", "20B", "--deadline", "14d",
        "--cloud", "aws", "--gpu", "H100")


@pytest.fixture
def overrides(tmp_path):
    path = tmp_path / "cents.yaml"
    path.write_text(OVERRIDES, encoding="utf-8")
    return path


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_plan_json_notes_carry_each_override_note_once(capsys, overrides):
    code, out, err = run(capsys, *PLAN, "--json", "--overrides", str(overrides))
    assert code == 0
    data = json.loads(out)
    notes = [n for n in data["notes"] if n.startswith(f"{overrides}: ")]
    assert notes[0] == f"{overrides}: {CHEAP}" and notes[1].startswith(f"{overrides}: "
                                                                        f"{NEW_REGION}")
    assert len(notes) == 2 and data["catalog"]["override_notes"] == notes
    assert _flat(err).count(_flat(CHEAP)) == 1  # stderr: said once, as before


def test_plan_table_shows_the_override_notes(capsys, overrides):
    code, out, _ = run(capsys, *PLAN, "--overrides", str(overrides))
    assert code == 0 and _flat(f"{overrides}: {CHEAP}") in _flat(out)


def test_a_team_report_warns_of_the_noted_price_its_job_uses(capsys, overrides, tmp_path):
    team = tmp_path / "team.yaml"
    team.write_text(yaml.safe_dump(TEAM), encoding="utf-8")
    md = tmp_path / "r.md"
    code, _, err = run(capsys, "report", str(team), "--overrides", str(overrides),
                       "--out", str(md))
    assert code == 0
    written = md.read_text(encoding="utf-8").replace("\\", "")  # Markdown escapes [ ]
    warnings = written.split("## Warnings", 1)[1].split("## Assumptions", 1)[0]
    assert f"jobs[1] 'j1': {overrides}: {CHEAP}" in warnings
    assert written.count(CHEAP) == 1  # once, not once per section
    code, out, _ = run(capsys, "report", str(team), "--overrides", str(overrides), "--json")
    data = json.loads(out)
    assert data["jobs"][0]["warnings"] == [f"{overrides}: {CHEAP}"]  # its own price's note
    assert data["catalog"]["override_notes"][0] == f"{overrides}: {CHEAP}"  # and every note
