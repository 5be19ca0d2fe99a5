"""Words a page passes on from elsewhere: a report made from the Team page's tables names
them as the user knows them, not by the page's internal token ("Source: `table`")."""

from __future__ import annotations

import json

from ._apptest import app, assert_clean


def test_a_report_from_the_edited_tables_names_them_as_its_source(monkeypatch):
    import streamlit as st

    downloads: dict[str, object] = {}
    button = st.download_button

    def kept(label, data, *args, **kwargs):  # what each download button would give
        downloads[label] = data.decode(errors="replace") if isinstance(data, bytes) else data
        return button(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", kept)
    at = app("app_pages/team.py")
    at.button(key="team_run").click().run()
    assert_clean(at)
    markdown = downloads["Report (Markdown)"]
    assert "Source: `the tables on the Team budget page`" in markdown, markdown[:600]
    assert "`table`" not in markdown
    assert "Source: the tables on the Team budget page;" in downloads["Report (HTML)"]
    assert json.loads(downloads["Allocation (JSON)"])["source"] == \
        "the tables on the Team budget page"
