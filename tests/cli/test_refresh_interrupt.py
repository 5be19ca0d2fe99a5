"""`catalog refresh` stopped by Ctrl-C: after the new catalog was made active, the command
said only "interrupted" (read as a refresh that failed), or printed its success and then
"interrupted" (hostile sweep). Either way it now says the refresh was applied."""

from __future__ import annotations

import functools
import json
from dataclasses import replace

import pytest

import catalog
from catalog import _refresh, active_catalog_name, load_catalog
from catalog.sources import CloudData
from planner.cli import _refresh_cmd, main


class _OneRegionAws:
    """The packaged on-demand AWS offers of one region, 1 % dearer."""

    cloud = "aws"

    def fetch(self, regions, progress):
        packaged = load_catalog("packaged")
        offers = tuple(replace(o, usd_per_hour=round(o.usd_per_hour * 1.01, 5), source="fake",
                               flags=(), flag_reasons="")
                       for o in packaged.offers
                       if o.cloud == "aws" and o.region == "us-east-1"
                       and o.pricing == "on_demand" and o.usd_per_hour is not None)
        used = {o.instance_type for o in offers}
        types = tuple(t for t in packaged.instance_types if t.cloud == "aws" and t.name in used)
        return CloudData(cloud="aws", instance_types=types, offers=offers,
                         as_of=offers[0].as_of, source="fake", regions=("us-east-1",),
                         covered_pricing=("on_demand",))


@pytest.fixture
def fake_refresh(monkeypatch):
    real = _refresh.refresh_catalog
    monkeypatch.setattr(catalog, "refresh_catalog",
                        functools.partial(real, sources={"aws": _OneRegionAws()}))


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
