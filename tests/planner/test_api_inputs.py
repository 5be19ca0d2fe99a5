"""The search's public inputs built in code (not through the CLI): a wrong value is one
PlannerError naming the field, and limits hold for every instance type (found by a fuzz of the
Python API: plan() with max_gpus=1 recommended a 4-GPU instance; Constraints(deadline_hours=0)
raised AttributeError; clouds="aws" was read as 'a', 'w', 's'; a vp pin without a pp pin was
dropped)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from small_catalog import packaged

from planner import (
    Constraints,
    PlannerError,
    PlanPins,
    WorkloadSpec,
    build_cluster,
    build_workload,
    estimate,
    plan,
)
from planner.search import QuotaRule, Quotas


@pytest.mark.parametrize("max_gpus", [1, 2, 4])
def test_no_plan_holds_more_gpus_than_max_gpus(max_gpus):
    # instance types without an inter-node network run as one node: one of 4 or 8 GPUs must
    # not slip under a smaller limit
    w = build_workload(WorkloadSpec(params="1B", tokens="20B"))
    r = plan(w, packaged(), Constraints(deadline_hours=24 * 60, max_gpus=max_gpus,
                                        min_probability=0), points=True)
    shown = [*r.candidates, *r.frontier, *r.points, *r.spot_vs_on_demand.values()]
    assert r.recommendation is not None and shown
    assert max(p.gpus for p in shown) <= max_gpus


@pytest.mark.parametrize(("field", "value"), [
    ("deadline_hours", 0), ("deadline_hours", math.nan), ("deadline_hours", None),
    ("deadline_hours", True), ("deadline_hours", 1e308), ("deadline_hours", "24"),
    ("max_gpus", True), ("max_gpus", 1.5), ("max_gpus", 0), ("max_gpus", "8"),
    ("budget_usd", "8"), ("budget_usd", -1.0), ("budget_usd", math.inf),
    ("min_probability", True), ("min_probability", 1.5), ("min_probability", 1),
    ("commitment_use", -0.1),
    ("max_spot_instances", 2.5), ("checkpoint_storage_usd_per_gb_month", math.nan),
    ("clouds", "aws"), ("regions", "us-east-1"), ("pricing", "spot"), ("gpus", ("H100", None)),
    ("exclude", ("",)), ("clouds", 5), ("quotas", "x"), ("allow_flagged", "yes"),
    ("group_by", "region"),
])
def test_a_wrong_constraint_is_one_planner_error(field, value):
    kw = {"deadline_hours": 24.0, field: value}
    with pytest.raises(PlannerError, match="To fix"):
        Constraints(**kw)


def test_name_lists_and_numpy_numbers_are_taken_as_plain_values():
    c = Constraints(deadline_hours=np.float64(24), max_gpus=np.int64(64), clouds=["aws"],
                    gpus={"H100", "A100-80GB"}, exclude=None)
    assert c.clouds == ("aws",) and c.gpus == ("A100-80GB", "H100") and c.exclude == ()
    assert type(c.max_gpus) is int and type(c.deadline_hours) is float
    hash(c)  # a cache key
    # as the catalog spells them, so the answer's constraints echo the canonical names
    c = Constraints(deadline_hours=24, clouds=("AWS", " gcp", "aws"),
                    pricing=("ON-DEMAND", "Spot", "spot"))
    assert c.clouds == ("aws", "gcp") and c.pricing == ("on_demand", "spot")  # once each
    # an unknown name is refused here, quoted as written (the catalog echoed 'spot_instance')
    with pytest.raises(PlannerError, match="unknown pricing model 'Spot-Instance'") as exc:
        Constraints(deadline_hours=24, pricing=("spot", "Spot-Instance"))
    assert exc.value.field == "pricing"
    with pytest.raises(PlannerError, match="unknown cloud 'AWSS'. Did you mean 'aws'"):
        Constraints(deadline_hours=24, clouds=("AWSS",))
    # () searched all seven pricing models (reserved and committed too): refused
    with pytest.raises(PlannerError, match="`pricing` is empty.*To fix: leave it out"):
        Constraints(deadline_hours=24, pricing=())


@pytest.mark.parametrize("rule", [dict(gpus=-5), dict(gpus=math.nan), dict(gpus="8"),
                                  dict(gpus=8.5), dict(gpus=True), dict(gpus=None),
                                  dict(gpus=8, cloud=""), dict(gpus=8, month="garbage")])
def test_a_quota_rule_built_in_code_is_checked(rule):
    with pytest.raises(PlannerError, match="To fix"):
        QuotaRule(**rule)


def test_a_month_quota_is_refused_by_plan():
    # parse_quotas refuses it from a file; a rule built in code must not be silently ignored
    quotas = Quotas((QuotaRule(gpus=8, cloud="aws", month="2027-03"),))
    with pytest.raises(PlannerError, match="month"):
        Constraints(deadline_hours=24.0, quotas=quotas)


def test_a_vp_pin_without_a_pp_pin_gets_an_interleaved_pipeline():
    cluster, _ = build_cluster(packaged(), gpu="H100", gpus=8)
    w = build_workload(WorkloadSpec(model="llama2-7b", tokens="1B", pins=PlanPins(vp=2)))
    p = estimate(w, cluster).plan
    assert p.pp > 1 and p.virtual_stages == 2
    one, _ = build_cluster(packaged(), gpu="H100", gpus=1)
    with pytest.raises(PlannerError, match="at least 2 GPUs"):
        estimate(w, one)


@pytest.mark.parametrize(("spec", "says"), [
    (dict(params="7B", experts=8), "add `active_params`"),
    (dict(model="llama2-7b", active_params="1B"), "drop `active_params`"),
    (dict(config={"architectures": ["LlamaForCausalLM"]}, active_params="1B"),
     "drop `active_params`"),
])
def test_mixture_inputs_that_would_be_ignored_are_refused(spec, says):
    # --params 7B --experts 8 used to build a dense 7B model; a preset ignored active_params
    with pytest.raises(PlannerError, match=says):
        build_workload(WorkloadSpec(tokens="1B", **spec))


def test_experts_zero_with_params_is_dense():
    w = build_workload(WorkloadSpec(params="7B", experts=0, tokens="1B"))
    assert not w.arch.is_moe


def _base():
    import catalog

    cat = catalog.load_catalog("packaged")
    w = build_workload(WorkloadSpec(model="llama2-7b", tokens="1B"))
    c8, _ = build_cluster(cat, gpu="H100", gpus=8)
    return cat, w, c8


@pytest.mark.parametrize("change", [
    dict(attention_params_per_layer=-10**12), dict(moe_ffn_hidden=-100), dict(head_dim=-5),
    dict(shared_experts=-1), dict(dense_layers=-5), dict(experts=2**40), dict(experts=1.5)])
def test_an_architecture_with_impossible_sizes_is_refused(change):
    # attention_params_per_layer=-1e12 used to give -20,356 hours and MFU 33
    import dataclasses

    _, w, _ = _base()
    with pytest.raises(PlannerError, match="To fix"):
        dataclasses.replace(w.arch, **change)


@pytest.mark.parametrize("change", [
    dict(tokens=1e300), dict(tokens=True), dict(seq_len=4096.5), dict(seq_len=math.nan),
    dict(pins=None), dict(global_batch_tokens=math.inf), dict(global_batch_tokens=math.nan)])
def test_a_workload_with_impossible_values_is_refused(change):
    import dataclasses

    _, w, _ = _base()
    with pytest.raises(PlannerError, match="To fix"):
        dataclasses.replace(w, **change)


@pytest.mark.parametrize("zero", [True, 1.0, 3.0])
def test_a_zero_stage_is_a_whole_number(zero):
    with pytest.raises(PlannerError, match="`zero` must be one of"):
        PlanPins(zero=zero)


@pytest.mark.parametrize("kw", [dict(instance="p5.48xlarge", nodes=2.5),
                                dict(instance="p5.48xlarge", nodes=True),
                                dict(instance="p5.48xlarge", nodes=None),
                                dict(instance="p5.48xlarge", gpus=64),
                                dict(gpu="H100", gpus=True), dict(gpu="H100", gpus=8.0)])
def test_build_cluster_takes_whole_counts_and_refuses_what_it_would_ignore(kw):
    # nodes=2.5 gave a 20.0-GPU cluster and a dp16 plan; gpus with an instance was ignored
    cat, _, _ = _base()
    with pytest.raises(PlannerError, match="To fix"):
        build_cluster(cat, **kw)


@pytest.mark.parametrize("change", [dict(intra_node_gb_per_s_per_gpu=0),
                                    dict(intra_node_gb_per_s_per_gpu=-900),
                                    dict(inter_node_gbps=math.nan), dict(nodes=1.5),
                                    dict(gpus_per_node=2**40)])
def test_a_cluster_with_impossible_links_or_counts_is_refused(change):
    import dataclasses

    _, _, c8 = _base()
    with pytest.raises(PlannerError, match="To fix"):
        dataclasses.replace(c8, **change)


@pytest.mark.parametrize("memory", [math.inf, 0, -1, math.nan, True, "80", 1e6])
def test_estimate_checks_the_stated_memory_per_gpu(memory):
    # inf planned 305 GiB per GPU on an 80 GB H100; 0 silently meant the datasheet
    _, w, c8 = _base()
    with pytest.raises(PlannerError, match="memory_gib"):
        estimate(w, c8, memory_gib=memory)


def test_a_preset_name_is_read_as_a_person_writes_it():
    assert build_workload(WorkloadSpec(model=" Llama2-7B ", tokens="1B")).arch.name == \
        "llama2-7b"
    with pytest.raises(PlannerError, match="preset name"):
        build_workload(WorkloadSpec(model=7, tokens="1B"))


def test_money_that_is_not_a_number_is_not_shown_as_one():
    from planner.model import format_usd

    assert [format_usd(x) for x in (-0.0, math.nan, math.inf, 0.005, 1234.4)] == \
        ["$0", "—", "—", "$0.005", "$1,234"]


def test_a_probability_is_never_rounded_to_certainty_or_to_none():
    from planner.model import format_chance

    assert [format_chance(p) for p in (0.5, 0.999, 0.9997, 1.0, 0.99999999, 0.004, 1e-5, 0.0,
                                       math.nan)] == [
        "50%", "99.9%", "99.97%", "> 99.99%", "> 99.99%", "0.4%", "< 0.01%", "0%", "—"]


def test_a_probability_below_a_threshold_never_reads_as_meeting_it():
    """The app said a lower minimum probability would cost less "with probability 90%" under
    a 90% minimum (it was 89.8%) (app sweep 2026-12-04)."""
    from planner.model import format_chance

    assert format_chance(0.898) == "90%"  # alone, whole percentages
    assert [format_chance(p, below=0.9) for p in (0.898, 0.89999, 0.5, 0.95)] == [
        "89.8%", "< 90%", "50%", "95%"]
    assert format_chance(0.99995, below=0.99999) == "< 99.999%"


@pytest.mark.parametrize(("overrides", "says"), [
    ("layers", "sequence of \\(field, value\\) pairs"), ({"layers": 4}, "pairs"),
    ((("layers",),), "not a \\(field, value\\) pair"), ((("layers", 4), ("layers", 8)), "twice"),
    ((("foo", 4),), "cannot override foo")])
def test_architecture_overrides_are_pairs_each_given_once(overrides, says):
    # a bare string raised "dictionary update sequence element"; a repeat kept the last
    with pytest.raises(PlannerError, match=says):
        build_workload(WorkloadSpec(model="llama2-7b", tokens="1B", arch_overrides=overrides))


def test_pins_take_numpy_integers_as_plain_ones():
    # PlanPins(tp=np.int64(2)) said "tp must be a whole number …, got np.int64(2)"
    pins = PlanPins(tp=np.int64(2), zero=np.int64(1))
    assert pins.tp == 2 and type(pins.tp) is int and type(pins.zero) is int


def test_a_required_probability_is_shown_as_given():
    from planner.model import format_requirement

    assert [format_requirement(p) for p in (0.9, 0.95, 0.999, 0.99999, 0.0)] == [
        "90%", "95%", "99.9%", "99.999%", "0%"]
    # a tiny ask is shown, not rounded to "0%" (`--min-probability 1e-300` read "P ≥ 0%",
    # the banner of 0, which plans differently)
    assert [format_requirement(p) for p in (1e-7, 1.234e-8, 1e-300, 0.123456789)] == [
        "0.00001%", "1.23e-06%", "1e-298%", "12.345679%"]


def test_an_infeasible_reason_never_rounds_the_best_chance_to_zero():
    # "(best 0.0%)" for a best probability of 0.02%, beside a card saying "< 0.01%"
    from planner.search._select import _best

    assert [_best(p) for p in (0.563, 0.0002, 3.5e-5, 0.0, 0.9996)] == [
        "56.3%", "0.02%", "< 0.01%", "0.0%", "99.96%"]


def test_a_parameter_count_keeps_a_figure_when_small():
    # a tiny config read "0.00B params"
    from planner.model import format_params

    assert [format_params(n) for n in (8.03e9, 124.44e6, 5e6, 41_600, 3)] == [
        "8.03B", "0.12B", "0.01B", "41.6K", "3"]


def test_a_small_measured_figure_keeps_its_digits():
    # a CPU report's "not used" line read "matmul cpu fp32: 0.0 TFLOP/s" for 0.00211
    from planner.model import CalibrationNote

    def line(value):
        return CalibrationNote(kind="matmul", key="cpu fp32", value=value, unit="TFLOP/s",
                               report_ids=(1,), reason="a CPU run").line()

    assert line(0.00211) == "matmul cpu fp32: 0.00211 TFLOP/s (report 1): a CPU run"
    # and above 0.1 (0.1346 read "0.1" beside 0.0955; 0.734 read "0.7")
    assert line(0.1346).startswith("matmul cpu fp32: 0.135 TFLOP/s")
    assert line(0.734).startswith("matmul cpu fp32: 0.734 TFLOP/s")
    assert line(679.7).startswith("matmul cpu fp32: 679.7 TFLOP/s")
    assert line(2e7).startswith("matmul cpu fp32: 2e+07 TFLOP/s")


def test_measured_figures_keep_three_significant_digits_in_one_place():
    from planner.model import format_figure

    assert [format_figure(v) for v in (0.00211, 0.0955, 0.1346, 7.25, 30.0, 45.3, 989.54,
                                       1234.5, 2e7, 0.0, None, float("nan"))] == [
        "0.00211", "0.0955", "0.135", "7.25", "30.0", "45.3", "989.5", "1,234.5", "2e+07",
        "0.0", "-", "-"]
