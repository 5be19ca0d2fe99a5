"""What `gpuplan plan` shows people beside the recommendation: which frontier plans, the
group each best plan belongs to, the reservation terms that tell plans apart, and what to
change when nothing is feasible (found by a readability review: each was misleading)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from planner.cli import main
from planner.cli._plan_view import FRONTIER_ROWS, _pricing, _table_hours, frontier_rows

LLAMA3_8B = ("plan", "--model", "llama3-8b", "--tokens", "1T")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _cand(i: int):
    return SimpleNamespace(offer=SimpleNamespace(key=("aws", "p5", "us-east-1", "spot")),
                           nodes=i)


@pytest.mark.parametrize("n,rec_at", [(84, 40), (84, 1), (84, None), (16, 7), (200, 199)])
def test_the_frontier_table_spreads_over_all_of_it_and_keeps_the_recommendation(n, rec_at):
    rows = [_cand(i) for i in range(n)]
    shown = frontier_rows(rows, rows[rec_at] if rec_at is not None else None)
    nodes = [c.nodes for c in shown]
    assert len(shown) == FRONTIER_ROWS and nodes == sorted(set(nodes))
    assert nodes[0] == 0 and nodes[-1] == n - 1  # the cheapest and the fastest
    if rec_at is not None:
        assert rec_at in nodes
    gaps = [b - a for a, b in zip(nodes, nodes[1:], strict=False)]
    assert max(gaps) <= 2 * (n - 1) / (FRONTIER_ROWS - 1) + 1  # spread, not the 15 cheapest


def test_a_short_frontier_is_shown_whole():
    rows = [_cand(i) for i in range(FRONTIER_ROWS)]
    assert frontier_rows(rows, None) == rows


def test_reservations_show_their_class_and_upfront_option_and_short_runs_a_decimal():
    reserved = SimpleNamespace(pricing="reserved_1y", offering_class="convertible",
                               upfront="all")
    spot = SimpleNamespace(pricing="spot", offering_class="", upfront="")
    assert _pricing(reserved) == "reserved_1y conv/all" and _pricing(spot) == "spot"
    assert [_table_hours(h) for h in (4.44, 4.0, 99.94, 100.4, 1448.2)] == [
        "4.4", "4.0", "99.9", "100", "1,448"]
    # below an hour two significant digits: 0.1346 h read "0.1" beside 0.0986's "0.099"
    assert [_table_hours(h) for h in (0.0986, 0.1346, 0.114, 0.5)] == [
        "0.099", "0.13", "0.11", "0.5"]


def test_a_long_frontier_says_how_much_of_it_is_shown(capsys):
    code, out, _ = run(capsys, *LLAMA3_8B, "--deadline", "14d")
    assert code == 0
    title = " ".join(out.split("Cost/time frontier", 1)[1].split("\n")[:2])
    assert f"{FRONTIER_ROWS} of its" in title and "--json lists all" in title


def test_the_best_plan_per_accelerator_names_its_accelerator(capsys):
    code, out, _ = run(capsys, *LLAMA3_8B, "--deadline", "14d", "--by", "accelerator")
    assert code == 0
    block = out.split("Best plan per accelerator", 1)[1].split("Top ", 1)[0]
    assert block.splitlines()[1].startswith("accelerator")
    for name in ("H100-SXM5-80GB", "B200-SXM-180GB"):
        assert any(line.startswith(name) for line in block.splitlines())


@pytest.mark.parametrize("extra,says,never", [
    # the probability binds: lowered, not raised
    (("--deadline", "1d"), "lower --min-probability", "raise --min-probability"),
    # a pin that only 16-GPU nodes can hold
    (("--deadline", "14d", "--tp", "16"), "change or drop the pins (--tp 16)", None),
    # the user's own GPU limit
    (("--deadline", "14d", "--max-gpus", "16"), "raise --max-gpus (now 16)", None),
])
def test_an_infeasible_plan_names_what_to_change(capsys, extra, says, never):
    code, out, err = run(capsys, *LLAMA3_8B, *extra)
    assert code == 2
    for text in (" ".join(out.split()), err):
        assert says in text
        assert never is None or never not in text
