"""`catalog refresh` stopped by Ctrl-C: after the new catalog was made active, the command
said only "interrupted" (read as a refresh that failed), or printed its success and then
"interrupted" (hostile sweep). Either way it now says the refresh was applied."""

from __future__ import annotations

import functools
import json

import pytest
from fake_sources import OneRegionAws

import catalog
from catalog import _refresh, active_catalog_name
from planner.cli import _refresh_cmd, main


@pytest.fixture
def fake_refresh(monkeypatch):
    real = _refresh.refresh_catalog
    monkeypatch.setattr(catalog, "refresh_catalog",
                        functools.partial(real, sources={"aws": OneRegionAws()}))


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_an_interrupt_after_the_switch_says_the_refresh_was_applied(capsys, monkeypatch,
                                                                    fake_refresh):
    # the diff is worked out after the new catalog was made active
    monkeypatch.setattr(_refresh, "_diff", _interrupt)
    code = main(["catalog", "refresh", "--cloud", "aws", "--regions", "us-east-1"])
    out, err = capsys.readouterr()
    now = active_catalog_name()
    assert now.startswith("refreshed-")
    assert code == 130 and out == ""
    assert f"the refresh was applied before it was stopped: {now} is now the active" in err
    assert err.rstrip().endswith("files are written whole or not at all"), err


def test_an_interrupt_while_the_summary_prints_says_the_refresh_was_applied(capsys,
                                                                            monkeypatch,
                                                                            fake_refresh):
    real_print = _refresh_cmd._print_refresh

    def print_then_stop(result, **kwargs):
        real_print(result, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(_refresh_cmd, "_print_refresh", print_then_stop)
    code = main(["catalog", "refresh", "--cloud", "aws", "--regions", "us-east-1"])
    out, err = capsys.readouterr()
    now = active_catalog_name()
    assert code == 130 and f"→ {now} (now active" in out
    assert f"applied before it was stopped: {now} is now the active catalog" in err


def test_an_interrupt_before_the_switch_says_nothing_was_applied(capsys, monkeypatch,
                                                                 fake_refresh):
    monkeypatch.setattr(_refresh, "install", _interrupt)
    code = main(["catalog", "refresh", "--cloud", "aws", "--regions", "us-east-1"])
    _, err = capsys.readouterr()
    assert code == 130 and active_catalog_name() == "packaged"
    assert "applied" not in err and "interrupted" in err


def test_a_refresh_that_finishes_says_nothing_more(capsys, fake_refresh):
    code = main(["catalog", "refresh", "--cloud", "aws", "--regions", "us-east-1", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["name"] == active_catalog_name()
    assert "applied" not in err
