"""`plan` when no offer can be timed or fit, saying a fix that can work (hostile sweep): Gaudi
has no peak at any precision, yet the fix was "choose another --precision"; a runtime reserve
above every GPU's memory was told "raise --max-gpus, allow GPUs with more memory"."""

from __future__ import annotations

from planner.cli import main

PLAN = ("plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "14d")


def _error(capsys, *argv) -> str:
    assert main([*PLAN, *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def test_an_accelerator_without_peaks_is_not_sent_through_the_precisions(capsys):
    err = _error(capsys, "--gpu", "Gaudi")
    assert "no --precision can be timed on these" in err
    assert "choose another --precision" not in err


def test_an_accelerator_timed_at_another_precision_names_it(capsys):
    err = _error(capsys, "--gpu", "T4", "--clouds", "gcp")
    assert "To fix: choose --precision fp16, or accelerators that support bf16 with --gpu" in err


def test_a_reserve_above_every_gpu_says_to_lower_it(capsys):
    err = _error(capsys, "--assume", "runtime_reserve_gib=100", "--gpu", "H100")
    assert "the runtime reserve (runtime_reserve_gib = 100 GiB, kept on every GPU)" in err
    assert "To fix: lower it with --assume runtime_reserve_gib=… below 76.0" in err
    assert "max-gpus" not in err
