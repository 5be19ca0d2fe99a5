"""Price overrides: negotiated discounts and private rates, applied when the catalog loads.

File format (YAML)::

    discounts:              # percent off the list price; the most specific match wins
      - cloud: aws          # match on any of: cloud, family (name prefix, e.g. "p5": p5e too),
        percent: 10         #   instance_type, region, pricing (default: every pricing model
      - cloud: aws          #   except spot, whose prices are not negotiated)
        instance_type: p5.48xlarge
        percent: 25
    prices:                 # rates you hold: replace an offer's price or add a new offer
      - cloud: aws
        instance_type: p5.48xlarge
        region: us-east-1
        pricing: reserved_1y
        usd_per_hour: 38.5  # (reserved_*: also offering_class and upfront, optional)

Every overridden offer carries the flag ``overridden`` and names the file in its source, so
every table that shows a price shows that it is not a list price.

Validation, so a wrong file is one clear error and never a silent no-op: the file is UTF-8, at
most ``MAX_FILE_BYTES`` and ``MAX_DEPTH`` levels deep (``_files``); every value has the right
type; text fields are non-empty (``family: ''`` would otherwise match every instance);
``0 < percent < 100`` (100 % would make prices $0, which the catalog never shows);
``MIN_OFFER_USD_PER_HOUR <= usd_per_hour <= MAX_USD_PER_HOUR``; and every entry must match at
least one offer of the catalog it is applied to — a misspelt instance type, family or region
is reported with the closest names the catalog has, a misspelt key with the closest key. A
file without entries is refused: "overrides from FILE" under prices would claim what it never did.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from ._clouds import CLOUDS
from ._errors import OverrideError, UnknownNameError
from ._files import shown_as_yaml, unquoted_hint
from ._record import record
from ._records import (
    MIN_OFFER_USD_PER_HOUR,
    OFFERING_CLASSES,
    PRICING_MODELS,
    RESERVED_MODELS,
    UPFRONT_OPTIONS,
    Offer,
    canonical_pricing,
)

_TOP_KEYS = ("discounts", "prices")
_MATCH_KEYS = ("cloud", "family", "instance_type", "region", "pricing")
# Specificity: an instance type beats a family beats a cloud; region and pricing break ties.
_WEIGHT = {"instance_type": 100, "family": 10, "cloud": 1, "region": 5, "pricing": 3}
_RATE_KEYS = ("cloud", "instance_type", "region", "pricing", "usd_per_hour", "offering_class",
              "upfront")
MAX_FILE_BYTES = 1 * 2**20  # a hand-written file of hundreds of entries is a few KiB
MAX_DEPTH = 8  # top level → list → entry → value: 4 is all the format needs
# Entries of a file, discounts and prices together. Its YAML may expand to at most
# MAX_YAML_EXPANDED_NODES (100,000) values, and a full price entry is 15 of them (7 keys, 7
# values, the mapping): 10,000 could never be reached, a file of ~6,700 rates was refused as
# "more than 100,000 values". 6,000 full entries are 90,001 values, within both bounds.
MAX_ENTRIES = 6_000
# The dearest list price in the catalog is ~142 $/instance-hour (p6-b300.48xlarge); a rate 70
# times that is a typo (cents for dollars, a monthly figure), not a negotiated price.
MAX_USD_PER_HOUR = 10_000.0
_FORMAT = "(format: `gpuplan offers --help`, --overrides)"


@record
class Discount:
    percent: float
    cloud: str | None = None
    family: str | None = None
    instance_type: str | None = None
    region: str | None = None
    pricing: str | None = None
    where: str = ""  # "discounts[2]", for messages

    def matches(self, offer: Offer) -> bool:
        if self.pricing is None and offer.pricing == "spot":
            return False
        return ((self.cloud is None or self.cloud == offer.cloud)
                and (self.family is None or offer.instance_type.startswith(self.family))
                and (self.instance_type is None or self.instance_type == offer.instance_type)
                and (self.region is None or self.region == offer.region)
                and (self.pricing is None or self.pricing == offer.pricing))

    @property
    def specificity(self) -> tuple[int, int]:  # then the longer family (p5e over p5: not order)
        given = [k for k in _MATCH_KEYS if getattr(self, k) is not None]
        return sum(_WEIGHT[k] for k in given), len(self.family or "")


@record
class PrivateRate:
    cloud: str
    instance_type: str
    region: str
    pricing: str
    usd_per_hour: float
    offering_class: str = ""
    upfront: str = ""
    where: str = ""


@record
class Overrides:
    path: str  # the file, or whatever the caller named the data ("team.yaml (overrides)")
    discounts: tuple[Discount, ...] = ()
    prices: tuple[PrivateRate, ...] = ()


def _fail(source: str, where: str, problem: str, fix: str = "") -> OverrideError:
    fix = fix or f"correct the entry {_FORMAT}"
    return OverrideError(f"{source}: {where}: {problem}. To fix: {fix}")


def _unknown_name(source: str, where: str, kind: str, name: object, known: Iterable[str], *,
                  hint: str = "", match_as: str | None = None) -> OverrideError:
    """UnknownNameError's words ("Did you mean 'prices'?"), as a team plan's keys have them."""
    at = f"{source}: {where}" if where else source
    return OverrideError(str(UnknownNameError(kind, "null" if name is None else name, known,
                                              hint, where=at, match_as=match_as)))


def _text(source: str, where: str, entry: dict, key: str, *, required: bool = False) -> str | None:
    if key not in entry:
        return None
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        hint = unquoted_hint(value)
        # given, of another type: "give it a value" misled; a price's keys: "remove" can't help
        fix = (f"write {key} in quotes" if hint else f"write {key} as text" if value is not None
               and not isinstance(value, str) else f"give {key} a value" + (
                   "" if required else f", or remove the field to match every {key}"))
        raise _fail(source, where, f"{key} must be non-empty text, got "
                    f"{shown_as_yaml(value)}{hint}", fix)
    if value != value.strip():
        raise _fail(source, where, f"{key} {value!r} has leading or trailing spaces")
    return value


def _number(source: str, where: str, value: object, field: str, *, low: float, high: float,
            high_inclusive: bool, unit: str, low_inclusive: bool = False) -> float:
    ok_type = isinstance(value, int | float) and not isinstance(value, bool)
    ok = ok_type and math.isfinite(value) and (low <= value if low_inclusive else low < value) \
        and (value <= high if high_inclusive else value < high)
    if not ok:
        if low_inclusive and high_inclusive:
            bound = f"from {low:g} to {high:,g}"
        else:
            bound = (f"> {low:g} and " + (f"<= {high:g}" if high_inclusive else f"< {high:g}"))
        fix = ""
        if isinstance(value, str):  # "$12.5", "10%", "1,000": --budget's spellings, not a file's
            meant = _typed_number(value)
            fix = (f"write {field}: {meant:g}" if meant is not None else
                   f"write {field} as a bare number, e.g. {field}: "
                   f"{'12.5' if field == 'usd_per_hour' else '10'}") + (
                " (no quotes, $, %, units or thousands separators)")
        raise _fail(source, where, f"{field} must be a number {bound} {unit}, got "
                    f"{shown_as_yaml(value)}", fix)
    return float(value)


def _typed_number(text: str) -> float | None:
    """The number a text written as money or a percentage means ("$12.5", "12.5 USD", "10%",
    "1,000", "12,5" with a decimal comma), or None."""
    t = text.strip().lower().removeprefix("usd").strip().removeprefix("$").strip()
    for unit in ("%", "usd", "$", "/h"):
        t = t.removesuffix(unit).strip()
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", t):
        t = t.replace(",", "")
    elif re.fullmatch(r"\d+,\d+", t):
        t = t.replace(",", ".")
    try:
        number = float(t)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _decimal_comma(source: str, where: str, entry: dict) -> None:
    """``usd_per_hour: 12,5`` in a flow mapping reads as ``usd_per_hour: 12`` and a field
    ``5`` without a value: said as the decimal comma it likely is, not as an unknown field."""
    keys = list(entry)
    for before, key in zip(keys, keys[1:], strict=False):
        number = entry[before]
        if (entry[key] is None and not isinstance(key, bool) and re.fullmatch(r"\d+", str(key))
                and isinstance(number, int) and not isinstance(number, bool)):
            raise _fail(source, where, f"'{before}: {number},{key}' reads as {before} {number} "
                        f"and a field '{key}': YAML reads no decimal comma",
                        f"write {before}: {number}.{key} with a decimal point (or "
                        f"{number}{key} without a thousands separator)")


def _check_common(source: str, where: str, entry: object, allowed: tuple[str, ...]) -> dict:
    if not isinstance(entry, dict):
        raise _fail(source, where, f"expected a mapping of fields, got {shown_as_yaml(entry)}")
    _decimal_comma(source, where, entry)
    unknown = [k for k in entry if k not in allowed]
    if unknown:  # the first, as a team plan names its keys; it was a Python list of them all
        raise _unknown_name(source, where, "field", unknown[0], allowed,
                            hint=f"use one of {', '.join(allowed)} {_FORMAT}")
    cloud = _text(source, where, entry, "cloud")
    if cloud is not None:  # as the CLI takes them: AWS, On-Demand
        entry = {**entry, "cloud": cloud.strip().lower()}
        if entry["cloud"] not in CLOUDS:
            raise _unknown_name(source, where, "cloud", cloud, CLOUDS, match_as=entry["cloud"])
    pricing = _text(source, where, entry, "pricing")
    if pricing is not None:
        entry = {**entry, "pricing": canonical_pricing(pricing)}
        if entry["pricing"] not in PRICING_MODELS:
            raise _unknown_name(source, where, "pricing model", pricing, PRICING_MODELS,
                                match_as=entry["pricing"])
    return entry


def _entries(source: str, data: Mapping, key: str) -> list:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        # as the file writes it: "got dict" named Python's type, not what was written
        raise _fail(source, key, f"expected a list of entries, got {shown_as_yaml(value)}")
    return value


# What makes a file shorter; "split it into smaller files" did not: --overrides takes one.
_FEWER = ("write fewer entries: one discount of a cloud or family (e.g. {cloud: aws, family: "
          "p5, percent: 10}) covers every offer it matches, and a rate is needed only where "
          "your price is not the list price less your discount")


def _too_big(source: str, message: str) -> str | None:
    """The YAML reader's refusal of a file of more than ``MAX_YAML_EXPANDED_NODES`` values, in
    entries, with a fix that works (``None``: another refusal, or one of nested aliases)."""
    from ._yaml import MAX_YAML_EXPANDED_NODES

    found = re.search(rf"expands to more than {MAX_YAML_EXPANDED_NODES:,} values \(line "
                      r"(\d+)\)", message)
    if found is None:
        return None
    return (f"overrides file {source}: too large: it passes {MAX_YAML_EXPANDED_NODES:,} "
            f"values by line {found[1]}, while a file holds at most {MAX_ENTRIES:,} entries "
            f"(discounts and prices together; that many full ones are ~90,000 values). To "
            f"fix: {_FEWER}")


def parse_overrides(data: object, *, source: str = "overrides",
                    omit: str = "leave out --overrides") -> Overrides:
    """Validate overrides given as data (the parsed YAML: a mapping) and return them.

    ``source`` names the data in messages and in overridden offers' sources; ``omit`` ends the
    fix of data without an entry (None, ``{}``, empty lists): how to do without overrides.
    """
    if not isinstance(data, Mapping | None):
        # the value as the file writes it: "(int)", "(bool)" were Python's names for 5, true
        kind = "a list" if isinstance(data, list) else f"a single value ({shown_as_yaml(data)})"
        raise _fail(source, "top level", f"expected a mapping with the keys 'discounts' and/or "
                                         f"'prices', found {kind}")
    unknown = [k for k in data or {} if k not in _TOP_KEYS]
    if unknown:
        raise _unknown_name(source, "", "field", unknown[0], _TOP_KEYS,
                            hint=f"use discounts and/or prices {_FORMAT}")
    lists = {k: _entries(source, data or {}, k) for k in _TOP_KEYS}
    if not any(lists.values()):
        # as a team plan's `clouds: []`: it changes nothing, and every plan says it applied
        raise OverrideError(f"{source}: has no entries under 'discounts' or 'prices', so it "
                            "would change no price. To fix: add entries, e.g. discounts: [{cloud: "
                            f"aws, percent: 10}}] {_FORMAT}, or {omit}")
    total = sum(map(len, lists.values()))
    if total > MAX_ENTRIES:
        raise OverrideError(f"{source}: {total:,} entries under discounts and prices; a file "
                            f"holds at most {MAX_ENTRIES:,}. To fix: {_FEWER}")
    discounts, scopes = [], {}
    for i, entry in enumerate(lists["discounts"], start=1):
        where = f"discounts[{i}]"
        entry = _check_common(source, where, entry, (*_MATCH_KEYS, "percent"))
        if "percent" not in entry:
            raise _fail(source, where, "missing 'percent'")
        match = {k: _text(source, where, entry, k) for k in _MATCH_KEYS}
        if not any(match[k] for k in ("cloud", "family", "instance_type")):
            raise _fail(source, where, "needs at least one of cloud, family, instance_type")
        pct = _number(source, where, entry["percent"], "percent", low=0, high=100,
                      high_inclusive=False, unit="(percent off; 100 would make prices $0)")
        discount = Discount(percent=pct, where=where,
                            **{k: v for k, v in match.items() if v is not None})
        _no_twin(source, discount, scopes, tuple(getattr(discount, k) for k in _MATCH_KEYS),
                 "scope", "which percent applies")
        discounts.append(discount)
    prices, offers = [], {}
    required = ("cloud", "instance_type", "region", "pricing", "usd_per_hour")
    for i, entry in enumerate(lists["prices"], start=1):
        where = f"prices[{i}]"
        entry = _check_common(source, where, entry, _RATE_KEYS)
        missing = [k for k in required if k not in entry]
        if missing:
            raise _fail(source, where, f"missing {', '.join(missing)} (a price needs "
                        f"{', '.join(required)})")
        texts = {k: _text(source, where, entry, k, required=True) for k in required[:4]}
        # the lower bound is every offer record's (an override becomes one); the upper, a typo's
        rate = _number(source, where, entry["usd_per_hour"], "usd_per_hour",
                       low=MIN_OFFER_USD_PER_HOUR, low_inclusive=True, high=MAX_USD_PER_HOUR,
                       high_inclusive=True, unit="USD per instance-hour")
        option = {k: _text(source, where, entry, k) or "" for k in ("offering_class", "upfront")}
        if any(option.values()) and texts["pricing"] not in RESERVED_MODELS:
            raise _fail(source, where, "offering_class and upfront are only for reserved_1y "
                                       "and reserved_3y")
        for key, known in (("offering_class", OFFERING_CLASSES), ("upfront", UPFRONT_OPTIONS)):
            if option[key] not in ("", *known):
                raise _unknown_name(source, where, key, option[key], known)
        price = PrivateRate(usd_per_hour=rate, where=where, **texts, **option)
        _no_twin(source, price, offers, (price.cloud, price.instance_type, price.region,
                                         price.pricing, price.offering_class, price.upfront),
                 "offer", "which price applies")
        prices.append(price)
    return Overrides(path=source, discounts=tuple(discounts), prices=tuple(prices))


def _no_twin(source: str, entry, earlier: dict, key: tuple, what: str, doubt: str) -> None:
    """Refuse an entry with the same ``key`` as an earlier one (``earlier``: the first entry of
    each key so far, which this adds to): the file would say two things about one offer and
    one of them would be dropped silently. A look-up: comparing each entry with every earlier
    one was ~11 million comparisons for a file of 4,762 discounts."""
    twin = earlier.setdefault(key, entry)
    if twin is not entry and same_value(twin, entry):  # nothing ambiguous: a copy (refused:
        # one whose region or type was meant to be edited looks just like it)
        raise _fail(source, entry.where, f"the same {what} and {_VALUE[type(entry)]} as "
                    f"{twin.where}: listed twice", f"remove {entry.where}, or correct it if it "
                    f"was meant for another {what}")
    if twin is not entry:
        raise _fail(source, entry.where, f"the same {what} as {twin.where}, so {doubt} is "
                    "ambiguous", f"keep one of {twin.where} and {entry.where}")


_VALUE = {Discount: "percent", PrivateRate: "usd_per_hour"}  # what an entry says of its key


def same_value(a, b) -> bool:
    """Whether two entries of one key (a scope, an offer) say the same of it."""
    return type(a) is type(b) and getattr(a, _VALUE[type(a)]) == getattr(b, _VALUE[type(b)])


def load_overrides(path: str | Path) -> Overrides:
    """Read, parse and validate an overrides file (see the module docstring)."""
    from ._errors import CatalogFileError
    from ._files import read_user_text
    from ._yaml import load_yaml_text

    shown = str(Path(path).expanduser()) if isinstance(path, str | Path) else str(path)
    try:
        text = read_user_text(Path(shown), what="overrides file", max_bytes=MAX_FILE_BYTES)
        data = load_yaml_text(text, what=f"overrides file {shown}", max_depth=MAX_DEPTH)
    except CatalogFileError as exc:  # one error type for everything wrong with the file
        raise OverrideError(_too_big(shown, str(exc)) or str(exc)) from None
    return parse_overrides(data, source=shown)


__all__ = ["Discount", "Overrides", "PrivateRate", "load_overrides", "parse_overrides",
           "same_value"]
