"""Instance type and region names are trimmed and matched in any case, as --gpu, --clouds and
--pricing were: `--instance ' p5.48xlarge'` was refused with "Did you mean 'p5.48xlarge'"
(which looked like the input), and `--region US-EAST-1`, `--instance P5.48XLARGE`,
`standard_nd96asr_v4` (Azure ignores case in VM sizes) were unknown. Two names that differ
only in case are told apart by their exact spelling, else refused with both named. And close
matches rank by edit distance: `us-esat-1` suggested 'us-west-1' before 'us-east-1'."""

from __future__ import annotations

import dataclasses
import json

import pytest
from small_catalog import packaged

from catalog import (
    Catalog,
    UnknownNameError,
    check_names,
    close_matches,
    select_offers,
)
from catalog._errors import AmbiguousNameError
from planner.cli import main


@pytest.mark.parametrize("typed,meant", [
    (" p5.48xlarge", "p5.48xlarge"),
    ("P5.48XLARGE", "p5.48xlarge"),
    ("standard_nd96asr_v4", "Standard_ND96asr_v4"),
    ("STANDARD_ND96ISR_H100_V5 ", "Standard_ND96isr_H100_v5"),
])
def test_instance_type_in_any_case(typed, meant):
    assert packaged().instance_type(typed).name == meant


def test_instance_type_in_any_case_checks_the_cloud():
    assert packaged().instance_type("Standard_nd96asr_v4", "Azure").cloud == "azure"
    with pytest.raises(Exception, match=r"'Standard_ND96asr_v4' is on azure, not aws"):
        packaged().instance_type("standard_nd96asr_v4", "aws")


def test_an_unknown_instance_type_is_still_unknown():
    with pytest.raises(UnknownNameError, match=r"unknown instance type 'p5.48xlarg'\. "
                                               r"Did you mean 'p5.48xlarge'"):
        packaged().instance_type("p5.48xlarg")


def test_the_filters_take_any_case_and_rows_spell_names_as_the_catalog_does():
    rows = select_offers(packaged(), regions=[" US-EAST-1"], instance_types=["P5.48XLARGE"],
                         pricing=["on_demand"])
    assert [(r.offer.instance_type, r.offer.region) for r in rows] == [("p5.48xlarge",
                                                                        "us-east-1")]
    azure = select_offers(packaged(), instance_types=["standard_nd96isr_h100_v5"],
                          clouds=["azure"], regions=["EASTUS"])
    assert azure and {r.offer.instance_type for r in azure} == {"Standard_ND96isr_H100_v5"}
    assert {r.offer.region for r in azure} == {"eastus"}


def test_a_region_of_another_cloud_is_named_in_the_catalogs_spelling():
    with pytest.raises(Exception, match=r"region 'us-east-1' is aws's, not in `clouds` gcp"):
        select_offers(packaged(), clouds=["gcp"], regions=["US-East-1"])


def test_check_names_returns_the_known_spelling():
    assert check_names("region", [" US-EAST-1 ", "eastus"], ["us-east-1", "eastus"]) == (
        "us-east-1", "eastus")
    with pytest.raises(UnknownNameError, match="unknown region 'us-east-9'"):
        check_names("region", ["us-east-9"], ["us-east-1"])


def test_names_that_differ_only_in_case_need_the_exact_spelling():
    known = ["Foo-1", "FOO-1", "bar"]
    assert check_names("instance type", ["FOO-1", "Foo-1", "BAR"], known) == (
        "FOO-1", "Foo-1", "bar")
    with pytest.raises(AmbiguousNameError) as caught:
        check_names("instance type", ["foo-1"], known, where="team.yaml: jobs[0]: exclude")
    assert str(caught.value) == (
        "team.yaml: jobs[0]: exclude: instance type 'foo-1' matches 'FOO-1' and 'Foo-1', which "
        "differ only in case. To fix: spell it exactly as one of them")
    assert isinstance(caught.value, UnknownNameError)  # caught where an unknown name is


def test_instance_types_that_differ_only_in_case_need_the_exact_spelling():
    cat = packaged()
    p5 = cat.instance_type("p5.48xlarge")
    twin = dataclasses.replace(p5, name="P5.48XLARGE", cloud="gcp")
    both = Catalog(name="test", path=cat.path, meta=cat.meta, accelerators=cat.accelerators,
                   instance_types=(*cat.instance_types, twin), offers=())
    assert both.instance_type("P5.48XLARGE") is twin
    assert both.instance_type("p5.48xlarge") is p5
    with pytest.raises(AmbiguousNameError, match="'P5.48XLARGE' and 'p5.48xlarge'"):
        both.instance_type("P5.48xlarge")


@pytest.mark.parametrize("typed,first", [
    ("us-esat-1", "us-east-1"),  # a swap of two letters: one edit
    ("us-wset-2", "us-west-2"),
    ("eatsus", "eastus"),
])
def test_the_closest_spelling_is_suggested_first(typed, first):
    assert close_matches(typed, packaged().regions())[0] == first


def test_close_matches_at_one_distance_keep_difflibs_order():
    # 'h10' is one edit from both: the higher ratio (H100's) first, as before
    assert close_matches("h10", ("A10", "H100")) == ("H100", "A10")
    assert close_matches("us-east-1", ()) == ()  # no names: no suggestion (not an error)


def test_the_cli_filters_take_any_case(capsys):
    code = main(["offers", "--region", "US-EAST-1", "--instance", "P5.48XLARGE", "--pricing",
                 "on_demand", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert [(r["instance_type"], r["region"]) for r in json.loads(out)] == [("p5.48xlarge",
                                                                            "us-east-1")]


def test_the_cli_suggests_the_swapped_letters_first(capsys):
    assert main(["offers", "--region", "us-esat-1"]) == 2
    assert "Did you mean 'us-east-1', " in capsys.readouterr().err


@pytest.mark.parametrize("instance", [" p5.48xlarge", "standard_nd96asr_v4"])
def test_estimate_takes_an_instance_type_in_any_case(capsys, instance):
    code = main(["estimate", "--model", "llama3-8b", "--tokens", "10B", "--instance",
                 instance, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["hardware"]["instance_type"] == instance.strip().replace(
        "standard_nd96asr_v4", "Standard_ND96asr_v4")


@pytest.mark.parametrize("a,b,edits", [
    ("us-esat-1", "us-east-1", 1), ("us-esat-1", "us-west-1", 2), ("kitten", "sitting", 3),
    ("", "abc", 3), ("abc", "", 3), ("ca", "abc", 3),  # (optimal string alignment: not 2)
    ("same", "same", 0),
])
def test_osa_distance(a, b, edits):
    from catalog._edit_distance import osa_distance

    assert osa_distance(a, b) == edits
