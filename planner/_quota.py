"""GPU quotas per cloud / region / accelerator, from a YAML file.

    quotas:
      - {cloud: aws, region: us-east-1, accelerator: H100, gpus: 256}
      - {cloud: gcp, accelerator: A100-80GB, gpus: 64}     # any GCP region
      - {cloud: azure, gpus: 0}                             # no Azure at all

A rule with a field left out matches every value of it; a candidate's limit is the smallest
``gpus`` of the rules it matches (no rule: unlimited). Accelerator names take aliases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from catalog import CLOUDS, Catalog

from ._errors import PlannerError


@dataclass(frozen=True, slots=True, kw_only=True)
class QuotaRule:
    gpus: int
    cloud: str | None = None
    region: str | None = None
    accelerator: str | None = None
    month: str | None = None  # "2027-03": only for team plans; None: every month

    def matches(self, cloud: str, region: str, accelerator: str) -> bool:
        return ((self.cloud is None or self.cloud == cloud)
                and (self.region is None or self.region == region)
                and (self.accelerator is None or self.accelerator == accelerator))


@dataclass(frozen=True, slots=True)
class Quotas:
    rules: tuple[QuotaRule, ...]

    def limit(self, cloud: str, region: str, accelerator: str) -> float:
        caps = [r.gpus for r in self.rules if r.month is None
                and r.matches(cloud, region, accelerator)]
        return min(caps) if caps else math.inf


def parse_quota_rules(entries, catalog: Catalog, where: str) -> tuple[QuotaRule, ...]:
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise PlannerError(f"{where}: 'quotas' must be a list of rules. To fix: see "
                           "`gpuplan plan --help` (--quota-file)")
    rules = []
    for i, e in enumerate(entries, start=1):
        at = f"{where}: quotas[{i}]"
        if not isinstance(e, dict):
            raise PlannerError(f"{at}: expected a mapping like {{cloud: aws, gpus: 64}}")
        unknown = set(e) - {"cloud", "region", "accelerator", "gpus", "month"}
        if unknown:
            raise PlannerError(f"{at}: unknown field(s) {sorted(unknown)}; allowed: cloud, "
                               "region, accelerator, gpus, month")
        gpus = e.get("gpus")
        if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
            raise PlannerError(f"{at}: gpus must be a whole number >= 0, got {gpus!r}")
        cloud = e.get("cloud")
        if cloud is not None and cloud not in CLOUDS:
            raise PlannerError(f"{at}: cloud {cloud!r} is not one of {', '.join(CLOUDS)}")
        acc = e.get("accelerator")
        if acc is not None:
            acc = catalog.resolve_accelerator(str(acc))
        month = e.get("month")
        rules.append(QuotaRule(gpus=gpus, cloud=cloud, region=e.get("region"), accelerator=acc,
                               month=str(month) if month is not None else None))
    return tuple(rules)


def load_quotas(path: str | Path, catalog: Catalog) -> Quotas:
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise PlannerError(f"{path}: cannot read quota file ({exc.strerror}). To fix: check "
                           "the path given to --quota-file") from None
    except yaml.YAMLError as exc:
        raise PlannerError(f"{path}: invalid YAML ({exc}). To fix: correct the file") from None
    if not isinstance(data, dict) or "quotas" not in data:
        raise PlannerError(f"{path}: expected a top-level 'quotas:' list. To fix: see "
                           "`gpuplan plan --help`")
    return Quotas(parse_quota_rules(data["quotas"], catalog, str(path)))
