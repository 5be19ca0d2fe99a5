"""What an estimate warns about its probe calibration, one line per figure it reads (the
matmul rate of its precision, the HBM copy, the intra-node and, across nodes, the inter-node
bus bandwidth):

- a measured figure used that is more than FAR_FROM_DEFAULT times above or below its datasheet
  default: one in-bounds report of a slow node (60 TFLOP/s on an H100) moved an estimate from
  1.65 h to 15.45 h, said only as "(+833.4%)" in the calibration block; a figure so far from
  the default is more often a faulty node than the hardware, and the line says how to check
  and remove it;
- a figure whose stored reports disagree (the rules use none of them): the datasheet default
  is used again, silently, and it may be faster than every measurement (792.6 TFLOP/s against
  reports of 190, 400 and 650).

- a figure used whose rules' note carries cautions (``CalibrationNote.cautions``): a report
  older than a year, a workload layer measured more than FAR_FROM_DEFAULT from its model or
  with activations over FAR_FROM_DEFAULT times it (a layer 14x slower than the model moved an
  estimate from 383 h to 5,379 h with no warning); the workload layers read are those of the
  cluster's accelerator and the workload's framework.

None changes which figure is used: the rules (``planner.store``) decide that.
"""

from __future__ import annotations

from catalog import record

from ._assumptions import Assumptions
from ._calibration import FAR_FROM_DEFAULT, NO_CALIBRATION, Calibration, Measurement
from ._hardware import Cluster
from ._inputs import ClusterInputs, cluster_inputs, matmul_dtype
from ._shown import format_figure
from ._workload import Workload

# The rules' refusal of a figure whose reports disagree says "disagree" (``planner.store``
# ``_disagreement``); the other refusals are a report's own, which `probe ingest` says.
DISAGREE = "disagree"


@record
class _Figure:
    """One figure the estimate reads: its name, the note keys the rules list it under, the
    measurement used (None: the default), the default and its unit."""

    name: str
    kind: str  # CalibrationNote.kind
    keys: frozenset[str]
    measured: Measurement | None
    default: float
    unit: str


def calibration_warnings(cal: Calibration, cluster: Cluster, workload: Workload,
                         A: Assumptions, ci: ClusterInputs) -> list[str]:
    """One warning per figure ``ci`` was built with (by ``cluster_inputs`` from ``cal``) whose
    measurement is more than FAR_FROM_DEFAULT from its default, or whose stored reports
    disagree so that the default is used (module docstring)."""
    if cal.empty and not cal.rejected_notes:
        return []
    default = cluster_inputs(cluster, workload, A, NO_CALIBRATION, memory_gib=ci.memory_gib)
    out, cautions = [], []
    for f in _figures(cal, cluster, workload, A, default):
        said = _far(f) if f.measured is not None else _disagreeing(cal, f)
        if said:
            out.append(said)
        if f.measured is not None:
            cautions += _cautions(cal, f.kind, f.keys, f.name)
    prefix = f"{cluster.accelerator.name} {workload.framework} "
    layers = frozenset(n.key for n in cal.used_notes
                       if n.kind == "workload" and n.key.startswith(prefix))
    cautions += _cautions(cal, "workload", layers, None)
    return out + _said_once(cautions)


@record(kw_only=False)
class _Caution:
    """A used figure whose note carries a caution: what it is, its value, the reports, why."""

    what: str
    value: str
    report_ids: tuple
    why: str


def _cautions(cal: Calibration, kind: str, keys: frozenset[str], name: str | None
              ) -> list[_Caution]:
    """The used notes of ``kind`` under ``keys`` that carry cautions."""
    return [_Caution(name or f"workload layer {n.key}",
                     "-" if n.value is None else f"{format_figure(n.value)} {n.unit}",
                     tuple(n.report_ids), "; ".join(n.cautions))
            for n in cal.used_notes if n.kind == kind and n.key in keys and n.cautions]


def _said_once(cautions: list[_Caution]) -> list[str]:
    """One warning per (reports, caution): a year-old hardware report gave its age three
    times, once for each figure it calibrates (matmul, HBM copy, bus bandwidth)."""
    groups: dict[tuple, list[_Caution]] = {}
    for c in cautions:
        groups.setdefault((c.report_ids, c.why), []).append(c)
    out = []
    for (ids, why), group in groups.items():
        several = len(ids) > 1
        which = " ".join(map(str, ids)) or "ID"
        figures = [f"{c.what} ({c.value})" for c in group]
        head = (f"{group[0].what}: measured {group[0].value} is used" if len(group) == 1 else
                "measured " + ", ".join(figures[:-1]) + f" and {figures[-1]} are used")
        out.append(f"{head} ({_ids(ids)}), but {why}. To check: `gpuplan probe show`; remove "
                   f"{'them' if several else 'it'} with `gpuplan probe remove {which}` if "
                   f"{'they do' if several else 'it does'} not describe this machine today")
    return out


def _figures(cal: Calibration, cluster: Cluster, workload: Workload, A: Assumptions,
             default: ClusterInputs) -> list[_Figure]:
    """The figures ``cluster_inputs`` reads from ``cal``, looked up the same way."""
    acc, it, gpn = cluster.accelerator.name, cluster.instance_type, cluster.gpus_per_node
    dtype = matmul_dtype(workload.precision)
    node = it or f"a node of {gpn} {acc}"
    label = Calibration.key_label  # the keys as the rules' notes name them
    found = [
        _Figure(name=f"matmul {dtype} on {acc}", kind="matmul",
                keys=frozenset({label("matmul_tflops", (acc, dtype))}),
                measured=cal.matmul(acc, dtype), default=default.matmul_tflops,
                unit="TFLOP/s"),
        _Figure(name=f"HBM copy on {acc}", kind="hbm", keys=frozenset({label("hbm_gb_per_s", acc)}),
                # without a datasheet bandwidth the measurement is not used (cluster_inputs)
                measured=cal.hbm(acc) if cluster.accelerator.memory_bandwidth_gb_per_s else None,
                default=default.hbm_gb_per_s * A.memory_bandwidth_efficiency, unit="GB/s"),
        # the keys the rules list an intra-node figure under: the instance type's, or for a
        # cluster without one the accelerator x GPUs per node (``Calibration.intra``)
        _Figure(name=f"intra-node busbw on {node}", kind="intra",
                keys=frozenset({label("intra_busbw_gb_per_s", it) if it else
                                label("intra_node_busbw_gb_per_s", (acc, gpn))}),
                measured=cal.intra(it, acc, gpn), default=default.intra_busbw_gb_per_s,
                unit="GB/s")]
    if cluster.nodes > 1:
        found.append(_Figure(
            name=f"inter-node busbw at {cluster.nodes} nodes of {it or acc}", kind="inter",
            keys=frozenset({label("inter_busbw_gb_per_s", (it, cluster.nodes))} if it else ()),
            measured=cal.inter(it, cluster.nodes),
            default=default.nic_gb_per_s_per_gpu * gpn, unit="GB/s"))
    return found


def _ids(ids) -> str:
    ids = sorted(set(ids))
    return f"report{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))}"


def _far(f: _Figure) -> str | None:
    """The warning for a measurement used more than FAR_FROM_DEFAULT from its default."""
    m = f.measured
    if not f.default > 0:  # no default to compare with (a cluster without a network figure)
        return None
    ratio = m.value / f.default
    if 1 / FAR_FROM_DEFAULT <= ratio <= FAR_FROM_DEFAULT:
        return None
    ids = m.report_ids
    which = " ".join(map(str, ids)) if ids else "ID"
    several = len(ids) > 1
    if ratio < 1:  # slow: a throttled or degraded node measures so, a GPU model does not
        how, why = f"{1 / ratio:.1f}× below", "more often a faulty node than the hardware"
        wrong = f"the node{'s were' if several else ' was'} faulty"
    else:  # fast: nothing runs faster than its hardware; another machine's or an edited report
        how, why = (f"{ratio:.1f}× above", "more often another machine's or an edited report "
                    "than the hardware")
        wrong = f"the report{'s are' if several else ' is'} wrong"
    return (f"{f.name}: measured {format_figure(m.value)} {f.unit} is used, {how} the "
            f"datasheet default {format_figure(f.default)} {f.unit} ({m.source}"
            + (f"; {_ids(ids)}" if ids and "probe report" not in m.source else "")
            + f"); a figure so far from its default is {why}. To check: `gpuplan probe show`; "
            f"remove {'them' if several else 'it'} with `gpuplan probe remove {which}` if "
            f"{wrong}")


def _disagreeing(cal: Calibration, f: _Figure) -> str | None:
    """The warning for a figure the default stands in for because its reports disagree."""
    notes = [n for n in cal.rejected_notes
             if n.kind == f.kind and n.key in f.keys and DISAGREE in n.reason
             and n.value is not None]
    if not notes:
        return None
    ids = sorted({i for n in notes for i in n.report_ids})
    low, high = min(n.value for n in notes), max(n.value for n in notes)
    side = (", above every measurement" if f.default > high else
            ", below every measurement" if f.default < low else "")
    return (f"{f.name}: {len(ids)} stored reports disagree ({format_figure(low)}–"
            f"{format_figure(high)} {f.unit}, {_ids(ids)}), none used; the datasheet default "
            f"{format_figure(f.default)} {f.unit} is used{side}. To fix: see `gpuplan probe "
            "show`, and remove the wrong one (`gpuplan probe remove ID`)")
