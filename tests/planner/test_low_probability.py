"""A --min-probability below one half makes plans that are more likely to miss the deadline
"meet" it (hostile sweep: `--min-probability 0.01` recommended a 556 h plan for a 336 h
deadline, P 3%, with nothing said); such a plan now says so in a warning."""

from __future__ import annotations

import json

from planner.cli import main

PLAN = ("plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "14d", "--json")


def _recommendation(capsys, *extra):
    assert main([*PLAN, *extra]) == 0
    return json.loads(capsys.readouterr().out)["recommendation"]


def test_a_plan_likely_to_miss_the_deadline_it_meets_says_so(capsys):
    r = _recommendation(capsys, "--min-probability", "0.01")
    assert r["meets_deadline"] and r["deadline_probability"] < 0.5
    assert r["wall_clock_hours"] > 336
    said = [w for w in r["warnings"] if w.startswith("deadline:")]
    assert len(said) == 1 and "more likely to miss it" in said[0]
    assert "meets the 1% asked" in said[0]


def test_the_default_and_zero_say_nothing_of_it(capsys):
    for extra in ((), ("--min-probability", "0")):
        r = _recommendation(capsys, *extra)
        assert not any(w.startswith("deadline:") for w in r["warnings"])
