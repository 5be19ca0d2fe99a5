"""A number typed with thousands separators is told how to write it ("write 250,000 as
250000"): it was told only "it takes a number in digits", which 250,000 looks like."""

from __future__ import annotations

import pytest
from cli_terminal import run

PLAN = ("plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "14d")


@pytest.mark.parametrize(("option", "value", "plain"), [  # (--budget takes 250,000: money)
    ("--max-gpus", "1,024", "1024"), ("--max-gpus", "16,384", "16384")])
def test_separators_are_named_with_the_value_to_write(capsys, option, value, plain):
    code, _, err = run(capsys, *PLAN, option, value)
    line = " ".join(err.split())
    assert code == 2 and f"write {value} as {plain}" in line
    assert line.count("error:") == 1


def test_other_bad_numbers_keep_their_words(capsys):
    code, _, err = run(capsys, *PLAN, "--budget", "12,34")
    assert code == 2 and "use a dot for decimals (12.34)" in err and "write" not in err
    code, _, err = run(capsys, "estimate", "--model", "gpt2", "--gpu", "H100", "--gpus", "2,048")
    assert code == 2 and "write 2,048 as 2048" in " ".join(err.split())
