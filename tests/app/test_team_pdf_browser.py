"""The Team page's PDF report in a real browser: drawn when its button is clicked (a callable
``data`` of ``st.download_button``, Streamlit ≥ 1.52), not with each allocation. AppTest cannot
click a download, so only a browser shows that the click yields the PDF. The same server and
Chromium as ``test_browser.py`` (marker ``browser``; skipped without Chromium or playwright)."""

from __future__ import annotations

import pytest

from .test_browser import CHROMIUM, RENDER_S, page, server  # noqa: F401

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed "
                       "(apt-get install chromium)"),
]


def test_the_pdf_button_downloads_a_pdf_of_the_allocation(server, page, tmp_path):  # noqa: F811
    pytest.importorskip("matplotlib", reason="the PDF needs the report extra")
    page.goto(f"{server}/team")
    page.get_by_role("button", name="Run the allocation").click()
    button = page.get_by_role("button", name="Report (PDF)")
    button.wait_for(timeout=4 * RENDER_S * 1000)  # the default jobs are planned first
    with page.expect_download(timeout=4 * RENDER_S * 1000) as download:
        button.click()
    path = tmp_path / "team.pdf"
    download.value.save_as(path)
    data = path.read_bytes()
    assert download.value.suggested_filename == "gpuplan-team-report.pdf"
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF"), data[:40]
    assert len(data) > 5_000  # a report with charts, not an empty page
