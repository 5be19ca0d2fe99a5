"""A plan's checkpoint storage is said: it was in ``total_cost_usd`` but no field or line
named it, so the cost read as more than $/h × hours for no reason ($12,436.60 against
$80.59/h × 154.31 h = $12,435.51)."""

from __future__ import annotations

import json

import pytest

from planner.cli import main

PLAN = ["plan", "--model", "llama3-8b", "--tokens", "500B", "--deadline", "10d"]


def test_the_storage_is_the_gap_between_the_cost_and_rate_times_hours(capsys):
    assert main([*PLAN, "--checkpoint-storage-usd-per-gb-month", "0.023", "--json"]) == 0
    plans = json.loads(capsys.readouterr().out)["candidates"]
    for p in plans:
        if p["commitment"] is None:
            rate_times_hours = p["usd_per_hour_cluster"] * p["wall_clock_hours"]
            assert p["checkpoint_storage_usd"] > 0
            assert p["total_cost_usd"] == pytest.approx(
                rate_times_hours + p["checkpoint_storage_usd"], rel=1e-12)


def test_without_a_storage_price_it_is_null(capsys):
    assert main([*PLAN, "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["recommendation"]
    assert rec["checkpoint_storage_usd"] is None


def test_the_cost_line_says_it(capsys):
    assert main([*PLAN, "--checkpoint-storage-usd-per-gb-month", "0.023"]) == 0
    assert "checkpoint storage" in " ".join(capsys.readouterr().out.split())


def test_a_storage_below_a_cent_is_said_as_such(capsys):
    """A gpt2 run's storage read "+ $9.3e-06 checkpoint storage"."""
    assert main(["plan", "--model", "gpt2", "--tokens", "1B", "--gpu", "H100", "--max-gpus",
                 "8", "--top", "1", "--checkpoint-storage-usd-per-gb-month", "0.023"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "+ < $0.01 checkpoint storage" in out and "e-0" not in out
