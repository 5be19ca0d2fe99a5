"""`gpuplan probe workload` says the workload's warnings as `estimate` does: a --seq-len beyond
gpt2's 1,024 learned positions was timed on the node without a word (estimate and plan said
it)."""

from __future__ import annotations

from planner.cli import main


def test_a_sequence_beyond_the_models_context_is_said(capsys):
    assert main(["probe", "workload", "--model", "gpt2", "--seq-len", "8192",
                 "--print-command"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("torchrun ")
    assert "warning: --seq-len 8,192 is above gpt2's context of 1,024" in captured.err
    assert "`seq_len`" not in captured.err  # the flag, as typed


def test_a_workload_within_its_context_says_nothing(capsys):
    assert main(["probe", "workload", "--model", "gpt2", "--print-command"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_model_too_large_for_the_default_token_count_is_not_asked_for_tokens(capsys):
    """`probe workload` has no --tokens, yet a model whose default count (20 per parameter)
    passed the bound was told to give --tokens (hostile sweep, 2026-12-08): the probe times
    layers, never a run."""
    assert main(["probe", "workload", "--params", "60T", "--print-command"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("torchrun ") and "--tokens" not in captured.err
