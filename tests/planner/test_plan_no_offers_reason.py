"""`gpuplan plan` says why no offer matches its filters, as `gpuplan offers` already did: a
tester's `plan --gpu MI300X` (and GB200, Trainium2, H100-PCIe, Gaudi2), `--clouds gcp --pricing
reserved_1y` and `--regions us-east-1 --exclude us-east-1` each got "no offer matches the
filters. To fix: widen --clouds/--regions/--pricing/--gpu or check `gpuplan offers`" — filters
never set, and no word of the reason (one diagnosis: ``catalog.why_no_offers``)."""

from __future__ import annotations

import re

import pytest

from planner.cli import main

PLAN = ("plan", "--model", "llama3-8b", "--tokens", "100B", "--deadline", "7d")
FILTER_FLAGS = ("--gpu", "--clouds", "--regions", "--pricing", "--exclude")


def _error(capsys, *args) -> str:
    """The one error line `plan` writes for ``args`` (exit 2, nothing on stdout)."""
    code = main([*PLAN, *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "To fix: " in lines[0], err
    return lines[0]


def _fix_names_only(line: str, given: set[str]) -> None:
    """The fix names no filter flag the command line did not set."""
    fix = line.split("To fix: ", 1)[1]
    named = set(re.findall(r"--[a-z-]+", fix)) & set(FILTER_FLAGS)
    assert named <= given, (named - given, line)


@pytest.mark.parametrize("gpu,name,listed", [
    ("MI300X", "MI300X", "1 instance type with it (azure Standard_ND96isr_MI300X_v5)"),
    ("GB200", "GB200-186GB", "2 instance types with it (azure Standard_ND128isr_NDR_GB200_v6, "
                             "gcp a4x-highgpu-4g)"),
    ("Trainium2", "Trainium2", "1 instance type with it (aws trn2.48xlarge)"),
])
def test_an_accelerator_listed_but_never_priced_is_named_with_overrides(capsys, gpu, name,
                                                                       listed):
    line = _error(capsys, "--gpu", gpu)
    assert f"the catalog has no price for {name}: it lists {listed} but no offer" in line, line
    assert line.endswith("To fix: give your own rate with --overrides, or choose another "
                         "--gpu"), line
    assert "widen" not in line
    _fix_names_only(line, {"--gpu"})


@pytest.mark.parametrize("gpu,name", [("H100-PCIe", "H100-PCIe-80GB"), ("Gaudi2", "Gaudi2")])
def test_an_accelerator_no_instance_type_has_is_said_so(capsys, gpu, name):
    # no instance type to give a rate for: --overrides cannot help
    line = _error(capsys, "--gpu", gpu)
    assert f"the catalog has no price for {name}: no instance type has it. To fix: choose " \
           "another --gpu" in line and "--overrides" not in line, line


def test_filters_that_only_disagree_name_each_one_with_its_count(capsys):
    line = _error(capsys, "--clouds", "gcp", "--pricing", "reserved_1y")
    said = re.search(r"no offer matches the filters together \(without --clouds: ([\d,]+) "
                     r"offers; without --pricing: ([\d,]+) offers\)\. To fix: widen --clouds or "
                     r"--pricing$", line)
    assert said, line
    _fix_names_only(line, {"--clouds", "--pricing"})
    # the counts are of what `plan` would search: reserved_1y GPUs of aws/azure
    from catalog import load_catalog, select_offers
    from planner.search._optimizer import _default_gpus

    cat = load_catalog()
    gpus = _default_gpus(cat, "bf16")
    assert "TPU-v5p" not in gpus and "H100-SXM5-80GB" in gpus
    for kept, count in ((dict(pricing=["reserved_1y"]), said[1]),
                        (dict(clouds=["gcp"], pricing=["on_demand", "spot"]), said[2])):
        rows = select_offers(cat, gpus=gpus, **kept, include_unpriced=False,
                             include_flagged=False)
        assert count == f"{len(rows):,}", (kept, line)


def test_a_region_excluded_again_says_both_filters(capsys):
    line = _error(capsys, "--regions", "us-east-1", "--exclude", "us-east-1")
    assert re.search(r"no offer matches the filters together \(without --regions: [\d,]+ "
                     r"offers; without --exclude: [\d,]+ offers\)\. To fix: widen --regions or "
                     r"exclude less \(--exclude\)$", line), line
    _fix_names_only(line, {"--regions", "--exclude"})


def test_everything_excluded_names_exclude_alone(capsys):
    line = _error(capsys, "--exclude", "aws,gcp,azure")
    assert re.search(r"no offer matches the filters \(without --exclude: [\d,]+ offers\)\. "
                     r"To fix: exclude less \(--exclude\)$", line), line


def test_flagged_offers_name_only_the_filters_given(capsys):
    line = _error(capsys, "--gpu", "H100", "--pricing", "capacity_block")
    assert "offers match but their prices are flagged" in line and "--allow-flagged" in line
    assert line.endswith("To fix: widen --gpu/--pricing or check `gpuplan offers`"), line


def test_a_pricing_model_the_catalog_lacks_keeps_its_message(capsys):
    line = _error(capsys, "--pricing", "committed_1y")
    assert "the catalog has no committed_1y offers" in line
    assert line.endswith("To fix: choose another --pricing"), line


def test_offers_and_plan_give_the_same_reason(capsys):
    """One diagnosis: `offers` notes what `plan` refuses with (the MI300X clause)."""
    assert main(["offers", "--gpu", "MI300X"]) == 0
    note = " ".join(capsys.readouterr().err.split())
    clause = note.removeprefix("note: ").split("; give your own rate", 1)[0]
    assert clause.startswith("the catalog has no price for MI300X")
    assert clause in _error(capsys, "--gpu", "MI300X")


def test_the_reason_lists_no_filter_the_user_left_unset():
    """A default (pricing on_demand, spot; no `gpu`) is not a filter the user set."""
    from catalog import load_catalog
    from planner import Constraints, PlannerError, WorkloadSpec, build_workload, plan

    with pytest.raises(PlannerError) as info:
        plan(build_workload(WorkloadSpec(model="gpt2", tokens="1B")), load_catalog(),
             Constraints(deadline_hours=24, clouds=("aws",), exclude=("aws",)))
    msg = str(info.value)
    assert "`pricing`" not in msg and "`gpu`" not in msg and "`regions`" not in msg, msg
    assert msg.endswith("To fix: widen `clouds` or exclude less (`exclude`)"), msg


def test_filters_no_one_of_which_is_to_blame_are_each_named(capsys):
    # leaving out any one still matches nothing usable (aws's capacity blocks are all expired)
    line = _error(capsys, "--gpu", "TPU-v5p", "--clouds", "aws", "--pricing", "capacity_block")
    assert line.endswith("no offer matches the filters together, nor with any one of them "
                         "left out. To fix: widen --gpu/--clouds/--pricing or check `gpuplan "
                         "offers`"), line
