"""The Jobs table has a commitment_use column (app sweep 2026-12-07): a row priced
reserved_1y warned about the job's commitment_use 0%, which the table could not set."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd

from app_pages import team
from app_pages._team_words import TABLE_SOURCE, plan_from_table

from ._apptest import app

TODAY = "2026-12-01"


def _reserved(use) -> pd.DataFrame:
    jobs = team.default_jobs(dt.date.fromisoformat(TODAY)).iloc[:1].copy()
    jobs["pricing"] = "reserved_1y"
    jobs["commitment_use"] = use
    return jobs


def _warnings(jobs: pd.DataFrame) -> list[str]:
    data = plan_from_table(jobs, pd.DataFrame({"period": [], "usd": []}))
    out = team.run_allocation.__wrapped__("table", json.dumps(data, default=str),
                                          TABLE_SOURCE, (), (), (), TODAY)
    assert "error" not in out, out.get("error")
    return [w for w in out["job_warnings"] if "commitment" in w]


def test_the_jobs_table_offers_commitment_use():
    at = app("app_pages/team.py")
    assert not at.exception, [e.value for e in at.exception]
    assert "commitment_use" in team.default_jobs(dt.date.fromisoformat(TODAY)).columns


def test_a_rows_commitment_use_reaches_its_plan(monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", TODAY)
    assert any("commitment_use 0%" in w for w in _warnings(_reserved(None)))
    half = _warnings(_reserved(0.5))
    assert half and all("commitment_use 0%" not in w for w in half), half
    assert any("commitment_use 50%" in w for w in half), half
