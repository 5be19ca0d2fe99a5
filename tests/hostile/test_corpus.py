"""The hostile-input corpus: every case in ``cases_*.py`` through the real CLI (``_runner``)."""

from __future__ import annotations

import pytest

from ._runner import all_cases, check_case, params

CASES = all_cases()


@pytest.mark.parametrize("case", params(CASES))
def test_hostile_input_gets_exit_0_or_one_clear_line(case, tmp_path):
    check_case(case, tmp_path)


def test_the_corpus_covers_every_surface():
    prefixes = {c.id.split("-")[0] for c in CASES}
    assert {"team", "actuals", "quota", "config", "out", "tokens", "count", "deadline"} <= prefixes
    assert len(CASES) >= 120
    assert sum(c.expect == 2 for c in CASES) >= 100  # mostly bad input, with good beside it
