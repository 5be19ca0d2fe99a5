"""A GPU report whose GPU the catalog does not know opens with no "Catalog accelerator"
chosen, and ingesting it then fails ("cannot tell which catalog accelerator … is"). The caption
above the button said "Ingesting stores the report; plans on this accelerator then use …" with
no accelerator chosen; it now says to choose one first."""

from __future__ import annotations

from ._apptest import app, plain


def _unknown_gpu_report() -> bytes:
    from probe_reports import h100_report

    from probes import report_to_json

    report = h100_report(gpu_model="Mystery GPU 9000", instance_type=None)
    return report_to_json(report).encode()


def _captions(at) -> str:
    return "\n".join(plain(c.value) for c in at.caption)


def test_a_report_of_an_unknown_gpu_says_to_choose_its_accelerator_first():
    at = app("app_pages/probes.py")
    at.file_uploader(key="probe_file").set_value(
        ("r.json", _unknown_gpu_report(), "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    (box,) = at.selectbox
    assert box.value is None
    said = _captions(at)
    assert ("Choose the report's GPU in “Catalog accelerator” above first: the catalog does "
            "not know “Mystery GPU 9000” by name") in said, said
    assert "plans on this accelerator then use" not in said, said
    # and so it is: ingesting now is refused for want of it
    at.button(key="probe_ingest").click().run()
    assert any("cannot tell which catalog accelerator" in plain(e.value) for e in at.error)
    # once one is chosen, the caption says what ingesting will do
    box.set_value("H100-SXM5-80GB").run()
    assert not at.exception, [e.value for e in at.exception]
    said = _captions(at)
    assert "Choose the report's GPU" not in said, said
    assert "plans on this accelerator then use" in said, said
