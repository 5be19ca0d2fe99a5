"""Issue 17: the CLI read in a 100-column terminal. Tables fit the terminal without cutting an
essential cell or ending one in "…"; `--wide` shows every column; every option has help;
`--version` says which gpuplan this is; a usage error is one line."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_terminal import in_terminal, run, widest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from planner.cli import main
from planner.cli._app import print_json
from planner.cli._tables import (
    ESSENTIAL,
    NORMAL,
    OPTIONAL,
    Column,
    render_table,
    terminal_width,
    wrap_text,
)

# ---- the "done when" ----------------------------------------------------------------

def test_azure_h100_offers_in_a_100_column_terminal_show_the_instance_in_full():
    text = in_terminal(["offers", "--gpu", "H100", "--min-gpus", "8", "--cloud", "azure"])
    assert "Standard_ND96isr_H100_v5" in text
    assert widest(text) <= 100, max(text.splitlines(), key=cell_len)
    assert not any(line.rstrip().endswith("…") for line in text.splitlines())
    for essential in ("instance", "region", "pricing", "$/h"):
        assert essential in text.splitlines()[1]  # the header row, under the title
    assert " H100-SXM5-80GB offers" in text.splitlines()[0]  # one accelerator: in the title


@pytest.mark.parametrize("argv", [
    ["offers"],
    ["offers", "--cloud", "gcp", "--flagged", "--limit", "10"],
    ["offers", "--gpu", "H100", "--cloud", "aws", "--pricing", "reserved_3y"],
    ["gpus"],
    ["catalog", "info"],
])
def test_no_line_is_wider_than_100_columns_and_no_cell_is_cut(argv):
    text = in_terminal(argv)
    assert widest(text) <= 100, max(text.splitlines(), key=cell_len)
    assert "…" not in text


def test_reservations_keep_their_term_and_an_empty_flags_column_goes(capsys):
    # piped, the term (what tells three reservations of one instance apart) was dropped while
    # an empty flags column stayed
    code, out, _ = run(capsys, "offers", "--gpu", "H100", "--cloud", "aws", "--pricing",
                       "reserved_3y", "--limit", "10")
    assert code == 0
    header = out.splitlines()[1]
    assert "term" in header and "flags" not in header
    rows = [line.split() for line in out.splitlines()[3:13]]
    assert len({(r[1], r[2], r[6]) for r in rows}) == len(rows)  # no two rows read the same


def test_a_narrower_terminal_drops_columns_but_keeps_essential_ones_whole():
    text = in_terminal(["offers", "--gpu", "H100", "--min-gpus", "8", "--cloud", "azure"], 56)
    assert "Standard_ND96isr_H100_v5" in text and "H100-SXM5-80GB" in text
    assert widest(text) <= 56 and "--wide shows every column" in text


PLAN_ARGV = ["plan", "--model", "llama3-70b", "--tokens", "2T", "--deadline", "30d",
             "--pricing", "on_demand", "--by", "cloud"]


def _plan_rows(text: str) -> list[str]:
    """The lines of the plan tables that describe one plan each (they hold an instance count
    and a parallel layout)."""
    return [line for line in text.splitlines()
            if re.search(r"\b\d[\d,]*\s+(spot|on_demand|reserved_\w+|committed_\w+)\b", line)
            and " tp" in line]


def test_a_plan_in_a_100_column_terminal_keeps_every_plan_on_one_line():
    # multi-region candidates ("us-east-1 +3"), on_demand and seven-figure costs: the widest
    # rows the plan tables have
    text = in_terminal(PLAN_ARGV)
    assert widest(text) <= 100, max(text.splitlines(), key=cell_len)
    assert "…" not in text
    rows = _plan_rows(text)
    assert len(rows) >= 10, text
    for line in rows:  # region, instance, pricing, cost and the whole layout on the line
        assert re.search(r"tp\d+ pp\d+\S* .*dp\d+ zero\d mb\d+×\d+$", line.rstrip()), line


def test_a_piped_plan_is_laid_out_in_100_columns_and_wide_shows_recompute():
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    args = [sys.executable, "-m", "planner", *PLAN_ARGV]
    out = subprocess.run(args, capture_output=True, text=True, env=env).stdout
    assert widest(out) <= 100 and "--wide shows every column" in out
    wide = subprocess.run([*args, "--wide"], capture_output=True, text=True, env=env).stdout
    header = next(line for line in wide.splitlines() if line.startswith("cloud "))
    assert "recompute" in header and "plan" in header


def test_piped_output_is_laid_out_in_100_columns(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    out = subprocess.run([sys.executable, "-m", "planner", "offers", "--cloud", "gcp"],
                         capture_output=True, text=True, env=env, check=True).stdout
    assert widest(out) <= 100


@pytest.mark.parametrize("argv", [
    ["estimate", "--model", "llama3-70b", "--tokens", "15T", "--gpu", "H100", "--gpus", "2048"],
    ["estimate", "--list-assumptions"],
])
def test_a_piped_estimate_and_its_constants_fit_100_columns(argv):
    # they were laid out 200 wide when piped (README promises 100)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    out = subprocess.run([sys.executable, "-m", "planner", *argv], capture_output=True,
                         text=True, env=env, check=True).stdout
    assert widest(out) <= 100, max(out.splitlines(), key=cell_len)


def test_a_narrow_terminal_lists_the_constants_with_their_names_whole():
    # a 60-column table broke 'matmul_fraction.blackwell' into 'blackwe' / 'll': the name
    # --assume takes
    text = in_terminal(["estimate", "--list-assumptions"], 60)
    assert widest(text) <= 60
    assert "matmul_fraction.blackwell = " in text and "restart_minutes = " in text


def test_wide_shows_every_column(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    _, narrow, _ = run(capsys, "offers", "--gpu", "H100", "--cloud", "azure")
    _, wide, _ = run(capsys, "offers", "--gpu", "H100", "--cloud", "azure", "--wide")
    header = wide.splitlines()[1].split()
    assert {"cloud", "GPUs", "$/GPU-h", "$/PFLOP-h", "as", "of", "flags"} <= set(header)
    # every ND96isr row has a flag now (gpu_count_corrected): the flags column, left out
    # ahead of the date, is the one a 100-column table has no room for
    assert "flags" not in narrow.splitlines()[1] and "not shown in 100 columns" in narrow
    assert "not shown" not in wide


def test_columns_from_the_environment_sets_the_width(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert terminal_width() == 80 and terminal_width(wide=True) is None
    _, out, _ = run(capsys, "offers", "--gpu", "H100", "--min-gpus", "8", "--cloud", "azure")
    assert "Standard_ND96isr_H100_v5" in out and widest(out) <= 80


def test_probe_show_and_report_and_launch_fit_100_columns(capsys, monkeypatch, tmp_path):
    from probe_reports import h100_report

    from probes._report_io import report_to_json

    monkeypatch.setenv("COLUMNS", "100")
    report = tmp_path / "report.json"
    report.write_text(report_to_json(h100_report()))
    assert run(capsys, "probe", "ingest", str(report))[0] == 0
    code, out, _ = run(capsys, "probe", "show")
    assert code == 0 and "p5.48xlarge" in out and "H100-SXM5-80GB" in out
    assert widest(out) <= 100
    code, out, _ = run(capsys, "launch", "probes", "--instance", "Standard_ND96isr_H100_v5",
                       "--target", "dstack", "--nodes", "2", "--out",
                       str(tmp_path / "t.dstack.yml"))
    assert code == 0
    cost = out[out.index("Cost before launch"):out.index("Then run:")]
    assert widest(cost) <= 100 and "provisioning 5" in cost


# ---- the table helper -----------------------------------------------------------------------

COLUMNS = (Column("instance", ESSENTIAL), Column("region", ESSENTIAL),
           Column("$/h", ESSENTIAL, align="right"), Column("GPUs", align="right"),
           Column("as of", OPTIONAL), Column("flags", wrap=True))
ROWS = [("Standard_ND96isr_H100_v5", "eastus", "98.320", 8, "~2024-03-01",
         "no_spot_offer, spot_not_below_on_demand"),
        ("p5.48xlarge", "us-east-1", "55.040", 8, None, "")]


def test_optional_columns_go_first_then_long_text_wraps():
    at = {w: render_table(COLUMNS, ROWS, width=w) for w in (200, 90, 60, 40)}
    assert at[200].hidden == () and at[200].width <= 200
    assert at[90].hidden == ("as of",) and at[90].width <= 90
    assert at[60].hidden == ("GPUs", "as of") and at[60].width <= 60
    assert any(line.rstrip().endswith("no_spot_offer,") for line in at[60].lines)  # wrapped
    assert at[40].hidden == ("GPUs", "as of", "flags")
    for table in at.values():
        text = table.text
        assert "Standard_ND96isr_H100_v5" in text and "us-east-1" in text and "98.320" in text
        assert "…" not in text


def test_essential_columns_are_never_cut_even_when_they_do_not_fit():
    table = render_table(COLUMNS, ROWS, width=20)
    assert table.shown == ("instance", "region", "$/h")
    assert any("Standard_ND96isr_H100_v5" in line for line in table.lines)
    assert table.width > 20  # wider than asked, rather than shortened


def test_none_control_characters_and_markup_are_shown_as_text():
    table = render_table((Column("a", ESSENTIAL), Column("b")),
                         [(None, "\x1b[31mred[/] [bold]x")], width=None)
    assert "—" in table.lines[2] and "\\x1b[31mred[/] [bold]x" in table.lines[2]
    assert "\x1b" not in table.text


def test_a_right_aligned_column_lines_up_on_the_right():
    table = render_table((Column("n", ESSENTIAL), Column("$/h", ESSENTIAL, align="right")),
                         [("a", "1.5"), ("b", "100.25")], width=None)
    assert [line[-6:] for line in table.lines[2:]] == ["   1.5", "100.25"]


def test_a_word_longer_than_its_column_breaks_after_an_underscore():
    assert wrap_text("spot_not_below_on_demand", 16) == ["spot_not_below_", "on_demand"]
    assert wrap_text("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert wrap_text("", 5) == [""]


def test_column_rejects_a_bad_alignment():
    with pytest.raises(ValueError, match="align"):
        Column("x", align="centre")
    assert Column("x", ESSENTIAL, wrap=True).wrap is False  # essential never wraps
    assert Column("x").priority is NORMAL


cells = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(cells, cells, cells, cells), min_size=1, max_size=6),
       width=st.integers(min_value=20, max_value=160))
def test_property_essentials_whole_fits_when_it_can_never_an_ellipsis(rows, width):
    columns = (Column("name", ESSENTIAL), Column("note", wrap=True, min_width=5),
               Column("extra", OPTIONAL), Column("more"))
    table = render_table(columns, rows, width=width)
    from planner.cli._tables import clean_cell

    essentials = [clean_cell(r[0]) for r in rows]
    flat = "\n".join(table.lines)
    for name in essentials:
        for part in name.split("\n"):
            assert part.strip() == "" or part.strip() in flat
    essential_width = max(cell_len(p) for n in [*essentials, "name"] for p in n.split("\n"))
    if essential_width <= width:
        assert all(cell_len(line) <= max(width, 20) for line in table.lines)
    assert not any(line.endswith("…") for line in table.lines
                   if not any(c[i].endswith("…") for c in rows for i in range(4)))


# ---- prose and tables at a terminal's width (help and usage: test_help_and_usage.py) -------

def test_json_is_one_line_into_a_pipe_and_indented_at_a_terminal(monkeypatch):
    """A script's pipe gets compact JSON (three times faster to encode for a plan), a person
    at a terminal an indented one; both parse to the same data."""
    import io

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    data = {"plan": {"nodes": 2, "regions": ["us-east-1", "eu-north-1"]}, "x": float("nan")}
    piped, terminal = io.StringIO(), Terminal()
    for stream in (piped, terminal):
        monkeypatch.setattr("sys.stdout", stream)
        print_json(data)
    assert piped.getvalue().count("\n") == 1
    assert terminal.getvalue().count("\n") > 5 and '\n  "plan": {' in terminal.getvalue()
    assert json.loads(piped.getvalue()) == json.loads(terminal.getvalue()) == {
        "plan": {"nodes": 2, "regions": ["us-east-1", "eu-north-1"]}, "x": None}


def test_probe_ingest_wraps_a_reason_under_its_text_and_says_stored_once(capsys, monkeypatch):
    """A long "not used" reason continued at column 0 read as a new item; a report ingested
    again said "stored; calibrates nothing" beside "already stored as report 1"."""
    from pathlib import Path

    monkeypatch.setenv("COLUMNS", "80")
    report = Path(__file__).parents[1] / "probes" / "fixtures" / "hostile" / \
        "cpu_quick_report.json"
    code, first, _ = run(capsys, "probe", "ingest", str(report))
    assert code == 0 and "stored; calibrates nothing" in first
    lines = first.splitlines()
    assert widest(first) <= 80 and all(
        line.startswith(("report ", "  ", "database: ")) for line in lines), first
    at = next(i for i, line in enumerate(lines) if line.startswith("  not used:"))
    assert lines[at + 1].startswith("    ") and not lines[at + 1].startswith("     "), first
    code, again, _ = run(capsys, "probe", "ingest", str(report))
    assert code == 0 and "already stored as report 1" in again
    assert "stored;" not in again.splitlines()[0], again


def test_user_text_in_plan_and_estimate_prose_is_not_markup(capsys, monkeypatch, tmp_path):
    """An overrides path holding "[/red]" raised rich's MarkupError after the whole plan was
    shown; a config folder named "[bold]x[" lost its "[bold]" in estimate's header."""
    from pathlib import Path

    monkeypatch.setenv("COLUMNS", "100")
    folder = tmp_path / "ov[" / "red]"
    folder.mkdir(parents=True)
    overrides = folder / "o.yaml"
    overrides.write_text("discounts:\n  - {cloud: aws, percent: 8}\n")
    code, out, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline",
                         "1d", "--max-gpus", "8", "--overrides", str(overrides))
    assert code == 0 and "Traceback" not in err
    assert str(overrides) in " ".join(line.strip() for line in out.splitlines())
    config = tmp_path / "[bold]x["
    config.mkdir()
    example = Path(__file__).parents[2] / "examples" / "llama-3.2-1b" / "config.json"
    (config / "config.json").write_text(example.read_text())
    code, out, _ = run(capsys, "estimate", "--config", str(config / "config.json"),
                       "--tokens", "1B", "--gpu", "H100", "--gpus", "8")
    assert code == 0 and out.splitlines()[0].startswith("[bold]x[ "), out.splitlines()[0]


def test_plan_warnings_notes_and_banner_continue_under_their_text(capsys, monkeypatch):
    """A wrapped warning, note or catalog line continued at column 0, where the next item
    starts: each continues two columns in."""
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, "plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline",
                       "14d")
    assert code == 0
    lines = out.splitlines()
    for start in ("warning: capacity", "deadline ", "Catalog: "):
        at = next(i for i, line in enumerate(lines) if line.startswith(start))
        assert lines[at + 1].startswith("  ") and lines[at + 1].strip(), (start, lines[at + 1])


def test_a_word_wider_than_the_terminal_continues_under_its_text(capsys, monkeypatch,
                                                                  tmp_path):
    """An overrides path longer than the terminal was kept whole, and the terminal wrapped it
    at column 0, where the next item starts: it is cut to fit, each piece two columns in."""
    monkeypatch.setenv("COLUMNS", "80")
    folder = tmp_path / ("x" * 120)
    folder.mkdir()
    overrides = folder / "o.yaml"
    overrides.write_text("discounts:\n  - {cloud: aws, percent: 8}\n")
    code, out, _ = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline",
                       "1d", "--max-gpus", "8", "--overrides", str(overrides))
    assert code == 0
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Catalog: "))
    banner = [lines[at]] + list(itertools.takewhile(lambda line: line.startswith("  "),
                                                    lines[at + 1:]))
    assert all(len(line) <= 80 for line in banner), banner
    assert str(overrides) in "".join(line.strip() for line in banner), banner


def test_progress_shows_the_time_so_far(monkeypatch):
    """A team plan's solve sat at "0/1" for a minute and more with nothing moving."""
    import io

    from rich.console import Console

    from planner.cli import _app

    screen = io.StringIO()
    monkeypatch.setattr(_app, "console", lambda **kwargs: Console(
        file=screen, force_terminal=True, width=100))
    with _app.progress_on_stderr() as update:
        update("solving the team MILP", 0, 1)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())  # without the colours
    assert re.search(r"solving the team MILP ━+ 0/1 0:00:0\d", shown), shown


def test_offers_prose_continues_under_its_text(capsys, monkeypatch):
    """The flags legend and the catalog banner each continue two columns in, so a line at
    column 0 starts the next item."""
    monkeypatch.setenv("COLUMNS", "100")
    for argv, first in ((["offers", "--gpu", "H100"], "Flags: "),):
        code, out, _ = run(capsys, *argv)
        assert code == 0
        lines = out.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith(first))
        rest = lines[at + 1:]
        stop = next(i for i, line in enumerate(rest) if line.startswith("Catalog: "))
        assert stop >= 1 and all(line.startswith("  ") for line in rest[:stop]), rest[:stop]
        assert rest[stop + 1].startswith("  "), rest[stop + 1]


def test_a_huge_columns_value_does_not_stretch_the_recommendation(capsys, monkeypatch):
    # COLUMNS=100000 drew the recommendation's box 100,000 columns wide: 1.2 MB of spaces
    monkeypatch.setenv("COLUMNS", "100000")
    code, out, _ = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "1d")
    assert code == 0 and "Recommendation" in out
    box = [line for line in out.splitlines() if line.startswith(("╭", "│", "╰"))]
    assert box and max(cell_len(line) for line in box) < 300
    assert len(out) < 100_000


def test_plan_tables_keep_the_hours_and_show_the_cloud_once(capsys, monkeypatch):
    """At 60 columns the plan tables left "hours (P90)" out: the cost/time frontier was a list
    of rising costs. `--by cloud` put the group's cloud column beside the table's own
    ("cloud cloud region …"), and at 60 columns named it among the columns left out."""

    # at 60 columns the kept columns (70+ wide) are listed as "header: value" records (sweep
    # 23): every record keeps its hours, and the group's cloud is its first item, once
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "14d",
                 "--by", "cloud"]) == 0
    out = capsys.readouterr().out
    records = [line for line in out.splitlines() if line.startswith(("cloud: ", "region: "))]
    assert len(records) >= 3 and all(line.count("cloud: ") <= 1 for line in records)
    flat = " ".join(out.split())
    assert flat.count("hours (P90): ") == len(records)
    block = out[out.index("Best plan per cloud"):]
    note = " ".join(block[block.index("(not shown"):].split())
    hidden = note.split(":", 1)[1].split(";")[0]
    assert "plan" in hidden and "cloud" not in hidden
    monkeypatch.setenv("COLUMNS", "80")  # where they fit: tables, with the hours
    assert main(["plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "14d",
                 "--by", "cloud"]) == 0
    out = capsys.readouterr().out
    headers = [line.split() for line in out.splitlines()
               if line.split()[:1] in (["cloud"], ["region"]) and "pricing" in line]
    assert len(headers) >= 3  # best per cloud, top plans, frontier
    assert all("(P90)" in h for h in headers)
    per_cloud = next(h for h in headers if h[0] == "cloud")
    assert per_cloud.count("cloud") == 1
    block = out[out.index("Best plan per cloud"):]
    note = next(line for line in block.splitlines() if line.startswith("(not shown"))
    hidden = note.split(":", 1)[1].split(";")[0]
    assert "plan" in hidden and "cloud" not in hidden


def test_report_jobs_table_keeps_nodes_and_cost_at_60_columns(capsys, monkeypatch, tmp_path):
    """At 60 columns the jobs table kept a whole cluster's "$/h" and left out the nodes and
    the cost: two jobs on p5.48xlarge read as one instance type at two prices, in a budget
    report with no cost. The "wrote …" line ran on into the catalog banner, wrapped at
    column 0."""
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.chdir(tmp_path)
    team = Path(__file__).resolve().parents[2] / "examples" / "team.yaml"
    code, out, err = run(capsys, "report", str(team), "--out", "r.csv")
    assert code == 0, err
    # the kept columns are 68 wide: listed as records at 60 (sweep 23), nodes and cost kept
    records = out[out.index("job: "):out.index("(not shown")]
    assert records.startswith("job: pretrain-8b · nodes: 5 · instance: p5.48xlarge")
    assert records.count("cost $: ") == 5 and "$/h" not in records
    assert all(len(line) <= 60 for line in out.splitlines())
    first, second = err.splitlines()[:2]
    assert first.startswith("wrote r.csv: 5 jobs, $") and first.endswith("expected")
    assert second.startswith("Catalog: ")


def test_probe_show_wraps_each_note_under_itself(capsys, monkeypatch, tmp_path):
    """`probe show` at 80 columns wrapped "Used by the planner" items at column 0
    ("…; p10 4,235.0, p90 ⏎4,241.5"): a continuation read as another item (ingest
    already hung them)."""
    root = Path(__file__).resolve().parents[2]
    report = root / "benchmarks" / "data" / "gpu_check_h200_2026-12-04" / "probe-report.json"
    monkeypatch.setenv("COLUMNS", "80")
    assert run(capsys, "probe", "ingest", str(report))[0] == 0
    for argv in (("probe", "show"), ("probe", "show", "1")):
        code, out, _ = run(capsys, *argv)
        assert code == 0
        notes = out[out.index("Used by the planner:"):].splitlines()[1:]
        assert len(notes) > 4 and widest(out) <= 80
        assert all(line.startswith("  ") or line in ("Not used:",) for line in notes
                   if line and not line.startswith("Catalog")), notes


def test_min_probability_0_titles_the_expected_time_not_a_probability(capsys):
    """`--min-probability 0` (the expected time must meet the deadline, no probability asked)
    was titled "P ≥ 0%"."""
    code, out, _ = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "3h",
                       "--min-probability", "0")
    assert code == 0 and "Recommendation (deadline 3.0 h, expected time within it)" in out
    code, out, _ = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "3h")
    assert code == 0 and "Recommendation (deadline 3.0 h, P ≥ 90%)" in out


def test_an_infeasible_plan_wraps_its_reason_and_fix_under_themselves(capsys, monkeypatch):
    """The reason and the "To fix:" line ran on at column 0 at 80 columns (a continuation
    read as another item), and the reason said "331.5 h" beside a block of "331 h (13.8 d)"."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "plan", "--model", "llama3-70b", "--tokens", "2T", "--deadline",
                       "2d", "--budget", "10000")
    assert code == 2
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("infeasible: "))
    fix = next(i for i, line in enumerate(lines) if line.startswith("To fix: "))
    assert all(line.startswith("  ") for line in lines[start + 1:fix])
    assert lines[fix + 1].startswith("  ")  # the fix's own continuation
    reason = " ".join(" ".join(lines[start:fix]).split())
    assert "within 48 h (2.0 d)" in reason  # the figures as the block writes them:
    assert re.search(r"the fastest takes [\d,]+ h \(\d+\.\d d\)", reason)  # "331 h (13.8 d)"


def test_a_stderr_console_takes_the_width_of_stderr(monkeypatch):
    """`gpuplan probe workload … --print-command > run.sh` wrapped its stderr note at 200
    columns on an 80-column terminal: the width came from whether stdout was a terminal."""
    from planner.cli import _app

    monkeypatch.setattr(_app, "_is_terminal", lambda stream: stream is sys.stderr)
    monkeypatch.delenv("COLUMNS", raising=False)
    assert _app.console(stderr=True).width != 200  # the terminal's (rich measures it)
    assert _app.console().width == 200  # stdout, redirected


def test_probe_show_id_wraps_its_header_rows_under_the_values(capsys, monkeypatch, tmp_path):
    """`probe show 1` at 60 columns broke "measured … ingested ⏎2026-…" and a long file path
    back to column 0."""
    root = Path(__file__).resolve().parents[2]
    report = root / "benchmarks" / "data" / "gpu_check_h200_2026-12-04" / "probe-report.json"
    deep = tmp_path / ("a-long-folder-name-for-a-report-" * 3) / "probe-report.json"
    deep.parent.mkdir()
    deep.write_bytes(report.read_bytes())
    monkeypatch.setenv("COLUMNS", "60")
    assert run(capsys, "probe", "ingest", str(deep))[0] == 0
    code, out, _ = run(capsys, "probe", "show", "1")
    assert code == 0
    head = out[:out.index("Measured:")].splitlines()
    labels = ("report ", "measured ", "accelerator ", "on ", "file ")
    assert all(line.startswith(labels) or line.startswith(" " * 13) for line in head), head
    assert all(len(line) <= 60 for line in head)
    assert any(line.startswith("file ") for line in head)
