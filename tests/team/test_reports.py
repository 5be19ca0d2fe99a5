"""Rendered team reports: golden Markdown and CSV (UPDATE_GOLDEN=1 rewrites them), HTML that
escapes user text and references nothing outside itself, a PDF poppler can read, actuals."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from planner.reports import compare_actuals, render

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("fmt", ["md", "csv"])
def test_golden(golden_allocation, fmt):
    actuals = {"pretrain-8b": {"gpu_hours": 50000.0, "cost_usd": 70123.45}}
    for name, kwargs in ((f"team.{fmt}", {}), (f"team_actuals.{fmt}", {"actuals": actuals})):
        got = render(golden_allocation, fmt, **kwargs).decode("utf-8")
        path = GOLDEN / name
        if os.environ.get("UPDATE_GOLDEN") == "1":
            path.write_text(got, encoding="utf-8")
        assert got == path.read_text(encoding="utf-8"), (
            f"{name} changed; if intended, rerun with UPDATE_GOLDEN=1 and review the diff")


def test_markdown_escapes_table_cells(golden_allocation):
    md = render(golden_allocation, "md").decode()
    assert "eval\\|sweep &lt;b&gt;" in md
    assert "<b>" not in md


def test_html_escapes_user_text_and_is_self_contained(catalog, golden_allocation):
    from dataclasses import replace

    evil = "<script>alert(1)</script>"
    jobs = [dict(j) for j in golden_allocation.jobs]
    jobs[0]["job"] = evil
    for j in jobs:
        j["team"] = evil if j["team"] == "research" else j["team"]
    alloc = replace(golden_allocation, jobs=jobs, name=evil,
                    by_team={evil if k == "research" else k: v
                             for k, v in golden_allocation.by_team.items()})
    html = render(alloc, "html").decode()
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", html)
    assert html.count("<svg") == 2  # timeline and burn chart, inline


def test_pdf_renders_with_the_totals(golden_allocation, tmp_path):
    if not (shutil.which("pdftoppm") and shutil.which("pdftotext")):
        pytest.skip("poppler-utils (pdftoppm, pdftotext) not installed: apt-get install "
                    "poppler-utils")
    pdf = tmp_path / "team.pdf"
    pdf.write_bytes(render(golden_allocation, "pdf"))
    subprocess.run(["pdftoppm", "-r", "30", "-png", str(pdf), str(tmp_path / "page")],
                   check=True)
    assert len(list(tmp_path.glob("page*.png"))) >= 1
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    total = f"${golden_allocation.totals['cost_usd']:,.0f}"
    assert total in text
    assert "Overall" in text and "research" in text and "2025-03-01" in text


def test_same_allocation_same_bytes(golden_allocation):
    for fmt in ("md", "csv", "html"):
        assert render(golden_allocation, fmt) == render(golden_allocation, fmt)


def test_actuals_compare_per_job_and_team(golden_allocation):
    got = compare_actuals(golden_allocation, {"pretrain-8b": {"gpu_hours": 1, "cost_usd": 100}})
    job = next(r for r in got["jobs"] if r["job"] == "pretrain-8b")
    assert job["delta_cost_usd"] == pytest.approx(100 - job["planned_cost_usd"])
    team = next(r for r in got["teams"] if r["team"] == "research")
    assert team["actual_cost_usd"] == 100
    assert got["reported_jobs"] == 1


def test_unknown_format_is_a_clear_error(golden_allocation):
    from catalog import GpuplanError

    with pytest.raises(GpuplanError, match="unknown report format 'docx'.*To fix"):
        render(golden_allocation, "docx")
