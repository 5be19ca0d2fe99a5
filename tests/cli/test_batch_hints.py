"""A global batch too small for the plan is named in the fix (hostile sweep): an infeasible
plan whose data parallelism the batch caps said only "extend --deadline or allow more
clouds…", and a pinned micro-batch above the whole batch said "tensor parallelism must divide
the GPUs NVLink joins … raise --max-gpus" (more GPUs cannot help)."""

from __future__ import annotations

from planner.cli import main

PLAN = ("plan", "--model", "llama3-8b", "--tokens", "1T")


def _one_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def _error_line(capsys, *argv) -> str:
    return _one_error(capsys, [*PLAN, *argv])


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


def test_a_pinned_micro_batch_above_the_default_batch_says_so(capsys):
    # with the default batch the check was skipped: "tensor parallelism must divide the GPUs
    # NVLink joins … raise --max-gpus" for a micro-batch of 65,536 sequences
    err = _error_line(capsys, "--deadline", "14d", "--micro-batch", "65536")
    assert err.startswith("error: the pinned micro_batch=65536 is larger than the global batch "
                          "(the model's default at 1,024 GPUs: 256 sequences of 8,192). To fix: "
                          "lower --micro-batch to 256 or less, or set --global-batch-tokens to")


def test_offers_that_run_single_node_only_are_named_not_memory(capsys):
    # p5.4xlarge (one H100, no inter-node network in the catalog) runs as one node: "allow
    # GPUs with more memory, or check the model's size" missed why
    err = _error_line(capsys, "--deadline", "14d", "--gpu", "H100", "--exclude", "p5.48xlarge",
                      "--clouds", "aws")
    assert "no inter-node network in the catalog, so each runs as one node (at most 1 GPU)" \
        in err and "instance types with a cluster network" in err


ESTIMATE = ("estimate", "--tokens", "1T")


def _estimate_error(capsys, *argv) -> str:
    return _one_error(capsys, [*ESTIMATE, *argv])


def test_a_pinned_ep_no_layout_holds_names_ep_and_the_values_that_run(capsys):
    # "each data-parallel rank needs whole micro-batches. To fix: lower the micro-batch…"
    # for ep=8 on 4 GPUs, with no micro-batch pinned
    err = _estimate_error(capsys, "--model", "mixtral-8x7b", "--gpu", "H200", "--gpus", "4",
                          "--ep", "8")
    assert "expert parallelism spans at most the tp·dp·cp ranks" in err
    assert "To fix: pin --ep to 1, 2 or 4 (they run here), or unpin it" in err
    assert "micro-batch" not in err


def test_a_pinned_vp_no_pipeline_holds_names_vp(capsys):
    err = _estimate_error(capsys, "--model", "llama3-8b", "--gpu", "H100", "--gpus", "64",
                          "--vp", "3")
    assert "vp must divide a pipeline stage's layers (⌈32/pp⌉)" in err
    assert "To fix: pin --vp to 1, 2, 4 or 8 (they run here)" in err
