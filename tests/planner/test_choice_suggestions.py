"""A misspelt choice gets the close match the catalog's names get ("Did you mean"): the
workload's enumerations and --by said only "is not one of …" (CLI sweep)."""

from __future__ import annotations

import pytest

from planner.cli import main


@pytest.mark.parametrize("args,says", [
    (["estimate", "--model", "llama3-8b", "--framework", "megatronn"],
     "--framework 'megatronn' is not one of megatron, fsdp, deepspeed, hf. Did you mean "
     "'megatron'? To fix"),
    (["estimate", "--model", "llama3-8b", "--precision", "bf61"], "Did you mean 'bf16'?"),
    (["estimate", "--model", "llama3-8b", "--optimizer", "adamm"], "Did you mean 'adam"),
    (["plan", "--model", "llama3-8b", "--tokens", "1B", "--by", "acelerator"],
     "Did you mean 'accelerator'? To fix: pick one of them"),
])
def test_a_misspelt_choice_names_the_close_one(args, says, capsys):
    assert main(args) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert says in err, err


def test_a_choice_close_to_nothing_suggests_nothing(capsys):
    assert main(["plan", "--model", "llama3-8b", "--tokens", "1B", "--by", "gpus"]) == 2
    assert "Did you mean" not in capsys.readouterr().err
