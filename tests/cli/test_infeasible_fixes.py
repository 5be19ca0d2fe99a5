"""An infeasible plan's "To fix" offers only remedies that can work: a budget no plan fits
at any duration must be raised ("extend --deadline, raise --max-gpus" cannot lower the
cheapest cost), and where the deadline binds as well both must change — "and", not "or"
(plan-invariants sweep: 70B on 2T tokens, $100,000, 10 years or 10 days)."""

from __future__ import annotations

import pytest

from planner.cli import main


def _fix(capsys, *args) -> str:
    assert main(["plan", "--model", "llama3-70b", "--tokens", "2T", *args]) == 2
    err = " ".join(capsys.readouterr().err.split())
    return err.split("To fix: ", 1)[1]


def test_a_budget_below_every_plan_is_the_one_thing_to_change(capsys):
    fix = _fix(capsys, "--deadline", "3650d", "--budget", "100000")
    assert fix.startswith("raise --budget to $4") and "(the cheapest plan in time;" in fix, fix
    assert "--deadline" not in fix and "--max-gpus" not in fix, fix


def test_the_budget_asked_is_that_of_the_cheapest_plan_in_time(capsys):
    """At 30 days the cheapest plan at any duration ($451,711) takes 514 days: the fix asked
    for it, and that budget still failed (regression check of 2026-12-06)."""
    fix = _fix(capsys, "--deadline", "30d", "--budget", "1000")
    need = fix.split("raise --budget to ", 1)[1].split(" ", 1)[0]
    assert main(["plan", "--model", "llama3-70b", "--tokens", "2T", "--deadline", "30d",
                 "--budget", need.lstrip("$").replace(",", "")]) == 0, fix


def test_a_budget_and_a_deadline_that_both_bind_are_both_asked(capsys):
    fix = _fix(capsys, "--deadline", "10d", "--budget", "100000")
    assert fix.startswith("raise --budget to at least $"), fix
    assert ", and also extend --deadline or raise --max-gpus (now 1,024)," in fix, fix


@pytest.mark.parametrize("args,starts", [
    (("--deadline", "10d"), "extend --deadline, raise --max-gpus (now 1,024) or allow"),
    (("--deadline", "1d", "--max-gpus", "16"), "extend --deadline, raise --max-gpus (now 16)"),
])
def test_a_deadline_alone_keeps_its_fixes(capsys, args, starts):
    assert _fix(capsys, *args).startswith(starts)


def test_limits_already_at_their_largest_are_not_offered(capsys):
    """A run the fastest plan takes 13 years for, at the latest deadline and the largest
    cluster, was told to "extend --deadline, raise --max-gpus (now 65,536)": neither is
    accepted past those values (review, 2026-12-07)."""
    assert main(["plan", "--params", "1T", "--tokens", "1e15", "--deadline", "3650d",
                 "--max-gpus", "65536"]) == 2
    fix = " ".join(capsys.readouterr().err.split()).split("To fix: ", 1)[1]
    assert fix.startswith("train on fewer --tokens or a smaller model"), fix
    assert "--deadline" not in fix and "--max-gpus" not in fix, fix
