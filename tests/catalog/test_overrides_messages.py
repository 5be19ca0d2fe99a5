"""What an overrides file's errors say (hostile sweep): a misspelt key names the closest one,
lists are plain text, an empty file is refused (not "overrides from empty.yaml" over list
prices), and YAML's 1e400, !!binary and !!set are quoted as the file writes them."""

from __future__ import annotations

import pytest

from catalog import OverrideError, load_overrides, load_yaml_text, parse_overrides
from planner.cli import main

GOOD_PRICE = {"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1",
              "pricing": "on_demand", "usd_per_hour": 3}


def _error(data) -> str:
    with pytest.raises(OverrideError) as info:
        parse_overrides(data, source="ov.yaml")
    message = str(info.value)
    assert "\n" not in message and "To fix:" in message
    return message


def _file_error(tmp_path, text: str) -> str:
    path = tmp_path / "ov.yaml"
    path.write_text(text)
    with pytest.raises(OverrideError) as info:
        load_overrides(path)
    return str(info.value)


def test_a_misspelt_field_names_the_closest_one_and_lists_the_fields_as_text():
    message = _error({"prices": [{**GOOD_PRICE, "usd_per_hourr": 3}]})
    # it said "unknown field(s) ['usd_per_hourr']; allowed: ['cloud', …]", no suggestion
    assert message == (
        "ov.yaml: prices[1]: unknown field 'usd_per_hourr'. Did you mean 'usd_per_hour'? To "
        "fix: use one of cloud, instance_type, region, pricing, usd_per_hour, offering_class, "
        "upfront (format: `gpuplan offers --help`, --overrides)")
    assert "Did you mean 'percent'" in _error({"discounts": [{"cloud": "aws", "percnt": 5}]})


def test_a_misspelt_top_level_key_names_the_closest_one():
    # it said "expected only the keys 'discounts' and 'prices'", whatever the key
    assert _error({"price": [GOOD_PRICE]}).startswith(
        "ov.yaml: unknown field 'price'. Did you mean 'prices'? To fix: use discounts and/or "
        "prices")
    assert "Did you mean 'discounts'?" in _error({"discount": [{"cloud": "aws", "percent": 5}]})


@pytest.mark.parametrize("entry,says", [
    ({"cloud": "awz", "percent": 5}, "unknown cloud 'awz'. Did you mean 'aws'?"),
    ({"cloud": "aws", "pricing": "on-demnd", "percent": 5},
     "unknown pricing model 'on-demnd'. Did you mean 'on_demand'?"),
])
def test_a_misspelt_cloud_or_pricing_names_the_closest_one(entry, says):
    message = _error({"discounts": [entry]})
    assert says in message and "[" not in message.split("To fix")[1]  # no Python list


def test_missing_fields_and_options_are_listed_as_text():
    message = _error({"prices": [{"cloud": "aws", "instance_type": "p5.48xlarge"}]})
    assert "missing region, pricing, usd_per_hour (a price needs cloud, instance_type, " \
           "region, pricing, usd_per_hour)" in message  # it said "missing ['region', …]"
    message = _error({"prices": [{**GOOD_PRICE, "pricing": "reserved_1y",
                                  "offering_class": "standrd"}]})
    assert "unknown offering_class 'standrd'. Did you mean 'standard'?" in message


@pytest.mark.parametrize("text", ["", "# only a comment\n", "{}\n", "prices: []\n",
                                  "discounts:\nprices: []\n"])
def test_a_file_without_entries_is_refused(tmp_path, text):
    # it was applied silently, and every plan said "overrides from empty.yaml"
    assert _file_error(tmp_path, text) == (
        f"{tmp_path / 'ov.yaml'}: has no entries under 'discounts' or 'prices', so it would "
        "change no price. To fix: add entries, e.g. discounts: [{cloud: aws, percent: 10}] "
        "(format: `gpuplan offers --help`, --overrides), or leave out --overrides")


def test_the_cli_refuses_an_empty_file_from_the_option_and_from_the_variable(
        tmp_path, monkeypatch, capsys):
    empty = tmp_path / "empty.yaml"
    empty.write_text("# no rates yet\n")
    assert main(["offers", "--instance", "p5.48xlarge", "--overrides", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "has no entries under 'discounts' or 'prices'" in err
    assert err.rstrip().endswith("or leave out --overrides") and err.count("\n") == 1
    monkeypatch.setenv("GPUPLAN_OVERRIDES", str(empty))
    assert main(["offers", "--instance", "p5.48xlarge"]) == 2
    err = capsys.readouterr().err
    assert f"GPUPLAN_OVERRIDES={empty}: " in err and "has no entries" in err
    assert "unset GPUPLAN_OVERRIDES" in err


def test_a_file_with_one_entry_is_still_fine(tmp_path):
    path = tmp_path / "ov.yaml"
    path.write_text("prices: []\ndiscounts: [{cloud: aws, percent: 10}]\n")
    assert len(load_overrides(path).discounts) == 1


@pytest.mark.parametrize("written", ["1e400", "-1e400", "1.5e999"])
def test_a_number_too_large_for_a_float_is_quoted_as_written(tmp_path, written):
    # YAML reads 1e400 as inf, and the message said "got inf"
    message = _file_error(tmp_path, "prices:\n  - {cloud: aws, instance_type: p5.48xlarge, "
                          f"region: us-east-1, pricing: on_demand, usd_per_hour: {written}}}\n")
    assert f"usd_per_hour must be a number from 1e-06 to 10,000 USD per instance-hour, got " \
           f"{written}. To fix" in message


@pytest.mark.parametrize("value,shown", [
    ("!!binary aGVsbG8=", "got a binary value (!!binary). To fix: write instance_type as text"),
    ("!!set {p5, p4d}", "got a set (!!set {p4d, p5}). To fix: write instance_type as text"),
])
def test_yaml_binary_and_set_values_are_named_not_shown_as_python(tmp_path, value, shown):
    # they said "got b'hello'" and "got {'p5', 'p4d'}", and "To fix: give instance_type a
    # value, or remove the field" for a field that is given, and required
    message = _file_error(tmp_path, f"prices:\n  - {{cloud: aws, instance_type: {value}, "
                          "region: us-east-1, pricing: on_demand, usd_per_hour: 3}\n")
    assert message.endswith(shown) and "b'" not in message and "'p5'" not in message


def test_the_yaml_reader_keeps_values_equal_and_picklable():
    import copy
    import math
    import pickle

    data = load_yaml_text("a: 1e400\nb: !!binary aGk=\nc: !!set {x, y}\nd: .inf\ne: 1.5\n",
                          what="t")
    assert math.isinf(data["a"]) and data["b"] == b"hi" and data["c"] == {"x", "y"}
    assert [repr(data[k]) for k in "abcde"] == [
        "1e400", "a binary value (!!binary)", "a set (!!set {x, y})", ".inf", "1.5"]
    assert f"{data['a']:,.0f}" == "1e400" and str(data["a"]) == "1e400"
    for again in (pickle.loads(pickle.dumps(data)), copy.deepcopy(data)):
        assert again == data and repr(again["a"]) == "1e400"
    # a set's text on one line: a message is one line
    assert "\n" not in repr(load_yaml_text('s: !!set {"a\\nb"}\n', what="t")["s"])


@pytest.mark.parametrize(("data", "shown"), [(5, "(5)"), (True, "(true)"), ("x", "('x')")])
def test_a_top_level_value_is_shown_as_the_file_writes_it(data, shown):
    """A file holding `5` was "a single value (int)", `true` "(bool)": Python's names."""
    with pytest.raises(OverrideError) as info:
        parse_overrides(data, source="o.yaml")
    assert f"found a single value {shown}" in str(info.value)


@pytest.mark.parametrize("entry,said", [
    ("prices:\n  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1, pricing: "
     "on_demand, usd_per_hour: true}\n", "USD per instance-hour, got true. To fix"),
    ("discounts:\n  - {cloud: null, percent: 10}\n", "cloud must be non-empty text, got null."),
])
def test_a_value_is_quoted_as_yaml_writes_it(tmp_path, entry, said):
    # Python's spelling ("got True", "got None") where the file says true and null
    assert said in _file_error(tmp_path, entry)
