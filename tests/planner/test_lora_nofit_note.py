"""A LoRA run that does not fit says the weights are modelled in bf16: a 70B LoRA "on one
80 GB GPU" is usually 4-bit QLoRA, which gpuplan does not model (sweep)."""

from __future__ import annotations


def test_a_lora_run_that_does_not_fit_says_qlora_is_not_modelled(capsys):
    from planner.cli import main

    assert main(["estimate", "--model", "llama3-70b", "--finetune", "lora", "--gpu", "H100",
                 "--gpus", "1", "--tokens", "1B"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "LoRA is modelled over bf16 weights: 4-bit QLoRA is not modelled. To fix:" in err
    assert main(["estimate", "--model", "llama3-70b", "--gpu", "H100", "--gpus", "1",
                 "--tokens", "1B"]) == 2
    assert "QLoRA" not in capsys.readouterr().err  # full training: not said


def test_a_large_smallest_setup_is_said_with_thousands_separators(capsys):
    """"8200 nodes (65600 GPUs)" read as one number; the value to pass stays as typed. (20T
    parameters need thousands of GPUs; gpt2 at a 10M-token sequence was the example, until
    the search found that it fits 64.)"""
    import re

    from planner.cli import main

    assert main(["estimate", "--params", "20T", "--tokens", "1T", "--gpu", "H100"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    said = re.search(r"The smallest setup that fits is (\d{1,3}(?:,\d{3})+) nodes "
                     r"\((\d{1,3}(?:,\d{3})+) GPUs\)", err)
    assert said, err
    assert f"pass --gpus {said[2].replace(',', '')}." in err, err
