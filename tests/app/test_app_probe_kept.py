"""The Probes page after leaving it and coming back: an uploaded report not yet ingested was
dropped with its ingest button (Streamlit drops an unshown widget's state), without a word,
where the Plan and Team pages keep their uploads. It is kept and said so, until replaced or
removed."""

from __future__ import annotations

from ._apptest import app, assert_clean


def test_an_uploaded_report_survives_a_visit_to_another_page(probe_report):
    at = app("app_pages/probes.py")
    at.file_uploader(key="probe_file").set_value(
        ("h100.json", probe_report, "application/json")).run()
    assert [b.key for b in at.button] == ["probe_ingest"]
    at.switch_page("app_pages/plan.py").run()
    at.switch_page("app_pages/probes.py").run()
    assert_clean(at)
    assert [b.key for b in at.button] == ["probe_ingest"]
    assert any("Using h100.json, uploaded earlier" in c.value.replace("\\", "")
               for c in at.caption)
    at.button(key="probe_ingest").click().run()
    assert "Plans on H100-SXM5-80GB now use" in at.success[0].value.replace("\\", "")
