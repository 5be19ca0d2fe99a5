"""`catalog info --json` never gives a negative age: GPUPLAN_TODAY=2024-01-01 on the packaged
catalog gave age_days -60 (aws -751), stale false and no note."""

from __future__ import annotations

import json

from planner.cli import main


def test_a_pinned_today_before_the_prices_gives_age_0_and_a_note(capsys, monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", "2024-01-01")
    assert main(["catalog", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["age_days"] == 0 and not info["stale"]
    assert {c: v["age_days"] for c, v in info["clouds"].items()} == {
        "aws": 0, "gcp": 0, "azure": 0}
    assert info["note"].startswith("the prices are newer than today (GPUPLAN_TODAY=2024-01-01):"
                                   " aws 2026-01-21, gcp 2025-04-01, azure 2024-03-01;")


def test_no_note_when_today_is_after_the_prices(capsys):
    assert main(["catalog", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert "note" not in info and info["age_days"] > 0


def test_the_text_says_the_note_too(capsys, monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", "2024-01-01")
    assert main(["catalog", "info"]) == 0
    assert "note: the prices are newer than today (GPUPLAN_TODAY=2024-01-01)" in \
        capsys.readouterr().out.replace("\n", " ")
