"""Values and options with a close match say it, and what an option takes is shown with an
example of its own (hostile sweep): `report --format htm` was refused though `--out x.htm` is
HTML, `--format htmll` suggested nothing, `plan --min-probability 90%` was told "e.g. 250000
or 0.5", and `plan --deadlin 14d` was offered "--deadline, --heads, --model"."""

from __future__ import annotations

import pytest

from planner.cli import main
from planner.cli._report_cmds import report_format
from planner.team import TeamPlanError


def run(capsys, *argv):
    code = main(list(argv))
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("fmt", "out"), [("htm", "x.html"), ("HTM", "x.htm"), ("htm", None),
                                          ("html", "x.htm")])
def test_format_htm_is_html_as_the_suffix_is(fmt, out):
    assert report_format(fmt, out) == "html"


def test_format_markdown_is_md():
    assert report_format("markdown", "budget.md") == "md"


@pytest.mark.parametrize(("fmt", "said"), [
    ("htmll", "--format 'htmll' is not one of html, pdf, md, csv. Did you mean 'html'? To fix: "
              "--format html"),
    ("pfd", "Did you mean 'pdf'? To fix: --format pdf"),
    ("xyz", "--format 'xyz' is not one of html, pdf, md, csv. To fix: e.g. --format html")])
def test_a_format_that_is_none_suggests_the_close_one(fmt, said):
    with pytest.raises(TeamPlanError) as caught:
        report_format(fmt, None)
    assert said in str(caught.value)


PLAN = ("plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "1d")


@pytest.mark.parametrize(("extra", "said"), [
    (("--min-probability", "90%"), "'--min-probability': it takes a fraction, not a "
                                   "percentage: write 90% as 0.9. To fix: see `gpuplan plan"),
    (("--min-probability=99.5%",), "write 99.5% as 0.995."),
    (("--commitment-use", "50%"), "'--commitment-use': it takes a fraction, not a percentage: "
                                  "write 50% as 0.5."),
    (("--min-probability", "high"), "'--min-probability': it takes a fraction in digits "
                                    "(e.g. 0.9)."),
    (("--checkpoint-storage-usd-per-gb-month", "cheap"), "'cheap' is not an amount of USD. "
                                                          "To fix: e.g. 0.023"),
    (("--budget", "lots"), "--budget 'lots' is not an amount of USD. To fix: e.g. 30000, 30k "
                           "or $30,000")])
def test_a_number_option_says_what_it_takes_in_its_own_terms(capsys, extra, said):
    code, err = run(capsys, *PLAN, *extra)
    assert code == 2 and said in err, err
    assert "250000" not in err or "--budget" in extra


@pytest.mark.parametrize(("typo", "close"), [
    ("--deadlin", "--deadline"), ("--min-prob", "--min-probability"), ("--tokns", "--tokens")])
def test_an_option_typo_suggests_only_close_options(capsys, typo, close):
    code, err = run(capsys, "plan", "--model", "gpt2", typo, "14d")
    assert code == 2 and f"No such option: {typo} (Possible options: {close}). To fix" in err, err


def test_an_option_like_none_suggests_nothing(capsys):
    code, err = run(capsys, "plan", "--model", "gpt2", "--xyzzy", "1")
    assert code == 2 and "No such option: --xyzzy. To fix: see `gpuplan plan --help`" in err
