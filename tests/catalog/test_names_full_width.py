"""Names typed in full-width letters (an East Asian input method's `Ｈ１００`) and an estimate
given several GPUs: both were refused with no way forward ("unknown GPU 'Ｈ１００'" with no
suggestion; `estimate --gpu H100,A10G` said "unknown GPU" as if the names were wrong)."""

from __future__ import annotations

import pytest

from catalog import close_matches


@pytest.mark.parametrize("name,expected", [
    ("Ｈ１００", "H100"),
    ("ｌｌａｍａ3-8b", "llama3-8b"),
    ("ｐ５．４８ｘｌａｒｇｅ", "p5.48xlarge"),
])
def test_full_width_names_suggest_their_plain_spelling(name, expected):
    assert close_matches(name, ("H100", "H800", "llama3-8b", "llama2-7b", "p5.48xlarge",
                                "p4d.24xlarge"))[0] == expected


def test_the_cli_suggests_a_plain_gpu_for_a_full_width_one(capsys):
    from planner.cli import main

    assert main(["estimate", "--model", "llama3-8b", "--gpu", "Ｈ１００", "--gpus", "8"]) == 2
    assert "Did you mean 'H100'" in capsys.readouterr().err


@pytest.mark.parametrize("gpu,first,listed", [
    ("H100,A10G", "H100", "H100,A10G"),
    (" L4 , A100-80GB ,", "L4", "L4,A100-80GB"),
])
def test_an_estimate_of_several_gpus_points_to_plan(capsys, gpu, first, listed):
    from planner.cli import main

    assert main(["estimate", "--model", "llama3-8b", "--gpu", gpu, "--gpus", "8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "an estimate times one accelerator" in err
    assert f"--gpu {first})" in err and f"`gpuplan plan --gpu {listed}`" in err


def test_a_lone_comma_is_an_unknown_gpu_not_several(capsys):
    from planner.cli import main

    assert main(["estimate", "--model", "llama3-8b", "--gpu", ",", "--gpus", "8"]) == 2
    assert "unknown GPU ','" in capsys.readouterr().err


@pytest.mark.parametrize("name,expected", [
    ("H1OO", "H100"),  # two letters O (a team file's `accelerators: [H1OO]` got no suggestion)
    ("us-east-l", "us-east-1"),
    ("p5.48xIarge", "p5.48xlarge"),  # a capital i for the l
])
def test_letters_typed_for_look_alike_digits_suggest_the_name(name, expected):
    assert expected in close_matches(name, ("H100", "H200", "us-east-1", "us-west-1",
                                            "p5.48xlarge"))


def test_words_with_those_letters_suggest_nothing_new():
    assert close_matches("pool", ("H100", "p001")) == ()
