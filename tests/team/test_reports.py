"""Rendered team reports: golden Markdown, CSV and HTML (UPDATE_GOLDEN=1 rewrites them), HTML
that escapes user text, references nothing outside itself and draws its charts as SVG without
matplotlib, a PDF poppler can read, actuals."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from planner.reports import compare_actuals, render

GOLDEN = Path(__file__).parent / "golden"
SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("fmt", ["md", "csv", "html"])
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
    gantt, _ = charts(html)  # job and team names are text in the timeline too, never markup
    assert evil in chart_texts(gantt) and f"team {evil}" in chart_texts(gantt)


def charts(html: str) -> list[ET.Element]:
    """The report's inline SVG charts, parsed as XML (so each is well formed)."""
    return [ET.fromstring(m) for m in re.findall(r"<svg .*?</svg>", html, flags=re.S)]


def chart_texts(svg: ET.Element) -> list[str]:
    """Every piece of text a chart shows or gives as a tooltip."""
    return ["".join(e.itertext()) for e in svg.iter()
            if e.tag in (f"{SVG_NS}text", f"{SVG_NS}title")]


def test_html_charts_have_axes_with_units(golden_allocation):
    gantt, burn = charts(render(golden_allocation, "html").decode())
    texts = chart_texts(gantt)
    assert "date (UTC)" in texts
    dates = [t for t in texts if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t)]
    assert len(dates) >= 3 and dates == sorted(dates), texts
    for j in golden_allocation.jobs:  # each job has its row label and a tooltip with its run
        assert j["job"] in texts
        assert any(t.startswith(f"{j['job']} (team {j['team']}): runs {j['start']} → "
                                f"{j['end']} UTC") for t in texts), texts
    assert {"team research", "team product", "deadline"} <= set(texts)
    texts = chart_texts(burn)
    assert "USD per month" in texts and "cumulative USD" in texts
    ticks = [t for t in texts if re.fullmatch(r"\$[0-9.,]+[kMB]?", t)]
    assert "$0" in ticks and len(ticks) >= 6, texts
    for month, v in golden_allocation.by_month.items():
        assert month in texts
        assert f"${v['cost_usd']:,.0f}" in texts  # the bar's value, as the tables write it
    assert "monthly budget (left axis)" in texts  # 2027-03 has a monthly budget
    assert any(t.startswith("2027-03: $48,480 planned of a $50,000 budget") for t in texts)


def test_html_charts_stay_readable_with_many_jobs(golden_allocation):
    """50 jobs over a year with long names: one row each, names cut to the label column with
    the full name in the tooltip, at most one date tick per ~90 px."""
    base = golden_allocation.jobs[0]
    jobs = []
    for i in range(50):
        start = dt.datetime(2027, 1, 4) + dt.timedelta(days=7 * i)
        jobs.append(dict(base, job=f"job-{i:02d}-" + "x" * (60 if i % 5 == 0 else 4),
                         earliest_start=f"{start:%Y-%m-%d}",
                         deadline=f"{start + dt.timedelta(days=40):%Y-%m-%d}",
                         start=f"{start + dt.timedelta(days=2):%Y-%m-%d %H:%M}",
                         end=f"{start + dt.timedelta(days=20):%Y-%m-%d %H:%M}"))
    alloc = replace(golden_allocation, jobs=jobs)
    gantt, _ = charts(render(alloc, "html").decode())
    texts = chart_texts(gantt)
    labels = [t for t in texts if t.startswith("job-") and " (team " not in t]
    assert len(labels) == 50
    assert any(t.endswith("…") for t in labels)
    assert all(any(t.startswith(j["job"] + " (team ") for t in texts) for j in jobs)
    dates = [t for t in texts if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t)]
    assert 3 <= len(dates) <= 10, dates
    assert float(gantt.get("height")) >= 50 * 20


def test_html_report_never_imports_matplotlib():
    """The HTML report (and the team planner behind it) draws its charts itself: rendering it
    in a fresh process must not import matplotlib, whose import alone cost more than the
    whole report."""
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from conftest import CATALOG_INFO, golden_candidates, team_dict\n"
        "from catalog import load_catalog\n"
        "from planner.team import allocate_candidates, parse_team_plan\n"
        "from planner.reports import render\n"
        "plan = parse_team_plan(team_dict(), catalog=load_catalog(), source='golden.yaml')\n"
        "a = allocate_candidates(plan, golden_candidates(), catalog_info=CATALOG_INFO)\n"
        "for fmt in ('html', 'md', 'csv'):\n"
        "    assert render(a, fmt)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout


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
    # the PDF too (no dates, no random ids), where matplotlib is installed
    pytest.importorskip("matplotlib")
    assert render(golden_allocation, "pdf") == render(golden_allocation, "pdf")


def test_actuals_compare_per_job_and_team(golden_allocation):
    got = compare_actuals(golden_allocation, {"pretrain-8b": {"gpu_hours": 1, "cost_usd": 100}})
    job = next(r for r in got["jobs"] if r["job"] == "pretrain-8b")
    assert job["delta_cost_usd"] == pytest.approx(100 - job["planned_cost_usd"])
    team = next(r for r in got["teams"] if r["team"] == "research")
    assert team["actual_cost_usd"] == 100
    assert got["reported_jobs"] == 1


def _dollars(cell: str) -> float | None:
    return None if cell == "—" else float(cell.replace("$", "").replace(",", ""))


def test_estimate_vs_actual_delta_is_actual_minus_planned_on_every_row(golden_allocation):
    """The team and Total rows' planned figures cover the jobs that reported, as their Δ does:
    the Total row read $81,200 planned, $70,123 actual and Δ +$6,123."""
    from planner.reports._rows import actual_rows

    got = compare_actuals(golden_allocation, {"pretrain-8b": {"gpu_hours": 50000,
                                                              "cost_usd": 70123.45}})
    rows = {r[0]: r for r in actual_rows(got)}
    for label, row in rows.items():
        planned, actual, delta = (_dollars(c) for c in row[3:6])
        if delta is not None:
            assert actual - planned == pytest.approx(delta, abs=1), (label, row)
    assert rows["Total (1 of 3 jobs reported)"][1:6] == ["51,200", "50,000", "$64,000",
                                                        "$70,123", "+$6,123"]
    assert rows["team research (1 of 2 jobs reported)"][3] == "$64,000"
    assert rows["team product (0 of 1 job reported)"][1:] == ["—"] * 6
    everyone = {j["job"]: {"gpu_hours": 1, "cost_usd": 100} for j in golden_allocation.jobs}
    labels = [r[0] for r in actual_rows(compare_actuals(golden_allocation, everyone))]
    assert labels[-3:] == ["team product", "team research", "Total"]  # all reported


def test_the_deadline_probability_is_described_with_the_model_range(golden_allocation):
    line = next(x for x in golden_allocation.assumptions if "likely to finish" in x)
    assert "(Poisson interruptions) were considered" not in line
    assert "includes the model's log-normal range as well as Poisson interruptions" in line


def test_unknown_format_is_a_clear_error(golden_allocation):
    from catalog import GpuplanError

    with pytest.raises(GpuplanError, match="unknown report format 'docx'.*To fix"):
        render(golden_allocation, "docx")


def test_the_json_total_says_what_its_delta_compares_with(golden_allocation):
    # delta_cost_usd compared the reported jobs' plan, while planned_cost_usd was every job's
    from planner.reports import compare_actuals

    alloc = golden_allocation
    first = alloc.jobs[0]
    total = compare_actuals(alloc, {first["job"]: {"gpu_hours": 1.0, "cost_usd": 100.0}})["total"]
    assert total["jobs"] == len(alloc.jobs) > 1 and total["reported_jobs"] == 1
    assert total["planned_cost_usd_reported"] == first["cost_usd"] < total["planned_cost_usd"]
    assert total["delta_cost_usd"] == 100.0 - total["planned_cost_usd_reported"]
