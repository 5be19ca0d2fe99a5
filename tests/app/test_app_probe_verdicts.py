"""What the Probes page says of a report before it is ingested, and after: one verdict (a
report ingesting would refuse is not also said to be used), each refused figure named with
its reason (as `gpuplan probe ingest` names them), every fp8 dtype beside the datasheet,
commands shown as code, and what removing a report changes."""

from __future__ import annotations

import json

from ._apptest import assert_clean, chart, errors, plain, warnings
from .conftest import ROOT, probe_report_json
from .test_app_inputs_probes import open_charts, upload

H200_REPORT = ROOT / "benchmarks/data/gpu_check_h200_2026-12-04/probe-report.json"


def report(**changes) -> bytes:
    from probe_reports import h100_report

    from probes import report_to_json

    return report_to_json(h100_report(**changes)).encode()


def captions(at) -> str:
    return "\n".join(plain(c.value) for c in at.caption)


def test_a_report_ingesting_would_refuse_is_not_said_to_be_used():
    """An A100 named on a p5.48xlarge: the warning said ingesting would refuse it, the caption
    under it "Ingesting stores the report; plans on this accelerator then use its measured …",
    and the charts set 650 measured beside the A100's 312."""
    at = upload(report(gpu_model="NVIDIA A100-SXM4-80GB"))
    said = warnings(at)[0]
    assert said.startswith("Ingesting would refuse this report: ") and "p5.48xlarge" in said
    assert "then use its measured" not in captions(at)
    assert "Ingesting refuses this report (above): nothing is stored" in captions(at)
    assert open_charts(at) == 0 and at.expander[0].label == "Charts of the refused report"
    at.button(key="probe_ingest").click().run()
    assert at.error and not at.success


def test_each_refused_figure_is_named_with_its_reason():
    """ "… is above the datasheet …: impossible; another figure of this report is out of bounds
    (matmul H100 bf16: …)" read as one reason said twice, without the figures it refused."""
    at = upload(report(bf16_tflops=5000.0))
    said = warnings(at)[0]
    assert said.startswith("Ingesting would calibrate nothing: matmul H100-SXM5-80GB bf16: "
                           "5,000 TFLOP/s is above the datasheet"), said
    assert "; hbm H100-SXM5-80GB, intra p5.48xlarge: another figure of this report is out " \
           "of bounds (matmul H100-SXM5-80GB bf16:" in said, said
    at.button(key="probe_ingest").click().run()
    assert warnings(at)[-1].startswith("Stored as probe report 1, but it calibrates nothing: "
                                       "matmul H100-SXM5-80GB bf16: 5,000 TFLOP/s")


def test_fast_fp8_has_its_datasheet_bar_too():
    """A real H200 run (benchmarks/data, 2026-12-04): fp8_e4m3 had a datasheet bar,
    fp8_e4m3_fast none."""
    at = upload(H200_REPORT.read_bytes())
    assert_clean(at)
    bars = chart(at, "matmul_chart")["data"]
    datasheet = next(t for t in bars if t["name"] == "datasheet (dense)")
    assert list(datasheet["x"]) == ["bf16", "fp8_e4m3", "fp8_e4m3_fast"]
    assert datasheet["text"][1] == datasheet["text"][2]  # both against the one fp8 peak


def test_a_command_in_an_error_is_shown_as_code_not_as_backticks():
    data = json.loads(probe_report_json())
    del data["environment"]["gpu_model"]
    at = upload(json.dumps(data).encode())
    (said,) = errors(at)
    assert "re-run `python -m probes --out PATH` on the instance" in said, said
    source = at.error[0].value
    assert "`python -m probes --out PATH`" in source and "\\`" not in source


def ingest_and_remove(data: bytes):
    at = upload(data)
    at.button(key="probe_ingest").click().run()
    at.switch_page("app_pages/probes.py").run()
    at.multiselect(key="probe_remove_ids").set_value([1]).run()
    at.button(key="probe_remove").click().run()
    assert_clean(at)
    (said,) = [plain(s.value) for s in at.success]
    return said


def test_removing_one_report_speaks_of_it():
    """ "Removed probe report 1: plans no longer use them." """
    assert ingest_and_remove(report()) == "Removed probe report 1: plans no longer use it."


def test_removing_a_report_that_calibrated_nothing_says_plans_are_unchanged():
    """A CPU run never calibrated anything: "plans no longer use them" said otherwise."""
    said = ingest_and_remove(probe_report_json(bf16_tflops=0.5, device_type="cpu"))
    assert said == "Removed probe report 1: it calibrated nothing, so plans are unchanged."


def test_removing_reports_that_calibrated_and_reports_that_did_not():
    at = upload(report())
    at.button(key="probe_ingest").click().run()
    at.file_uploader(key="probe_file").set_value(
        ("cpu.json", probe_report_json(bf16_tflops=0.5, device_type="cpu"),
         "application/json")).run()
    at.button(key="probe_ingest").click().run()
    at.switch_page("app_pages/probes.py").run()
    at.multiselect(key="probe_remove_ids").set_value([1, 2]).run()
    at.button(key="probe_remove").click().run()
    assert_clean(at)
    assert [plain(s.value) for s in at.success] == [
        "Removed probe reports 1, 2: plans no longer use report 1; report 2 calibrated "
        "nothing."]
