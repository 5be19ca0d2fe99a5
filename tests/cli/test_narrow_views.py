"""What a narrow terminal must still show: the column `offers --sort` orders by, prose
wrapped at the terminal's width beside a wider table, numbers beside their units in
`estimate`; and `plan` saying which probe measurements its recommendation used."""

from __future__ import annotations

import re

import pytest
from cli_terminal import in_terminal, run, widest
from probe_reports import h100_report
from rich.cells import cell_len

from planner.cli._tables import ESSENTIAL, OPTIONAL, Column, render_table
from probes import write_report_atomic

SORT_COLUMN = {"gpu_price": "$/GPU-h", "pflop_price": "$/PFLOP-h"}


def _number(cell: str) -> float:
    return float(cell.rstrip("*").replace(",", ""))


@pytest.mark.parametrize("sort", ["gpu_price", "pflop_price"])
def test_offers_at_80_columns_keep_the_column_they_are_sorted_by(capsys, monkeypatch, sort):
    # it left $/GPU-h (and $/PFLOP-h) out at 80 columns: the $/h shown read as unsorted
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "offers", "--gpu", "H100", "--sort", sort, "--limit", "8")
    assert code == 0
    lines = out.splitlines()
    header = next(n for n, line in enumerate(lines) if "instance" in line.split())
    heads = lines[header].split()
    assert SORT_COLUMN[sort] in heads, lines[header]
    assert all(cell_len(line) <= 80 for line in lines[:header + 10])
    note = " ".join(line for line in lines if "not shown in" in line or "every column)" in line)
    assert SORT_COLUMN[sort] not in note
    # the column shown is the one in order (right-aligned: its cells end where its header does)
    end = lines[header].index(SORT_COLUMN[sort]) + len(SORT_COLUMN[sort])
    values = [_number(row[:end].split()[-1]) for row in lines[header + 2:header + 10]]
    assert values == sorted(values), values


def test_a_table_wider_than_the_terminal_wraps_its_title_and_note_at_the_terminal():
    # essential columns 68 wide at 60 columns: the caption and the note ran to 68 too
    columns = (Column("instance", ESSENTIAL), Column("region", ESSENTIAL),
               Column("price", ESSENTIAL, align="right"), Column("as of", OPTIONAL))
    rows = [("p6-b200.48xlarge-" + "x" * 20, "ap-southeast-3-extra", "1,234.567", "2026-01-21")]
    title = "Cost/time frontier (no plan is both cheaper and faster; 15 of its 84 plans)"
    table = render_table(columns, rows, width=60, title=title)
    assert table.hidden == ("as of",) and table.width > 60  # the row itself stays whole
    prose = [line for line in table.lines if not line.startswith(("instance", "─", "p6-"))]
    assert len(prose) > 2 and all(cell_len(line) <= 60 for line in prose), prose
    assert " ".join(prose).startswith(title)
    assert "(not shown in 60 columns: as of; --wide shows every column)" in " ".join(prose)


UNIT = re.compile(r"(h|d|s|GiB|GB/s|TFLOP/s)\b")


@pytest.mark.parametrize("columns", ["45", "60", "70"])
def test_estimate_keeps_numbers_beside_their_units(capsys, monkeypatch, columns):
    # at 60 columns "P10–P90 382–751" ended a line and "h" began the next; "0.000" then "s"
    monkeypatch.setenv("COLUMNS", columns)
    code, out, _ = run(capsys, "estimate", "--model", "llama3-8b", "--gpu", "H100",
                       "--no-calibration")
    assert code == 0
    cells = [line.split("│") for line in out.splitlines() if line.count("│") == 3]
    assert len(cells) > 10
    for _, label, value, _ in cells:
        assert not (label.strip() == "" and UNIT.match(value.strip())), value
    flat = " ".join(value.strip() for _, _, value, _ in cells)
    assert re.search(r"tp comm 0\.\d+ s", flat) and re.search(r"\d+–\d+ h", flat)


def test_plan_says_which_measurements_its_recommendation_used(capsys, tmp_path):
    # --json listed recommendation.calibration, the text said nothing of a measurement that
    # changed the recommendation
    path = write_report_atomic(h100_report(bf16_tflops=600.0), tmp_path / "report.json")
    assert run(capsys, "probe", "ingest", str(path))[0] == 0
    argv = ("plan", "--model", "llama3-8b", "--tokens", "100B", "--deadline", "14d", "--gpu",
            "H100")
    code, out, _ = run(capsys, *argv)
    assert code == 0
    flat = " ".join(out.split())
    assert "Measured on your instances (`gpuplan probe show`; --no-calibration to ignore)" \
        in flat
    assert "matmul bf16: measured 600.0 TFLOP/s instead of the datasheet default 792.6" in flat
    # under the recommendation, before the tables
    assert flat.index("Measured on your instances") < flat.index("Top ")
    code, out, _ = run(capsys, *argv, "--no-calibration")
    assert code == 0 and "Measured on your instances" not in out


def test_a_dumb_terminal_gets_prose_and_boxes_at_its_own_width():
    """With TERM=dumb rich laid the Recommendation box and the notes out at 80 columns in a
    40-column terminal, where the tables fitted (hostile sweep, 2026-12-08)."""
    shown = in_terminal(["plan", "--model", "gpt2", "--tokens", "1B", "--top", "2"], columns=40,
                        term="dumb")
    assert "Recommendation" in shown and widest(shown) <= 40, shown
