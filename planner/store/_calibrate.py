"""The calibration the model reads: every stored report's figures, bounded by the catalog's
datasheet and judged by the rules (``_rules``).

Each report becomes ``Candidate`` figures (matmul, HBM, intra- and inter-node bus bandwidth)
with the datasheet bound each must respect and any reason the report or the instance refuses
it, and a ``WorkloadCandidate`` for a workload probe's layer, modelled with the hardware
figures ``estimate`` will use (the probes' own measurements where the rules accept some).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from catalog import Catalog, GpuplanError

from ..model import (
    NO_CALIBRATION,
    PROBE_LAYERS,
    PROFILES,
    Calibration,
    PlannerError,
    WorkloadShape,
    hardware_for,
    intra_link_for,
    model_attention,
    model_layer,
)
from ._damage import StoreConnection, stored_json
from ._db import _reading
from ._facts import instance_contradiction, memory_contradiction
from ._fingerprint import measurement_fingerprint, section_fingerprints
from ._offered import DTYPE_NAMES, workload_figures
from ._rules import Candidate, PerGpu, WorkloadCandidate, calibrate

PCIE_BIDIR_GB_PER_S = 128.0  # PCIe 5.0 x16, both directions: the bound without a GPU link


def load_calibration(catalog: Catalog | None = None, *, db: Path | None = None) -> Calibration:
    """The calibration from every stored report, by the rules of planner/_calibration.py."""
    found, layers = [], []
    # the reports are read inside the connection: one whose text is not JSON makes it ask
    # whether the file is damaged (``_reading``) before any plan believes the rest
    with _reading(db) as conn:
        rows = conn.execute("SELECT id, created_utc, accelerator, report_json FROM reports "
                            "ORDER BY id").fetchall() if conn else []
        if not rows:
            return NO_CALIBRATION
        if catalog is None:
            from catalog import load_catalog

            catalog = load_catalog()
        runs: dict[str, list] = {}  # a fingerprint's shape -> (fingerprint, report id)s
        for rid, created, acc, text in rows:
            figures, layer = _candidates(rid, created, acc, stored_json_or_error(text, conn),
                                         catalog, runs)
            found.extend(figures)
            if layer is not None:
                layers.append(layer)
    from catalog import today_utc

    today = today_utc()  # reports older than a year carry a caution (``_rules``)
    if not layers:
        return calibrate(found, today=today)
    # the layers are modelled with the hardware figures `estimate` will use: the probes'
    # measurements (a first pass of the rules) where there are some
    hardware = calibrate(found)
    return calibrate(found, workloads=[_modelled(c, catalog, hardware) for c in layers],
                     today=today)


def _instance(catalog: Catalog, env):
    if env is None or not env.instance_type:
        return None
    try:
        return catalog.instance_type(env.instance_type, env.cloud)
    except GpuplanError:  # not in this catalog: the figures key by accelerator only
        return None


def _cloud_contradiction(catalog: Catalog, env, instance) -> str | None:
    """Why a report whose instance type is another cloud's than the one it states cannot be
    trusted (a p5.48xlarge "on gcp": one of the two facts is wrong, and which instance's link
    bounds its bus bandwidth is unknown); None otherwise."""
    if instance is not None or env is None or not env.instance_type or not env.cloud:
        return None
    try:
        other = catalog.instance_type(env.instance_type)
    except GpuplanError:  # in no cloud's catalog: an unknown type, not a contradiction
        return None
    return (f"it says instance type {env.instance_type!r} on cloud {env.cloud!r}, but "
            f"{other.name} is {other.cloud}'s: one of the two facts is wrong (an edited or "
            "mislabelled report). To fix: re-run the probes on the instance and ingest the "
            "file they write")


def _bound(kind: str, f, acc, instance, dtype: str | None) -> tuple[float | None, str]:
    """The datasheet figure ``f`` may not exceed, and where it comes from."""
    if kind == "matmul":
        if dtype not in ("fp32", "tf32", "bf16", "fp16", "fp8"):
            return None, f"{acc.name} {dtype}: not a catalog dtype"
        return acc.peak_tflops(dtype), f"{acc.name} dense {dtype} peak"
    if kind == "hbm":
        return acc.memory_bandwidth_gb_per_s, f"{acc.name} memory bandwidth"
    if kind == "intra":
        # busbw of an all-reduce is below 2(n-1)/n < 2 times one direction of the per-GPU
        # link, so the bidirectional figure vendors state bounds it (NVLS included)
        if instance is not None:
            if not instance.intra_node_gb_per_s_per_gpu and "network_unverified" in \
                    instance.flags:  # an assumed link bounds nothing (an NVLink bridge the
                # catalog could not confirm made an honest 300 GB/s "impossible")
                return None, f"{instance.name}'s GPU link, unverified in the catalog"
            return intra_link_for(instance, acc), f"{instance.name} GPU link, both directions"
        if acc.intra_node_gb_per_s_per_gpu:
            return acc.intra_node_gb_per_s_per_gpu, f"{acc.name} GPU link, both directions"
        return PCIE_BIDIR_GB_PER_S, "PCIe 5.0 x16, both directions"
    if instance is None or not instance.inter_node_gbps:
        return None, "the instance's network rating in the catalog"
    # a ring all-reduce's busbw across nodes approaches the node's total NIC bandwidth;
    # in-network reduction (SHARP) halves the traffic, hence the factor 2
    return (2 * instance.inter_node_gbps / 8,
            f"2 x {instance.name}'s {instance.inter_node_gbps:g} Gb/s network (in-network "
            "reduction)")


def _instance_refusal(f, instance) -> str | None:
    if f.kind not in ("intra", "inter"):
        return None
    if f.kind == "inter" and instance is None:
        return ("no catalog instance type in the report: the fabric is a property of the "
                "instance; run where the cloud's metadata service answers (AWS, GCP, Azure)")
    if instance is not None and f.gpus_per_node != instance.gpu_count:
        return (f"the run used {f.gpus_per_node} of {instance.name}'s {instance.gpu_count} GPUs "
                "per node; bus bandwidth depends on the group, so only full nodes calibrate")
    if f.kind == "inter":
        from probes import is_tcpx

        if f.net is None:
            return ("the NCCL log did not say which network the world group used, so a TCP "
                    "fall-back cannot be ruled out; re-run with the probes' NCCL log capture "
                    "(do not set NCCL_DEBUG_SUBSYS without INIT)")
        if not f.rdma and not (is_tcpx(f.net) and instance.fabric == "gpudirect_tcpx"):
            return (f"the world all-reduce went over {f.net} ({f.transport}), not RDMA: a TCP "
                    "fall-back is not the fabric's speed; check the EFA/InfiniBand set-up "
                    "(docs/probes.md)")
    return None


def _workload_candidate(rid: int, created: str, acc, acc_name: str | None, report,
                        instance) -> WorkloadCandidate | None:
    """The report's workload layer for the rules, not yet modelled (`_modelled`)."""
    from probes import workload_refusal

    w = workload_figures(report)
    if w is None:
        if report.workload is None:
            return None
        # a failed run: listed as refused, with why
        sec = report.workload
        w = {"shape": WorkloadShape(
            hidden=sec.hidden, heads=sec.heads, kv_heads=sec.kv_heads, head_dim=sec.head_dim,
            ffn_hidden=sec.ffn_hidden, gated=sec.gated, seq_len=sec.seq_len,
            micro_batch=sec.micro_batch, precision=sec.precision, recompute=sec.recompute,
            experts=sec.experts, experts_per_token=sec.experts_per_token,
            shared_experts=sec.shared_experts), "framework": sec.framework,
            "seconds": float("nan"), "p10": None, "p90": None, "memory_bytes": None,
            "optimizer_seconds": None, "attention_backend": sec.attention_backend}
    refusal = workload_refusal(report)
    env = report.environment
    if refusal is None and instance is not None and env.local_world_size != instance.gpu_count:
        # the report's own GPU count may say "a node of one": the catalog knows the node
        refusal = (f"the run used {env.local_world_size} of {instance.name}'s "
                   f"{instance.gpu_count} GPUs: only a full node shows the power and heat of a "
                   "training step. To fix: run torchrun with --nproc-per-node "
                   f"{instance.gpu_count}")
    if refusal is None and acc is None:
        refusal = (f"accelerator {acc_name!r} is not in the catalog" if acc_name else
                   "no catalog accelerator: re-ingest with `accelerator` NAME")
    ranks = sorted(report.ranks, key=lambda r: r.rank)
    return WorkloadCandidate(
        report_id=rid, created_utc=created,
        accelerator=acc.name if acc else (acc_name or (env.device_type if env else "-")),
        framework=w["framework"], shape=w["shape"],
        instance_type=instance.name if instance else None,
        measured_layer_seconds=w["seconds"], p10=w["p10"], p90=w["p90"],
        measured_layer_memory_bytes=w["memory_bytes"],
        measured_optimizer_seconds=w["optimizer_seconds"],
        per_gpu_seconds=PerGpu.of(_rank_values(ranks, "layer_fwd_bwd_seconds")),
        per_gpu_memory_bytes=PerGpu.of(_rank_values(ranks, "layer_activation_bytes")),
        attention_backend=w["attention_backend"], refusal=refusal)


def _rank_values(ranks, name: str) -> list[tuple[int, float]]:
    return [(r.rank, nv.value) for r in ranks for nv in r.workload if nv.name == name]


def _modelled(c: WorkloadCandidate, catalog: Catalog, hardware: Calibration
              ) -> WorkloadCandidate:
    """The candidate with the planner's figures for its shape on its accelerator."""
    if c.refusal is not None:
        return c
    acc = catalog.accelerator(c.accelerator)
    attention = model_attention(c.attention_backend)
    try:
        hw = hardware_for(acc, c.shape, framework=c.framework, attention=attention,
                          calibration=hardware)
        model = model_layer(c.shape, hardware=hw, framework=c.framework, attention=attention)
        if not PROFILES[c.framework].eager_layers:  # the probe's layers are eager regardless
            model = dataclasses.replace(model, activation_bytes=model_layer(
                c.shape, hardware=hw, framework=PROBE_LAYERS,
                attention=attention).activation_bytes)
    except (PlannerError, ValueError, KeyError) as exc:
        return dataclasses.replace(c, refusal=f"the planner cannot model this layer on "
                                              f"{acc.name}: {exc}")
    return dataclasses.replace(c, modelled=model, peak_tflops=hw.peak_tflops,
                               memory_bytes=hw.memory_gib * 2**30)


def _per_gpu(report, f) -> PerGpu | None:
    """Each rank's own figure behind ``f`` (the summary over GPUs is only their median)."""
    attr = {"matmul": "matmul_best_tflops", "hbm": "memory_gb_per_s"}.get(f.kind)
    return PerGpu.of((r.rank, nv.value) for r in report.ranks
                     for nv in (getattr(r, attr) if attr else ()) if nv.name == f.name)


def stored_json_or_error(text: str, conn: StoreConnection) -> object:
    """A stored report's JSON, or the ValueError that says why it is unreadable."""
    try:
        return stored_json(text, conn)
    except ValueError as exc:
        return exc


def _candidates(rid: int, created: str, acc_name: str | None, data: object, catalog: Catalog,
                runs: dict[str, list]) -> tuple[list[Candidate], WorkloadCandidate | None]:
    """Every figure of one stored report (its JSON, or why it has none: ``data``) as a
    Candidate for the rules, and its workload layer (None when it has none). ``runs``: the
    measurement fingerprints of the reports before it that could calibrate, by shape (a copy
    of one of them is refused; added to when it is not, and some figure of it could)."""
    from probes import ReportError, parse_report

    def whole(why: str) -> tuple[list[Candidate], None]:
        return [Candidate(report_id=rid, created_utc=created, kind="report",
                          accelerator=acc_name or "-", value=None, unit="",
                          refusal=why)], None

    try:
        if isinstance(data, ValueError):  # not UTF-8, not JSON, nested too deep
            raise data
        report = parse_report(data, source=f"probe report {rid}")
    except (ReportError, ValueError) as exc:
        return whole(f"this gpuplan cannot read it: {exc}")
    fingerprint = measurement_fingerprint(report)
    for earlier, first in runs.get(fingerprint.shape, ()) if fingerprint else ():
        how = earlier.same_run(fingerprint)  # stored before ingest recognised such copies
        if how is not None:
            return whole(f"the same measurements as report {first}{how} (a copy of that "
                         "run, re-saved, renamed, re-dated or nudged): one run counts once")
    acc = None
    if acc_name:
        try:
            acc = catalog.accelerator(acc_name)
        except GpuplanError:
            acc = None
    env = report.environment
    instance = _instance(catalog, env)
    if why := _cloud_contradiction(catalog, env, instance):
        return whole(why)
    if instance is not None and acc is not None and instance.accelerator != acc.name:
        return whole(instance_contradiction(env.gpu_model, env.instance_type, acc.name,
                                            instance.accelerator))
    if why := memory_contradiction(env, acc):
        return whole(why)
    seen = max(env.local_world_size, env.gpu_count, env.gpu_count_smi or 0) if env else 0
    if instance is not None and seen > instance.gpu_count:  # 16 ranks on an 8-GPU p5 still
        # calibrated matmul and HBM: only its bus bandwidth was refused
        return whole(f"it saw {seen} GPUs per node on {instance.name}, which has "
                     f"{instance.gpu_count}: an edited or merged report, or another instance "
                     "type's; re-ingest the node's own report")
    try:  # one stored report must never stop every plan that reads the store
        digests = section_fingerprints(report)
        copied = {section: first for section, prints in digests.items()
                  if (first := _earlier(runs, f"section {section} {prints.shape}", prints))}
        figures, layer = _figures(rid, created, acc, acc_name, report, instance, copied)
    except (ValueError, PlannerError) as exc:
        return whole(f"this gpuplan cannot use it: {exc}")
    # a section counts as a run's once it could calibrate (not a refused report's: an
    # environment-less copy stored first must not make the GPU run's figures its copy)
    usable = {_SECTION_OF[c.kind] for c in figures if c.refusal is None and c.copy_of is None}
    if layer is not None and layer.refusal is None and layer.copy_of is None:
        usable.add("workload")
    for section in usable & digests.keys():
        prints = digests[section]
        runs.setdefault(f"section {section} {prints.shape}", []).append((prints, rid))
    # and the whole run, as its sections: an edited copy refused whole, stored first, must
    # not make the probes' own file of that run its copy
    if usable and fingerprint is not None:
        runs.setdefault(fingerprint.shape, []).append((fingerprint, rid))
    return figures, layer


def _earlier(runs: dict[str, list], key: str, prints) -> tuple[int, str] | None:
    """(id, ``Fingerprint.same_run``'s how) of the first earlier report under ``key`` whose
    section ``prints`` is the same run's: its very figures, or within SAME_RUN_REL of them
    (a copy nudged); what the rules do not read (a warm-up burst, notes) is not compared."""
    for earlier, rid in runs.get(key, ()):
        if (how := earlier.same_run(prints)) is not None:
            return rid, how
    return None


_SECTION_OF = {"matmul": "matmul", "hbm": "memory", "intra": "collectives",
               "inter": "collectives"}


def _copied(section: str, earlier: tuple[int, str]) -> str:
    """Why a figure of a section copied from an earlier report (its id, and how:
    ``_earlier``) is not counted (``copy_of``)."""
    first, how = earlier
    return (f"its {section} section is report {first}'s (the same measurements{how}: a "
            f"partial copy of that run): one run counts once, as report {first}")


def _figures(rid: int, created: str, acc, acc_name: str | None, report, instance,
             copied: dict[str, tuple[int, str]] | None = None
             ) -> tuple[list[Candidate], WorkloadCandidate | None]:
    from probes import report_figures

    copied = copied or {}
    out = []
    # without an environment (an older `--probes` run), report_figures counts one GPU on one
    # node: the collectives section states the run's shape ("intra - x1" of a 2-rank run)
    col = report.collectives if report.environment is None else None
    for f in report_figures(report):
        dtype = DTYPE_NAMES.get(f.name) if f.kind == "matmul" else None
        refusal = f.refusal
        first = copied.get(_SECTION_OF[f.kind])
        if refusal is None and acc is None:
            refusal = (f"accelerator {acc_name!r} is not in the catalog" if acc_name else
                       "no catalog accelerator: re-ingest with `accelerator` NAME")
        bound, bound_source = (None, "") if acc is None else _bound(f.kind, f, acc, instance,
                                                                      dtype)
        refusal = refusal or _instance_refusal(f, instance)
        out.append(Candidate(
            report_id=rid, created_utc=created, kind=f.kind,
            stated_instance=None if instance is not None or report.environment is None
            else report.environment.instance_type,
            accelerator=acc.name if acc else (acc_name or (
                report.environment.device_type if report.environment else "-")),
            dtype=dtype, instance_type=instance.name if instance else None,
            gpus_per_node=col.local_world_size if col else f.gpus_per_node,
            nodes=col.node_count if col else f.nodes, value=f.value, unit=f.unit,
            p10=f.p10, p90=f.p90, bound=bound, bound_source=bound_source,
            per_gpu=_per_gpu(report, f), refusal=refusal,
            copy_of=_copied(_SECTION_OF[f.kind], first) if first else None))
    layer = _workload_candidate(rid, created, acc, acc_name, report, instance)
    if layer is not None and "workload" in copied:
        layer = dataclasses.replace(layer, copy_of=_copied("workload", copied["workload"]))
    return out, layer


def load_calibration_with_notes(catalog: Catalog | None = None, *,
                                db: Path | None = None) -> tuple[Calibration, tuple[str, ...]]:
    """(calibration, lines saying what is used and what is not, with why) for the CLI."""
    cal = load_calibration(catalog, db=db)
    return cal, cal.notes()
