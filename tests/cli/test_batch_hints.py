"""A global batch too small for the plan is named in the fix (hostile sweep): an infeasible
plan whose data parallelism the batch caps said only "extend --deadline or allow more
clouds…", and a pinned micro-batch above the whole batch said "tensor parallelism must divide
the GPUs NVLink joins … raise --max-gpus" (more GPUs cannot help)."""

from __future__ import annotations

from planner.cli import main

PLAN = ("plan", "--model", "llama3-8b", "--tokens", "1T")


def _error_line(capsys, *argv) -> str:
    assert main([*PLAN, *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def test_an_infeasible_plan_capped_by_its_batch_names_the_batch(capsys):
    err = _error_line(capsys, "--deadline", "14d", "--global-batch-tokens", "8192", "--json")
    assert "raise --global-batch-tokens (now 8,192: 1 sequence a step, which caps data " \
        "parallelism)" in err


def test_an_infeasible_plan_with_the_default_batch_does_not_blame_it(capsys):
    err = _error_line(capsys, "--deadline", "1d", "--json")
    assert "global-batch" not in err


def test_a_pinned_micro_batch_above_the_batch_says_so(capsys):
    err = _error_line(capsys, "--deadline", "30d", "--global-batch-tokens", "16384",
                      "--micro-batch", "4", "--max-gpus", "8")
    assert err.startswith("error: the pinned micro_batch=4 is larger than the global batch "
                          "(16,384 tokens: 2 sequences of 8,192). To fix: lower --micro-batch "
                          "to 2 or less, or raise --global-batch-tokens to 32,768 or more")
