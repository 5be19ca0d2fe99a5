"""Five mends to `offers`, `gpus` and the names and dates under them, each a regression test
named after the bug it pins:

1. "did you mean" compared case-sensitively first: `--gpu mi300` got 'B300', not 'MI300X';
2. a bare family name picked one size silently: `--gpu a100` meant the 40 GB board alone (in
   `offers`, `plan` and `estimate` alike), `V100` the 16 GB one;
3. the empty-result note never named --usable / --flagged: `--pricing capacity_block --usable`
   said "without --pricing: 13,829 offers", not that all 6 capacity blocks are expired;
4. the catalog's age and an override's date used the machine's local date, not the day the rest
   of gpuplan counts as today (UTC, or GPUPLAN_TODAY);
5. a private rate of $0.000001/h read "0.000" in `offers` and "0.00" in `gpus`, and its rate per
   GPU-hour 0.0 in `offers --json`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from catalog import UnknownNameError, close_matches, load_catalog
from catalog._aliases import build_alias_index, resolve
from planner.cli import main

A100S = ("A100-PCIe-80GB", "A100-SXM4-40GB", "A100-SXM4-80GB")
V100S = ("V100-PCIe-16GB", "V100-SXM2-16GB", "V100-SXM2-32GB")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("error: ") and "To fix: " in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


# -- 1. close matches compare case-folded ----------------------------------------------------

def test_lower_case_gpu_name_is_offered_its_upper_case_match(capsys):
    """`--gpu mi300` said "Did you mean 'B300'?": B300 matched case-sensitively, so the
    case-blind pass that finds MI300X never ran."""
    code, _, err = run(capsys, "offers", "--gpu", "mi300")
    line = one_error_line(err)
    assert code == 2 and "Did you mean 'MI300X'" in line
    assert close_matches("mi300", ("B300", "MI300X", "AI100"))[0] == "MI300X"


def test_case_never_hides_a_match_of_any_kind():
    """The one "did you mean" serves every kind of name (jobs, presets, regions …): job 'eval'
    was offered 'val', never 'EVAL'."""
    exc = UnknownNameError("job", "eval", ["EVAL", "val", "pretrain"])
    assert exc.suggestions == ("EVAL", "val") and "Did you mean 'EVAL', 'val'?" in str(exc)


def test_names_that_fold_alike_are_shown_in_the_first_spelling_given(cat):
    """TPU-v5p and its alias tpu-v5p fold alike: the canonical name, listed first, is shown
    (`--gpu tpu-V5PX` was offered 'tpu-v5p' alone)."""
    assert close_matches("tpu-V4", ("TPU-v4", "tpu-v4")) == ("TPU-v4",)
    with pytest.raises(UnknownNameError) as exc:
        cat.resolve_accelerator("tpu-V5PX")
    assert exc.value.suggestions[0] == "TPU-v5p" and "tpu-v5p" not in exc.value.suggestions


# -- 2. a family name is refused with its variants --------------------------------------------

@pytest.mark.parametrize("name,variants", [
    ("a100", A100S), ("A100", A100S), ("NVIDIA A100", A100S), ("V100", V100S),
    ("Tesla V100", V100S), ("A100-SXM4", A100S[1:]), ("v100_sxm2", V100S[1:]),
])
def test_a_bare_family_name_names_none_of_its_sizes(cat, name, variants):
    """`offers --gpu a100` listed A100-SXM4-40GB alone (275 offers, none of the 80 GB ones)."""
    from catalog._errors import AmbiguousNameError

    with pytest.raises(AmbiguousNameError) as exc:
        cat.resolve_accelerator(name)
    assert isinstance(exc.value, UnknownNameError)  # callers that catch unknown names catch it
    assert exc.value.suggestions == variants
    message = str(exc.value)
    assert all(v in message for v in variants) and "To fix: name one of them" in message


@pytest.mark.parametrize("argv", [
    ("offers", "--gpu", "a100"),
    ("offers", "--gpu", "H100,V100"),
    ("plan", "--model", "llama2-7b", "--tokens", "1e9", "--deadline", "30d", "--gpu", "A100"),
    ("estimate", "--model", "llama2-7b", "--tokens", "1e9", "--gpu", "A100"),
])
def test_offers_plan_and_estimate_refuse_a_family_name_alike(capsys, argv):
    """`plan --gpu A100` planned on the 40 GB board only, `estimate --gpu A100` modelled it:
    the same name now means the same (nothing) everywhere."""
    code, out, err = run(capsys, *argv)
    line = one_error_line(err)
    assert code == 2 and not out.strip()
    assert "is ambiguous" in line and ("A100-SXM4-80GB (A100-80GB)" in line
                                       or "V100-SXM2-32GB (V100-32GB)" in line)


def test_a_catalog_whose_rows_call_the_40gb_board_a100_refuses_it_too(cat):
    """The accelerator rows (the packaged ones, and any stored catalog's) may list A100 among
    the 40 GB board's aliases: the rule (a name AWS's API uses for two boards is nobody's
    alias), not the row, decides — and the refused name is never suggested."""
    from catalog._errors import AmbiguousNameError

    older = tuple(dataclasses.replace(a, aliases=tuple(dict.fromkeys(("A100", *a.aliases))))
                  if a.name == "A100-SXM4-40GB" else a for a in cat.accelerators)
    index = build_alias_index(older)
    names = [n for a in older for n in (a.name, *a.aliases)]
    with pytest.raises(AmbiguousNameError):
        resolve("A100", index, names)
    with pytest.raises(UnknownNameError) as exc:
        resolve("A10Q", index, names)
    assert "'A100'" not in str(exc.value)
    with pytest.raises(UnknownNameError) as exc:  # the packaged catalog alike
        cat.resolve_accelerator("A10Q")
    assert "'A100'" not in str(exc.value)


@pytest.mark.parametrize("name,canonical", [
    ("H100", "H100-SXM5-80GB"), ("A100-40GB", "A100-SXM4-40GB"), ("a100-80gb", "A100-SXM4-80GB"),
    ("V100-16GB", "V100-SXM2-16GB"), ("nvidia-tesla-a100", "A100-SXM4-40GB"),
    ("nvidia-tesla-v100", "V100-SXM2-16GB"), ("Gaudi", "Gaudi-HL-205"),
])
def test_names_of_one_accelerator_still_resolve(cat, name, canonical):
    """H100 is the SXM5 board wherever a cloud says h100; GCP's own type names name one."""
    assert cat.resolve_accelerator(name) == canonical


def test_a_device_report_is_matched_as_written_and_never_called_ambiguous(cat):
    from catalog._errors import AmbiguousNameError

    with pytest.raises(UnknownNameError) as exc:
        cat.resolve_accelerator("NVIDIA A100", strict=True)
    assert not isinstance(exc.value, AmbiguousNameError)


# -- 3. the empty-result note names --usable and --flagged ----------------------------------

def test_usable_capacity_blocks_say_every_one_is_expired(capsys):
    code, out, err = run(capsys, "offers", "--pricing", "capacity_block", "--usable")
    note = " ".join(err.split())
    assert code == 0 and "0 offers" in out
    assert "without --usable: 6 offers" in note
    assert "Those 6 are all flagged (6 expired): `--flagged` lists them" in note


def test_flagged_note_says_the_matching_offers_are_not_flagged(capsys):
    code, _, err = run(capsys, "offers", "--instance", "p5.48xlarge", "--region", "us-east-2",
                       "--pricing", "on_demand", "--flagged")
    note = " ".join(err.split())
    assert code == 0 and "without --flagged: 1 offer" in note and "None of those" in note


# -- 4. today is the UTC date or GPUPLAN_TODAY, for the catalog too ---------------------------

def test_catalog_age_counts_to_gpuplan_today(capsys, monkeypatch):
    """The banner said "1,010 days old" with GPUPLAN_TODAY=2026-12-01 (the local date's count);
    a far date tells the two apart whatever day the tests run."""
    monkeypatch.setenv("GPUPLAN_TODAY", "2030-01-01")
    code, out, _ = run(capsys, "catalog", "info", "--json")
    info = json.loads(out)
    days = (dt.date(2030, 1, 1) - dt.date.fromisoformat(info["oldest_as_of"])).days
    assert code == 0 and info["age_days"] == days
    code, _, err = run(capsys, "offers", "--gpu", "H100", "--limit", "1", "--json")
    assert code == 0 and f"Prices are up to {days:,} days old" in " ".join(err.split())


def test_an_override_is_dated_gpuplan_today(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUPLAN_TODAY", "2030-01-01")
    rates = tmp_path / "rates.yaml"
    rates.write_text("prices:\n  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1, "
                     "pricing: on_demand, usd_per_hour: 30}\n", encoding="utf-8")
    code, out, _ = run(capsys, "offers", "--overrides", str(rates), "--instance", "p5.48xlarge",
                       "--region", "us-east-1", "--pricing", "on_demand", "--json")
    assert code == 0 and json.loads(out)[0]["as_of"] == "2030-01-01"


def test_a_wrong_gpuplan_today_is_one_line_before_any_output(capsys, monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", "tomorrow")
    code, out, err = run(capsys, "offers", "--gpu", "H100", "--limit", "1")
    assert code == 2 and not out and "GPUPLAN_TODAY='tomorrow' is not a date" in \
        one_error_line(err)


@pytest.mark.parametrize("given", ["20261201", "2026-W49-2", "2026-12-1", "2026-02-30"])
def test_gpuplan_today_takes_the_yyyy_mm_dd_its_message_asks_for(capsys, monkeypatch, given):
    """date.fromisoformat took 20261201 and the ISO week date 2026-W49-2 as well."""
    monkeypatch.setenv("GPUPLAN_TODAY", given)
    code, out, err = run(capsys, "offers", "--gpu", "H100", "--limit", "1")
    assert code == 2 and f"GPUPLAN_TODAY={given!r} is not a date" in one_error_line(err)


# -- 5. a tiny private rate never reads as zero in a table -----------------------------------

def test_a_millionth_of_a_dollar_is_not_shown_as_zero(capsys, tmp_path):
    rates = tmp_path / "rates.yaml"
    rates.write_text("prices:\n  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1, "
                     "pricing: on_demand, usd_per_hour: 1e-6}\n", encoding="utf-8")
    code, out, _ = run(capsys, "offers", "--overrides", str(rates), "--instance", "p5.48xlarge",
                       "--region", "us-east-1", "--pricing", "on_demand", "--wide")
    row = next(line for line in out.splitlines() if "p5.48xlarge" in line)
    assert code == 0 and "<0.001" in row and "0.000" not in row.replace("<0.001", "")
    code, out, _ = run(capsys, "gpus", "--overrides", str(rates))
    row = next(line for line in out.splitlines() if line.startswith("H100-SXM5-80GB"))
    assert code == 0 and "<0.01" in row and " 0.00" not in row
    code, out, _ = run(capsys, "offers", "--overrides", str(rates), "--instance", "p5.48xlarge",
                       "--region", "us-east-1", "--pricing", "on_demand", "--json")
    row = json.loads(out)[0]
    assert row["usd_per_hour"] == 1e-6  # JSON keeps the number
    # … and the rates derived from it (they were rounded to 6 decimals: 0.0 per GPU-hour)
    assert row["usd_per_gpu_hour"] == pytest.approx(1e-6 / 8, rel=1e-5)
    assert row["usd_per_bf16_pflop_hour"] > 0


def test_gpus_lists_only_aliases_that_name_the_accelerator(capsys):
    """`gpus --json` listed "A100" among the 40 GB board's aliases, and "V100" and "Tesla V100"
    among the 16 GB one's, while `--gpu A100` is refused as a family name."""
    code, out, _ = run(capsys, "gpus", "--json")
    aliases = {r["name"]: r["aliases"] for r in json.loads(out)}
    assert code == 0
    assert "A100" not in aliases["A100-SXM4-40GB"] and "A100-40GB" in aliases["A100-SXM4-40GB"]
    assert not {"V100", "Tesla V100"} & set(aliases["V100-SXM2-16GB"])
    assert "H100" in aliases["H100-SXM5-80GB"]
    cat = load_catalog("packaged")
    for name, listed in aliases.items():  # each one listed resolves to its accelerator
        assert all(cat.resolve_accelerator(a) == name for a in listed), name
