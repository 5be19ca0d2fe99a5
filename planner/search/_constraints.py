"""What a plan must respect (``Constraints``), its defaults, and the checks that make a wrong
value one ``PlannerError`` naming the field — never a TypeError deep in the search, a string
read letter by letter, or a silently odd answer.

Numbers must be real numbers (numpy's too), not bools; counts whole numbers. Name lists
(``clouds``, ``regions``, ``pricing``, ``gpus``, ``exclude``) take a tuple, list or set of
non-empty strings and are kept as a tuple (a set in sorted order); a single string is refused
(``clouds="aws"`` would otherwise be read as 'a', 'w', 's'); clouds are kept lower-case and
pricing models in the catalog's spelling ('On-Demand' → 'on_demand', ``canonical_pricing``).
Whether the names exist is the catalog's question, asked by ``plan``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Iterable

from catalog import (
    CLOUDS,
    PRICING_MODELS,
    Catalog,
    GpuplanError,
    UnknownNameError,
    canonical_pricing,
    check_names,
    close_matches,
    record,
    shown_number,
)

from ..model import MAX_PLAN_GPUS, PlannerError
from ._quota import Quotas

DEFAULT_MAX_GPUS = 1024
MAX_GPUS_LIMIT = MAX_PLAN_GPUS  # the largest cluster the search considers (as team plans)
MAX_BUDGET_USD = 1e12  # a trillion dollars: beyond it a unit mistake (as team budgets)
DEFAULT_MIN_PROBABILITY = 0.9
DEFAULT_PRICING = ("on_demand", "spot")
# Spot capacity: no cloud publishes how many GPU instances a spot pool holds; AWS's Spot
# placement score is the way to check before launch. Beyond this many instances of one type in
# one region a spot plan carries a capacity warning (a policy default, --max-spot-instances).
DEFAULT_MAX_SPOT_INSTANCES = 8
MAX_SPOT_INSTANCES_LIMIT = 100_000  # far above any spot fleet: a larger value is a typo
GROUP_BY = ("accelerator", "cloud")
# A probability of 1 is never reached: the model's range is log-normal, so only a plan whose
# probability rounds to 1.0 in floating point would qualify (one ~9x faster than the deadline).
CERTAINTY_REFUSED = ("the minimum probability must be below 1 (0 disables): the model's own "
                     "range never makes a finish certain, and 100% would only pick plans whose "
                     "probability rounds to 1. To fix: e.g. 0.99")
# The CLI takes deadlines up to 10 years (MAX_DEADLINE_HOURS); code may pass a far one to mean
# "no deadline". Beyond ~114 years a number is a unit mistake (and would print as one).
DEADLINE_HOURS_LIMIT = 1e6
_NAME_LISTS = ("clouds", "regions", "pricing", "gpus", "exclude")

# The defaults of the constraints a front end may leave out (None): the one place they live.
CONSTRAINT_DEFAULTS = {"max_gpus": DEFAULT_MAX_GPUS, "min_probability": DEFAULT_MIN_PROBABILITY,
                       "pricing": DEFAULT_PRICING, "commitment_use": 0.0,
                       "max_spot_instances": DEFAULT_MAX_SPOT_INSTANCES, "clouds": (),
                       "regions": (), "gpus": (), "exclude": ()}


@record
class Constraints:
    """What a plan must respect. Fields given as None take their default
    (``CONSTRAINT_DEFAULTS``)."""

    deadline_hours: float
    max_gpus: int | None = None
    budget_usd: float | None = None
    min_probability: float | None = None  # 0: no probability required (wall ≤ deadline)
    clouds: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    pricing: tuple[str, ...] | None = None
    gpus: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()  # instance types, clouds or regions to leave out
    quotas: Quotas | None = None
    checkpoint_storage_usd_per_gb_month: float | None = None
    commitment_use: float | None = None  # share of a commitment's remaining term used after
    max_spot_instances: int | None = None
    allow_flagged: bool = False  # use offers whose price the catalog flagged
    group_by: str | None = None  # best plan per accelerator or per cloud

    def __post_init__(self) -> None:
        for name, default in CONSTRAINT_DEFAULTS.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)
        for name in _NAME_LISTS:
            object.__setattr__(self, name, _names(name, getattr(self, name)))
        # as the catalog spells them: the answer's constraints echo 'on_demand', not 'ON-DEMAND'
        # (an unknown name is refused here, quoted as written, not later in the catalog's
        # spelling)
        for name, kind, known, spell in (("clouds", "cloud", CLOUDS, str.lower),
                                         ("pricing", "pricing model", PRICING_MODELS,
                                          canonical_pricing)):
            try:
                spelled = check_names(kind, getattr(self, name), known,
                                      spell=lambda v, spell=spell: spell(v.strip()))
            except UnknownNameError as exc:
                raise _bad(name, exc.name, str(exc)) from None
            object.__setattr__(self, name, tuple(dict.fromkeys(spelled)))
        if not self.pricing:  # () searched all seven models, reserved and committed included
            raise _bad("pricing", (), "`pricing` is empty: no pricing model to search. To "
                       "fix: leave it out for the default (on_demand, spot), or name some")
        num = self._number
        num("deadline_hours", lo=0, hi=DEADLINE_HOURS_LIMIT, lo_open=True, field="deadline",
            fix="pass the hours until the deadline, e.g. 336 (14 days)",
            what="the deadline (hours from now)")
        num("max_gpus", lo=1, hi=MAX_GPUS_LIMIT, whole=True, fix="e.g. 256", what="max GPUs")
        if self.budget_usd is not None:
            num("budget_usd", lo=0, hi=MAX_BUDGET_USD, lo_open=True, fix="e.g. 250000",
                what="the budget (USD)")
        if self.min_probability == 1:  # before the range check, to say why 1 is not taken
            raise _bad("min_probability", self.min_probability, CERTAINTY_REFUSED)
        num("min_probability", lo=0, hi=1, hi_open=True, fix="e.g. 0.9 (0 disables)",
            what="the minimum probability")
        num("commitment_use", lo=0, hi=1, what="the commitment use (a share of the term)",
            fix="e.g. 0.5 if you will use half of the remaining term")
        num("max_spot_instances", lo=1, hi=MAX_SPOT_INSTANCES_LIMIT, whole=True,
            fix="e.g. 8", what="the spot fleet limit")
        if self.checkpoint_storage_usd_per_gb_month is not None:
            num("checkpoint_storage_usd_per_gb_month", lo=0, hi=1000,
                what="the checkpoint storage price (USD per GB-month)",
                fix="e.g. 0.023 (object storage)")
        if self.group_by is not None and self.group_by not in GROUP_BY:
            close = "".join(f" Did you mean {c!r}?"
                            for c in close_matches(str(self.group_by), GROUP_BY)[:1])
            raise _bad("group_by", self.group_by, f"group by {self.group_by!r} is not one of "
                       f"{', '.join(GROUP_BY)}.{close} To fix: pick one of them")
        if type(self.allow_flagged) is not bool:
            raise _bad("allow_flagged", self.allow_flagged, "`allow_flagged` must be True or "
                       f"False, got {self.allow_flagged!r}. To fix: pass a bool")
        if self.quotas is not None:
            if not isinstance(self.quotas, Quotas):
                raise _bad("quotas", self.quotas, "`quotas` must be a Quotas (from "
                           f"parse_quotas), got {type(self.quotas).__name__}. To fix: "
                           "build it with planner.search.parse_quotas")
            if any(r.month is not None for r in self.quotas.rules):
                raise _bad("quotas", self.quotas, "a quota rule with a month applies to team "
                           "plans; a single plan has no start date. To fix: leave `month` out")

    def _number(self, name: str, *, lo: float, hi: float, what: str, fix: str,
                whole: bool = False, lo_open: bool = False, hi_open: bool = False,
                field: str | None = None) -> None:
        """Check the field ``name`` (a numpy number is stored as a plain one); errors name
        ``field`` (default ``name``), the input a front end knows."""
        value = getattr(self, name)
        kind = numbers.Integral if whole else numbers.Real
        ok = isinstance(value, kind) and not isinstance(value, bool)
        if ok:
            if type(value) not in (int, float):  # numpy's numbers: plain ones (JSON, hashing)
                value = int(value) if whole else float(value)
            ok = math.isfinite(value) and (lo < value if lo_open else lo <= value) \
                and (value < hi if hi_open else value <= hi)
        if not ok:
            kind_text = "a whole number" if whole else "a number"
            upper = f"up to (not including) {hi:,.0f}" if hi_open else \
                f"{'up ' if lo_open else ''}to {hi:,.0f}"
            got = getattr(self, name)  # as typed: `--budget -5` said "got -5.0"
            raise _bad(field or name, got, f"{what} must be {kind_text} "
                       f"{'above' if lo_open else 'from'} {lo:,g} {upper}, got "
                       f"{shown_number(got)}. To fix: {fix}")
        object.__setattr__(self, name, value)

    @property
    def probability_required(self) -> float | None:
        return self.min_probability or None

    def as_dict(self) -> dict:
        return {"deadline_hours": self.deadline_hours, "max_gpus": self.max_gpus,
                "budget_usd": self.budget_usd, "min_probability": self.min_probability or None,
                "clouds": list(self.clouds), "regions": list(self.regions),
                "pricing": list(self.pricing), "gpus": list(self.gpus),
                "exclude": list(self.exclude), "commitment_use": self.commitment_use,
                "max_spot_instances": self.max_spot_instances,
                "allow_flagged": self.allow_flagged, "quotas": self.quotas is not None,
                "checkpoint_storage_usd_per_gb_month":
                    self.checkpoint_storage_usd_per_gb_month}


EXCLUDE_HINT = "`exclude` takes instance types, clouds or regions"


def check_exclude(names, catalog: Catalog, *, where: str = "", hint: str = EXCLUDE_HINT,
                  accelerators_field: str | None = None) -> tuple[str, ...]:
    """Every name of an `exclude` list is an instance type, a cloud or a region of the catalog
    (trimmed, any case where one name matches so: ``check_names``), returned as the catalog
    spells them; else UnknownNameError with close matches (``where``: the place in a file).
    An accelerator's name is told where accelerators are chosen: ``accelerators_field``
    (default `gpu` with the default ``hint``; none with another unless given)."""
    if not names:
        return ()
    kind = "instance type, cloud or region"
    known = {t.name for t in catalog.instance_types} | set(catalog.regions()) | set(CLOUDS)
    try:
        return check_names(kind, names, known, hint, where=where)
    except UnknownNameError as exc:
        field = accelerators_field or ("`gpu`" if hint == EXCLUDE_HINT else None)
        if field is None or not _names_accelerator(catalog, exc.name):
            raise
        # `--exclude H100` was told only what exclude takes; the filter it meant is another
        raise UnknownNameError(kind, exc.name, known, f"{hint}; for an accelerator use "
                               f"{field}, which names the accelerators to plan on",
                               where=where) from None


def _names_accelerator(catalog: Catalog, name: str) -> bool:
    """Whether ``name`` is an accelerator's name or alias, or a family of several ("A100")."""
    try:
        catalog.resolve_accelerator(name)
    except UnknownNameError as exc:  # an AmbiguousNameError (a family) is a subclass
        return type(exc) is not UnknownNameError
    return True


def in_catalog_spelling(c: Constraints, catalog: Catalog) -> Constraints:
    """``c`` with its regions, `exclude` names and accelerators as the catalog spells them
    (docs/design.md: names are carried on in the catalog's spelling), for the answer's echo:
    'US-EAST-1' is us-east-1, 'P5.4XLARGE' p5.4xlarge. An accelerator keeps the name or alias
    given, in the catalog's spelling ('h100' is H100; one that matches none as written, its
    canonical name). Call it after the search checked the names: one it did not take stays as
    given."""
    regions = _spelled(c.regions, lambda n: check_names("region", (n,), catalog.regions())[0])
    exclude = _spelled(c.exclude, lambda n: check_exclude((n,), catalog)[0])
    gpus = _spelled(c.gpus, lambda n: _accelerator_spelling(catalog, n))
    if (regions, exclude, gpus) == (c.regions, c.exclude, c.gpus):
        return c
    return dataclasses.replace(c, regions=regions, exclude=exclude, gpus=gpus)


def _spelled(names: Iterable[str], spell: Callable[[str], str]) -> tuple[str, ...]:
    out = []
    for name in names:
        try:
            out.append(spell(name))
        except GpuplanError:
            out.append(name)
    return tuple(dict.fromkeys(out))  # 'US-EAST-1,us-east-1' is one region


def _accelerator_spelling(catalog: Catalog, name: str) -> str:
    acc = catalog.accelerator(catalog.resolve_accelerator(name))
    typed = name.strip().casefold()
    return next((n for n in (acc.name, *catalog.aliases_of(acc)) if n.casefold() == typed),
                acc.name)


def _bad(field: str, value, msg: str) -> PlannerError:
    return PlannerError(msg, field=field, value=value)


def _names(field: str, value) -> tuple[str, ...]:
    """A name list as a tuple of non-empty strings (a set in sorted order)."""
    if isinstance(value, str | bytes) or not isinstance(value, tuple | list | set | frozenset):
        raise _bad(field, value, f"`{field}` must be a tuple of names, got {value!r}. To fix: "
                   f"e.g. {field}=({value!r},)" if isinstance(value, str) else
                   f"`{field}` must be a tuple of names, got {type(value).__name__}. To fix: "
                   f"e.g. {field}=('aws',)")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise _bad(field, value, f"`{field}` holds {item!r}, not a name. To fix: give "
                       "non-empty names only")
    return tuple(sorted(value) if isinstance(value, set | frozenset) else value)


__all__ = ["CONSTRAINT_DEFAULTS", "DEFAULT_MAX_GPUS", "DEFAULT_MAX_SPOT_INSTANCES",
           "DEFAULT_MIN_PROBABILITY", "DEFAULT_PRICING", "GROUP_BY", "MAX_BUDGET_USD",
           "EXCLUDE_HINT", "MAX_GPUS_LIMIT", "MAX_SPOT_INSTANCES_LIMIT", "Constraints",
           "check_exclude", "in_catalog_spelling"]
