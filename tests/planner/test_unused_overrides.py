"""`assume` overrides an estimate never reads are warned about, naming what it reads instead
(docs/design.md: "an override that cannot apply is warned about"); an H100 estimate listed
matmul_fraction.ampere-ga100-sxm = 0.8 among the constants set, with no warning.

The warning must be true: for every overridable constant, on a dense bf16 run and an fp8 MoE
run, one node and several, an override that is warned about leaves the estimate's figures
exactly as they were (flash and unfused attention alike)."""

from __future__ import annotations

import pytest

from catalog import GpuplanError, load_catalog
from planner import Assumptions, Workload, build_cluster, estimate, preset, reference_cluster
from planner.model import assumption_names


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


def wl(name="llama2-7b", **kw) -> Workload:
    arch, _ = preset(name)
    return Workload(arch=arch, tokens=1e11, seq_len=4096, global_batch_tokens=64 * 4096, **kw)


def warned(est, name: str) -> list[str]:
    return [w for w in est.warnings if w.startswith(f"`assume` {name} has no effect")]


@pytest.mark.parametrize(("name", "value", "fragment"), [
    ("matmul_fraction.ampere-ga100-sxm", 0.8, "H100-SXM5-80GB is of the family 'hopper' (it "
                                              "reads matmul_fraction.hopper)"),
    ("gemm_efficiency.hf", 0.5, "this run uses the megatron framework profile (it reads "
                                "gemm_efficiency.megatron)"),
    ("moe_overhead_s_per_layer", 0.01, "the model has no experts"),
    ("ep_comm_overlap", 0.3, "the model has no experts"),
    ("spot_restart_minutes", 5.0, "this run is not on spot"),
    ("spot_interruptions_per_hour.aws", 0.1, "this run is not on spot"),
    ("fp8_relative_fraction", 0.9, "the GEMMs run in bf16, not fp8"),
    ("inter_node_efficiency.efa", 0.5, "one node has no inter-node traffic"),
    ("default_matmul_fraction", 0.5, "family 'hopper' has a published value; to change it use "
                                     "`assume` matmul_fraction.hopper=…"),
    ("attention_fraction.fa2/other", 0.3, "this run's attention kernel is fused/hopper (it "
                                          "reads attention_fraction.fused/hopper)"),
    ("moe_throughput_log_sigma", 0.3, "the model has no experts"),
    ("inter_node_latency_s", 1e-4, "one node has no inter-node traffic"),
])
def test_an_override_this_estimate_does_not_read_is_warned_about(cat, name, value, fragment):
    est = estimate(wl(), reference_cluster(cat, "H100", 8),
                   assumptions=Assumptions().with_overrides(**{name: value}))
    assert len(warned(est, name)) == 1 and fragment in warned(est, name)[0], est.warnings


@pytest.mark.parametrize("name", ["attention_fraction.fused/hopper", "attention_efficiency",
                                  "attention_ramp_tokens", "causal_fraction"])
def test_flash_attention_constants_on_unfused_attention_are_warned_about(cat, name):
    default = Assumptions()
    value = (default.attention_fraction["fused/hopper"] if "." in name
             else getattr(default, name)) * 0.8
    est = estimate(wl(attention="unfused"), reference_cluster(cat, "H100", 8),
                   assumptions=Assumptions().with_overrides(**{name: value}))
    assert len(warned(est, name)) == 1 and "attention is unfused" in warned(est, name)[0]


def test_the_hop_latency_of_the_other_fabric_is_warned_about(cat):
    """a3-highgpu-8g's nodes talk over GPUDirect-TCPX: the TCP hop latency is read, the RDMA
    one is not — and the other way round on EFA."""
    tcpx, _ = build_cluster(cat, instance="a3-highgpu-8g", nodes=2)
    efa, _ = build_cluster(cat, instance="p4d.24xlarge", nodes=2)
    for cluster, read, unread in ((tcpx, "inter_node_latency_tcp_s", "inter_node_latency_s"),
                                  (efa, "inter_node_latency_s", "inter_node_latency_tcp_s")):
        est = estimate(wl(), cluster, assumptions=Assumptions().with_overrides(
            **{read: 1e-4, unread: 1e-4}))
        assert not warned(est, read), est.warnings
        assert len(warned(est, unread)) == 1 and f"(it reads {read})" in warned(est, unread)[0]
        alone = estimate(wl(), cluster, assumptions=Assumptions().with_overrides(**{unread: 0.005}))
        assert _figures(alone) == _figures(estimate(wl(), cluster))  # the warning is true


@pytest.mark.parametrize(("name", "value", "model", "gpus", "precision"), [
    ("matmul_fraction.hopper", 0.6, "llama2-7b", 8, "bf16"),
    ("gemm_efficiency.megatron", 0.8, "llama2-7b", 8, "bf16"),
    ("moe_overhead_s_per_layer", 0.01, "mixtral-8x7b", 16, "bf16"),
    ("fp8_relative_fraction", 0.9, "llama2-7b", 8, "fp8"),
    ("inter_node_efficiency.infiniband", 0.5, "llama2-7b", 16, "bf16"),  # the reference node
])
def test_an_override_it_reads_is_not_warned_about(cat, name, value, model, gpus, precision):
    est = estimate(wl(model, precision=precision), reference_cluster(cat, "H100", gpus),
                   assumptions=Assumptions().with_overrides(**{name: value}))
    assert not warned(est, name), est.warnings


def _moved(name: str, default):
    """Assumptions with ``name`` moved off its default to a value ``--assume`` accepts (None
    when no nearby value is accepted)."""
    for v in (default * 0.9, default * 1.1, default + 1, default - 1):
        v = type(default)(round(v)) if isinstance(default, int) else v
        if v != default:
            try:
                return Assumptions().with_overrides(**{name: v})
            except GpuplanError:
                continue
    return None


def _figures(est):
    return (est.step_time_s, est.wall_clock.p10, est.wall_clock.p50, est.wall_clock.p90,
            dict(est.memory), str(est.plan), est.mfu)


@pytest.mark.parametrize(("model", "gpus", "precision", "attention"), [
    ("llama2-7b", 8, "bf16", "flash"), ("llama2-7b", 32, "bf16", "flash"),
    ("mixtral-8x7b", 16, "fp8", "flash"), ("llama2-7b", 16, "bf16", "unfused")])
def test_every_warned_override_leaves_the_figures_as_they_were(cat, model, gpus, precision,
                                                              attention):
    cluster = reference_cluster(cat, "H100", gpus)
    work = wl(model, precision=precision, attention=attention)
    base = _figures(estimate(work, cluster))
    checked = 0
    for name in assumption_names():
        field, _, entry = name.partition(".")
        default = getattr(Assumptions(), field)
        default = default[entry] if entry else default
        moved = None if isinstance(default, bool) else _moved(name, default)
        if moved is None:
            continue
        est = estimate(work, cluster, assumptions=moved)
        if warned(est, name):
            checked += 1
            got = _figures(est)
            assert got == base, (name, got, base)
    assert checked >= 10  # most table entries are someone else's
