"""A name's first letters suggest the names it begins where none looks alike: `--target sky`
got no suggestion (difflib rates 'sky' against 'skypilot' 0.55, under its 0.6 cutoff)."""

from __future__ import annotations

import pytest

from catalog import close_matches


@pytest.mark.parametrize("name,known,expected", [
    ("sky", ("dstack", "skypilot"), ("skypilot",)),
    ("TOR", ("dstack", "skypilot", "torchrun"), ("torchrun",)),
    ("ds", ("dstack", "skypilot"), ()),  # two letters name too little
    ("xyz", ("dstack", "skypilot"), ()),
    ("skypilt", ("dstack", "skypilot"), ("skypilot",)),  # look-alikes first, as before
])
def test_close_matches(name, known, expected):
    assert close_matches(name, known) == expected


def test_the_cli_suggests_by_prefix(capsys):
    from planner.cli import main

    assert main(["launch", "probes", "--target", "sky", "--instance", "p5.48xlarge"]) == 2
    assert "Did you mean 'skypilot'?" in capsys.readouterr().err
