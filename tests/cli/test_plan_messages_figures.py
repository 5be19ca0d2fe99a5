"""The figures `plan` prints beside a limit never read as meeting it (audit of the plan view):

A. a probability below the minimum asked rounded up to it: P 0.8996 against 90% was "(best
   90.0%)" and "P(deadline) 90%" beside "with probability ≥ 90%";
B. a budget short by cents: "within the budget $25,381.04 (cheapest in time $25,381.04)" for a
   plan of $25,381.0407, and a "To fix" of "raise --budget" with no amount;
C. a pricing model asked with no offer under the other filters was dropped unsaid
   (`--pricing committed_1y,on_demand` planned on on_demand alone);
D. a run of seconds read in hours of scientific notation ("9e-05 (0.00013)").
"""

from __future__ import annotations

import json
import math
import re
from types import SimpleNamespace

import pytest

from planner.cli import main
from planner.cli._plan_view import _table_hours, candidate_table
from planner.search._select import _best


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _percent(text: str) -> float:
    """"89.96%" → 0.8996; "< 90%" → just below 0.9 (it says below)."""
    text = text.strip()
    value = float(text.lstrip("<> ").rstrip("%")) / 100
    return math.nextafter(value, 0) if text.startswith("<") else value


# ---- A: a probability below the minimum -------------------------------------------------

def test_best_probability_below_the_minimum_never_reads_as_it():
    assert _best(0.899579901067923, 0.9) == "89.96%"
    assert _percent(_best(0.8999999, 0.9)) < 0.9  # "< 90%": no decimals tell it apart
    assert _best(0.563, 0.9) == "56.3%" and _best(0.563) == "56.3%"  # as before
    assert _best(0.95, 0.9) == "95.0%"  # above the minimum: one decimal, as before


def _row(p: float, hours: float = 188.0, p90: float | None = None):
    offer = SimpleNamespace(cloud="aws", region="us-east-1", instance_type="p5.48xlarge",
                            pricing="on_demand", offering_class="", upfront="")
    plan = SimpleNamespace(layout=lambda: "tp1 pp1 dp8", recompute="none")
    return SimpleNamespace(offer=offer, regions=("us-east-1",), nodes=8, cost_usd=1234.5,
                           wall_clock_hours=hours, wall_clock_hours_p90=p90 or hours * 1.4,
                           deadline_probability=p, estimate=SimpleNamespace(plan=plan))


def test_table_rows_below_the_minimum_say_so():
    text = candidate_table("Cost/time frontier", [_row(0.8995799), _row(0.95)], width=None,
                           below=0.9)
    assert "89.96%" in text and " 90%" not in text, text
    # no minimum asked (--min-probability 0): whole percentages, as before
    assert " 90%" in candidate_table("t", [_row(0.8995799)], width=None)


def test_an_infeasible_probability_is_shown_below_the_minimum(capsys):
    """The audit's case: the fastest plan's P is 0.8996 against 90%."""
    argv = ("plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "263.95h",
            "--max-gpus", "64", "--pricing", "on_demand")
    code, out, err = run(capsys, *argv, "--json")
    assert code == 2
    inf = json.loads(out)["infeasible"]
    p = inf["fastest"]["deadline_probability"]
    assert 0.895 <= p < 0.9 and not inf["fastest"]["meets_deadline"], p  # the case in point
    best = re.search(r"\(best ([^)]*)\)", inf["reason"]).group(1)
    assert _percent(best) < 0.9, inf["reason"]
    code, out, err = run(capsys, *argv)
    said = " ".join(out.split())
    assert code == 2 and f"(best {best})" in said
    shown = re.search(r"fastest: .*?P\(deadline\) ([<>]? ?[0-9.]+%)", said).group(1)
    assert _percent(shown) < 0.9, said


# ---- B: a budget short by cents ---------------------------------------------------------

def test_a_need_is_rounded_up_to_the_cent_that_covers_it():
    from planner.cli._plan_view import _budget_to
    from planner.search._select import _usd_need

    assert _usd_need(25381.040754805927, 25381.04) == ("$25,381.04", "$25,381.05")
    assert _usd_need(25381.7, 25381.6) == ("$25,381.60", "$25,381.70")  # both "$25,382"
    # cents alike: the budget with the decimals that tell them apart
    assert _usd_need(25381.047, 25381.046) == ("$25,381.046", "$25,381.05")
    assert _usd_need(25381.04, 20000) == ("$20,000", "$25,381")  # whole dollars, as before
    assert _budget_to(25381.040754805927, 25381.04) == "$25,381.05"
    assert _budget_to(25381.040754805927, 20000) == "$25,382"


def test_a_budget_short_by_cents_is_told_the_cents_that_cover_the_plan(capsys):
    base = ("plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "14d")
    code, out, _ = run(capsys, *base, "--json")
    cost = json.loads(out)["recommendation"]["total_cost_usd"]
    budget, need = math.floor(cost * 100) / 100, math.ceil(cost * 100) / 100
    assert budget < cost < need  # cents short (the catalog's plan is not a whole cent)
    code, out, err = run(capsys, *base, "--budget", f"{budget:.2f}")
    said = " ".join(err.split())
    assert code == 2
    assert f"the budget ${budget:,.2f} (cheapest in time ${need:,.2f})" in said, said
    assert f"raise --budget to ${need:,.2f}" in said.split("To fix: ", 1)[1], said
    code, out, err = run(capsys, *base, "--budget", f"{need:.2f}")
    assert code == 0, err  # the amount asked for is enough


# ---- C: a pricing model asked with no offer ---------------------------------------------

def test_a_pricing_model_without_offers_is_said_in_the_notes(capsys):
    argv = ("plan", "--model", "llama2-7b", "--tokens", "300B", "--deadline", "20d",
            "--pricing", "committed_1y,on_demand", "--clouds", "gcp,azure")
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    note = next(n for n in data["notes"] if n.startswith("plans use "))
    assert note.startswith("plans use on_demand only: the catalog has no committed_1y offers")
    assert {c["pricing"] for c in data["candidates"]} == {"on_demand"}
    code, out, err = run(capsys, *argv)
    assert code == 0 and "plans use on_demand only: the catalog has no committed_1y offers" \
        in " ".join(out.split()), out


def test_a_pricing_model_kept_out_by_another_filter_names_it(capsys):
    code, out, err = run(capsys, "plan", "--model", "llama2-7b", "--tokens", "300B",
                         "--deadline", "20d", "--pricing", "reserved_1y,on_demand",
                         "--clouds", "gcp,azure", "--json")
    assert code == 0, err
    note = next(n for n in json.loads(out)["notes"] if n.startswith("plans use "))
    assert re.fullmatch(r"plans use on_demand only: no reserved_1y offer matches the other "
                        r"filters \(without --clouds: [0-9,]+ offers\)", note), note


@pytest.mark.parametrize("pricing", [(), ("--pricing", "on_demand,spot")])
def test_no_note_where_every_model_asked_has_offers(capsys, pricing):
    code, out, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1M", "--deadline",
                         "1d", *pricing, "--json")
    assert code == 0, err
    assert not [n for n in json.loads(out)["notes"] if n.startswith("plans use ")]


# ---- D: short runs in the tables --------------------------------------------------------

def test_a_table_of_seconds_says_seconds():
    from planner.cli._plan_view import _time_column

    rows = [_row(1.0, hours=7.1 / 3600, p90=10 / 3600), _row(1.0, hours=2.5e-5, p90=3.5e-5)]
    assert _time_column(rows)[1] == "seconds (P90)"
    text = candidate_table("Top", rows, width=None)
    assert "seconds (P90)" in text and "7.1 (10.0)" in text and "0.09 (0.13)" in text, text
    assert not re.search(r"\de-\d", text), text
    assert _time_column([_row(1.0, hours=0.2, p90=0.3)])[1] == "minutes (P90)"
    assert _time_column([_row(1.0, hours=1.5, p90=2)])[1] == "hours (P90)"
    assert _time_column([_row(1.0, hours=300, p90=400)])[1] == "hours (P90)"  # not days
    assert _table_hours(2e-7, 3600) == "< 0.001"  # no "7.2e-04" however small


def test_a_run_of_seconds_reads_in_seconds_in_every_table(capsys):
    code, out, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1M", "--deadline",
                         "1d")
    assert code == 0, err
    headers = [line for line in out.splitlines() if "pricing" in line and "(P90)" in line]
    assert len(headers) == 2 and all("seconds (P90)" in h for h in headers), headers
    assert not re.search(r"\d(\.\d+)?e-\d", out), out
