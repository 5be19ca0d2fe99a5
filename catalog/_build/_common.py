"""What every reference reader shares: the dated files, and small parsing helpers.

Each reference file is described once in ``REFERENCE_FILES``: its cloud, the date its prices
were observed, whether that date is inferred (approximate), and where it came from (the
reference README's table). Every offer built from a file carries these, so a price's age and
origin are always visible; where a price combines parts of two files (GCP host + GPU), it
takes the *older* date and names both sources.
"""

from __future__ import annotations

from .._record import record
import ast
import csv
import datetime as dt
from collections.abc import Iterable

from pathlib import Path


@record
class RefFile:
    name: str
    cloud: str
    as_of: dt.date
    approximate: bool
    source: str
    basis: str  # why this date


REFERENCE_FILES: dict[str, RefFile] = {f.name: f for f in (
    RefFile(name="aws_on_demand_2026-01-21.csv", cloud="aws", as_of=dt.date(2026, 1, 21),
            approximate=False,
            source="instances.vantage.sh data in tsaol/aws-gpu data/all_gpu_instances.js@7412fd2",
            basis="file states 'Last updated: 2026-01-21'"),
    RefFile(name="aws_prices_2025-11-30.csv", cloud="aws", as_of=dt.date(2025, 11, 30),
            approximate=False,
            source="instances.vantage.sh raw data in tsaol/aws-gpu data/gpu_instances_raw.json"
                   "@2d0108c",
            basis="commit of 2025-11-30"),
    RefFile(name="aws_accelerator_vms.csv", cloud="aws", as_of=dt.date(2025, 3, 1),
            approximate=True,
            source="skypilot-catalog catalogs/v7/aws/vms.csv@27f67dd4e1bc (public list prices)",
            basis="undated: has p5en (GA Dec 2024), lacks p6-b200 (May 2025), p5 at the "
                  "pre-June-2025 price"),
    RefFile(name="aws_capacity_blocks", cloud="aws", as_of=dt.date(2024, 12, 31),
            approximate=True,
            source="AWS EC2 Capacity Blocks for ML pricing page, effective rates for the "
                   "period ending 2025-01-01 (via the shared reference README)",
            basis="rates published for the period that ended 2025-01-01"),
    RefFile(name="gcp_accelerator_vms_v8_partial.csv", cloud="gcp",
            as_of=dt.date(2025, 4, 1), approximate=True,
            source="skypilot-catalog catalogs/v8/gcp/vms.csv@006059e (rows transcribed)",
            basis="undated: has B200 and H200 GPU prices that the early-2025 v7 table lacks, "
                  "so later than early 2025; 2025-04 is a guess within that"),
    RefFile(name="gcp_accelerator_vms.csv", cloud="gcp", as_of=dt.date(2025, 1, 1),
            approximate=True,
            source="skypilot-catalog catalogs/v7/gcp/vms.csv@6f65ab58724c (public list prices)",
            basis="undated: late 2024 / early 2025 (a3-ultragpu machines but no H200 GPU "
                  "prices, no A4)"),
    RefFile(name="azure_accelerator_vms.csv", cloud="azure", as_of=dt.date(2024, 3, 1),
            approximate=True,
            source="skypilot-catalog catalogs/v6/azure/vms.csv@098741e70562 (public list "
                   "prices)",
            basis="undated: early 2024 (ND H100 v5 but not ND H200 v5 or ND MI300X v5)"),
)}


def read_rows(reference: Path, name: str) -> list[dict[str, str]]:
    with open(reference / name, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def num(text: str | None) -> float | None:
    text = (text or "").strip()
    return float(text) if text else None


def gpuinfo_memory_gib(gpuinfo: str) -> float | None:
    """Per-device memory from a DescribeInstanceTypes GpuInfo Python literal (MiB → GiB)."""
    if not gpuinfo or not gpuinfo.startswith("{"):
        return None
    info = ast.literal_eval(gpuinfo)
    mib = info["Gpus"][0].get("MemoryInfo", {}).get("SizeInMiB")
    return round(mib / 1024, 3) if mib else None


def combined(files: Iterable[RefFile]) -> tuple[dt.date, bool, str]:
    """(as_of, approximate, source) of a price built from parts of several files: the oldest
    part dates it, any approximate part makes it approximate, every file is named."""
    files = sorted(set(files), key=lambda f: (f.as_of, f.name))
    return (files[0].as_of, any(f.approximate for f in files),
            " + ".join(f.source for f in files))
