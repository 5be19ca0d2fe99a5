"""GPU quotas per cloud / region / accelerator, from a YAML file.

    quotas:
      - {cloud: aws, region: us-east-1, accelerator: H100, gpus: 256}
      - {cloud: gcp, accelerator: A100-80GB, gpus: 64}     # any GCP region
      - {cloud: azure, gpus: 0}                             # no Azure at all

A rule with a field left out matches every value of it; a candidate's limit is the smallest
``gpus`` of the rules it matches (no rule: unlimited). Accelerator names take aliases.

Every rule must match something: an unknown cloud, region or accelerator is an
``UnknownNameError`` with close matches, and a rule whose combination matches no offer in the
catalog (a GCP region under ``cloud: aws``, an accelerator the region does not sell) is an
error too — a quota that limits nothing is almost always a typo. So are two rules of one scope
(cloud, region, accelerator and month): which of their limits was meant is a guess.

``parse_quotas(mapping, catalog)`` validates parsed data; the front end reads the file
(``gpuplan plan --quota-file``: at most MAX_QUOTA_FILE_BYTES of YAML) and passes the data.
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
from typing import Any

from catalog import (
    CLOUDS,
    Catalog,
    GpuplanError,
    UnknownNameError,
    check_names,
    record,
    shown_as_yaml,
    unquoted_hint,
    whole_number_in_file,
)

from ..model import PlannerError

MAX_QUOTA_GPUS = 1_000_000  # far above any cloud quota; catches typos such as 10^12
MAX_QUOTA_FILE_BYTES = 2**20
MAX_QUOTA_RULES = 10_000
_RULE_FIELDS = ("cloud", "region", "accelerator", "gpus", "month")
FORMAT = "(format: `gpuplan plan --help`, `quota_file`)"
FIX = f"To fix: correct the quota file {FORMAT}"


@record
class QuotaRule:
    gpus: int
    cloud: str | None = None
    region: str | None = None
    accelerator: str | None = None
    month: str | None = None  # "2027-03": team plans only (parse_quotas refuses it); None: all

    def __post_init__(self) -> None:
        """Types and bounds (a rule built in code, not read by ``parse_quotas``, which also
        checks the names against the catalog)."""
        g = self.gpus
        if isinstance(g, bool) or not isinstance(g, numbers.Integral) \
                or not 0 <= g <= MAX_QUOTA_GPUS:
            raise PlannerError(f"a quota rule's gpus must be a whole number from 0 to "
                               f"{MAX_QUOTA_GPUS:,}, got {g!r}. To fix: e.g. gpus=64",
                               field="quotas", value=g)
        object.__setattr__(self, "gpus", int(g))
        for name in ("cloud", "region", "accelerator", "month"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v.strip()):
                raise PlannerError(f"a quota rule's {name} must be a name or None, got {v!r}. "
                                   f"To fix: e.g. {name}=None", field="quotas", value=v)
        if self.month is not None:
            _check_month(self.month, "a quota rule's month")

    def matches(self, cloud: str, region: str, accelerator: str) -> bool:
        return ((self.cloud is None or self.cloud == cloud)
                and (self.region is None or self.region == region)
                and (self.accelerator is None or self.accelerator == accelerator))


@record(kw_only=False)
class Quotas:
    rules: tuple[QuotaRule, ...]

    def __post_init__(self) -> None:
        rules = self.rules
        if isinstance(rules, list):
            rules = tuple(rules)
        if not isinstance(rules, tuple) or not all(isinstance(r, QuotaRule) for r in rules):
            raise PlannerError("Quotas takes a tuple of QuotaRule. To fix: build it with "
                               "parse_quotas, or Quotas((QuotaRule(gpus=64, cloud='aws'),))",
                               field="quotas", value=self.rules)
        object.__setattr__(self, "rules", rules)

    def limit(self, cloud: str, region: str, accelerator: str) -> float:
        caps = [r.gpus for r in self.rules if r.month is None
                and r.matches(cloud, region, accelerator)]
        return min(caps) if caps else math.inf


def parse_quotas(data: Any, catalog: Catalog, *, source: str = "quota file") -> Quotas:
    """Quotas from a parsed quota file: a mapping with one key, ``quotas``, a list of rules."""
    # a misspelt key first: `quota:` is told "did you mean 'quotas'?", not "expected quotas"
    unknown = sorted(str(k) for k in data if k != "quotas") if isinstance(data, dict) else []
    if unknown:
        raise UnknownNameError("top-level field", unknown[0], ["quotas"], where=source,
                               hint=f"the file holds one list, 'quotas' {FORMAT}")
    if not isinstance(data, dict) or "quotas" not in data:
        raise PlannerError(f"{source}: expected a top-level 'quotas:' list. {FIX}")
    rules = parse_quota_rules(data["quotas"], catalog, source)
    if not rules:  # as an overrides file without entries: it limits nothing, and the plan's
        # JSON said quotas applied
        raise PlannerError(f"{source}: 'quotas' lists no rule, so the file limits nothing. To "
                           "fix: add a rule such as {cloud: aws, gpus: 64}, or leave the "
                           "quota file out")
    for i, rule in enumerate(rules, start=1):
        if rule.month is not None:  # a plan has no start date to say which month it runs in
            raise PlannerError(f"{source}: quotas[{i}]: month {rule.month!r} scopes a rule to "
                               "a calendar month, which only team plans have (`gpuplan "
                               "report`: jobs with start dates); one plan has no start date. "
                               "To fix: drop `month` (the rule then holds in every month), or "
                               "plan with `gpuplan report`", field="quotas", value=rule.month)
    return Quotas(rules)


def parse_quota_rules(entries: Any, catalog: Catalog, where: str, *,
                      correct: str = "the quota file", fmt: str = FORMAT
                      ) -> tuple[QuotaRule, ...]:
    """The rules of a ``quotas:`` list; ``where`` prefixes errors, ``correct`` and ``fmt`` say
    what to correct and where its format is written (a team plan's quotas are its own key,
    not a quota file: docs/team.md)."""
    fix = f"To fix: correct {correct} {fmt}"
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise PlannerError(f"{where}: 'quotas' must be a list of rules such as "
                           f"{{cloud: aws, gpus: 64}}. {fix}")
    if len(entries) > MAX_QUOTA_RULES:
        raise PlannerError(f"{where}: {len(entries):,} quota rules; at most "
                           f"{MAX_QUOTA_RULES:,} are allowed. {fix}")
    types = {t.key: t.accelerator for t in catalog.instance_types}
    offered = {(cloud, region, types.get((cloud, name), ""))
               for cloud, region, name in catalog.offer_places()}
    rules = tuple(_rule(e, catalog, offered, f"{where}: quotas[{i}]", fix, fmt)
                  for i, e in enumerate(entries, start=1))
    _refuse_duplicates(rules, where)
    return rules


def _refuse_duplicates(rules: tuple[QuotaRule, ...], where: str) -> None:
    """Two rules of one scope (cloud, region, accelerator — names as the catalog spells them,
    so H100 and h100-sxm5-80gb are one — and month): one of them held and the other was
    dropped, silently; which one the file meant is a guess."""
    first: dict[tuple, int] = {}
    for i, rule in enumerate(rules, start=1):
        key = (rule.cloud, rule.region, rule.accelerator, rule.month)
        if key not in first:
            first[key] = i
            continue
        scope = ", ".join(f"{k} {v}" for k, v in zip(("cloud", "region", "accelerator",
                                                      "month"), key, strict=True) if v)
        raise PlannerError(f"{where}: quotas[{i}]: the same scope as quotas[{first[key]}] "
                           f"({scope or 'every cloud, region and accelerator'}), gpus "
                           f"{rule.gpus} against {rules[first[key] - 1].gpus}: which one holds "
                           "is a guess. To fix: keep one rule per cloud, region, accelerator "
                           "and month (remove or merge the other)")


def _rule(e: Any, catalog: Catalog, offered: set[tuple[str, str, str]], at: str, fix: str,
          fmt: str) -> QuotaRule:
    if not isinstance(e, dict):
        raise PlannerError(f"{at}: expected a mapping like {{cloud: aws, gpus: 64}}. {fix}")
    unknown = sorted(str(k) for k in e if k not in _RULE_FIELDS)
    if unknown:
        raise UnknownNameError("field", unknown[0], _RULE_FIELDS, where=at,
                               hint=f"use one of {', '.join(_RULE_FIELDS)} {fmt}")
    gpus = whole_number_in_file(e.get("gpus"))  # 64.0 and 1e3 as a team plan takes them
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 0 <= gpus <= MAX_QUOTA_GPUS:
        # the value as the file writes it: "got True" and "got None" for yes and a missing gpus
        raise PlannerError(f"{at}: gpus must be a whole number from 0 to {MAX_QUOTA_GPUS:,}, "
                           f"got {shown_as_yaml(gpus)}. To fix: e.g. gpus: 64")
    for k in ("cloud", "region", "accelerator", "month"):
        if k in e and e[k] is None:  # `month:` with no value held in every month, silently
            raise PlannerError(f"{at}: {k} is empty (the key has no value). To fix: give it a "
                               f"value, or remove the key for a rule over every {k}")
    cloud, region, acc, month = (_text(e.get(k), f"{at}: {k}", fix) for k in
                                 ("cloud", "region", "accelerator", "month"))
    cloud = cloud.lower() if cloud is not None else None  # as a job's `clouds` and `offers`
    if cloud is not None and cloud not in CLOUDS:
        raise _located(UnknownNameError("cloud", cloud, CLOUDS), at)
    if region is not None:
        region = _region(catalog, cloud, region, at)
    if acc is not None:
        try:
            acc = catalog.resolve_accelerator(acc)
        except UnknownNameError as exc:
            raise _located(exc, at) from None
    if month is not None:
        _check_month(month, f"{at}: month")
    rule = QuotaRule(gpus=gpus, cloud=cloud, region=region, accelerator=acc, month=month)
    _check_matches_an_offer(rule, offered, at)
    return rule


def _region(catalog: Catalog, cloud: str | None, region: str, at: str) -> str:
    """``region`` as the catalog spells it ('US-EAST-1' is us-east-1, as the filters take it:
    ``check_names``), one of ``cloud``'s; a region of another cloud is named as that cloud's
    ("unknown aws region 'us-central1'. Did you mean 'eu-central-1'" sent the user to the
    wrong region), as `plan --clouds aws --regions us-central1` says it."""
    known, every = catalog.regions(cloud), catalog.regions()
    kind = f"{cloud} region" if cloud else "region"
    hint = "run `gpuplan offers` to list regions"
    try:
        (found,) = check_names(kind, [region], known or every, hint)
    except UnknownNameError as exc:
        try:  # a region of the catalog, in another cloud's spelling?
            (found,) = check_names("region", [region], every)
        except UnknownNameError:
            raise _located(exc, at) from None
    if found in known:
        return found
    owners = [c for c in CLOUDS if found in catalog.regions(c)]
    exc = UnknownNameError(kind, region, known or every, hint=hint)
    if owners:  # said as `plan --clouds aws --regions us-central1` says it, not "Did you mean"
        exc.args = (f"unknown {kind} {region!r}: {found} is {'/'.join(owners)}'s region, not "
                    f"{cloud}'s. To fix: write `cloud: {owners[0]}` in this rule, or one of "
                    f"{cloud}'s regions (`gpuplan offers --cloud {cloud}` lists them)",)
        exc.suggestions = ()
    raise _located(exc, at)


def _text(value: Any, at: str, fix: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise PlannerError(f"{at}: expected a name, got {shown_as_yaml(value)}"
                           f"{unquoted_hint(value)}. {fix}")
    return value.strip()


def _located(exc: GpuplanError, at: str) -> GpuplanError:
    """``exc`` (same type, so callers can still catch UnknownNameError) prefixed with ``at``."""
    exc.args = (f"{at}: {exc}",)
    return exc


def _check_month(value: str, at: str) -> None:
    try:
        ok = len(value) == 7 and dt.date.fromisoformat(f"{value}-01") is not None
    except ValueError:
        ok = False
    if not ok:
        raise PlannerError(f"{at}: {value!r} is not a month. To fix: write YYYY-MM, e.g. "
                           "\"2027-03\" (quoted)")


def _check_matches_an_offer(rule: QuotaRule, offered: set[tuple[str, str, str]],
                            at: str) -> None:
    """``offered``: every (cloud, region, accelerator) the catalog has an offer for."""
    if any(rule.matches(*key) for key in offered):
        return
    scope = ", ".join(f"{k} {v}" for k, v in (("cloud", rule.cloud), ("region", rule.region),
                                             ("accelerator", rule.accelerator)) if v)
    where = ""
    if rule.accelerator is not None:
        places = sorted({f"{c}/{r}" for c, r, a in offered if a == rule.accelerator})
        where = (f" ({rule.accelerator} is offered in {', '.join(places[:6])}"
                 f"{' …' if len(places) > 6 else ''})" if places else
                 f" (no cloud in the catalog offers {rule.accelerator})")
    raise PlannerError(f"{at}: no offer in the catalog matches {scope}{where}, so this quota "
                       "would limit nothing. To fix: correct the cloud, region or accelerator, "
                       "or remove the rule")
