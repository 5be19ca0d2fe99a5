"""How the CLI writes a figure — durations, money, counts of GPU-hours and of expected events —
the same in `plan`, `estimate`, their notes and the app, judged on the figure as shown
(``planner.model``'s formatters; split from test_readability.py, which keeps the layout)."""

from __future__ import annotations

import re

import pytest

from planner.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_short_run_reads_in_minutes_and_fractions_not_zeros(capsys):
    """"wall-clock 0.0 h  P10–P90 0–0 h", "GPU-hours 0" for a 2-minute run, and ranges in
    whole hours beside a median with a decimal (numbers sweep, 2026-12)."""
    code, out, _ = run(capsys, "estimate", "--model", "gpt2", "--tokens", "1B", "--gpu", "B200",
                       "--gpus", "8")
    assert code == 0
    assert "0.0 h" not in out and "0–0" not in out, out
    assert re.search(r"wall-clock \(calendar\) │ \d+\.\d min  P10–P90 \d+\.\d–\d+\.\d min", out)
    assert re.search(r"GPU-hours +│ 0\.\d+  P10–P90 0\.\d+–0\.\d+", out), out

@pytest.mark.parametrize(("hours", "says"), [
    (0.001, "3.6 s"), (0.01, "36 s"), (0.0385, "2.3 min"), (1.84, "1.8 h"),
    (180.4, "180 h (7.5 d)"), (float("nan"), "—"), (59.7 / 3600, "1.0 min"),
    (0.99999, "1.0 h"), (59.4 / 3600, "59 s"), (0.9991, "59.9 min")])
def test_format_hours(hours, says):
    from planner.model import format_hours

    assert format_hours(hours) == says

@pytest.mark.parametrize(("lo", "hi", "says"), [
    (1.31, 2.58, "1.3–2.6 h"), (0.028, 0.055, "1.7–3.3 min"), (130.2, 260.7, "130–261 h"),
    (0.001, 0.002, "3.6–7.2 s"), (0.5, 0.99999, "0.5–1.0 h"), (0.004, 59.8 / 3600, "0.2–1.0 min")])
def test_format_hours_range_keeps_one_unit_and_the_median_precision(lo, hi, says):
    from planner.model import format_hours_range

    assert format_hours_range(lo, hi) == says

@pytest.mark.parametrize(("x", "says"), [(7531.2, "7,531"), (12.34, "12.3"), (0.312, "0.31"),
                                         (0.0, "0")])
def test_format_amount(x, says):
    from planner.model import format_amount

    assert format_amount(x) == says

def test_expected_interruptions_read_the_same_everywhere(capsys):
    """The plan card said "0.0 expected interruptions" and `estimate` "~9.8e-05" for a short
    run; the app "2" where the CLI said "1.7"."""
    from planner.model import format_expected

    assert [format_expected(n) for n in (0.0, 9.8e-05, 0.004, 0.04, 0.81, 1.7, 318.9)] == \
        ["< 0.01", "< 0.01", "< 0.01", "0.04", "0.81", "1.7", "319"]
    code, out, _ = run(capsys, "estimate", "--model", "gpt2", "--tokens", "1B", "--gpu", "H100")
    assert code == 0 and "(< 0.01 interruptions expected)" in out

def test_hours_read_the_same_in_estimate_plan_and_their_notes(capsys):
    """One 16 × p5.48xlarge run read "216.1 h (9.0 d)" in `estimate` beside "P10–P90 154–303
    h", "217 h (9.0 d)" on the plan card, and "deadline 336.0 h" in the notes under a title
    of "deadline 336 h (14.0 d)"."""
    code, out, _ = run(capsys, "estimate", "--model", "llama3-8b", "--tokens", "1T",
                       "--instance", "p5.48xlarge", "--nodes", "16")
    assert code == 0
    wall = next(line for line in out.splitlines() if "wall-clock (calendar)" in line)
    assert re.search(r"│ \d+ h \(\d+\.\d d\)  P10–P90 \d+–\d+ h", wall), wall
    code, out, _ = run(capsys, "plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline",
                       "14d")
    assert code == 0 and "deadline 336 h (14.0 d);" in " ".join(out.split())

def test_one_plan_reads_one_cost_everywhere(capsys):
    """A $1.54 plan read "$2" in the infeasible block and the pricing-model line beside
    "$1.54" on the next line (whole dollars in three places format_usd did not reach)."""
    code, out, _ = run(capsys, "plan", "--model", "gpt2", "--deadline", "2d", "--budget", "1")
    assert code == 2
    text = " ".join(out.split())
    cheapest = re.search(r"cheapest: .*? — [^,]+, (\$[\d.,]+);", text).group(1)
    relaxed = re.search(r"meets the deadline for (\$[\d.,]+)", text).group(1)
    assert cheapest == relaxed and re.fullmatch(r"\$\d+\.\d\d", cheapest)
    code, out, _ = run(capsys, "plan", "--model", "gpt2", "--deadline", "2d")
    assert code == 0
    assert re.search(r"Best per pricing model — spot: \$\d+\.\d\d,", " ".join(out.split()))

def test_figures_are_judged_as_shown_at_their_rounding_boundaries():
    """$99.995 read "$100.00" beside $100's "$100"; 0.999 read "1" beside 1.0's "1.0" and 99.96
    "100.0" beside 100's "100"; an expected 0.005 read "0.005" beside 0.0049's "< 0.01"; the
    app wrote -0.0 as "$-0.00"."""
    from app_pages import _format as F
    from planner.model import format_amount, format_expected, format_usd

    assert [format_usd(x) for x in (99.995, 100.0, 99.99)] == ["$100", "$100", "$99.99"]
    assert [format_amount(x) for x in (0.999, 1.0, 99.96, 100.0)] == ["1.0", "1.0", "100", "100"]
    assert [format_expected(x) for x in (0.0049, 0.005, 0.012)] == ["< 0.01", "< 0.01", "0.012"]
    from planner.model import format_hours  # 47.96 h read "48.0 h" beside "48 h (2.0 d)"

    assert [format_hours(h) for h in (47.94, 47.96, 48.0)] == ["47.9 h", "48 h (2.0 d)",
                                                              "48 h (2.0 d)"]
    assert F.duration(47.96) == F.duration(48.0) == "2.0 days"
    assert [F.usd(x) for x in (99.995, 100.0, -0.0, 0.0084)] == ["$100", "$100", "$0.00",
                                                                 "$0.0084"]

def test_seconds_are_written_one_way_in_an_estimate(capsys):
    """The step breakdown wrote "compute 1.056s" in the table whose step time read "2.108 s"."""
    code, out, _ = run(capsys, "estimate", "--model", "gpt2", "--tokens", "1B", "--gpu", "H100")
    assert code == 0
    table = " ".join(line for line in out.splitlines() if "│" in line)
    breakdown = " ".join(table.split("step breakdown")[1].replace("│", " ").split())
    assert re.search(r"compute \d+\.\d{3} s,", breakdown)
    assert not re.search(r"\d\.\d{3}s\b", out)
