"""`--cloud aws gcp` (the form one types) got "unexpected extra argument (gcp)" and a pointer
to --help, where the README promised the commas fix (docs review, 2026-12-08)."""

from __future__ import annotations

import pytest

from planner.cli import main


@pytest.mark.parametrize("argv, fix", [
    (["offers", "--cloud", "aws", "gcp", "--limit", "1"], "--cloud aws,gcp"),
    (["offers", "--gpu", "h100", "a100"], "--gpu h100,a100"),
    (["plan", "--model", "gpt2", "--tokens", "1B", "--clouds", "aws", "gcp", "azure"],
     "--clouds aws,gcp,azure"),
])
def test_names_separated_by_spaces_get_the_commas_fix(capsys, argv, fix):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Got unexpected extra argument" in err
    assert err.rstrip().endswith(f"To fix: separate the names with commas: {fix}")


def test_another_extra_argument_still_points_to_the_help(capsys):
    assert main(["offers", "--limit", "3", "x"]) == 2
    assert capsys.readouterr().err.rstrip().endswith("To fix: see `gpuplan offers --help`")


@pytest.mark.parametrize("argv", [
    ["estimate", "--model", "gpt2", "--tokens", "1B", "--gpu", "h100", "a100"],
    ["launch", "probes", "--target", "skypilot", "--instance", "p5.48xlarge", "p4d.24xlarge"]])
def test_an_option_of_one_name_is_not_told_to_take_a_list(capsys, argv):
    """`estimate --gpu h100 a100` was told `--gpu h100,a100`, which estimate refuses: it
    times one accelerator (diff review, 2026-12-08)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "separate the names with commas" not in err and "--help" in err
