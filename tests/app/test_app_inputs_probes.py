"""An uploaded probe report is judged by the rules ingesting applies before it is charted: a
report whose figures they refuse (impossible, or edited by hand) shows the refusal where its
charts were, and its charts only folded away; a report they accept is charted as before."""

from __future__ import annotations

import json

from ._apptest import app, assert_clean, warnings
from .conftest import probe_report_json


def upload(data: bytes):
    at = app("app_pages/probes.py")
    at.file_uploader(key="probe_file").set_value(("h100.json", data,
                                                  "application/json")).run()
    assert not at.exception
    return at


def open_charts(at) -> int:
    """Charts on the page outside a folded expander."""
    folded = sum(len(e.get("plotly_chart")) for e in at.expander)
    return len(at.get("plotly_chart")) - folded


def test_an_impossible_report_shows_the_refusal_instead_of_its_charts():
    """A bf16 matmul of 10,000,000 TFLOP/s was charted beside the datasheet's 989 and refused
    only once ingested ("Stored as probe report 1, but it calibrates nothing")."""
    from probe_reports import h100_report

    from probes import report_to_json

    impossible = h100_report(bf16_tflops=1e7, fp16_tflops=1e7,
                             busbw_by_size=((2**20, 1e7), (2**30, 1e7)))
    at = upload(report_to_json(impossible).encode())
    said = warnings(at)[0]
    assert said.startswith("Ingesting would calibrate nothing: "), said
    assert "is above the datasheet" in said and "impossible" in said
    assert open_charts(at) == 0
    # ingesting it still stores it, and says the same
    at.button(key="probe_ingest").click().run()
    assert not at.exception
    assert warnings(at)[-1].startswith("Stored as probe report 1, but it calibrates nothing")


def test_a_hand_edited_figure_is_refused_before_it_is_charted():
    data = json.loads(probe_report_json())
    data["matmul"]["dtypes"][0]["best_tflops"] = 1e7  # one number edited by hand
    at = upload(json.dumps(data).encode())
    said = warnings(at)[0]
    assert said.startswith("Ingesting would calibrate nothing: "), said
    assert "the report was edited" in said
    assert open_charts(at) == 0


def test_a_report_the_rules_accept_is_charted_without_a_refusal(probe_report):
    at = upload(probe_report)
    assert_clean(at)
    assert not any("calibrate nothing" in w for w in warnings(at))
    assert open_charts(at) == 2


def test_a_cpu_run_is_still_charted():
    at = upload(probe_report_json(bf16_tflops=0.5, device_type="cpu"))
    assert_clean(at)
    assert not any("calibrate nothing" in w for w in warnings(at))
    assert open_charts(at) >= 1


def test_an_accelerator_that_contradicts_the_report_is_said_before_ingesting(probe_report):
    """Ingesting refuses H100 figures for A100 plans; the page says so when the box is set,
    and folds the charts away: they set H100 figures beside A100 datasheet bars."""
    from app_pages._inputs import for_upload

    at = upload(probe_report)
    at.selectbox(key=for_upload("probe_accelerator", probe_report)).set_value(
        "A100-SXM4-80GB").run()
    assert not at.exception and not at.error
    said = warnings(at)[0]
    assert said.startswith("Ingesting would refuse this report: the report measured"), said
    assert open_charts(at) == 0 and at.expander[0].label == "Charts of the refused report"
    at.button(key="probe_ingest").click().run()
    assert at.error and not at.success
