"""The cluster a workload runs on: an accelerator, GPUs per node, nodes and the links.

Either a catalog instance type (``cluster_for_instance``) or a *reference node* for an
accelerator (``reference_cluster``): the vendor's usual GPUs per node, its intra-node link and a
typical inter-node fabric for its generation — every choice is stated in ``Cluster.notes``.
"""

from __future__ import annotations

import bisect
import math
import numbers
from dataclasses import field, replace

from catalog import Accelerator, Catalog, InstanceType, record

from ._errors import HardwareError


@record
class Cluster:
    accelerator: Accelerator
    gpus_per_node: int
    nodes: int
    topology: str  # catalog TOPOLOGIES
    intra_node_gb_per_s_per_gpu: float  # bidirectional, as vendors state it
    inter_node_gbps: float | None  # per node; None → cannot span nodes
    fabric: str
    instance_type: str | None = None
    cloud: str | None = None
    notes: tuple[str, ...] = ()
    # a reference cluster (`gpu` NAME `gpus` N): its whole node's GPUs and topology, which
    # `gpus` counts in (up to one node, then whole nodes) even where this one is part of a node
    node_gpus: int | None = field(default=None, repr=False)
    node_topology: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # plain ints and floats first (a plan builds one cluster per candidate it describes);
        # the abstract number types only for what is not one
        for name in ("nodes", "gpus_per_node"):
            v = getattr(self, name)
            if type(v) is not int:
                if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                    raise _not_a_count(name, v)
                object.__setattr__(self, name, int(v))
            if v < 1:
                raise _not_a_count(name, v)
        if self.gpus > MAX_CLUSTER_GPUS:
            raise HardwareError(f"{self.gpus:,} GPUs is above the {MAX_CLUSTER_GPUS:,} the model "
                                "covers. To fix: use fewer nodes or GPUs", field="gpus",
                                value=self.gpus)
        for name in ("intra_node_gb_per_s_per_gpu", "inter_node_gbps"):
            v = getattr(self, name)
            if v is None and name == "inter_node_gbps":
                continue
            if (type(v) is not float and type(v) is not int) and (
                    isinstance(v, bool) or not isinstance(v, numbers.Real)) \
                    or not 0 < v < math.inf:  # NaN fails this too
                raise HardwareError(f"`{name}` must be a positive bandwidth, got {v!r}. To fix: "
                                    "build the cluster with build_cluster or "
                                    "cluster_for_instance", field=name, value=v)
        if self.nodes > 1 and not self.inter_node_gbps:
            # the count is given as `nodes` of an instance type, as `gpus` of a reference node
            given, at_most = (("nodes", "`nodes` 1") if self.instance_type else
                              ("gpus", f"at most {self.gpus_per_node} GPUs (`gpus` "
                                       f"{self.gpus_per_node}, one node)"))
            raise HardwareError(
                f"{self.instance_type or self.accelerator.name} has no known inter-node "
                "network in the catalog, so it cannot be used across nodes. To fix: use "
                f"{at_most}, or an instance type with EFA/InfiniBand/RoCE", field=given,
                value=getattr(self, given))

    @property
    def gpus(self) -> int:
        return self.gpus_per_node * self.nodes


def _not_a_count(name: str, v) -> HardwareError:
    return HardwareError(f"`{name}` must be a whole number of at least 1, got {v!r}. To fix: "
                         "pass `nodes` N or `gpus` N with N >= 1",
                         field="gpus" if name == "gpus_per_node" else name, value=v)


# The largest cluster an estimate models (xAI's and Meta's largest published clusters are
# ~100K GPUs); beyond it a count is a typo, not a plan.
MAX_CLUSTER_GPUS = 131_072
# The largest cluster a plan considers (`max_gpus`, a team job's `max_gpus`), so the most nodes
# a plan's launch files can name (one-GPU nodes): one home for the search, team plans and
# launch specs, which each had the figure written out.
MAX_PLAN_GPUS = 65_536

def reference_cluster(catalog: Catalog, gpu: str, gpus: int) -> Cluster:
    """A reference node of ``gpu`` scaled to ``gpus`` accelerators."""
    acc = catalog.accelerator(gpu)
    if not 1 <= gpus <= MAX_CLUSTER_GPUS:
        raise HardwareError(f"`gpus` must be between 1 and {MAX_CLUSTER_GPUS:,}, got {gpus}. "
                            "To fix: pass e.g. `gpus` 8", field="gpus", value=gpus)
    if acc.reference_gpus_per_node:  # the vendor's usual node (the catalog's planning facts)
        per_node, topo, gbps, fabric, why = (
            acc.reference_gpus_per_node, acc.reference_topology, acc.reference_inter_node_gbps,
            acc.reference_fabric, acc.reference_node_source)
    else:
        # Use the catalog's most common multi-GPU instance of this accelerator as the node.
        shapes = [t for t in catalog.instance_types if t.accelerator == acc.name]
        if not shapes:  # no `instance` has it either: "pass `instance` instead" led nowhere
            raise HardwareError(_no_node_message(catalog, acc.name), field="gpu", value=gpu)
        best = max(shapes, key=lambda t: (t.gpu_count, t.inter_node_gbps or 0))
        per_node, topo, gbps, fabric = (best.gpu_count, best.intra_node_topology,
                                        best.inter_node_gbps, best.fabric)
        why = f"modelled on {best.cloud} {best.name}"
    link = acc.intra_node_gb_per_s_per_gpu
    if link is None:  # no GPU fabric in the datasheet: the GPUs talk over PCIe
        link = pcie_link(acc)
        why += f"; no GPU link in the datasheet, PCIe {link:g} GB/s assumed"
    gbps = gbps or None
    node_gpus, node_topology = per_node, topo
    per_node, nodes, topo = _reference_shape(acc.name, gpus, per_node, topo)
    network = f"{gbps:g} Gb/s {fabric}" if gbps else "none known (single node only)"
    note = (f"reference node: {per_node}x {acc.name} per node ({why}); {nodes:,} node(s); "
            f"intra-node {link:g} GB/s per GPU; inter-node {network}")
    return Cluster(accelerator=acc, gpus_per_node=per_node, nodes=nodes, topology=topo,
                   intra_node_gb_per_s_per_gpu=link, inter_node_gbps=gbps, fabric=fabric,
                   notes=(note,), node_gpus=node_gpus, node_topology=node_topology)


def _no_node_message(catalog: Catalog, name: str) -> str:
    """Why ``name`` cannot be timed: the catalog knows its chip but no node (no instance type
    and no vendor reference node), and which accelerators with nodes are spelt closest."""
    from catalog import close_matches  # the one "did you mean" ranking

    noded = sorted({t.accelerator for t in catalog.instance_types}
                   | {a.name for a in catalog.accelerators if a.reference_gpus_per_node})
    near = close_matches(name, noded)
    return (f"the catalog has no node with {name} (no instance type and no reference node), "
            "so the GPUs' links and network are unknown. To fix: choose another `gpu`"
            + (f", e.g. {' or '.join(near)}" if near else ""))


def _reference_shape(name: str, gpus: int, per_node: int, topo: str) -> tuple[int, int, str]:
    """(GPUs per node, nodes, topology) of ``gpus`` on reference nodes of ``per_node``: part
    of one node up to a node, else whole nodes (what `gpus` accepts)."""
    nodes, rem = divmod(gpus, per_node)
    if gpus <= per_node:
        return gpus, 1, "single" if gpus == 1 else topo
    if rem:
        raise HardwareError(f"`gpus` {gpus} is not a whole number of {per_node}-GPU "
                            f"{name} nodes. To fix: pass a multiple of {per_node}")
    return per_node, nodes, topo


def larger_counts(cluster: Cluster) -> list[int]:
    """The GPU counts above ``cluster``'s that its front end accepts and the model covers,
    smallest first: for a reference cluster what `gpus` takes (up to its node, then whole
    nodes), else whole nodes of its own (`nodes`); beyond one node only with a network."""
    per = cluster.node_gpus or cluster.gpus_per_node
    within = range(cluster.gpus + 1, per + 1) if cluster.node_gpus else range(0)
    if not cluster.inter_node_gbps:
        return list(within)
    return [*within, *range(per * (cluster.nodes + 1), MAX_CLUSTER_GPUS + 1, per)]


def smallest_fitting(counts: list[int], fitting, shards) -> tuple[int, object] | None:
    """(the smallest of ``counts`` found to fit, what ``fitting(count)`` gave there), or None
    when none of them fits; ``shards(found)`` is the model-parallel size (tp·pp·cp) of the
    plan found.

    Fitting is not monotone in the count: a plan needs tp·pp·cp to divide it (a 1M-token
    sequence fits 32 GPUs as cp16 tp2, and no count of 40, 72 or 136). So the count doubles
    (16, 32, 64 … GPUs, each a count of many divisors) until one fits, and the smallest below
    it is sought twice by halving: among the multiples of the plan's tp·pp·cp there (within
    one split, more GPUs only shard more), and among every count (another split may fit
    earlier). Each search only ever keeps a count that fits. It advised 65,552 GPUs where 32
    fit, trying counts 8·(2^k + 1) alone."""
    below, i, found = -1, 0, None
    while i < len(counts):
        if (found := fitting(counts[i])) is not None:
            break
        below = i
        i = (len(counts) if i == len(counts) - 1
             else min(bisect.bisect_left(counts, 2 * counts[i]), len(counts) - 1))
    if found is None:
        return None
    best = (counts[i], found)
    width = shards(found)
    for pool in ([c for c in counts[below + 1:i] if c % width == 0], counts[below + 1:i]):
        lo, hi = -1, len(pool)  # pool[hi] (or the doubling's count) fits; pool[lo] did not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if (got := fitting(pool[mid])) is not None:
                hi = mid
                if pool[mid] < best[0]:
                    best = (pool[mid], got)
            else:
                lo = mid
    return best


def resized(cluster: Cluster, gpus: int) -> Cluster:
    """``cluster`` with ``gpus`` GPUs (one of ``larger_counts``), shaped as its front end
    would build it: a reference cluster as `gpus` shapes it, else whole nodes of its own."""
    if cluster.node_gpus is None:
        return replace(cluster, nodes=gpus // cluster.gpus_per_node)
    per_node, nodes, topo = _reference_shape(cluster.accelerator.name, gpus,
                                             cluster.node_gpus, cluster.node_topology)
    return replace(cluster, gpus_per_node=per_node, nodes=nodes, topology=topo)


def intra_link_for(instance: InstanceType, acc: Accelerator) -> float:
    """Per-GPU intra-node bandwidth: the instance's own figure, else by topology."""
    if instance.intra_node_gb_per_s_per_gpu:
        return instance.intra_node_gb_per_s_per_gpu
    if (instance.intra_node_topology in ("pcie", "single")
            or acc.intra_node_gb_per_s_per_gpu is None):
        # GPUs without a GPU fabric talk over PCIe; NVLink-capable cards in PCIe hosts too.
        return pcie_link(acc)
    return acc.intra_node_gb_per_s_per_gpu


def pcie_link(acc: Accelerator) -> float:
    """The accelerator's host PCIe link, GB/s both directions (the catalog's planning fact)."""
    if acc.pcie_gb_per_s_per_gpu is None:
        raise HardwareError(f"{acc.name} has no PCIe figure in the catalog. To fix: run "
                            "`gpuplan catalog use packaged`, or `gpuplan catalog refresh`")
    return acc.pcie_gb_per_s_per_gpu


def cluster_for_instance(catalog: Catalog, instance: InstanceType, nodes: int) -> Cluster:
    acc = catalog.accelerator(instance.accelerator)
    link = intra_link_for(instance, acc)
    note = (f"{instance.cloud} {instance.name}: {instance.gpu_count}x {acc.name}, "
            f"{instance.intra_node_topology} ({link:g} GB/s per GPU), inter-node "
            + (f"{instance.inter_node_gbps:g} Gb/s {instance.fabric}" if instance.inter_node_gbps
               else "unknown (single node only)"))
    return Cluster(accelerator=acc, gpus_per_node=instance.gpu_count, nodes=nodes,
                   topology=instance.intra_node_topology, intra_node_gb_per_s_per_gpu=link,
                   inter_node_gbps=instance.inter_node_gbps, fabric=instance.fabric,
                   instance_type=instance.name, cloud=instance.cloud, notes=(note,))
