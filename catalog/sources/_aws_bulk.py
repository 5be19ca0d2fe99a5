"""AWS's public bulk Price List files: where they are, and how one region's file is read.

No credentials: the files are public (docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/
using-the-aws-price-list-bulk-api-fetching-price-list-files-manually.html).

    GET https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/
        region_index.json
      {"formatVersion", "disclaimer", "publicationDate",
       "regions": {"us-east-1": {"regionCode": "us-east-1", "currentVersionUrl":
                   "/offers/v1.0/aws/AmazonEC2/<version>/us-east-1/index.json"},
                   … every region, Local Zone ("us-east-1-atl-1"), Wavelength Zone, GovCloud}}
    GET the currentVersionUrl with .csv for .json: the same offer as CSV, five metadata lines
      ("FormatVersion", "Disclaimer", "Publication Date", "Version", "OfferCode"), a header
      line starting "SKU","OfferTermCode","RateCode","TermType", then one line per price
      dimension: an OnDemand term has one ("Hrs"); a Reserved term has an hourly line ("Hrs",
      0 for All Upfront) and, for Partial/All Upfront, an "Upfront Fee" line ("Quantity").

A line is kept when it prices a Linux, shared-tenancy, no-pre-installed-software, in-use
("CapacityStatus" Used) instance of an accelerated family, sold on the on-demand market
("MarketOption" OnDemand: Capacity Block lines are not list prices). The us-east-1 file is
~300 MB; lines are rejected on cheap substring tests before being parsed as CSV.

Such a line in another currency than USD ("Currency") is left out and counted (the file
has always been USD; a file without the column is a changed format and fails). Two lines with
the same key (type, pricing model, class, upfront option; for a reserved term, its SKU, term
code and unit) and different prices fail the file: which one is the price cannot be known.
A region code of the index that is no region name (``_refresh_checks.region_code``) is left
out and reported.
"""

from __future__ import annotations

import csv
import datetime as _dt
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from .._record import record
from .._refresh_checks import region_code
from ._common import today
from ._names import AWS_FAMILY_ACCELERATOR

PRICING_BASE_URL = "https://pricing.us-east-1.amazonaws.com"
REGION_INDEX_PATH = "/offers/v1.0/aws/AmazonEC2/current/region_index.json"
TERM_HOURS = {"1yr": 8760.0, "3yr": 26280.0}  # AWS: 1 year = 8,760 h, 3 years = 26,280 h
RESERVED = {"1yr": "reserved_1y", "3yr": "reserved_3y"}
UPFRONT = {"No Upfront": "none", "Partial Upfront": "partial", "All Upfront": "all"}
_FAMILY = re.compile(r'"(' + "|".join(re.escape(f) for f in sorted(
    AWS_FAMILY_ACCELERATOR, key=len, reverse=True)) + r')\.[0-9a-z-]+"')
_NUMBER = re.compile(r"([\d.]+)")
# Instance Family values of accelerated instances in the price files.
_ACCELERATED = re.compile(r'"(?:GPU instance|Machine Learning ASIC Instances|FPGA Instances)"')


@record
class TypeSpec:
    """What the price file says about an instance type (the same in every region)."""

    name: str
    gpus: str  # as written: "8", "0.125" for a fraction of a GPU
    vcpus: int | None
    memory_gib: float | None
    gpu_memory_gib: float | None  # the "GPU Memory" column: total per instance
    network: str


@dataclass(slots=True, kw_only=True)
class RegionPrices:
    region: str
    version: str = ""
    published: _dt.date | None = None
    specs: dict[str, TypeSpec] = field(default_factory=dict)
    # (instance type, pricing model, offering class, upfront) → amortised USD per hour
    prices: dict[tuple[str, str, str, str], float] = field(default_factory=dict)
    # accelerated instance types of families gpuplan has no accelerator for (reported)
    unknown_accelerated: set[str] = field(default_factory=set)
    # price lines of its instance types that could not be read (a price "fifty", -55, NaN):
    # their offers keep the catalog's price, and the refresh says how many (reported)
    unreadable: list[str] = field(default_factory=list)
    # such lines priced in another currency than USD, by currency: left out (reported)
    other_currency: Counter = field(default_factory=Counter)


def region_index(index, base_url: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """(region code → URL of its CSV price file, the codes that are no region name) from
    region_index.json. A code becomes a region of the catalog — a row of offers.csv, a word
    in tables, a --region value — so a name with a control character, a comma or 5,000
    characters stays out (``region_code``; surrounding spaces are stripped)."""
    regions = index.get("regions") if isinstance(index, dict) else None
    if not isinstance(regions, dict):
        raise ValueError("the Price List region index has no \"regions\" object")
    out: dict[str, str] = {}
    rejected: list[str] = []
    for code, entry in regions.items():
        url = entry.get("currentVersionUrl") if isinstance(entry, dict) else None
        if not (isinstance(url, str) and url.endswith(".json")):
            continue
        name = region_code(code)
        if name is None:
            rejected.append(code)
        else:
            out.setdefault(name, base_url.rstrip("/") + url[: -len(".json")] + ".csv")
    return out, tuple(rejected)


def _number(text: str) -> float | None:
    match = _NUMBER.search(text or "")
    return float(match.group(1)) if match else None


def parse_price_file(lines: Iterable[str], region: str) -> RegionPrices:
    """Prices and specs of the accelerated instance types in one region's CSV price file."""
    out = RegionPrices(region=region)
    lines = iter(lines)
    header: list[str] | None = None
    for line in lines:
        row = next(csv.reader([line]), [])
        if not row:
            continue
        if row[0] == "SKU":
            header = row
            break
        if row[0] == "Publication Date" and len(row) > 1:
            try:
                out.published = _dt.date.fromisoformat(row[1][:10])
            except ValueError as exc:  # "month must be in 1..12" alone named neither
                raise ValueError(f"the {region} price file's Publication Date {row[1][:40]!r} "
                                 f"is not a date ({exc})") from None
            if out.published > today() + _dt.timedelta(days=1):  # a clock or a file is wrong:
                # it dated every offer 2099 and made the catalog look fresh for 70 years
                raise ValueError(f"the price file's Publication Date {out.published} is in the "
                                 f"future (today is {today()})")
        elif row[0] == "Version" and len(row) > 1:
            out.version = row[1]
    if header is None:
        raise ValueError(f"{region}: no header line in the price file")
    col = {name: i for i, name in enumerate(header)}
    # Currency too: without it any currency read as dollars
    missing = [c for c in ("SKU", "OfferTermCode", "TermType", "Unit", "PricePerUnit",
                           "Currency", "Instance Type", "Operating System", "Tenancy")
               if c not in col]
    if missing:
        raise ValueError(f"{region}: price file lacks columns {missing} (has the Price List's "
                         "format changed?)")

    def get(row: list[str], name: str) -> str:
        i = col.get(name)
        return row[i] if i is not None and i < len(row) else ""

    width = len(header)

    def parse(line: str) -> list[str]:
        """The line's fields, as many as the header's: a row with fewer is a cut or garbled
        line, whose missing columns read as "" (a price row cut mid-way was taken)."""
        row = next(csv.reader([line]), [])
        if row and len(row) != width:
            raise ValueError(f"the {region} price file's line {products:,} after the header "
                             f"has {len(row)} fields where the header has {width} (a "
                             "cut or garbled file)")
        return row

    reserved: dict[tuple[str, str], dict] = {}
    products = 0
    line = ""
    for line in lines:
        products += 1
        # Cheap rejections first: ~99 % of the lines are other instance families, Windows,
        # dedicated tenancy or another service's products.
        if '"Linux"' not in line or '"Shared"' not in line:
            continue
        if not _FAMILY.search(line):
            if _ACCELERATED.search(line):  # a family newer than gpuplan's table: say so
                out.unknown_accelerated.add(get(parse(line), "Instance Type"))
            continue
        row = parse(line)
        if (get(row, "Operating System") != "Linux" or get(row, "Tenancy") != "Shared"
                or get(row, "Pre Installed S/W") not in ("NA", "")
                or get(row, "CapacityStatus") not in ("Used", "")
                or get(row, "MarketOption") not in ("OnDemand", "")
                or not get(row, "Product Family").startswith("Compute Instance")):
            continue
        name = get(row, "Instance Type")
        if name.split(".", 1)[0] not in AWS_FAMILY_ACCELERATOR:
            continue
        currency = get(row, "Currency")
        if currency != "USD":  # the catalog is in dollars: counted and said, never converted
            out.other_currency[currency or "none"] += 1
            continue
        if name not in out.specs:
            vcpus = _number(get(row, "vCPU"))
            out.specs[name] = TypeSpec(
                name=name, gpus=get(row, "GPU").strip(),
                vcpus=int(vcpus) if vcpus else None, memory_gib=_number(get(row, "Memory")),
                gpu_memory_gib=_number(get(row, "GPU Memory")),
                network=get(row, "Network Performance"))
        try:
            price = float(get(row, "PricePerUnit") or "nan")
        except ValueError:
            price = math.nan
        if not (math.isfinite(price) and price >= 0):  # $0.00 is AWS's "not sold": not this
            out.unreadable.append(f"{name} price {get(row, 'PricePerUnit')!r}")
            continue
        unit, term = get(row, "Unit"), get(row, "TermType")
        if term == "OnDemand" and unit == "Hrs":
            if price > 0:  # $0.00 lines are AWS's placeholders for what is not sold
                _set(out.prices, (name, "on_demand", "", ""), price, region,
                     f"{name} on-demand")
        elif term == "Reserved":
            t = reserved.setdefault((get(row, "SKU"), get(row, "OfferTermCode")), {
                "name": name, "length": get(row, "LeaseContractLength"),
                "class": get(row, "OfferingClass"), "option": get(row, "PurchaseOption"),
                "Hrs": None, "Quantity": None})
            if unit in ("Hrs", "Quantity"):
                _set(t, unit, price, region, f"{name} reserved (term "
                                             f"{get(row, 'OfferTermCode')}, {unit})")
    if not products:  # every region's file lists thousands of EC2 products: a header alone
        # is a cut or broken file, which --prune read as "every offer of the region is gone"
        raise ValueError("the price file has a header but no products")
    # the last line, whatever it prices: one with fewer fields is a file cut inside a row.
    # Whether the file ends with a line end is not asked: nothing published says AWS's do, and
    # a whole file refused would stop every refresh (a cut in the last field, or at a row's
    # end, reads as a whole file: docs/refresh.md)
    parse(line)
    for t in reserved.values():
        hours = TERM_HOURS.get(t["length"])
        if hours is None or t["class"] not in ("standard", "convertible") or \
                t["option"] not in UPFRONT:
            continue
        # amortised over the whole term
        effective = (t["Hrs"] or 0.0) + (t["Quantity"] or 0.0) / hours
        if effective > 0:
            _set(out.prices, (t["name"], RESERVED[t["length"]], t["class"],
                              UPFRONT[t["option"]]), round(effective, 6), region,
                 f"{t['name']} {t['length']} {t['class']} {t['option']} reserved")
    return out


def _set(prices: dict, key, price: float, region: str, what: str) -> None:
    """``prices[key] = price``, refusing a second, different price for the same key
    (docs/refresh.md: duplicate records fail the refresh; the last line won silently, and one
    stray line at a tenth of the price became p5.48xlarge's on-demand price). ``what``: the
    instance type and price, as the error says them."""
    before = prices.get(key)
    if before is not None and before != price:
        raise ValueError(f"the {region} price file has two {what} prices, {before} and {price} "
                         "(duplicate records)")
    prices[key] = price
