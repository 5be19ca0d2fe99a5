"""The Team page's downloaded reports list the dates that have passed, as `gpuplan report`
writes them (``Allocation.date_warnings``): the page warned that a job's earliest start had
passed, but the HTML, Markdown, CSV and the PDF drawn on click left it out."""

from __future__ import annotations

import streamlit as st

from planner import reports

from ._apptest import assert_clean, everything, plain, upload_team

TODAY = "2026-12-01"
PLAN = ("jobs:\n  - name: late-start\n    team: x\n    workload: {model: gpt2, tokens: 1B}\n"
        "    earliest_start: 2026-11-20\n    deadline: 2027-01-25\n")


def test_every_download_says_the_start_has_passed(monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", TODAY)
    downloads: dict[str, object] = {}
    button = st.download_button

    def kept(label, data, *args, **kwargs):
        downloads[label] = data
        return button(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", kept)
    at = upload_team(PLAN)
    assert_clean(at)
    assert "earliest_start 2026-11-20 has passed" in plain(everything(at))  # the page said it
    for label in ("Report (Markdown)", "Report (HTML)", "Report (CSV)"):
        body = downloads[label]
        assert isinstance(body, bytes), label
        text = body.decode()
        assert "has passed" in text, label
        # in the report's words: the job, not the uploaded file's name before it
        assert "earliest_start 2026-11-20 has passed" in text, label
        assert "team.yaml: jobs[0]" not in text, label
    # the PDF, drawn on click from the kept dict: the allocation it renders has them too
    drawn = []
    real = reports.render

    def seen(allocation, fmt, *args, **kwargs):
        drawn.append(allocation)
        return real(allocation, fmt, *args, **kwargs)

    monkeypatch.setattr(reports, "render", seen)
    pdf = downloads.get("Report (PDF)")
    if pdf is not None:
        assert callable(pdf)
        assert pdf().startswith(b"%PDF-")
        assert [w for a in drawn for w in a.date_warnings if "has passed" in w], drawn
    # said once on the page, not again among the jobs' plans' warnings
    assert plain(everything(at)).count("earliest_start 2026-11-20 has passed") == 1
