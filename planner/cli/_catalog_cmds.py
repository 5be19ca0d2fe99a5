"""`gpuplan gpus`, `gpuplan offers` and `gpuplan catalog info|use` (refresh: ``_refresh_cmd``)."""

# No `from __future__ import annotations` in a command module: see planner/cli/_main.py

import csv
import io
import re
import sys
from dataclasses import replace
from typing import Annotated

import typer

from ._app import (
    console,
    load_priced_catalog,
    print_catalog_banner,
    print_hanging,
    print_json,
)
from ._flags import say_fields
from ._tables import ESSENTIAL, OPTIONAL, Column, Wide, print_table
from ._values import catalog_banner, comma_hint, split_csv

OverridesOpt = Annotated[
    str | None,
    typer.Option("--overrides", help="YAML file of negotiated discounts and private rates "
                 "(env GPUPLAN_OVERRIDES). Format: discounts: [{cloud|family|instance_type, "
                 "region?, pricing?, percent (0-100, exclusive)}], prices: [{cloud, "
                 "instance_type, region, pricing, usd_per_hour; for reserved_1y/3y where the "
                 "term has classes, offering_class (standard|convertible) and upfront "
                 "(none|partial|all)}]. A discount must match an offer; a price replaces the "
                 "offer of its key or adds one (its region must be one of the cloud's); a file "
                 "without entries is refused."),
]
# OWASP "CSV Injection": a spreadsheet runs a cell that starts with one of these as a formula.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


MAX_ROWS = 100_000  # --limit: more rows than any catalog has offers (~15,000)
MAX_NAME_CHARS = 100  # a catalog name (a directory name) or a region code
CATALOG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
REGION_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")  # us-east-1, us-central1, eastus2euap


def load(overrides: str | None):
    return load_priced_catalog(overrides)


def safe_cell(value) -> str:
    """A CSV cell a spreadsheet will not execute: text starting with = + - @ (or a tab or
    carriage return) gets a leading apostrophe, which spreadsheets show as text."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def _money(x: float | None, digits: int = 2) -> str:
    """A price in a table cell; one that rounds to zero at ``digits`` but is not zero (a
    private rate of $0.000001/h) reads "<0.001", never "0.000" (the catalog shows no $0)."""
    if x is None:
        return "—"
    from ..model import below_shown

    return below_shown(x, 10 ** -digits, rounds=True) or f"{x:,.{digits}f}"


GPU_COLUMNS = (  # the datasheet peaks the title is about stay (memory and bf16 went at 60)
    Column("accelerator", ESSENTIAL), Column("mem GiB", ESSENTIAL, align="right"),
    Column("mem GB/s", OPTIONAL, align="right"), Column("bf16 TF", ESSENTIAL, align="right"),
    Column("fp8 TF", OPTIONAL, align="right"), Column("link GB/s", OPTIONAL, align="right"),
    # the unit in the title: "on-demand $/GPU-h" and "spot $/GPU-h" took 33 of 60 columns
    Column("on-demand", ESSENTIAL, align="right"),
    Column("spot", ESSENTIAL, align="right"), Column("clouds", wrap=True, min_width=5),
)


def gpus_cmd(
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Include accelerators no cloud offers.")]
    = False,
    overrides: OverridesOpt = None,
    wide: Wide = False,
) -> None:
    """One row per accelerator: datasheet specs, cheapest $/GPU-hour, clouds offering it."""
    from catalog import accelerator_summaries

    cat = load(overrides)
    rows = [s for s in accelerator_summaries(cat) if all_ or s.instance_types]
    if json_out:
        print_json([s.as_dict() for s in rows])
        print_catalog_banner(console(stderr=True, fit=True), cat)
        return

    def cell(a, field: str, value) -> str:
        if value is None:
            return "—"
        star = "*" if field in a.unverified or "all compute peaks" in a.unverified and \
            field.startswith("tflops") else ""
        return f"{value:g}{star}"

    print_table(GPU_COLUMNS, [
        (a.name, cell(a, "memory_gib", a.memory_gib),
         cell(a, "memory_bandwidth_gb_per_s", a.memory_bandwidth_gb_per_s),
         # no datasheet peak (A10G): the stand-in the model uses, marked unverified ("—"
         # here while `estimate` timed it at 69.5 TFLOP/s)
         cell(a, "tflops_bf16", a.tflops_bf16 or a.peak_stand_in_tflops),
         cell(a, "tflops_fp8", a.tflops_fp8),
         cell(a, "intra_node_gb_per_s_per_gpu", a.intra_node_gb_per_s_per_gpu),
         _money(s.cheapest_on_demand_usd_per_gpu_hour)
         + ("!" if s.cheapest_on_demand_flags else ""),
         _money(s.cheapest_spot_usd_per_gpu_hour) + ("!" if s.cheapest_spot_flags else ""),
         ", ".join(s.clouds))
        for s in rows for a in (s.accelerator,)],
        title="Accelerators (dense datasheet peaks; cheapest on-demand and spot $/GPU-h; "
        "* = unverified value)", wide=wide)
    out = console(fit=True)
    for a in (s.accelerator for s in rows):
        if not a.tflops_bf16 and a.peak_stand_in_tflops:
            print_hanging(out, f"* {a.name} bf16 TF: no datasheet peak is published; "
                          f"{a.peak_stand_in_tflops:g} is the stand-in peak the model takes "
                          "MFU against"
                          + (f", and it times bf16 matmuls at {a.achievable_matmul_tflops:g}"
                             " TFLOP/s, a published benchmark's (unverified)"
                             if a.achievable_matmul_tflops else ""), first="", rest="  ")
    flagged = sorted({f for s in rows for f in (*s.cheapest_on_demand_flags,
                                               *s.cheapest_spot_flags)})
    if flagged:
        from catalog import OFFER_FLAGS

        print_hanging(out, "! the cheapest offer is flagged: " + "; ".join(
            f"{f} = {OFFER_FLAGS[f]}" for f in flagged) + " (see `gpuplan offers --gpu NAME`)",
            first="", rest="  ")
    print_catalog_banner(out, cat)


def _offers_csv(dicts: list[dict], fields: list[str]) -> str:
    """``dicts`` as CSV under ``fields`` (every offer's columns, also when none matched: a
    script reading it sees one header whatever the filters)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for d in dicts:
        row = {**d, "flags": ";".join(d.get("flags", []))}
        writer.writerow({k: safe_cell(v) for k, v in row.items()})
    return buf.getvalue()


def offers_cmd(
    gpu: Annotated[list[str] | None, typer.Option("--gpu", help="Accelerator name or alias "
                   "(H100, a100-80gb, …); repeat or comma-separate. A name several share "
                   "(A100, V100, TPU) is refused with their names.")] = None,
    cloud: Annotated[list[str] | None, typer.Option("--cloud", "--clouds",
                                                    help="aws, gcp, azure.")] = None,
    region: Annotated[list[str] | None, typer.Option(
        "--region", "--regions", help="Region codes, matched exactly: us-east-1 does not "
        "include the Local Zone us-east-1-atl-1 (a region of its own).")] = None,
    pricing: Annotated[list[str] | None, typer.Option(
        "--pricing", help="on_demand, spot, reserved_1y, reserved_3y, committed_1y, "
        "committed_3y, capacity_block.")] = None,
    instance: Annotated[list[str] | None, typer.Option("--instance",
                        help="Instance type name(s).")] = None,
    min_gpus: Annotated[int | None, typer.Option("--min-gpus", help="At least this many "
                        "accelerators per instance (1 to 65,536: TPU slices reach 6,144).")]
    = None,
    max_price: Annotated[str | None, typer.Option("--max-price", help="Max USD per "
                         "instance-hour (above 0, at most 100,000; e.g. 40 or $40).")] = None,
    sort: Annotated[str, typer.Option("--sort", help="price ($/instance-h), gpu_price "
                    "($/GPU-h) or pflop_price ($ per bf16 PFLOP/s-hour).")] = "price",
    limit: Annotated[int, typer.Option("--limit", help="Rows in the table, 0 (all) to "
                     "100,000; --json/--csv print all.")] = 40,
    flagged: Annotated[bool, typer.Option("--flagged", help="Only offers whose price must not "
                       "be used (flagged or unknown), with the reasons.")] = False,
    usable: Annotated[bool, typer.Option("--usable", help="Only offers whose price the "
                      "planner uses (no flag against it).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    csv_out: Annotated[bool, typer.Option("--csv", help="Print CSV for spreadsheets.")] = False,
    overrides: OverridesOpt = None,
    wide: Wide = False,
) -> None:
    """Priced offers (instance type × region × pricing model), filtered and sorted."""
    from catalog import GpuplanError, select_offers

    if json_out and csv_out:
        raise GpuplanError("--json and --csv are exclusive. To fix: pass one of them")
    if flagged and usable:
        raise GpuplanError("--flagged and --usable are exclusive. To fix: pass one of them")
    if not 0 <= limit <= MAX_ROWS:
        raise GpuplanError(f"--limit must be a whole number from 0 (all) to {MAX_ROWS:,}, got "
                           f"{limit}. To fix: pass a row count, e.g. --limit 40")
    if max_price is not None:  # $40 as people type it; the model's package only when given
        from planner.model import parse_usd

        max_price = parse_usd(max_price, "max_price")
    filters = dict(gpus=split_csv(gpu, "--gpu"), clouds=split_csv(cloud, "--cloud"),
                   regions=split_csv(region, "--region"), pricing=split_csv(pricing, "--pricing"),
                   instance_types=split_csv(instance, "--instance"))
    cat = load(overrides)
    rest = dict(min_gpus=min_gpus, max_price=max_price, sort=sort,
                include_flagged=not usable, only_flagged=flagged)
    comma_hint(filters["gpus"], "--gpu", cat.resolve_accelerator)  # "H100 A10G": 2 names
    rows = select_offers(cat, **filters, **rest)  # an error's field is its filter's flag
    if not rows:
        _say_why_none(cat, filters, rest)
    if json_out or csv_out:
        dicts = [r.as_dict() for r in rows]
        if json_out:
            print_json(dicts)
        else:
            every = dicts or [r.as_dict() for r in select_offers(cat)[:1]]
            sys.stdout.write(_offers_csv(dicts, list(every[0]) if every else ["cloud"]))
        _banner(console(stderr=True, fit=True), cat, rows)
        return
    _offers_table(rows, limit, cat, sort=sort, show_reasons=flagged, wide=wide)


_FILTER_FLAGS = {"gpus": "--gpu", "clouds": "--cloud", "regions": "--region",
                 "pricing": "--pricing", "instance_types": "--instance",
                 "min_gpus": "--min-gpus", "max_price": "--max-price",
                 "include_flagged": "--usable", "only_flagged": "--flagged"}
# what each of ``rest``'s filters is when its flag is left out
_NOT_GIVEN = {"min_gpus": None, "max_price": None, "include_flagged": True,
              "only_flagged": False}


def _say_why_none(cat, filters: dict, rest: dict) -> None:
    """No offer matched: why (``catalog.why_no_offers``: a pricing model or accelerators the
    catalog never prices, or which one filter, left out, would let some through), on stderr;
    the filters may each be right and only disagree, e.g. an AWS instance type with --cloud
    gcp."""
    from catalog import why_no_offers

    in_force = {**filters, **{k: rest[k] for k in _NOT_GIVEN}}
    given = [k for k, v in filters.items() if v] + [k for k, v in _NOT_GIVEN.items()
                                                    if rest[k] != v]
    why = why_no_offers(cat, in_force, given, left_out=_NOT_GIVEN, sort=rest["sort"])
    err = console(stderr=True, fit=True)
    if why.absent_pricing:
        err.print(f"note: {say_fields(why.absent_pricing)}", markup=False)
    elif why.unpriced:
        print_hanging(err, f"note: {why.unpriced_clause()}" + (
            "; give your own rate with --overrides" if why.listed else ""), first="", rest="  ")
    elif why.left_out:
        said = "".join(_all_of(k) for k in why.left_out)
        print_hanging(err, "note: no offer matches every filter together ("
                      + why.without(_FILTER_FLAGS.__getitem__) + ")" + said,
                      first="", rest="  ")


def _all_of(found) -> str:
    """What the offers that --usable or --flagged alone leaves out have in common (the
    other filters may be right: 6 capacity blocks, every one expired)."""
    n = found.offers
    if found.filter == "only_flagged":
        return f". None of those {n:,} is flagged"
    if found.filter != "include_flagged":
        return ""
    those = "that one is" if n == 1 else f"those {n:,} are all"
    return (f". {those[0].upper()}{those[1:]} flagged ("
            + ", ".join(f"{c:,} {f}" for f, c in found.flags)
            + f"): `--flagged` lists {'it' if n == 1 else 'them'} with the reasons")


OFFER_COLUMNS = (
    # what goes first when narrow: the flags (a price `plan` refuses is marked in $/h), the
    # date (the catalog line gives the dates of the rows shown; as OPTIONAL it went first, and
    # 2025 spot rows read as of the line's 2026-01-21), the term, then $/GPU-h and the cloud;
    # the GPU count is kept (a 1-GPU and an 8-GPU type ranked by $/instance-hour with no count
    # read as comparable), and where even the kept columns are too wide the rows are listed
    Column("cloud"), Column("instance", ESSENTIAL), Column("region", ESSENTIAL),
    Column("accelerator", ESSENTIAL), Column("GPUs", ESSENTIAL, align="right"),
    # the term tells reservations of one instance apart (three rows otherwise read as one
    # offer at three prices): shown whenever a row has one and there is room, else named
    Column("pricing", ESSENTIAL), Column("term", rank=1),
    Column("$/h", ESSENTIAL, align="right"), Column("$/GPU-h", align="right"),
    Column("$/PFLOP-h", OPTIONAL, align="right"), Column("as of", rank=2),
    Column("flags", wrap=True, min_width=14, rank=3),
)


UNUSED_MARK = "*"  # beside a price `plan` does not use: the flags column may be left out
# the column each --sort orders by: kept at any width (at 80 columns `--sort gpu_price` left
# $/GPU-h out, and the $/h shown read as unsorted)
SORT_COLUMNS = {"price": "$/h", "gpu_price": "$/GPU-h", "pflop_price": "$/PFLOP-h"}


def _offers_table(rows, limit: int, cat, *, sort: str, show_reasons: bool,
                  wide: bool) -> None:
    shown = rows[: limit or None]
    # columns no shown row fills are left out (an empty flags column kept the term out)
    # and one accelerator for every row is said once, in the title: a column repeating the
    # --gpu asked for made `offers --gpu H100` 89 columns wide at 80
    accs = {r.accelerator.name for r in rows}
    one = next(iter(accs)) + " " if len(accs) == 1 else ""
    empty = {"term": not any(r.offer.option for r in shown),
             "flags": not any(r.flags for r in shown), "accelerator": bool(one)}
    columns = tuple(replace(c, priority=ESSENTIAL) if c.header == SORT_COLUMNS.get(sort) else c
                    for c in OFFER_COLUMNS if not empty.get(c.header))
    # a narrow terminal leaves the flags column out: the mark keeps a price `plan` refuses
    # from reading as usable (40 GCP spot rows at 80 columns, every one refused)
    marked = any(not r.offer.price_usable for r in shown)

    def price(o) -> str:
        text = _money(o.usd_per_hour, 3)
        return text if not marked else text + (UNUSED_MARK if not o.price_usable else " ")

    print_table(columns, [
        tuple(cell for c, cell in zip(OFFER_COLUMNS, (
            o.cloud, o.instance_type, o.region, r.accelerator.name, r.instance.gpu_count,
            o.pricing, o.option, price(o), _money(r.usd_per_gpu_hour, 3),
            _money(r.usd_per_bf16_pflop_hour, 2),
            ("~" if o.as_of_approximate else "") + o.as_of.isoformat(), ", ".join(r.flags)),
            strict=True) if not empty.get(c.header))
        for r in shown for o in (r.offer,)],
        title=f"{len(rows):,} {one}offer{'' if len(rows) == 1 else 's'}"
        + (f" (the first {limit:,}; --limit 0 lists all)" if 0 < limit < len(rows) else ""),
        wide=wide)
    out = console(fit=True)
    if show_reasons:
        for r in shown:
            if r.flag_reasons:
                o = r.offer
                print_hanging(out, f"{o.cloud}/{o.instance_type}/{o.region}/{o.pricing}: "
                              f"{r.flag_reasons}", first="", rest="  ")
    else:  # an instance type's own flags (a corrected GPU count) once per type, not per row
        for key, why in {(r.offer.cloud, r.offer.instance_type): r.type_flag_reasons
                         for r in shown if r.type_flag_reasons}.items():
            print_hanging(out, f"{'/'.join(key)}: {why}", first="", rest="  ")
    if any(r.flags for r in shown):
        from catalog import OFFER_FLAGS, split_flags

        # the flags of the rows shown: a legend of flags no row carries read as a warning
        blocking, notes = split_flags(f for r in shown for f in r.flags)
        used = sorted(blocking + notes)
        # an overridden (negotiated) price is used: only the other flags keep a price out
        print_hanging(out, "Flags: " + "; ".join(f"{f} = {OFFER_FLAGS[f]}" for f in used)
                      + "." + (f" Prices flagged {', '.join(blocking)} (marked "
                               f"{UNUSED_MARK} in $/h) are not used by `gpuplan plan` (see "
                               "`offers --flagged`)." if blocking else "")
                      + (f" {', '.join(notes)}: for information; `gpuplan plan` uses those "
                         "prices." if notes else ""), first="", rest="  ")
    _banner(out, cat, shown)


def _banner(out, cat, rows) -> None:
    """The catalog line, its dates and age those of the offers ``rows`` printed (the whole
    catalog's oldest, Azure's 1,005 days, was said under AWS rows alone)."""
    print_hanging(out, catalog_banner(cat, offers=[r.offer for r in rows]), first="",
                  rest="  ")


INFO_COLUMNS = (  # the price dates are what `catalog info` is for: the counts go first
    Column("cloud", ESSENTIAL), Column("instance types", OPTIONAL, align="right"),
    Column("priced", OPTIONAL, align="right"), Column("regions", align="right", rank=1),
    Column("offers", align="right"), Column("usable", align="right"),
    Column("as of", ESSENTIAL), Column("oldest", ESSENTIAL),
)
SOURCE_COLUMNS = (Column("cloud", ESSENTIAL), Column("offers", align="right"),
                  Column("as of"), Column("source", wrap=True, min_width=30))
UNUSED_COLUMNS = (Column("cloud", ESSENTIAL), Column("offers not used by the planner, by flag",
                                                     wrap=True, min_width=30))


def info_cmd(
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    overrides: OverridesOpt = None,
    wide: Wide = False,
) -> None:
    """Which catalog is active, how old each cloud's prices are, and what it holds."""
    from catalog import CatalogError, OverrideError, stored_catalogs

    try:
        cat = load(overrides)
    except OverrideError:
        raise
    except CatalogError as exc:
        # the command other errors point to for the list: it still gives it
        names = ", ".join(["packaged", *(s.name for s in stored_catalogs())])
        raise CatalogError(f"{str(exc).rstrip('.')}. The catalogs present: {names} "
                           "(`gpuplan catalog use NAME`)") from None
    info = cat.info()
    if json_out:
        print_json(info)
        return
    out = console(fit=True)
    out.print(f"Active catalog: {cat.name} ({cat.path})", markup=False)
    out.print(f"Source: {cat.source}", markup=False)
    if info.get("overrides"):  # the counts below include what the file added or changed
        out.print(f"Overrides applied: {info['overrides']}", markup=False)
    clouds = info["clouds"]
    print_table(INFO_COLUMNS, [
        (c, f"{d['instance_types']:,}", f"{d['priced_instance_types']:,}", f"{d['regions']:,}",
         f"{d['offers']:,}", f"{d['usable_offers']:,}",
         ("~" if d["as_of_approximate"] else "") + str(d["as_of"]),
         ("~" if d["oldest_as_of_approximate"] else "") + str(d["oldest_as_of"]))
        for c, d in clouds.items()], wide=wide)
    print_table(SOURCE_COLUMNS, [
        (c, f"{s['offers']:,}", ("~" if s["approximate"] else "") + str(s["as_of"]), s["source"])
        for c, d in clouds.items() for s in d["sources"]], title="Where the prices come from",
        wide=wide)
    unused = [(c, ", ".join(f"{n:,} {f}" for f, n in d["flagged_by_flag"].items()))
              for c, d in clouds.items() if d["flagged_by_flag"]]
    if unused:
        print_table(UNUSED_COLUMNS, unused, wide=wide)
    store = info.get("store", {})
    others = [s["name"] for s in store.get("stored", []) if not s["active"]]
    if others:
        out.print("Other catalogs (`gpuplan catalog use NAME`): packaged, " + ", ".join(others),
                  markup=False)
    elif cat.name != "packaged":
        out.print("The packaged snapshot is available (`gpuplan catalog use packaged`).")
    if info.get("note"):  # a GPUPLAN_TODAY before the prices: why every age is 0
        out.print(f"note: {info['note']}", markup=False)
    if info["stale"]:
        out.print(f"warning: {info['warning']}", markup=False)


def use_cmd(
    name: Annotated[str, typer.Argument(help="packaged (the embedded snapshot), refreshed "
                                        "(the newest refresh), previous, or any catalog "
                                        "`gpuplan catalog info` lists.")],
) -> None:
    """Switch which catalog every command reads."""
    from catalog import GpuplanError, use_catalog

    if not name.strip():
        raise GpuplanError("the catalog name is empty. To fix: give a name that `gpuplan "
                           "catalog info` lists, or packaged")
    if len(name) > MAX_NAME_CHARS:
        raise GpuplanError(f"a catalog name has at most {MAX_NAME_CHARS} characters; this one "
                           f"has {len(name):,}. To fix: give a name that `gpuplan catalog "
                           "info` lists, or packaged")
    if not CATALOG_NAME.fullmatch(name):
        raise GpuplanError(f"{name!r} is not a catalog name (a letter or digit, then "
                           "letters, digits, '.', '_' and '-'; not a path). To fix: give a name "
                           "that `gpuplan catalog info` lists, or packaged")
    from catalog import active_catalog_name

    path = use_catalog(name)
    # the resolved name: `use previous` may lead back to the packaged snapshot, whose folder
    # is called "data"
    console(fit=True).print(f"active catalog: {active_catalog_name()} ({path})", markup=False)
