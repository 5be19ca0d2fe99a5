"""`gpuplan estimate` and `gpuplan probe ingest|show`: the JSON contract, the human table, and
user errors as one line on stderr with exit 2."""

from __future__ import annotations

import json
import re

import pytest
from probe_reports import h100_report

from planner.cli import main
from probes import SCHEMA_VERSION, write_report_atomic

ESTIMATE_KEYS = {"wall_clock_hours", "gpu_hours", "mfu", "model_tflops_per_gpu",
                 "memory_per_gpu_gib", "step_time_s", "steps", "goodput", "plan", "breakdown",
                 "assumptions"}
PLAN_KEYS = {"tp", "pp", "dp", "zero_stage", "micro_batch", "recompute"}
BREAKDOWN_KEYS = {"compute_s", "tp_comm_s", "dp_comm_s", "pp_bubble_s", "other_s"}

# Trimmed from meta-llama/Meta-Llama-3-8B/config.json.
LLAMA3_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 8192, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "vocab_size": 128256,
}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_estimate_json_contract(capsys):
    code, out, err = run(capsys, "estimate", "--model", "llama3-8b", "--tokens", "15T",
                         "--gpu", "H100", "--gpus", "64", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert ESTIMATE_KEYS <= set(data)
    assert PLAN_KEYS <= set(data["plan"]) and BREAKDOWN_KEYS <= set(data["breakdown"])
    assert isinstance(data["assumptions"], list) and data["assumptions"]
    p = data["plan"]
    assert p["tp"] * p["pp"] * p["dp"] == 64
    assert 0 < data["mfu"] < 1 and 0 < data["goodput"] <= 1
    assert data["gpu_hours"] == pytest.approx(data["wall_clock_hours"] * 64)
    assert sum(data["breakdown"].values()) == pytest.approx(data["step_time_s"], rel=1e-9)
    assert data["workload"]["tokens"] == 15e12 and data["hardware"]["gpus"] == 64


def test_estimate_table_for_people(capsys):
    code, out, _ = run(capsys, "estimate", "--model", "llama3-8b", "--tokens", "15T", "--gpu",
                       "H100", "--gpus", "64")
    assert code == 0
    for label in ("MFU", "wall-clock", "GPU-hours", "memory per GPU", "plan", "Assumptions"):
        assert label in out
    assert "64x H100-SXM5-80GB (reference node)" in out


def test_estimate_on_an_instance_type(capsys):
    code, out, _ = run(capsys, "estimate", "--params", "7B", "--tokens", "300B",
                       "--instance", "p5.48xlarge", "--nodes", "4", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["hardware"]["instance_type"] == "p5.48xlarge" and data["hardware"]["gpus"] == 32
    assert any("inferred from parameter count" in a for a in data["assumptions"])


@pytest.mark.parametrize("argv,fragment", [
    (["--model", "llama3-8b", "--tokens", "2X", "--gpu", "H100"], "--tokens '2X' is not a count"),
    (["--params", "-5", "--gpu", "H100"], "--params '-5'"),
    (["--params", "0", "--gpu", "H100"], "--params must be positive"),
    (["--model", "llama3-8b", "--gpu", "H10O"], "Did you mean 'H100'"),
    (["--model", "llama3-8b", "--params", "7B", "--gpu", "H100"], "give exactly one of"),
    (["--model", "llama3-8b"], "give either --instance"),
    (["--model", "llama3-8", "--gpu", "H100"], "unknown model preset"),
    (["--model", "llama3-8b", "--gpu", "H100", "--gpus", "12"], "multiple of 8"),
    (["--model", "llama3-8b", "--gpu", "H100", "--precision", "fp4"], "--precision 'fp4'"),
    (["--model", "llama3-8b", "--gpu", "H100", "--assume", "restart_minuts=30"],
     "Did you mean 'restart_minutes'"),
    # float() reads Arabic-Indic digits; --tokens and --budget refuse them (hostile sweep)
    (["--model", "llama3-8b", "--gpu", "H100", "--assume", "restart_minutes=\u0663\u0660"],
     "is not a number. To fix: e.g. --assume restart_minutes=30"),
    # 1e400 is inf to float(): the error echoed "restart_minutes=inf", not what was written
    (["--model", "llama3-8b", "--gpu", "H100", "--assume", "restart_minutes=1e400"],
     "--assume 'restart_minutes=1e400': '1e400' is not a finite number"),
    (["--model", "llama3-8b", "--instance", "g6e.12xlarge", "--nodes", "2"],
     "cannot be used across nodes"),
    (["--config", "/nonexistent/config.json", "--gpu", "H100"], "cannot read config"),
])
def test_user_errors_are_one_line_exit_2(capsys, argv, fragment):
    code, out, err = run(capsys, "estimate", *argv)
    assert code == 2
    assert fragment in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "To fix" in err


def test_a_model_that_does_not_fit_names_a_smallest_setup(capsys):
    code, out, err = run(capsys, "estimate", "--model", "llama2-70b", "--gpu", "H100",
                         "--gpus", "8")
    assert code == 2 and out == ""
    assert "do not fit on 8x H100-SXM5-80GB" in err
    assert "The smallest setup that fits is 2 nodes (16 GPUs)" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_estimate_from_a_config_json(capsys, tmp_path):
    config = tmp_path / "Meta-Llama-3-8B" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps(LLAMA3_8B_CONFIG))
    code, out, err = run(capsys, "estimate", "--config", str(config), "--tokens", "1T", "--gpu",
                         "H100", "--gpus", "16", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["workload"]["model"] == "Meta-Llama-3-8B"
    assert data["workload"]["params_total"] == pytest.approx(8.03e9, rel=0.01)
    assert data["workload"]["seq_len"] == 8192
    # the same numbers as the preset it describes
    code, preset_out, _ = run(capsys, "estimate", "--model", "llama3-8b", "--tokens", "1T",
                              "--gpu", "H100", "--gpus", "16", "--json")
    assert json.loads(preset_out)["step_time_s"] == pytest.approx(data["step_time_s"])


def test_probe_ingest_then_show_then_estimate_uses_it(capsys, tmp_path):
    path = write_report_atomic(h100_report(bf16_tflops=600.0), tmp_path / "report.json")
    code, out, err = run(capsys, "probe", "ingest", str(path))
    assert code == 0, err
    assert "report 1" in out and "calibrates H100-SXM5-80GB" in out
    # each figure counted is listed (it said "(4 figure(s))" above the matmul line alone)
    count = int(re.search(r"\((\d+) figures?\)", out).group(1))
    assert out.count("\n  used: ") == count > 1
    assert "used: matmul H100-SXM5-80GB bf16: 600.0 TFLOP/s" in out

    code, out, _ = run(capsys, "probe", "show", "--json")
    assert code == 0
    (shown,) = json.loads(out)
    assert shown["accelerator"] == "H100-SXM5-80GB" and shown["device_type"] == "cuda"
    assert shown["measurements"]["matmul_tflops"] == {"bf16": 600.0}

    code, out, _ = run(capsys, "probe", "show", "1", "--json")
    assert code == 0 and json.loads(out)["schema_version"] == SCHEMA_VERSION

    # for people (it printed the stored record as raw JSON): where, every figure, what is used
    code, out, _ = run(capsys, "probe", "show", "1")
    assert code == 0 and not out.lstrip().startswith("{")
    assert "accelerator  H100-SXM5-80GB" in out and "matmul_tflops: bf16 600.0" in out
    used = out.split("Used by the planner:", 1)[1]
    assert "matmul H100-SXM5-80GB bf16: 600.0 TFLOP/s (report 1)" in used

    code, out, _ = run(capsys, "estimate", "--model", "llama3-8b", "--gpu", "H100", "--gpus",
                       "8", "--json")
    assert code == 0
    data = json.loads(out)
    assert any("measured 600.0 TFLOP/s instead of the datasheet default 792.6 (probe report 1"
               in a for a in data["calibration"])
    # 600 < 792.6 TFLOP/s: the measurement makes the run slower, and the output says by how much
    assert data["wall_clock_hours"] > data["wall_clock_hours_without_calibration"]

    code, out, _ = run(capsys, "estimate", "--model", "llama3-8b", "--gpu", "H100", "--gpus",
                       "8", "--json", "--no-calibration")
    assert code == 0 and json.loads(out)["calibration"] == []

    code, out, _ = run(capsys, "estimate", "--model", "llama3-8b", "--gpu", "H100", "--gpus",
                       "8")
    assert code == 0 and "Measured on your instances" in out and "with datasheet defaults" in out


def test_an_ingest_that_fails_midway_names_the_reports_it_stored(capsys, tmp_path,
                                                                   monkeypatch):
    # one transaction per report: a full disk at the third said "nothing was stored" although
    # the first two were
    import planner.store
    from catalog import GpuplanError

    paths = [write_report_atomic(h100_report(bf16_tflops=600.0 + i), tmp_path / f"r{i}.json")
             for i in range(3)]
    real = planner.store.ingest

    def ingest(path, *a, **kw):
        if str(path).endswith("r2.json"):
            raise GpuplanError(f"{path}: the disk is full; nothing was changed. To fix: free "
                               "space")
        return real(path, *a, **kw)

    monkeypatch.setattr(planner.store, "ingest", ingest)
    code, _, err = run(capsys, "probe", "ingest", *map(str, paths))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "were stored: " in err and "r0.json (report 1)" in err and "r1.json (report 2)" in err
    assert "To fix: free space, then ingest" in err and str(paths[2]) in err


@pytest.mark.parametrize("edit", ["UPDATE measurements SET value = 'abc'",
                                  "UPDATE reports SET report_json = '[]'",
                                  "UPDATE reports SET gpu_count = 'eight'"])
def test_a_hand_edited_probe_database_is_damaged_not_a_traceback(capsys, tmp_path, edit):
    import sqlite3

    from planner.store import db_path

    path = write_report_atomic(h100_report(bf16_tflops=600.0), tmp_path / "report.json")
    assert run(capsys, "probe", "ingest", str(path))[0] == 0
    with sqlite3.connect(db_path()) as conn:
        conn.execute(edit)
    for argv in (["probe", "show"], ["probe", "show", "--json"], ["probe", "show", "1"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "probe database is damaged" in err and "To fix" in err, argv


def test_probe_show_with_nothing_ingested(capsys):
    code, out, _ = run(capsys, "probe", "show")
    assert code == 0 and "no probe reports ingested" in out
    code, out, _ = run(capsys, "probe", "show", "--json")
    assert code == 0 and json.loads(out) == []


def test_probe_ingest_of_a_corrupt_file_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "probe", "ingest", str(bad))
    assert code == 2 and "not valid JSON" in err and "To fix" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_list_assumptions_json_has_every_constant_with_unit_and_source(capsys):
    code, out, _ = run(capsys, "estimate", "--list-assumptions", "--json")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["matmul_fraction.hopper"]["value"] == 0.801
    assert rows["matmul_fraction.hopper"]["unit"] == "share of peak"
    assert "MAMF" in rows["matmul_fraction.hopper"]["about"]
    assert {"gemm_efficiency.megatron", "comm_overlap.fsdp", "restart_minutes"} <= set(rows)
    assert all(r["about"] and r["unit"] for r in rows.values())


def test_list_assumptions_is_a_table_for_people(capsys):
    code, out, _ = run(capsys, "estimate", "--list-assumptions", "--assume",
                       "matmul_fraction.hopper=0.7")
    assert code == 0
    assert "matmul_fraction.hopper *" in out and "0.7" in out and "share of peak" in out


@pytest.mark.parametrize("argv", [["--model", "llama2-7b"], ["--gpu", "H100", "--gpus", "8"],
                                  ["--framework", "fsdp"], ["--nodes", "2"]])
def test_list_assumptions_refuses_options_it_would_ignore(capsys, argv):
    code, out, err = run(capsys, "estimate", "--list-assumptions", *argv)
    assert code == 2 and out == ""
    assert all(a in err for a in argv if a.startswith("--")) and "would be ignored" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [["--gpus", "0"], ["--seq-len", "0"]])
def test_zero_is_not_silently_replaced_by_a_default(capsys, argv):
    code, _, err = run(capsys, "estimate", "--model", "llama3-8b", "--gpu", "H100", *argv)
    assert code == 2 and ("between 1 and" in err or "must be positive" in err)


def test_estimate_pins_the_expert_parallel_degree(capsys):
    code, out, err = run(capsys, "estimate", "--model", "mixtral-8x7b", "--tokens", "100B",
                         "--gpu", "H100", "--gpus", "64", "--ep", "4", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["pinned"]["ep"] == 4 and data["plan"]["ep"] == 4


@pytest.mark.parametrize("argv,fragment", [
    (("--model", "mixtral-8x7b", "--ep", "3"), "ep=3 must divide the 8 experts"),
    (("--model", "llama3-8b", "--ep", "2"), "this model has no experts"),
    (("--model", "mixtral-8x7b", "--ep", "0"), "ep must be a whole number from 1 to 131,072"),
])
def test_an_expert_parallel_pin_that_cannot_work_is_one_line_exit_2(capsys, argv, fragment):
    code, out, err = run(capsys, "estimate", *argv, "--tokens", "100B", "--gpu", "H100",
                         "--gpus", "64")
    assert code == 2 and out == ""
    assert fragment in err and "To fix" in err and len(err.strip().splitlines()) == 1


def test_a_stored_report_that_does_not_parse_is_refused_by_show_id_in_both_forms(capsys,
                                                                                 tmp_path):
    # `probe show 1` showed invented values (schema 1, "0 of 8 GPUs") and exited 0
    import sqlite3

    from planner.store import db_path

    path = write_report_atomic(h100_report(bf16_tflops=600.0), tmp_path / "report.json")
    assert run(capsys, "probe", "ingest", str(path))[0] == 0
    with sqlite3.connect(db_path()) as conn:
        conn.execute("UPDATE reports SET report_json = 'not json'")
    for argv in (["probe", "show", "1"], ["probe", "show", "1", "--json"]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and "probe database is damaged" in err, argv
    code, out, _ = run(capsys, "probe", "show")  # the list says it cannot be read
    assert code == 0 and "cannot read it" in out


def test_cloud_with_a_gpu_reference_node_is_refused_not_ignored(capsys):
    # --cloud only tells apart instance types of one name; with --gpu it was silently dropped
    code = main(["estimate", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "8",
                 "--cloud", "gcp"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: --cloud tells apart instance types of the same name")
    assert "To fix: leave out --cloud, or give --instance TYPE with it" in err
