"""Tables read on a 390 px phone (app sweep 2026-12-07): the Top candidates table showed only
#, Cloud, Regions and Instance type (its cost, time and pricing off-screen), and the Team
result table clipped its Deadline and wrapped Run (UTC) to six lines."""

from __future__ import annotations

from ._apptest import app


def test_the_candidates_table_puts_cost_time_and_pricing_first():
    at = app(source="params", params="10M", tokens="10M", deadline="2h")
    (table,) = [d for d in at.dataframe if "regions_shown" in d.value.columns]
    assert list(table.value.columns)[:5] == [
        "rank", "total_cost_usd", "wall_clock", "pricing", "instance_type"], table.value.columns


def test_the_team_jobs_table_keeps_each_date_and_time_on_one_line(monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", "2026-12-01")
    at = app("app_pages/team.py")
    at.button(key="team_run").click().run()
    jobs = at.table[0].value
    for cell in [*jobs["Run (UTC)"], *jobs["Deadline"]]:
        # a break only around the arrow: no hyphen or space inside a date-time to wrap at
        parts = [p.strip() for p in cell.split("→")]
        assert all("-" not in p and " " not in p.replace(" \u2060", "") for p in parts), cell
        assert "\u2011" in cell, cell
