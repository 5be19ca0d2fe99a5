"""Hostile inputs to the probe commands, found by a fuzz run over `gpuplan probe ingest|workload
|show`: each test is named after the bug it pins, and checks the exit status, the one-line
message (the field or option, the value, what is allowed, "To fix") and that nothing was
stored or written.

Fixtures (tests/probes/fixtures/hostile/):

- ``cpu_quick_report.json``: what `python -m probes --quick --device cpu` wrote on a 2-CPU
  Linux VM (torch 2.13.0+cpu): a real CPU run, gpu_count 0, no collectives (world size 1).
- ``cpu_workload_report.json``: `python -m probes workload --hidden 64 --heads 4 --ffn-hidden
  96 --seq-len 32 --device cpu --quick --model-name tiny` on the same VM.
- ``gpu_count_2pow63.json``: the fuzz run's reproduction, a p5.48xlarge report
  (tests/probe_reports.py's shape) with ``environment.gpu_count`` = 2**63.

Real GPU report shapes come from tests/probe_reports.py (what `python -m probes` writes on
p5.48xlarge nodes); every one of them must still be stored.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
from probe_reports import h100_report, h100_workload_report, report_data_with
from time_limit import time_limit

from planner.cli import main
from probes import report_to_json

FIXTURES = Path(__file__).parent / "fixtures" / "hostile"
WORKLOAD = ["probe", "workload", "--model", "gpt2", "--seq-len", "64", "--device", "cpu",
            "--quick"]


@pytest.fixture(autouse=True)
def no_hang():
    """A regression (a 10^20-layer build, 10^11 steps) fails the test instead of hanging."""
    with time_limit(60, "the command ran instead of refusing"):
        yield


@pytest.fixture
def nothing_measured(monkeypatch):
    """The workload probe itself raises if reached: every refusal here comes first."""
    import probes._workload_run as run

    def ran(*args, **kwargs):
        raise AssertionError("the workload probe ran")

    monkeypatch.setattr(run, "run_workload_probe", ran)


def _error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ") and "To fix" in lines[0], lines[0]
    assert "Traceback" not in captured.out + captured.err
    return lines[0]


def _stored() -> list:
    from planner.store import list_reports

    return list_reports()


def _mutated(tmp_path: Path, report, path: str, value, name: str = "bad.json") -> Path:
    """The report's JSON with the field at ``path`` ("ranks.0.memory_gb_per_s.0.value") set
    to ``value``, written as a file (json.dumps: the values need not be valid)."""
    out = tmp_path / name
    out.write_text(json.dumps(report_data_with(report, path, value)))
    return out


# -- 1. integers SQLite cannot hold crashed ingest with OverflowError -----------------------------
def test_a_gpu_count_of_2_to_the_63_is_refused_not_a_sqlite_overflow(capsys):
    code = main(["probe", "ingest", str(FIXTURES / "gpu_count_2pow63.json")])
    line = _error_line(capsys)
    assert code == 2
    assert "environment.gpu_count" in line and "9223372036854775808" in line
    # the record's own bound, not only every report's 2**53 (which 2**53 itself then failed)
    assert "must be a whole number from 1 to 1,048,576, got" in line
    assert _stored() == []


@pytest.mark.parametrize("field", ["environment.gpu_count", "environment.node_count",
                                   "environment.world_size", "collectives.world_size",
                                   "matmul.cache_bytes", "ranks.0.rank"])
@pytest.mark.parametrize("value", [2**63, 10**30])
def test_every_integer_of_a_report_is_range_checked_before_it_is_stored(tmp_path, capsys,
                                                                         field, value):
    bad = _mutated(tmp_path, h100_report(), field, value)
    assert main(["probe", "ingest", str(bad)]) == 2
    line = _error_line(capsys)
    # the field, named by its path or (told the record's own bound) by its record's label
    where, name = field.replace(".0.", "[0].").rsplit(".", 1)
    assert f"{where}.{name}" in line or f"{where}: " in line and f".{name} must be" in line
    assert str(value) in line
    assert _stored() == []


# -- 2. physically impossible values were stored --------------------------------------------------
IMPOSSIBLE = [
    ("ranks.0.memory_gb_per_s.0.value", -1, "rank 0: device_copy must be a finite number > 0, "
                                            "got -1.0"),
    ("ranks.0.matmul_best_tflops.0.value", -650.0, "rank 0: bf16 must be a finite number > 0"),
    ("matmul.sustained_tflops", -1, "matmul.sustained_tflops must be a finite number > 0, "
                                    "got -1.0"),
    ("matmul.dtypes.0.best_shape", [0, 8192, 8192], "best_shape must be 3 whole numbers >= 1"),
    # a negative count is told the record's own bound, the one 0 is then told: "must be 0 or
    # more" for -3 and "from 1" for 0 contradicted each other
    ("matmul.dtypes.0.best_shape", [-8192, 8192, 8192],
     "best_shape must be 3 whole numbers >= 1 (M, N, K), got [-8192, 8192, 8192]"),
    ("environment.gpu_memory_bytes", -1, "environment.gpu_memory_bytes must be a finite number "
                                         "> 0, got -1"),
    ("environment.gpu_count", -3, "environment.gpu_count must be a whole number from 1 to "
                                  "1,048,576, got -3"),
    ("environment.gpu_memory_bytes", 0, "environment.gpu_memory_bytes must be a finite number "
                                        "> 0, got 0"),
    ("environment.gpu_count", 0, "environment.gpu_count must be a whole number from 1 to "
                                 "1,048,576, got 0"),  # a CUDA run saw at least its own GPU
    ("environment.node_count", 9, "environment.node_count must be a whole number from 1 to 8"),
    ("collectives.world_size", -1, "collectives.world_size must be a whole number from 1 to "
                                   "1,048,576, got -1"),
    ("collectives.world_size", 0, "collectives.world_size must be a whole number from 1 to "
                                  "1,048,576, got 0"),
    ("collectives.world_size", 1e30, "collectives.world_size must be an integer, got 1e+30"),
    ("collectives.series.0.group_size", -1, "group_size must be a whole number from 1 to "
                                            "1,048,576, got -1"),
    ("collectives.series.0.group_size", 0, "group_size must be a whole number from 1 to "
                                           "1,048,576, got 0"),
    ("collectives.series.0.group_size", 16, "group_size must be a whole number from 1 to 8, "
                                            "got 16"),
    ("collectives.series.0.group_size", 1e30, "group_size must be an integer, got 1e+30"),
    ("collectives.series.0.points.0.iterations", 0, "iterations must be a finite number > 0"),
    ("created_utc", "x", "created_utc must be an ISO 8601 time such as 2026-01-31T12:00:00Z, "
                         "got 'x'"),
    ("duration_seconds", -131.5, "report.duration_seconds must be a finite number >= 0"),
    ("matmul.warmup_dtype", None, "a warm-up ran (warmup_seconds is set) but warmup_dtype "
                                  "(None)"),
    ("matmul.dtypes.0.dtype", None, "matmul.dtypes[0].dtype must be a string, got null"),
    ("matmul.repeats", 0, "matmul.repeats must be a whole number from 1"),
    ("matmul.dtypes.0.across_ranks.min", -1.0, "across_ranks_min must be a finite number > 0"),
    ("environment.idle.power_draw_w", -5.0, "power_draw_w must be a finite number >= 0"),
    # stored, with "None" for its peak, and echoed whole by every later `probe show`
    ("matmul.dtypes.0.dtype", "abc", "matmul dtype must be one of fp32, tf32, bf16, fp16, "
                                     "fp8_e4m3, fp8_e4m3_fast, got 'abc'"),
    ("matmul.dtypes.0.dtype", "x" * 100_000, "got '" + "x" * 39 + "…'. To fix"),
]


@pytest.mark.parametrize(("field", "value", "says"), IMPOSSIBLE,
                         ids=[f"{f}={v!r}"[:60] for f, v, _ in IMPOSSIBLE])
def test_an_impossible_value_is_refused_naming_the_field_the_value_and_the_bound(
        tmp_path, capsys, field, value, says):
    bad = _mutated(tmp_path, h100_report(bf16_tflops=650.0, node_count=1), field, value)
    assert main(["probe", "ingest", str(bad)]) == 2
    line = _error_line(capsys)
    assert says in line, line
    assert _stored() == []


WORKLOAD_IMPOSSIBLE = [
    ("ranks.0.workload.0.value", -0.03, "rank 0: layer_fwd_bwd_seconds must be a finite number "
                                        "> 0, got -0.03"),
    ("workload.steps", 10**9, "workload.steps must be a whole number from 0 to 10,000"),
    ("workload.layers", 0, "workload.layers must be a whole number from 1 to 128"),
    ("workload.hidden", 2**40, "workload.hidden must be a whole number from 1 to 1,048,576"),
    ("workload.split.matmul_seconds", -1.0, "workload.split.matmul_seconds must be a finite "
                                            "number >= 0"),
    ("workload.tokens_per_second", -1.0, "workload.tokens_per_second must be a finite number "
                                         ">= 0"),
    # finite, but × 16 layers printed "inf s" (and 1e308 as a 309-digit number)
    ("workload.layer_step_seconds", 1e308, "workload.layer_step_seconds must be at most "
                                           "86,400 seconds (a probe run stops within a day), "
                                           "got 1e+308"),
    ("workload.split.optimizer_seconds", 1e308, "workload.split.optimizer_seconds must be at "
                                                "most 86,400 seconds"),
]


@pytest.mark.parametrize(("field", "value", "says"), WORKLOAD_IMPOSSIBLE,
                         ids=[f"{f}={v!r}" for f, v, _ in WORKLOAD_IMPOSSIBLE])
def test_an_impossible_workload_figure_is_refused(tmp_path, capsys, field, value, says):
    bad = _mutated(tmp_path, h100_workload_report(), field, value)
    assert main(["probe", "ingest", str(bad)]) == 2
    assert says in _error_line(capsys)
    assert _stored() == []


def test_real_reports_are_still_stored(tmp_path, capsys):
    """What real runs write: the CPU runs of this VM (gpu_count 0, no GPU memory, skipped
    collectives) and the p5.48xlarge shapes, one node and two, hardware and workload."""
    files = [FIXTURES / "cpu_quick_report.json", FIXTURES / "cpu_workload_report.json"]
    for i, report in enumerate((h100_report(), h100_report(node_count=2, world_size=16),
                                h100_workload_report(), h100_workload_report(quick=True))):
        files.append(tmp_path / f"{i}.json")
        files[-1].write_text(report_to_json(report))
    assert main(["probe", "ingest", *map(str, files)]) == 0, capsys.readouterr().err
    assert len(_stored()) == len(files)


# -- 3. the workload probe's counts had no upper bound ---------------------------------------------
@pytest.mark.parametrize(("option", "value", "says"), [
    ("--build-layers", "99999999999999999999", "--build-layers: '99999999999999999999' is not a "
                                               "whole number from 1 to 128"),
    ("--build-layers", "0", "--build-layers: '0' is not a whole number from 1 to 128"),
    ("--steps", "99999999999", "--steps: '99999999999' is not a whole number from 1 to 10,000"),
    ("--warmup-steps", "-1", "--warmup-steps: '-1' is not a whole number from 0 to 1,000"),
    ("--warmup-steps", "5000", "from 0 to 1,000"),
    ("--micro-batch", "99999999999999999999", "65,536"),
])
def test_a_workload_count_out_of_bounds_is_refused_before_anything_is_built(
        tmp_path, capsys, nothing_measured, option, value, says):
    out = tmp_path / "w.json"
    layers = [] if option == "--build-layers" else ["--build-layers", "1"]  # once: a repeat
    code = main([*WORKLOAD, *layers, option, value, "--out", str(out)])     # is its own error
    line = _error_line(capsys)
    assert code == 2 and says in line, line
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_print_command_checks_the_shape_the_node_would_refuse(capsys, nothing_measured):
    # --tp 3 printed a command that failed on the node
    code = main(["probe", "workload", "--model", "llama3-8b", "--tp", "3", "--print-command"])
    line = _error_line(capsys)
    assert code == 2 and "tp=3 must divide heads" in line and "To fix" in line


def test_print_command_names_the_report_once(capsys, nothing_measured):
    code = main(["probe", "workload", "--model", "llama3-8b", "--print-command", "--out",
                 "mine.json"])
    out = capsys.readouterr().out
    # the torchrun line; the launch hint leaves it out (the task writes report.json itself)
    assert code == 0 and out.count("--out") == 1
    assert "workload-report.json" not in out and "mine.json" in out


def test_workload_recompute_auto_is_refused_not_silently_none(capsys, nothing_measured):
    code = main([*WORKLOAD, "--recompute", "auto", "--print-command"])
    line = _error_line(capsys)
    assert code == 2 and "--recompute auto" in line and "To fix" in line


@pytest.mark.parametrize(("argv", "says"), [
    (["--layers", "99999"], "--layers: '99999' is not a whole number from 1 to 10,000"),
    (["--micro-batch", "99999999999999999999"], "--micro-batch: '99999999999999999999' is not "
                                                "a whole number from 1 to 65,536"),
    (["--build-layers", "\u00b2"], "--build-layers: '\u00b2' is not a whole number"),
    (["--tp", "4096"], "--tp: '4096' is not a whole number from 1 to 1,024"),
])
def test_python_m_probes_workload_refuses_the_same_counts(tmp_path, capsys, nothing_measured,
                                                          argv, says):
    from probes.cli import main as probes_main

    out = tmp_path / "w.json"
    with pytest.raises(SystemExit) as info:
        probes_main(["workload", "--hidden", "64", "--heads", "4", "--ffn-hidden", "96",
                     "--seq-len", "32", "--device", "cpu", *argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert info.value.code == 2 and says in err and err.count("\n") == 1, err
    assert not out.exists()


def test_the_workload_bounds_are_stated_in_the_help():
    from probes._workload_config import LIMITS
    from probes.cli import build_workload_parser

    text = " ".join(build_workload_parser().format_help().split())
    for option, key, low in (("--build-layers", "build_layers", 1), ("--steps", "steps", 1),
                             ("--warmup-steps", "warmup_steps", 0),
                             ("--micro-batch", "micro_batch", 1), ("--tp", "tp", 1)):
        assert re.search(rf"{option} N .{{0,60}}?\b{low} to {LIMITS[key]:,}", text), option
    from planner.cli._workload_cmd import workload_cmd  # `gpuplan probe workload --help`

    gpuplan_help = " ".join(workload_cmd.__doc__.split())
    for option, key, low in (("--build-layers", "build_layers", 1), ("--steps", "steps", 1),
                             ("--warmup-steps", "warmup_steps", 0)):
        assert f"{option} N ({low} to {LIMITS[key]:,})" in gpuplan_help, option


def test_the_workload_config_refuses_the_same_counts():
    from probes import WorkloadConfig

    base = {"hidden": 64, "heads": 4, "kv_heads": 4, "ffn_hidden": 96, "seq_len": 32}
    for changes, says in (({"steps": 99999999999}, "steps must be a whole number from 1 to "
                                                   "10,000, got 99999999999"),
                          ({"layers": 10**20}, "layers must be a whole number from 1 to 128"),
                          ({"micro_batch": 10**20}, "micro_batch must be a whole number from "
                                                    "1 to 65,536"),
                          ({"timeout_seconds": math.nan}, "timeout_seconds must be a finite")):
        with pytest.raises(ValueError, match=re.escape(says)):
            WorkloadConfig(**base, **changes)


# -- 4. --timeout-s nan was accepted by `probe workload` -------------------------------------------
@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
@pytest.mark.parametrize("command", ["run", "workload"])
def test_a_timeout_that_is_not_a_finite_positive_number_is_refused_by_both(
        tmp_path, capsys, nothing_measured, monkeypatch, command, value):
    import probes._runner as runner

    monkeypatch.setattr(runner, "run_probes", lambda *a, **k: pytest.fail("the probes ran"))
    out = tmp_path / "r.json"
    argv = ["probe", "run"] if command == "run" else [*WORKLOAD, "--build-layers", "1"]
    assert main([*argv, f"--timeout-s={value}", "--out", str(out)]) == 2
    line = _error_line(capsys)
    shown = {"-1": "-1.0", "0": "0.0"}.get(value, value)
    assert f"--timeout-s must be a number from 1 to 86,400 (seconds), got {shown}" in line
    assert not out.exists()


# -- 5. `probe workload --out` created a missing folder --------------------------------------------
@pytest.mark.parametrize("command", ["run", "workload"])
def test_an_out_in_a_missing_folder_is_refused_like_every_other_out(
        tmp_path, capsys, nothing_measured, monkeypatch, command):
    import probes._runner as runner

    monkeypatch.setattr(runner, "run_probes", lambda *a, **k: pytest.fail("the probes ran"))
    out = tmp_path / "nodir" / "w.json"
    argv = ["probe", "run"] if command == "run" else [*WORKLOAD, "--build-layers", "1"]
    assert main([*argv, "--out", str(out)]) == 2
    line = _error_line(capsys)
    assert f"the directory {out.parent} does not exist" in line
    assert f"To fix: create it (mkdir -p {out.parent})" in line
    assert not out.parent.exists()


def test_print_command_does_not_check_an_out_meant_for_the_node(tmp_path, capsys):
    out = tmp_path / "on-the-node" / "w.json"
    assert main([*WORKLOAD, "--print-command", "--out", str(out)]) == 0
    assert "torchrun" in capsys.readouterr().out and not out.parent.exists()
    assert main([*WORKLOAD, "--print-command", "--steps", "99999999999"]) == 2
    assert "--steps: '99999999999' is not a whole number from 1 to 10,000" in \
        _error_line(capsys)


@pytest.mark.parametrize("argv,says", [
    (["--steps", "5"], "5 timed step(s) after 5 warm-up"),
    (["--warmup-steps", "1"], "30 timed step(s) after 1 warm-up"),
])
def test_too_few_steps_to_calibrate_are_said_before_the_run_not_after_it(argv, says, capsys):
    """A run of 5 steps was accepted and its report then never calibrated a plan (ingest
    refuses fewer than MIN_STEPS after MIN_WARMUP_STEPS): the note comes before it runs."""
    full = [a for a in WORKLOAD if a != "--quick"]
    assert main([*full, "--print-command", *argv]) == 0
    out, err = capsys.readouterr()
    assert "torchrun" in out and says in err and "will not calibrate a plan" in err
    assert "To calibrate: --steps 10 --warmup-steps 2 or more" in " ".join(err.split())
    for fine in ([], ["--quick"], ["--steps", "10", "--warmup-steps", "2"]):
        assert main([*full, "--print-command", *fine]) == 0
        assert "calibrate" not in capsys.readouterr().err


# -- 6. `probe show` printed a CPU run as "cpu x0" and "GPUs/node 1/0" -----------------------------
def test_a_cpu_run_is_shown_as_a_cpu_run(tmp_path, capsys):
    report = tmp_path / "cpu.json"
    shutil.copy(FIXTURES / "cpu_quick_report.json", report)
    assert main(["probe", "ingest", str(report)]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("report 1: cpu (no GPU), 1 process;") and "x0" not in out
    matmul = next(line for line in out.splitlines() if "matmul TFLOP/s" in line)
    # a CPU's few GFLOP/s keep their digits instead of printing as 0.0
    assert all(float(v) > 0 for v in re.findall(r" (\d[\d.e-]*)(?:,|$)", matmul)), matmul
    assert main(["probe", "show", "--wide"]) == 0
    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if line.lstrip().startswith("1 "))
    assert "1/0" not in row and " cpu " in row and " - " in row, row


def test_a_key_given_twice_is_refused_and_a_bom_is_not_damage():
    # the app's upload path (report_from_bytes) kept the second schema_version silently
    from probes import ReportError, report_from_bytes

    good = report_to_json(h100_report()).encode()
    twice = good.replace(b"{", b'{"schema_version": 1, ', 1)
    with pytest.raises(ReportError, match="duplicate key 'schema_version'"):
        report_from_bytes(twice, source="twice.json")
    assert report_from_bytes(b"\xef\xbb\xbf" + good, source="bom.json").schema_version == \
        report_from_bytes(good, source="plain.json").schema_version


def test_terminal_control_sequences_in_a_report_are_shown_escaped(tmp_path, capsys):
    """An error message (or instance type) in a report could clear the screen or retitle the
    terminal through `probe ingest` and `probe show`'s "Not used" lines."""
    import dataclasses

    from probes._schema import ProbeFailure

    evil = "\x1b[2J\x1b]0;pwn\x07"
    report = dataclasses.replace(h100_report(), errors=(ProbeFailure(
        probe="memory", error_type="RuntimeError", message=f"boom{evil}", rank=1),))
    path = tmp_path / "evil.json"
    path.write_text(report_to_json(report))
    assert main(["probe", "ingest", str(path)]) == 0
    assert main(["probe", "show"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[2J" in out  # visible, not acted on


def test_more_layers_built_than_the_model_has_is_refused_before_the_run(tmp_path, capsys):
    """A report then said layers 13 of a 12-layer model, which the store now refuses."""
    assert main([*WORKLOAD, "--build-layers", "13", "--out", str(tmp_path / "w.json")]) == 2
    assert "build_layers (13) is above the model's 12 layers" in _error_line(capsys)
    assert not (tmp_path / "w.json").exists()


def test_the_launch_line_of_print_command_leaves_the_report_where_the_task_fetches_it(capsys):
    """`--print-command --out F` put F into GPUPLAN_PROBE_ARGS: the last --out on the node,
    so the launch task's report.json was never written and its scp found nothing."""
    assert main([*WORKLOAD, "--print-command", "--out", "/tmp/mine.json"]) == 0
    node, launch = capsys.readouterr().out.strip().splitlines()
    assert node.endswith("--out /tmp/mine.json")
    assert "GPUPLAN_PROBE_ARGS=" in launch and "--out" not in launch


@pytest.mark.parametrize("argv", [["--steps", "5", "--steps", "7"],
                                  ["--device", "cpu", "--device=cuda"]])
def test_a_pass_through_option_given_twice_is_refused(argv, capsys):
    """argparse kept the last (--steps 5 --steps 7 ran 7); gpuplan's own options refuse it."""
    assert main([*WORKLOAD, "--print-command", *argv]) == 2
    assert "is given twice. To fix: give it once" in _error_line(capsys)
