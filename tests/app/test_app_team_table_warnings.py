"""A job's warning from the Jobs table names the table's row ("row 2 'reserved-job'"), as the
table's errors do; it said "jobs[2]", the team file's index, on a page with no file."""

from __future__ import annotations

import json

import pandas as pd

from app_pages import team
from app_pages._team_words import TABLE_SOURCE, plan_from_table

TODAY = "2026-12-01"


def _allocate(source_kind: str, payload: str, name: str) -> dict:
    return team.run_allocation.__wrapped__(source_kind, payload, name, (), (), (), TODAY)


def _rows() -> pd.DataFrame:
    row = {"earliest_start": "2027-01-04", "deadline": "2027-01-30", "team": "", "clouds": "",
           "priority": None, "max_gpus": None}
    return pd.DataFrame([{**row, "name": "small", "model": "gpt2", "tokens": "1B",
                          "pricing": ""},
                         {**row, "name": "reserved-job", "model": "gpt2-xl", "tokens": "20B",
                          "pricing": "reserved_1y"}])


def test_a_table_jobs_warning_names_its_row(monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", TODAY)
    data = plan_from_table(_rows(), pd.DataFrame({"period": [], "usd": []}))
    out = _allocate("table", json.dumps(data, default=str), TABLE_SOURCE)
    assert "error" not in out, out.get("error")
    said = [w for w in out["job_warnings"] if "commitment" in w]
    assert len(said) == 1 and said[0].startswith("row 2 'reserved-job': commitment: pays"), said
    assert "jobs[" not in " ".join(out["job_warnings"])
