"""The Probes page says what a report measured and what ingesting it does, as the CLI does:
a workload-only report's layer time and activation memory (measured vs modelled, the planner's
own figures), a report without an environment section as of an unknown machine, and a refused
report's reason once."""

from __future__ import annotations

import json

from ._apptest import app, assert_clean, errors, everything, plain, warnings
from .conftest import ROOT

DATA = ROOT / "benchmarks" / "data" / "gpu_check_h200_2026-12-04"


def upload(data: bytes, name: str = "report.json"):
    at = app("app_pages/probes.py")
    at.file_uploader(key="probe_file").set_value((name, data, "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_workload_report_shows_its_layer_measured_vs_modelled():
    """It showed only "No matmul measurements … No collective measurements" and a caption
    promising "its measured matmul, memory and collective rates"; `probe ingest` says "8.46 ms
    per layer measured vs 7.3 ms modelled … activations 769.1 MiB"."""
    at = upload((DATA / "workload-report.json").read_bytes(), "workload-report.json")
    assert_clean(at)
    shown = plain(everything(at))
    assert "8.46 ms per layer measured vs 7.3 ms modelled" in shown, shown
    assert "activations 769.1 MiB measured vs 768.0 MiB modelled" in shown, shown
    table = next(t.value for t in at.dataframe if "figure" in t.value.columns)
    assert list(table["figure"]) == ["time (ms)", "activation memory (MiB)"]
    assert round(table["measured"][0], 2) == 8.46 and round(table["modelled"][0], 1) == 7.3
    assert round(table["measured"][1], 1) == 769.1
    assert "matmul, memory and collective rates" not in shown
    assert "layer time and activation memory" in shown
    # the heading is bold, not "\*\*Workload layer\*\*" (app review, 2026-12-07)
    heading = next(m.value for m in at.markdown if "Workload layer" in m.value)
    assert heading.startswith("**Workload layer** (fsdp, "), heading


def test_a_cpu_report_names_its_device_not_zero_gpus():
    """A CPU report's "Devices × nodes" read "0 × 1" (app review, 2026-12-07)."""
    path = ROOT / "tests" / "probes" / "fixtures" / "hostile" / "cpu_quick_report.json"
    at = upload(path.read_bytes(), "cpu.json")
    (devices,) = [m.value for m in at.metric if m.label == "Devices × nodes"]
    assert devices == "cpu × 1", devices


def test_a_hardware_report_caption_names_what_it_calibrates():
    at = upload((DATA / "probe-report.json").read_bytes(), "probe-report.json")
    shown = plain(everything(at))
    assert ("plans on this accelerator then use its measured matmul rates and memory "
            "bandwidth instead") in shown, shown


def no_environment() -> bytes:
    report = json.loads((DATA / "probe-report.json").read_text())
    report.pop("environment")
    return json.dumps(report).encode()


def test_a_report_without_environment_is_of_an_unknown_machine():
    """It was called "a CPU run" with a "Store for reference" button; the CLI says "unknown
    machine"."""
    at = upload(no_environment())
    shown = plain(everything(at))
    assert "CPU run" not in shown, shown
    assert "unknown what this report ran on" in shown, shown


def test_an_instance_mismatch_is_said_once():
    """The same sentence showed as a yellow warning and, once "Ingest" was clicked, again as a
    red error."""
    report = json.loads((DATA / "probe-report.json").read_text())
    report["environment"]["cloud"] = "aws"
    report["environment"]["instance_type"] = "p5.48xlarge"  # 8x H100, the report says H200
    at = upload(json.dumps(report).encode())
    said = warnings(at)
    assert said and said[0].startswith("Ingesting would refuse this report:"), said
    why = said[0].removeprefix("Ingesting would refuse this report:").strip()
    at.button(key="probe_ingest").click().run()
    assert errors(at) == ["Not stored: ingesting refuses this report, for the reason above."]
    assert plain(everything(at)).count(why) == 1


def test_storing_a_report_without_environment_says_unknown_machine():
    at = upload(no_environment())
    at.button(key="probe_ingest").click().run()
    assert not at.exception
    said = [plain(s.value) for s in at.success]
    assert said and "a report of an unknown machine calibrates no GPU" in said[0], said
