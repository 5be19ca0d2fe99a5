"""The Team page draws its PDF report when its button is clicked, not with the allocation:
matplotlib took 28 s of a 500-job team's 32 s allocation (5.4 s of 6.7 s for 100 jobs), on
every allocation, whether or not anyone downloaded the PDF. The other reports take well under
a second and are still made with the allocation."""

from __future__ import annotations

import pickle
import sys

from ._apptest import app, assert_clean

LABELS = ["Report (HTML)", "Report (PDF)", "Report (Markdown)", "Report (CSV)",
          "Allocation (JSON)"]


def _team_page(monkeypatch) -> tuple:
    """The Team page with its default tables allocated; what each download button was given,
    and the list of PDF reports drawn (one entry per call of the PDF renderer)."""
    import streamlit as st

    from planner.reports import _render

    drawn: list[int] = []
    real = _render.pdf_report

    def counted(*args, **kwargs):
        drawn.append(1)
        return real(*args, **kwargs)

    downloads: dict[str, object] = {}
    button = st.download_button

    def kept(label, data, *args, **kwargs):
        downloads[label] = data
        return button(label, data, *args, **kwargs)

    monkeypatch.setattr(_render, "pdf_report", counted)
    monkeypatch.setattr(st, "download_button", kept)
    at = app("app_pages/team.py")
    at.button(key="team_run").click().run()
    assert_clean(at)
    return at, downloads, drawn


def test_an_allocation_draws_no_pdf_until_its_button_asks_for_it(monkeypatch):
    at, downloads, drawn = _team_page(monkeypatch)
    assert [b.proto.label for b in at.get("download_button")] == LABELS
    assert drawn == [], "the allocation drew the PDF report"
    at.run()  # a rerun (another widget, a visit back) draws none either
    assert_clean(at)
    assert drawn == []
    pdf = downloads["Report (PDF)"]
    assert callable(pdf), type(pdf)
    data = pdf()  # what Streamlit calls when the button is clicked
    assert isinstance(data, bytes) and data.startswith(b"%PDF-") and data.rstrip().endswith(
        b"%%EOF")
    assert drawn == [1]
    # the cheap reports are still the bytes themselves
    assert isinstance(downloads["Report (Markdown)"], bytes)
    assert downloads["Report (Markdown)"].startswith(b"# ")


def test_the_pdf_is_drawn_from_the_allocation_the_page_shows():
    """The button rebuilds the allocation from the dict the page keeps (Streamlit's cache
    pickles it): the same allocation, so the same report, not a second allocation."""
    import catalog
    from planner import reports, store
    from planner import team as teams

    text = ("jobs:\n  - name: a\n    team: x\n    workload: {model: gpt2, tokens: 1B}\n"
            "    earliest_start: 2027-01-04\n    deadline: 2027-01-25\n"
            "  - name: b\n    team: y\n    workload: {model: gpt2-medium, tokens: 2B}\n"
            "    earliest_start: 2027-02-01\n    deadline: 2027-03-01\n"
            "budgets:\n  total: 100000\n  \"2027-02\": 60000\n")
    cat = catalog.load_catalog()
    plan = teams.parse_team_plan(teams.team_yaml(text, source="t.yaml"), catalog=cat,
                                 source="t.yaml")
    allocation = teams.allocate(plan, catalog=cat, calibration=store.load_calibration(cat))
    kept = pickle.loads(pickle.dumps(allocation.as_dict()))
    rebuilt = teams.Allocation(**kept)
    assert rebuilt == allocation
    for fmt in ("md", "html", "csv"):
        assert reports.render(rebuilt, fmt) == reports.render(allocation, fmt), fmt


def test_without_matplotlib_the_pdf_is_not_offered(monkeypatch):
    """As before: a server without the report extra offers the other reports."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    at, downloads, drawn = _team_page(monkeypatch)
    assert [b.proto.label for b in at.get("download_button")] == \
        [label for label in LABELS if label != "Report (PDF)"]
    assert "Report (PDF)" not in downloads
