"""catalog's YAML reader on large and hostile texts: libyaml's parser where PyYAML has it, with
every check of the pure-Python loader (YAML 1.2 numbers, duplicate keys, depth, node count,
aliases) and the same values and messages; the node count stops composing mid-file; each limit
says its own fix, and a .json file is called JSON."""

from __future__ import annotations

import math

import pytest
import yaml
from hostile.cases_files import BILLION_LAUGHS, GOOD_TEAM
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from time_limit import cpu_ratio

from catalog import CatalogFileError, load_yaml_text
from catalog import _yaml as yaml_module

HAS_LIBYAML = yaml.__with_libyaml__  # PyYAML built with libyaml (its wheels are)


def _error(text: str, **kwargs) -> str:
    with pytest.raises(CatalogFileError) as info:
        load_yaml_text(text, **{"what": "f", **kwargs})
    message = str(info.value)
    assert "\n" not in message and "To fix: " in message, message
    return message


def _outcome(text: str, *, pure: bool):
    """("ok", the value's types and reprs) or ("error", message), read by libyaml or PyYAML
    alone (the reprs, not the values: nan is not nan)."""
    saved = yaml_module._CLoader
    if pure:
        yaml_module._CLoader = None
    try:
        return ("ok", _shape(load_yaml_text(text, what="f.yaml")))
    except CatalogFileError as exc:
        return ("error", str(exc))
    finally:
        yaml_module._CLoader = saved


def _shape(value):
    """The types inside ``value`` (1 == 1.0 == True, so equal values may still differ)."""
    if isinstance(value, dict):
        return [(_shape(k), _shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_shape(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return type(value).__name__, repr(value)


def _many_jobs(n: int) -> str:
    job = ("  - name: job-{i:05d}\n    workload: {{model: llama3-8b, tokens: 1T}}\n"
           "    earliest_start: 2027-03-01\n    deadline: 2027-04-15\n    team: research\n")
    return "jobs:\n" + "".join(job.format(i=i) for i in range(n))


# ---- the same reading with libyaml as without it -------------------------------------------------

CORPUS = [
    GOOD_TEAM, BILLION_LAUGHS,
    "a: 010\nb: 0600000\nc: 1:30\nd: 0o17\ne: 0x1f\nf: 1_000\ng: 190:20:30.15\nh: 0b11\n"
    "i: -5\nj: 2.5e9\nk: 1e13\nl: .inf\nm: -.5\nn: '010'\no: 0x_\np: 1e400\nq: .nan\n",
    "deadline: 2027-02-30\nstart: 2027-03-01\n",
    "base: &b {x: 1, y: 2}\njob:\n  <<: *b\n  y: 3\nlist: [*b, *b]\n",
    "a: yes\nb: Off\nc: ~\nd: null\ne: ''\nf: \"caf\\u00e9\"\ng: 'it''s'\n",
    "a: |\n  x\n   y\n\nb: >-\n  x\n  y\n", "- - - a\n", "a:\n- b\n- c\n", "{a: [1, {b: c}]}",
    '{"jobs": [{"name": "a", "priority": 2}]}', "a: 1\r\nb: 2\r\n", "a: x\u2028y\n",
    "a: 1\na: 2\n", "a: [1,\n", "x: &a [*a]\n", "a: *nope\n", "a: &x 1\nb: &x 2\n",
    "a: 1\n--- \nb: 2\n", "a: " + "1" * 41 + "\n", "[" * 33 + "]" * 33, "a: b: c\n",
    "? [a, b]\n: 1\n", "a: 'open\n", "%YAML 1.3\n---\na: 1\n", "{a: 1, a: 2}",
    "jobs:\n" + "  - [1, 2, 3, 4]\n" * 21_000,
]


@pytest.mark.skipif(not HAS_LIBYAML, reason="PyYAML without libyaml")
@pytest.mark.parametrize("text", CORPUS, ids=range(len(CORPUS)))
def test_libyaml_reads_as_pure_python_does(text):
    assert _outcome(text, pure=False) == _outcome(text, pure=True)


YAMLISH = st.text(alphabet=st.sampled_from(list("[]{}:,-&*|>'\"#%@` \n.0123456789eE+_"
                                                "abxyzTrueNnulof\x85\u2028\r")), max_size=120)


@pytest.mark.skipif(not HAS_LIBYAML, reason="PyYAML without libyaml")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(YAMLISH)
def test_libyaml_and_pure_python_agree_on_any_text(text):
    assert _outcome(text, pure=False) == _outcome(text, pure=True)


@pytest.mark.skipif(not HAS_LIBYAML, reason="PyYAML without libyaml")
@pytest.mark.parametrize("text", ["a:\tb\n", "a: {b: c, d?e: 1}\n", "a: !\n", "a: x\n\ufeffb: 1\n",
                                  "a: >#\n  x\n", "a: |-2#\n  x\n"])
def test_texts_libyaml_reads_otherwise_are_read_by_pure_python(text, monkeypatch):
    """libyaml accepts a tab after "key:", "?" in a flow key, a stray byte-order mark and a
    "#" stuck to a block scalar's ">", and reads a bare "!" as "" (PyYAML: null): such texts
    never reach it."""
    expected = _outcome(text, pure=True)

    def refuse(*args, **kwargs):
        raise AssertionError("libyaml was asked to read this text")

    monkeypatch.setattr(yaml_module, "_CLoader", refuse)
    assert _outcome(text, pure=False) == expected


@pytest.mark.skipif(not HAS_LIBYAML, reason="PyYAML without libyaml")
def test_a_plain_team_file_is_read_by_libyaml(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the pure-Python parser read a text libyaml reads")

    monkeypatch.setattr(yaml_module, "_PyLoader", refuse)
    assert load_yaml_text(GOOD_TEAM, what="team.yaml")["name"] == "hostile"


# ---- large files: quick, and stopped mid-file ----------------------------------------------------

def test_too_many_values_stop_composing_mid_file():
    """A text of more than 100,000 values is refused when the count runs out, not after the
    whole file is composed: a syntax error further on is never reached (it was)."""
    text = "jobs:\n" + "  - [1, 2, 3, 4]\n" * 21_000 + "broken: [\n"
    message = _error(text)
    assert "expands to more than 100,000 values (line 2)" in message, message
    assert "write fewer entries" in message


def test_the_line_named_is_the_collection_holding_most_values():
    text = "name: x\njobs:\n  - a\n  - exclude: [" + ", ".join(["aws"] * 100_001) + "]\n"
    assert "(line 4)" in _error(text)




@pytest.mark.skipif(not HAS_LIBYAML, reason="PyYAML without libyaml")
def test_a_large_team_file_is_read_about_as_fast_as_pyyaml_c_loader():
    """1,000 jobs took 4.5× (5,000 jobs: 5.7×) as long as PyYAML's CSafeLoader, all in the
    pure-Python parser: 6–9 s of CPU for the 5,000 jobs a team loader then refused. Now about
    1×, 1.6× for 5,000 jobs, with every check CSafeLoader lacks."""
    text = _many_jobs(1_000)
    assert len(load_yaml_text(text, what="j1000.yaml")["jobs"]) == 1_000
    ours, reference = cpu_ratio(lambda: load_yaml_text(text, what="j1000.yaml"),
                                lambda: yaml.load(text, Loader=yaml.CSafeLoader))  # noqa: S506
    assert ours < 3 * reference, (ours, reference)


# ---- each limit's own fix ------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "kwargs", "says"), [
    ("priority: " + "1" * 45 + "\n", {},
     "a 45-digit number (at most 40 digits). To fix: write a smaller number."),
    ("[" * 33 + "]" * 33, {}, "nesting deeper than 32 levels. To fix: nest at most 32 levels."),
    ("a: " + "[" * 8 + "]" * 8, {"max_depth": 8},
     "nesting deeper than 8 levels. To fix: nest at most 8 levels."),
    ("a: !!float 1:30\n", {}, "To fix: write the number in base 10 (1:30 is 90)."),
    # these two were tracebacks (KeyError, IndexError) from PyYAML's own constructors
    ("a: !!bool maybe\n", {}, "'maybe' is not a boolean (true or false). To fix: write true or "
                              "false."),
    ("priority: !!float\n", {}, "an empty value tagged !!float. To fix: write a number, or "
                                "remove the tag."),
])
def test_each_limit_says_its_own_fix(text, kwargs, says):
    message = _error(text, **kwargs)
    assert says in message and "quote values" not in message, message


@pytest.mark.parametrize(("text", "says"), [
    ('{"jobs": ' + "[" * 40 + "]" * 40 + "}", "deep.json: invalid JSON at line 1, column 41: "
                                               "nesting deeper than 32 levels"),
    ('{"jobs": [{"name": "a",, }]}', "tj2.json: invalid JSON at line 1, column 24"),
    ('{"a": "x\x00"}', "tj3.json: invalid JSON at line 1: character #x0000"),
])
def test_a_json_file_is_called_json(text, says):
    name = says.split(":")[0]
    message = _error(text, what=name)
    assert says in message and "YAML at" not in message and "quote values" not in message, \
        message


def test_a_yaml_file_is_still_called_yaml():
    assert "team.yaml: invalid YAML at line 1" in _error("a: [1,", what="team.yaml")
    assert yaml.safe_load("a: 1") == {"a": 1}  # PyYAML's own loader is left as it was


@pytest.mark.parametrize("pure", [False, True] if HAS_LIBYAML else [True])
def test_an_escaped_utf16_pair_is_read_as_its_character(pure):
    """A team file written by json.dump holds 🚀 as "\\ud83d\\ude80", which YAML read as two
    lone surrogates: the name was refused as not printable (hostile sweep, 2026-12-08). A lone
    one stays, for the name checks to refuse."""
    import json

    text = json.dumps({"name": "train 🚀", "🚀": ["\ud83d alone"]})
    assert "\\ud83d\\ude80" in text
    assert _outcome(text, pure=pure) == ("ok", _shape({"name": "train 🚀",
                                                       "🚀": ["\ud83d alone"]}))
