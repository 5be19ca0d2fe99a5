"""A vp pin refused on uneven stages says which stage it is about: "must divide the 11 layers
of each of the 3 pipeline stages" for 32 layers, whose last stage holds 10."""

from __future__ import annotations

from planner.cli import main


def test_uneven_stages_name_the_fullest(capsys):
    assert main(["estimate", "--model", "llama3-8b", "--gpu", "H100", "--gpus", "24",
                 "--tokens", "1T", "--pp", "3", "--vp", "2"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "must divide 11, the layers of the fullest of the 3 pipeline stages" in err
    assert "of each of the 3" not in err
