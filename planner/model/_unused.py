"""Which `assume` overrides one estimate never read, each as a warning: an override that
cannot apply is said, not silently listed beside the ones that did (an H100 estimate printed
"set with --assume: matmul_fraction.ampere-ga100-sxm = 0.8" as if it had been used).

Covered: every table entry (the estimate reads one entry of a table: its accelerator's
family, framework profile, attention kernel, topology, fabric, accelerator or cloud) and the
scalars that apply to some runs only (MoE, fp8, spot, flash attention, several nodes, a
family without a published matmul fraction). Other scalars are read by every estimate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._assumptions import FALLBACK_FABRIC, FALLBACK_TOPOLOGY, attention_key, gpu_family
from ._inputs import HALF_DTYPES, fp8_gains, hop_latency_name, matmul_dtype

if TYPE_CHECKING:
    from ._assumptions import Assumptions
    from ._hardware import Cluster
    from ._workload import Workload

_FRAMEWORK_TABLES = ("gemm_efficiency", "elementwise_factor", "comm_overlap", "tp_comm_overlap",
                     "host_overhead_s_per_layer", "throughput_log_sigma")


def unused_overrides(A: Assumptions, workload: Workload, cluster: Cluster, *,
                     spot: bool) -> list[str]:
    """One warning per name in ``A.overridden`` that an estimate of ``workload`` on
    ``cluster`` (on spot or not) does not read, saying what it reads instead."""
    if not A.overridden:
        return []
    acc, fw = cluster.accelerator, workload.framework
    fam = gpu_family(acc.architecture, acc.form_factor)
    dtype = matmul_dtype(workload.precision)
    # a published achievable rate (a chip with no datasheet peak) replaces the fractions
    fractions = not (acc.achievable_matmul_tflops and dtype in HALF_DTYPES)
    what = cluster.instance_type or acc.name
    flash = workload.attention != "unfused"
    akey = attention_key(acc.architecture, fw, workload.attention)
    unfused = "attention is unfused (`attention` unfused): no flash kernel runs"
    one_node = "one node has no inter-node traffic"
    hop = hop_latency_name(cluster.fabric) if cluster.nodes > 1 else None
    # table → (the entry read, or None when none is, and why)
    tables = {
        "matmul_fraction": (fam if fractions and fam in A.matmul_fraction else None,
                            f"{acc.name} is of the family {fam!r}"
                            + ("" if fractions else " and has a published achievable "
                               "matmul rate, used instead")),
        "intra_node_efficiency": (cluster.topology if cluster.topology in
                                  A.intra_node_efficiency else FALLBACK_TOPOLOGY,
                                  f"{what} links its GPUs by {cluster.topology}"),
        "inter_node_efficiency": ((cluster.fabric if cluster.fabric in A.inter_node_efficiency
                                   else FALLBACK_FABRIC) if cluster.nodes > 1 else None,
                                  f"{what} nodes talk over {cluster.fabric}"
                                  if cluster.nodes > 1 else one_node),
        "attention_fraction": (akey if flash else None,
                               f"this run's attention kernel is {akey}" if flash else unfused),
        "nvlink_domain_gpus": (acc.name if acc.name in A.nvlink_domain_gpus else None,
                               f"the accelerator is {acc.name}"),
        "spot_interruptions_per_hour": (cluster.cloud if spot else None,
                                        f"this runs on {cluster.cloud} spot" if spot else
                                        "this run is not on spot"),
        **{t: (fw, f"this run uses the {fw} framework profile") for t in _FRAMEWORK_TABLES},
    }
    # hop latency: one of the two, by fabric (``_inputs.hop_latency_name``), beyond one node
    latency = {name: (hop == name, f"{what} nodes talk over {cluster.fabric} (it reads {hop})"
                      if hop else one_node)
               for name in ("inter_node_latency_s", "inter_node_latency_tcp_s")}
    scalars = {
        "ep_comm_overlap": (workload.arch.is_moe, "the model has no experts"),
        "moe_overhead_s_per_layer": (workload.arch.is_moe, "the model has no experts"),
        "moe_throughput_log_sigma": (workload.arch.is_moe, "the model has no experts"),
        **{name: (flash, unfused) for name in ("attention_efficiency", "attention_ramp_tokens",
                                               "causal_fraction")},
        **latency,
        "fp8_relative_fraction": (fractions and dtype == "fp8" and fp8_gains(acc),
                                  f"the GEMMs run in {dtype}, not fp8" if dtype != "fp8" else
                                  f"{acc.name} has a published achievable rate, used instead"
                                  if not fractions else
                                  f"{acc.name}'s fp8 peak is its bf16 peak: its fp8 GEMMs are "
                                  "timed as bf16 ones"),
        "spot_restart_minutes": (spot, "this run is not on spot"),
        "default_matmul_fraction": (fractions and fam not in A.matmul_fraction,
                                    f"{acc.name}'s family {fam!r} has a published value; to "
                                    f"change it use `assume` matmul_fraction.{fam}=…"
                                    if fractions else f"{acc.name} has a published achievable "
                                    "rate, used instead"),
    }
    out = []
    for name in A.overridden:
        table, _, entry = name.partition(".")
        if entry and table in tables:
            used, why = tables[table]
            if entry != used:
                out.append(f"`assume` {name} has no effect: {why}"
                           + (f" (it reads {table}.{used})" if used else ""))
        elif not entry and name in scalars and not scalars[name][0]:
            out.append(f"`assume` {name} has no effect: {scalars[name][1]}")
    return out
