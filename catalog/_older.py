"""Catalogs written by older gpuplan versions, brought up to the current columns on load.

A stored catalog (``catalog refresh``, ``catalog use``) keeps the accelerator table it was
written with; columns added since read as their defaults. The packaged snapshot holds the
current facts for every device it knows, and a refresh copies the snapshot's accelerators, so
an older file takes what it lacks from there.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from . import _paths
from ._records import PCIE_SOURCE, Accelerator, pcie_link_gb_per_s

PLANNING_FACTS = ("sm_count", "pcie_gb_per_s_per_gpu", "reference_gpus_per_node",
                  "reference_topology", "reference_inter_node_gbps", "reference_fabric",
                  "reference_node_source", "peak_stand_in_tflops", "achievable_matmul_tflops",
                  "skypilot_name", "dstack_name", "cloud_names", "inference_only",
                  "planning_source")


def with_planning_facts(accelerators: tuple[Accelerator, ...],
                         path: Path) -> tuple[Accelerator, ...]:
    """A catalog written before the accelerators' planning facts were columns: each device
    takes them from the packaged snapshot (the datasheet rows are the same), and the PCIe
    link from its datasheet link where the snapshot does not know the device. One written
    before ``inference_only`` was a column (read as False) takes that flag from the snapshot:
    a refresh copies the snapshot's accelerators, so only an older file can disagree."""
    from ._csvio import ACCELERATORS, read_table

    if path.resolve() == _paths.packaged_catalog_dir():
        return accelerators
    packaged = {a.name: a for a in read_table(_paths.packaged_catalog_dir() / "accelerators.csv",
                                              ACCELERATORS)}
    accelerators = tuple(
        replace(a, inference_only=True)
        if not a.inference_only and a.name in packaged and packaged[a.name].inference_only
        else a for a in accelerators)
    if all(a.pcie_gb_per_s_per_gpu is not None for a in accelerators):
        return accelerators
    out = []
    for a in accelerators:
        if a.pcie_gb_per_s_per_gpu is None:
            source = packaged.get(a.name)
            a = (replace(a, **{f: getattr(source, f) for f in PLANNING_FACTS}) if source else
                 replace(a, pcie_gb_per_s_per_gpu=pcie_link_gb_per_s(a.intra_node_link),
                         planning_source=PCIE_SOURCE))
        out.append(a)
    return tuple(out)
