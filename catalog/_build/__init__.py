"""Building the packaged snapshot (``catalog/data/``) from the shared reference tables.

Developer-only: ``tools/build_snapshot.py`` calls ``build_snapshot(reference_dir)``; the
product never imports this package at run time and never reads the reference. Every judgement
the reference README asks for is made here, in one place, and recorded on the rows as flags
and reasons; then the anomaly rules (``catalog._anomalies``) run over the whole result, as they
do after every refresh.

    _common      the dated reference files, parsing helpers
    _specs       accelerators (datasheets + corrections) and instance networking
    _aws         AWS: 2026-01-21 on-demand > 2025-11-30 prices/spot/reserved > v7 table
    _gcp         GCP: v8 partial table where it has the row, v7 elsewhere; host + GPU
    _azure       Azure: v6 table minus retired sizes, corrected facts

The output is deterministic (rows sorted, no timestamps): building twice from the same
reference gives byte-identical files.
"""

from __future__ import annotations


from .._record import record
from pathlib import Path

from .._anomalies import flag_anomalies
from .._records import Accelerator, InstanceType, Offer


@record(kw_only=False)
class Snapshot:
    accelerators: tuple[Accelerator, ...]
    instance_types: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    meta: dict


def build_snapshot(reference: Path) -> Snapshot:
    from . import _aws, _azure, _gcp, _specs

    accelerators, ref_names = _specs.build_accelerators(reference)
    network = _specs.read_network(reference, ref_names)
    types: list[InstanceType] = []
    offers: list[Offer] = []
    skipped: dict[str, list[str]] = {}
    for cloud, module in (("aws", _aws), ("gcp", _gcp), ("azure", _azure)):
        result = module.build(reference, network)
        types += result.instance_types
        offers += result.offers
        skipped[cloud] = sorted(result.skipped)
    have = {t.key for t in types}
    types += [t for t in _specs.unpriced_instances(network) if t.key not in have]
    types.sort(key=lambda t: t.key)
    by_key = {t.key: t for t in types}
    offers.sort(key=lambda o: o.key)
    keys = [o.key for o in offers]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate offer keys in the snapshot")
    offers = list(flag_anomalies(offers, by_key))
    from .._refresh import check_integrity

    problems = check_integrity(accelerators, types, offers)
    if problems:  # the packaged snapshot passes the same checks as every refresh
        raise ValueError(f"snapshot fails its integrity checks: {problems[:5]}")
    from ._meta import snapshot_meta

    meta = snapshot_meta(offers, skipped)
    return Snapshot(tuple(accelerators), tuple(types), tuple(offers), meta)


__all__ = ["Snapshot", "build_snapshot"]
