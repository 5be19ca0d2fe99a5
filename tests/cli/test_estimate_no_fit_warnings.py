"""An estimate that fits in no plan still says its workload's warnings before the error: a
config.json whose head_dim is a typo (65,536) counted 694B parameters, and the command said
only "693.9B parameters do not fit …", hiding the warning that explains why."""

from __future__ import annotations

import json

from planner.cli import main

LLAMA3_8B = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
             "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
             "vocab_size": 128256, "max_position_embeddings": 8192}


def test_the_workload_warnings_come_before_a_no_fit_error(tmp_path, capsys):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({**LLAMA3_8B, "head_dim": 65536}))
    assert main(["estimate", "--config", str(cfg), "--gpu", "H100", "--gpus", "8",
                 "--tokens", "1T"]) == 2
    err = capsys.readouterr().err
    warned, _, error = err.partition("error: ")
    assert "head_dim 65,536" in " ".join(warned.split())
    assert "do not fit" in " ".join(error.split())


def test_an_infeasible_plan_says_the_workloads_warnings(tmp_path, capsys):
    """`plan` with no configuration meeting the deadline printed the infeasible block alone:
    the head_dim warning that explains the 694B parameters was only in --json."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({**LLAMA3_8B, "head_dim": 65536}))
    assert main(["plan", "--config", str(cfg), "--tokens", "50B", "--deadline", "7d"]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert "infeasible:" in out and "warning:" in out and "head_dim 65,536" in out
