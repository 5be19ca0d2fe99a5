"""Azure sizes that hold part of one GPU are left out, as AWS's fractional types are.

Standard_NV4as_v4, NV8as_v4 and NV16as_v4 hold 1/8, 1/4 and 1/2 of one Radeon Instinct MI25
(Microsoft's NVv4 size page, "Accelerators"), priced linearly; the reference table lists each
with one GPU, so `gpuplan offers --gpu Radeon-Instinct-MI25` showed NV4as_v4 at $0.233 per
GPU-hour — 1/8 of the price of the one whole-GPU size, NV32as_v4 ($1.864) — and `gpuplan gpus`
priced the MI25 at $0.23 on-demand, $0.03 spot. The build, the packaged snapshot and the live
Azure source all leave them out now, and meta.json's ``skipped`` names them.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from catalog import load_catalog, select_offers

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT.parent / "shared" / "reference"
PARTIAL_MI25 = {"Standard_NV4as_v4": "1/8", "Standard_NV8as_v4": "1/4",
                "Standard_NV16as_v4": "1/2"}
PARTIAL_A10 = {"Standard_NV6ads_A10_v5": "1/6", "Standard_NV12ads_A10_v5": "1/3",
               "Standard_NV18ads_A10_v5": "1/2"}
WHOLE = ("Standard_NV32as_v4", "Standard_NV36ads_A10_v5", "Standard_NV36adms_A10_v5",
         "Standard_NV72ads_A10_v5", "Standard_NC4as_T4_v3", "Standard_NV12s_v3")


@pytest.fixture(scope="module")
def packaged():
    return load_catalog("packaged")


def test_the_packaged_catalog_has_no_partial_gpu_size(packaged):
    azure = {t.name for t in packaged.instance_types if t.cloud == "azure"}
    offered = {o.instance_type for o in packaged.offers if o.cloud == "azure"}
    assert not (set(PARTIAL_MI25) | set(PARTIAL_A10)) & (azure | offered)
    assert set(WHOLE) <= azure  # the same series' whole-GPU sizes stay
    skipped = packaged.meta["skipped"]["azure"]
    for name, part in PARTIAL_MI25.items():
        assert f"{name} (fractional GPU: {part})" in skipped


def test_the_mi25_is_priced_by_its_one_whole_gpu_size(packaged):
    mi25 = ["Radeon-Instinct-MI25"]
    rows = select_offers(packaged, gpus=mi25, pricing=["on_demand"], regions=["eastus"])
    assert [(r.instance.name, r.usd_per_gpu_hour) for r in rows] == [
        ("Standard_NV32as_v4", 1.864)]
    cheapest = min(r.usd_per_gpu_hour for r in select_offers(packaged, gpus=mi25)
                   if r.offer.price_usable)
    assert cheapest > 0.2  # the spot NV32as_v4 ($0.205), not 1/8 of a GPU at $0.03


def test_the_packaged_meta_counts_the_offers_it_holds(packaged):
    azure = packaged.meta["clouds"]["azure"]
    assert sum(s["offers"] for s in azure["sources"]) == sum(
        o.cloud == "azure" for o in packaged.offers)


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="shared reference not beside the checkout")
def test_the_build_leaves_the_reference_tables_partial_sizes_out():
    from catalog._build import _azure, _specs

    with open(REFERENCE / "azure_accelerator_vms.csv", newline="", encoding="utf-8") as f:
        listed = {r["InstanceType"] for r in csv.DictReader(f)}
    assert set(PARTIAL_MI25) <= listed  # the table has them (as 1 GPU each)
    _, names = _specs.build_accelerators(REFERENCE)
    result = _azure.build(REFERENCE, _specs.read_network(REFERENCE, names))
    built = {t.name for t in result.instance_types} | {o.instance_type for o in result.offers}
    assert not set(PARTIAL_MI25) & built and "Standard_NV32as_v4" in built
    assert {f"{n} (fractional GPU: {p})" for n, p in PARTIAL_MI25.items()} <= result.skipped


def test_a_refresh_never_asks_azure_for_a_partial_gpu_size(packaged, monkeypatch):
    """With credentials the resource SKUs list every size, partial ones too (as one GPU):
    none of them is priced, so a refresh cannot bring them back."""
    from catalog.sources import azure

    spec = {"gpus": 1, "vcpus": 4, "memory_gib": 14.0, "rdma": False, "restricted": ()}
    listed = {n: dict(spec) for n in (*PARTIAL_MI25, *PARTIAL_A10, *WHOLE)}
    asked: list[str] = []

    def prices(self, name, wanted, *, first=False):
        asked.append(name)
        tally = azure._Tally(items=1)
        return {("eastus", "on_demand"): 1.0}, tally

    monkeypatch.setattr(azure.AzureSource, "_listed_specs", lambda self, warnings: listed)
    monkeypatch.setattr(azure.AzureSource, "_prices", prices)
    data = azure.AzureSource(reference=packaged).fetch(None, None)
    assert sorted(asked) == sorted(WHOLE)
    from catalog.sources._names import AZURE_PARTIAL_GPU

    assert not {t.name for t in data.instance_types} & set(AZURE_PARTIAL_GPU)
    assert {n: AZURE_PARTIAL_GPU[n] for n in (*PARTIAL_MI25, *PARTIAL_A10)} == {
        **PARTIAL_MI25, **PARTIAL_A10}
