"""Team reports with hostile but allowed names and numbers (the fuzz21 sweep, items 3, 6, 7, 8
and 10): what each format must still say correctly. Each test is named after the bug it pins.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import warnings
from dataclasses import replace

import pytest

from planner.reports import render

RTL = "بيانات التدريب עברית"
WIDE = "ＷＩＤＥ全角文字のジョブ名前がとても長い場合の表示確認用テキスト"


def renamed(allocation, names: dict[str, str], teams: dict[str, str] | None = None):
    """The allocation with jobs (and teams) renamed: names {old job: new job}."""
    teams = teams or {}
    jobs = [dict(j, job=names.get(j["job"], j["job"]), team=teams.get(j["team"], j["team"]))
            for j in allocation.jobs]
    by_team = {teams.get(k, k): v for k, v in allocation.by_team.items()}
    return replace(allocation, jobs=jobs, by_team=by_team)


def needs_poppler() -> None:
    if not (shutil.which("pdftoppm") and shutil.which("pdftotext")):
        pytest.skip("poppler-utils (pdftotext) not installed: apt-get install poppler-utils")


# ---- 6. CSV: a probability of exactly 1 that is not certain ------------------------------------

def test_csv_never_writes_a_deadline_probability_of_1_or_0_that_is_not_so(golden_allocation):
    chances = [1.0, 0.9999999999999999, 0.99996, 4e-5, 0.0, 0.5]
    base = golden_allocation.jobs[0]
    jobs = [dict(base, job=f"j{i}", deadline_probability=p) for i, p in enumerate(chances)]
    text = render(replace(golden_allocation, jobs=jobs), "csv").decode()
    got = [r["deadline_probability"] for r in csv.DictReader(io.StringIO(text))
           if r["kind"] == "job"]
    # as format_chance says "> 99.99%" and "< 0.01%"; only a computed 0 is 0
    assert got == ["0.9999", "0.9999", "0.9999", "0.0001", "0.0000", "0.5000"]


# ---- 8. Markdown: Mermaid comments and keywords in names ---------------------------------------

MERMAID_KEYWORD = re.compile(r"(?i)(gantt|dateformat|axisformat|tickinterval|includes|excludes|"
                             r"todaymarker|weekday|weekend|title|acc|section|click|href|call|"
                             r"inclusiveenddates|topaxis|\d{4}-\d{2}-\d{2})")


def test_mermaid_gantt_neutralises_comments_and_keywords_in_names(golden_allocation):
    alloc = renamed(golden_allocation,
                    {"pretrain-8b": "a | b `code` %% comment",
                     "eval|sweep <b>": "excludes weekends", "sft-70b": "2027-03-01 rerun"},
                    {"research": "Title of team", "product": "dateFormat x"})
    md = render(alloc, "md").decode()
    gantt = md.split("```mermaid\n", 1)[1].split("```", 1)[0].splitlines()
    tasks = [x for x in gantt if ":j" in x]
    assert len(tasks) == 3 and not any("%" in x for x in tasks), tasks
    for line in tasks:  # "  <name> :jN, <start>, <end>", the name never read as a directive
        m = re.fullmatch(r"  (.+?) :j\d, \d{4}-\d\d-\d\d \d\d:\d\d, \d{4}-\d\d-\d\d \d\d:\d\d",
                         line)
        assert m and not MERMAID_KEYWORD.match(m.group(1)), line
    assert "  a | b  code     comment :j1," in "\n".join(tasks)
    assert "  job excludes weekends :j2," in "\n".join(tasks)
    assert {x for x in gantt if "section" in x} == {"  section Title of team",
                                                    "  section dateFormat x"}


# ---- Markdown: names that GitHub would autolink ------------------------------------------------

# GitHub's extended autolinks (GFM spec, "Autolinks (extension)"): a scheme's "://", "www."
# and an e-mail address, in plain text
GFM_AUTOLINK = re.compile(r"(?i)(?:https?|ftp)://|(?<![\\\w])www\.|[\w.+-]@[\w-]+\.")


def test_markdown_names_cannot_become_bare_links(golden_allocation):
    """docs/team.md promises a job name cannot become a link: true of "[x](…)", not of a job
    named "https://evil.example/login" or "mail me@evil.example", which GitHub autolinks."""
    names = {"pretrain-8b": "https://evil.example/login", "sft-70b": "mail me@evil.example",
             "eval|sweep <b>": "WWW.evil.example"}
    md = render(renamed(golden_allocation, names, {"research": "ftp://team.example"}),
                "md").decode()
    table_lines = [x for x in md.splitlines() if x.startswith(("|", "#", "-"))]
    assert not [x for x in table_lines if GFM_AUTOLINK.search(x)]
    assert "https\\://evil.example/login" in md and "me\\@evil.example" in md
    assert "WWW\\.evil.example" in md and "ftp\\://team.example" in md


def test_markdown_shows_names_as_written_and_no_control_character(golden_allocation):
    """A job named "&amp; *b* _i_" rendered as "& b i" (an entity, two emphases); a team file
    named "evil\\x1b[31m.yaml" (the default title, and the Source line) recoloured the
    terminal the Markdown report was printed to. GFM (markdown-it, as GitHub) renders each
    name as written; "on_demand" keeps its underscore unescaped."""
    from markdown_it import MarkdownIt

    name = "&amp; *b* _i_ x_y"
    allocation = replace(renamed(golden_allocation, {"pretrain-8b": name}),
                         name="evil\x1b[31mRED\x9b", source="t/evil\x1b[31m.yaml")
    md = render(allocation, "md").decode()
    assert "\x1b" not in md and "\x9b" not in md
    assert "evil\\\\x1b\\[31mRED\\\\x9b" in md  # a visible escape, in Markdown
    assert "`t/evil\\x1b[31m.yaml`" in md  # in a code span: no escapes there
    assert "x_y" in md and "on\\_demand" not in md  # intraword "_" left as it is
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert "<em>" not in html and "&amp;amp; *b* _i_ x_y" in html
    assert "evil\\x1b[31mRED\\x9b" in html
    titled = MarkdownIt("commonmark").render(render(replace(allocation, name="team #"),
                                                   "md").decode())
    assert "<h1>GPU budget: team #</h1>" in titled  # a trailing "#" closed the heading


# ---- 10. Budget "Used" and the sign of Δ cost --------------------------------------------------

def test_budget_used_below_10_percent_keeps_a_decimal(golden_allocation):
    from planner.reports._rows import budget_rows, month_rows

    b = golden_allocation.budgets[0]
    budgets = [dict(b, used=u) for u in (0.0041, 0.0004, 0.0, 0.97, None)]
    got = [r[-1] for r in budget_rows(replace(golden_allocation, budgets=budgets))]
    assert got == ["0.4%", "< 0.1%", "0%", "97%", "—"]
    months = {"2027-03": dict(golden_allocation.by_month["2027-03"], cost_usd=2477.0,
                              budget_usd=600000.0)}
    assert month_rows(replace(golden_allocation, by_month=months))[0][4] == "0.4%"


# ---- 7. PDF Gantt chart: long names, crowded dates, no warnings --------------------------------

def test_pdf_gantt_cuts_long_names_and_keeps_its_dates_apart(golden_allocation):
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from planner.reports._charts import gantt_figure

    alloc = renamed(golden_allocation, {"pretrain-8b": "x" * 200, "eval|sweep <b>": "e" * 45,
                                        "sft-70b": "s" * 45}, {"research": "T" * 200})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # constrained_layout gave up with a UserWarning
        fig = gantt_figure(alloc)
        FigureCanvasAgg(fig).draw()
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert max(map(len, labels)) <= 40 and any(t.endswith("…") for t in labels), labels
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert max(map(len, legend)) <= 40, legend
        page = fig.bbox
        boxes = [t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()]
        assert len(boxes) >= 3
        for box in boxes + [t.get_window_extent() for t in ax.get_yticklabels()]:
            assert page.x0 <= box.x0 and box.x1 <= page.x1, (box, page)
        for a, b in zip(boxes, boxes[1:], strict=False):  # date labels never overlap
            assert not a.overlaps(b), (a, b)
        assert ax.get_legend().get_window_extent().x1 <= page.x1
        render(alloc, "pdf")  # the whole PDF too: no warning at all


# ---- 3. PDF tables: right-to-left and wide names -----------------------------------------------

def words(pdf: bytes, tmp_path) -> list[tuple[float, float, str]]:
    """(x, y, word) of every word poppler finds, where it is drawn."""
    path = tmp_path / "r.pdf"
    path.write_bytes(pdf)
    html = subprocess.run(["pdftotext", "-bbox", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout
    return [(float(x), float(y), w) for x, y, w in
            re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)"[^>]*>([^<]*)</word>', html)]


def row_of(ws, y: float) -> list[tuple[float, str]]:
    return sorted((x, w) for x, yy, w in ws if abs(yy - y) < 1.0)


def test_pdf_row_with_a_right_to_left_name_is_not_mirrored(golden_allocation, tmp_path):
    """A row whose job is Arabic/Hebrew read "2+3-" for team "-2+3" and its run backwards."""
    needs_poppler()
    pytest.importorskip("matplotlib")
    alloc = renamed(golden_allocation, {"eval|sweep <b>": RTL}, {"research": "-2+3"})
    ws = words(render(alloc, "pdf"), tmp_path)
    j = next(j for j in alloc.jobs if j["job"] == RTL)
    start, end = j["start"].split()[0], j["end"].split()[0]
    rows = [row_of(ws, y) for x, y, w in ws if w == start]
    row = next(r for r in rows if any(w == j["deadline"] for _, w in r)
               and any("2+3" in w for _, w in r))  # "Jobs: where and when"
    texts = [w for _, w in row]
    assert "-2+3" in texts, texts
    order = [texts.index(w) for w in ("-2+3", start, end, j["deadline"], j["cloud"])]
    assert order == sorted(order), texts


def test_pdf_pads_wide_names_by_display_width(golden_allocation, tmp_path):
    needs_poppler()
    pytest.importorskip("matplotlib")
    alloc = renamed(golden_allocation, {"eval|sweep <b>": WIDE})
    ws = words(render(alloc, "pdf"), tmp_path)
    starts = [x for x, _, w in ws if w == "2027-03-27"]  # the wide job's run: its table row
    others = [x for x, _, w in ws if w == "2027-03-08"]  # pretrain-8b's run, same column
    assert starts and others
    assert all(any(abs(s - o) < 1.0 for o in others) for s in starts), (starts, others)


def test_pdf_says_when_its_fonts_cannot_draw_a_name(golden_allocation, tmp_path):
    needs_poppler()
    pytest.importorskip("matplotlib")

    def text(alloc) -> str:
        path = tmp_path / "n.pdf"
        path.write_bytes(render(alloc, "pdf"))
        return subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True,
                              check=True).stdout.replace("\n", " ")

    note = "cannot draw"
    assert note not in text(golden_allocation)
    assert note not in text(renamed(golden_allocation, {"sft-70b": RTL}))  # DejaVu Sans has them
    got = text(renamed(golden_allocation, {"sft-70b": "launch 🚀"}))
    assert "some names contain characters this PDF's fonts cannot draw" in got
    assert got.count(note) == 1


def test_a_bad_mplbackend_does_not_stop_the_pdf_charts():
    # MPLBACKEND=bogus: matplotlib's import raised ValueError, a traceback after the whole
    # plan had run; the charts use no backend. A fresh process: matplotlib loads once.
    pytest.importorskip("matplotlib")
    import os
    import sys

    code = ("from planner.reports._charts import _mpl; import os; mpl, fig = _mpl(); "
            "print(fig.__name__, os.environ['MPLBACKEND'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "MPLBACKEND": "bogus"}, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split() == ["Figure", "bogus"]  # the user's setting is put back
