"""`gpuplan gpus`, `gpuplan offers` and `gpuplan catalog info|use|refresh`."""

from __future__ import annotations

import csv
import datetime as dt
import io
import sys
from typing import Annotated

import typer

from ._app import app, catalog_app, console, overrides_option_default, print_json

OverridesOpt = Annotated[
    str | None,
    typer.Option("--overrides", help="YAML file of negotiated discounts and private rates "
                 "(env GPUPLAN_OVERRIDES). Format: discounts: [{cloud|family|instance_type, "
                 "region?, pricing?, percent (0-100, exclusive)}], prices: [{cloud, "
                 "instance_type, region, pricing, usd_per_hour}]. Every entry must match an "
                 "offer."),
]
# OWASP "CSV Injection": a spreadsheet runs a cell that starts with one of these as a formula.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def split_csv(values: list[str] | None) -> list[str]:
    """Accept both `--cloud aws --cloud gcp` and `--cloud aws,gcp`."""
    return [v.strip() for item in values or () for v in item.split(",") if v.strip()]


def load(overrides: str | None):
    from catalog import load_catalog

    return load_catalog(overrides=overrides or overrides_option_default())


def catalog_banner(cat, today: dt.date | None = None) -> str:
    """One line saying which catalog priced this, how old it is, and what to do about it."""
    from catalog import CLOUDS, STALE_AFTER_DAYS

    dates = ", ".join(f"{c} {'~' if cat.as_of_approximate(c) else ''}{cat.as_of(c):%Y-%m-%d}"
                      for c in CLOUDS if cat.as_of(c))
    age = cat.age_days(today)
    line = f"Catalog: {cat.name} (prices as of {dates}; ~ = approximate date)"
    if cat.overrides_path:
        line += f"; overrides from {cat.overrides_path}"
    if age is not None and age > STALE_AFTER_DAYS:
        line += (f". Prices are up to {age} days old: run `gpuplan catalog refresh` (AWS and "
                 "Azure need no credentials) or apply your own rates with --overrides")
    return line


def safe_cell(value) -> str:
    """A CSV cell a spreadsheet will not execute: text starting with = + - @ (or a tab or
    carriage return) gets a leading apostrophe, which spreadsheets show as text."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def _money(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


@app.command("gpus")
def gpus_cmd(
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Include accelerators no cloud offers.")]
    = False,
    overrides: OverridesOpt = None,
) -> None:
    """One row per accelerator: datasheet specs, cheapest $/GPU-hour, clouds offering it."""
    from catalog import accelerator_summaries

    cat = load(overrides)
    rows = [s for s in accelerator_summaries(cat) if all_ or s.instance_types]
    if json_out:
        print_json([s.as_dict() for s in rows])
        console(stderr=True).print(catalog_banner(cat))
        return
    from rich.table import Table

    table = Table(title="Accelerators (dense datasheet peaks; * = unverified value)")
    for col in ("accelerator", "memory GiB", "mem GB/s", "bf16 TF", "fp8 TF", "link GB/s",
                "on-demand $/GPU-h", "spot $/GPU-h", "clouds"):
        table.add_column(col, justify="left" if col in ("accelerator", "clouds") else "right")

    def cell(a, field: str, value) -> str:
        if value is None:
            return "—"
        star = "*" if field in a.unverified or "all compute peaks" in a.unverified and \
            field.startswith("tflops") else ""
        return f"{value:g}{star}"

    for s in rows:
        a = s.accelerator
        table.add_row(
            a.name, cell(a, "memory_gib", a.memory_gib),
            cell(a, "memory_bandwidth_gb_per_s", a.memory_bandwidth_gb_per_s),
            cell(a, "tflops_bf16", a.tflops_bf16), cell(a, "tflops_fp8", a.tflops_fp8),
            cell(a, "intra_node_gb_per_s_per_gpu", a.intra_node_gb_per_s_per_gpu),
            _money(s.cheapest_on_demand_usd_per_gpu_hour)
            + ("!" if s.cheapest_on_demand_flags else ""),
            _money(s.cheapest_spot_usd_per_gpu_hour) + ("!" if s.cheapest_spot_flags else ""),
            ",".join(s.clouds))
    out = console()
    out.print(table)
    flagged = sorted({f for s in rows for f in (*s.cheapest_on_demand_flags,
                                               *s.cheapest_spot_flags)})
    if flagged:
        from catalog import OFFER_FLAGS

        out.print("! the cheapest offer is flagged: " + "; ".join(
            f"{f} = {OFFER_FLAGS[f]}" for f in flagged) + " (see `gpuplan offers --gpu NAME`)")
    out.print(catalog_banner(cat))


def _offers_csv(dicts: list[dict]) -> str:
    buf = io.StringIO()
    fields = list(dicts[0]) if dicts else ["cloud", "instance_type", "region"]
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for d in dicts:
        row = {**d, "flags": ";".join(d.get("flags", []))}
        writer.writerow({k: safe_cell(v) for k, v in row.items()})
    return buf.getvalue()


@app.command("offers")
def offers_cmd(
    gpu: Annotated[list[str] | None, typer.Option("--gpu", help="Accelerator name or alias "
                   "(H100, a100-80gb, …); repeat or comma-separate.")] = None,
    cloud: Annotated[list[str] | None, typer.Option("--cloud", help="aws, gcp, azure.")] = None,
    region: Annotated[list[str] | None, typer.Option(
        "--region", help="Region codes, matched exactly: us-east-1 does not include the Local "
        "Zone us-east-1-atl-1 (a region of its own).")] = None,
    pricing: Annotated[list[str] | None, typer.Option(
        "--pricing", help="on_demand, spot, reserved_1y, reserved_3y, committed_1y, "
        "committed_3y, capacity_block.")] = None,
    instance: Annotated[list[str] | None, typer.Option("--instance",
                        help="Instance type name(s).")] = None,
    min_gpus: Annotated[int | None, typer.Option("--min-gpus", help="At least this many "
                        "accelerators per instance (1-1024).")] = None,
    max_price: Annotated[float | None, typer.Option("--max-price",
                         help="Max USD per instance-hour (above 0).")] = None,
    sort: Annotated[str, typer.Option("--sort", help="price ($/instance-h), gpu_price "
                    "($/GPU-h) or pflop_price ($ per bf16 PFLOP/s-hour).")] = "price",
    limit: Annotated[int, typer.Option("--limit", help="Rows in the table (0 = all); "
                     "--json/--csv print all.")] = 40,
    flagged: Annotated[bool, typer.Option("--flagged", help="Only offers whose price must not "
                       "be used (flagged or unknown), with the reasons.")] = False,
    usable: Annotated[bool, typer.Option("--usable", help="Only offers whose price the "
                      "planner uses (no flag against it).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    csv_out: Annotated[bool, typer.Option("--csv", help="Print CSV for spreadsheets.")] = False,
    overrides: OverridesOpt = None,
) -> None:
    """Priced offers (instance type × region × pricing model), filtered and sorted."""
    from catalog import GpuplanError, select_offers

    if json_out and csv_out:
        raise GpuplanError("--json and --csv are exclusive. To fix: pass one of them")
    if flagged and usable:
        raise GpuplanError("--flagged and --usable are exclusive. To fix: pass one of them")
    if limit < 0:
        raise GpuplanError(f"--limit must be 0 (all) or more, got {limit}. To fix: pass a row "
                           "count")
    cat = load(overrides)
    rows = select_offers(
        cat, gpus=split_csv(gpu), clouds=split_csv(cloud), regions=split_csv(region),
        pricing=split_csv(pricing), instance_types=split_csv(instance), min_gpus=min_gpus,
        max_price=max_price, sort=sort, include_flagged=not usable, only_flagged=flagged)
    if json_out or csv_out:
        dicts = [r.as_dict() for r in rows]
        if json_out:
            print_json(dicts)
        else:
            sys.stdout.write(_offers_csv(dicts))
        console(stderr=True).print(catalog_banner(cat))
        return
    _offers_table(rows, limit, cat, show_reasons=flagged)


def _offers_table(rows, limit: int, cat, *, show_reasons: bool) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"{len(rows)} offers" + (f" (first {limit})" if 0 < limit < len(rows)
                                                 else ""))
    for col in ("cloud", "instance", "region", "accelerator", "GPUs", "pricing", "$/h",
                "$/GPU-h", "$/PFLOP-h", "as of", "flags"):
        table.add_column(col, justify="right" if col.startswith("$") or col == "GPUs"
                         else "left")
    for r in rows[: limit or None]:
        o = r.offer
        model = o.pricing + (f" ({o.option})" if o.option else "")
        table.add_row(o.cloud, o.instance_type, o.region, r.accelerator.name,
                      str(r.instance.gpu_count), model, _money(o.usd_per_hour, 3),
                      _money(r.usd_per_gpu_hour, 3), _money(r.usd_per_bf16_pflop_hour, 2),
                      ("~" if o.as_of_approximate else "") + o.as_of.isoformat(),
                      escape(",".join(o.flags)))
    out = console()
    out.print(table)
    if show_reasons:
        for r in rows[: limit or None]:
            if r.offer.flag_reasons:
                o = r.offer
                out.print(escape(f"{o.cloud}/{o.instance_type}/{o.region}/{o.pricing}: "
                                 f"{o.flag_reasons}"))
    if any(r.offer.flags for r in rows):
        from catalog import OFFER_FLAGS

        used = sorted({f for r in rows for f in r.offer.flags})
        out.print("Flags: " + "; ".join(f"{f} = {OFFER_FLAGS[f]}" for f in used)
                  + ". Flagged prices are not used by `gpuplan plan` (see `offers --flagged`).")
    out.print(catalog_banner(cat))


@catalog_app.command("info")
def info_cmd(
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    overrides: OverridesOpt = None,
) -> None:
    """Which catalog is active, how old each cloud's prices are, and what it holds."""
    cat = load(overrides)
    info = cat.info()
    if json_out:
        print_json(info)
        return
    from rich.markup import escape
    from rich.table import Table

    out = console()
    out.print(f"Active catalog: [bold]{escape(cat.name)}[/bold] ({escape(str(cat.path))})")
    out.print(f"Source: {escape(cat.source)}")
    table = Table()
    for col in ("cloud", "instance types", "priced", "regions", "offers", "usable", "as of",
                "oldest"):
        table.add_column(col)
    for c, d in info["clouds"].items():
        table.add_row(c, str(d["instance_types"]), str(d["priced_instance_types"]),
                      str(d["regions"]), str(d["offers"]), str(d["usable_offers"]),
                      ("~" if d["as_of_approximate"] else "") + str(d["as_of"]),
                      str(d["oldest_as_of"]))
    out.print(table)
    for c, d in info["clouds"].items():
        for s in d["sources"]:
            out.print(escape(f"  {c}: {s['offers']:>6} offers as of "
                             f"{'~' if s['approximate'] else ''}{s['as_of']} — {s['source']}"))
        if d["flagged_by_flag"]:
            out.print(escape(f"  {c}: not used by the planner: " + ", ".join(
                f"{n} {f}" for f, n in d["flagged_by_flag"].items())))
    store = info.get("store", {})
    others = [s["name"] for s in store.get("stored", []) if not s["active"]]
    if others:
        out.print(escape("Other catalogs (`gpuplan catalog use NAME`): packaged, "
                         + ", ".join(others)))
    elif cat.name != "packaged":
        out.print("The packaged snapshot is available (`gpuplan catalog use packaged`).")
    if info["stale"]:
        out.print(f"[yellow]warning:[/yellow] {escape(info['warning'])}")


@catalog_app.command("use")
def use_cmd(
    name: Annotated[str, typer.Argument(help="packaged (the embedded snapshot), refreshed "
                                        "(the newest refresh), previous, or any catalog "
                                        "`gpuplan catalog info` lists.")],
) -> None:
    """Switch which catalog every command reads."""
    from catalog import use_catalog

    path = use_catalog(name)
    console().print(f"active catalog: {path.name if name != 'packaged' else name} ({path})")


@catalog_app.command("refresh")
def refresh_cmd(
    cloud: Annotated[list[str] | None, typer.Option("--cloud", help="Clouds to refresh "
                     "(default aws,gcp,azure); others keep their rows.")] = None,
    regions: Annotated[list[str] | None, typer.Option("--regions", "--region",
                       help="Only these regions; every other offer is kept.")] = None,
    prune: Annotated[bool, typer.Option("--prune", help="Remove offers of the refreshed "
                     "clouds that the refresh looked for but no longer found (by default "
                     "they keep their old price and date).")] = False,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Fetch current prices into a new catalog in your data directory, check it, and make
    it active (the previous one stays selectable). AWS (public bulk price files) and Azure
    (public Retail Prices API) need no credentials; GCP needs GOOGLE_CLOUD_API_KEY or
    application-default credentials. Offers a refresh does not fetch keep their price and
    date."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from catalog import CLOUDS, refresh_catalog

    clouds = split_csv(cloud) or list(CLOUDS)
    err = console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[step]}"), console=err, transient=True,
                  disable=not err.is_terminal) as bar:
        tasks: dict[str, int] = {}

        def progress(cloud_name: str, step: str, done: int, total: int) -> None:
            if cloud_name not in tasks:
                tasks[cloud_name] = bar.add_task(cloud_name, total=max(total, 1), step="")
            bar.update(tasks[cloud_name], completed=done, total=max(total, 1), step=step)

        result = refresh_catalog(clouds=clouds, regions=split_csv(regions) or None,
                                 progress=progress, prune=prune)
    if json_out:
        print_json(result.to_dict())
        return
    _print_refresh(result)


def _print_refresh(result) -> None:
    from rich.markup import escape
    from rich.table import Table

    out = console()
    for c, reason in result.skipped.items():
        out.print(f"[yellow]skipped {c}:[/yellow] {escape(reason.removeprefix(c + ': '))}")
    for w in result.warnings:
        out.print(f"[yellow]warning:[/yellow] {escape(w)}")
    out.print(f"refreshed {', '.join(result.refreshed)} → {escape(result.name)} (now active; "
              "`gpuplan catalog use previous` switches back)")
    kept = ", ".join(f"{c} {n}" for c, n in result.kept_unfetched.items() if n)
    out.print(f"{len(result.added)} offers added, {len(result.price_changes)} prices changed, "
              f"{len(result.removed)} removed" + (f"; kept unchanged (not fetched): {kept}"
                                                  if kept else ""))
    for label, keys in (("new instance types", result.new_instance_types),
                        ("removed instance types", result.removed_instance_types)):
        if keys:
            out.print(escape(f"{label}: " + ", ".join(f"{c}/{n}" for c, n in keys[:20])
                             + (" …" if len(keys) > 20 else "")))
    large = result.large_price_changes
    if large:
        t = Table(title=f"{len(large)} prices changed by more than 10%")
        for col in ("cloud", "instance", "region", "pricing", "old $/h", "new $/h", "change"):
            t.add_column(col)
        for pc in large[:40]:
            t.add_row(pc.cloud, pc.instance_type, pc.region,
                      pc.pricing + (f" ({pc.option})" if pc.option else ""),
                      _money(pc.old_usd_per_hour, 3), _money(pc.new_usd_per_hour, 3),
                      f"{pc.change_fraction:+.0%}")
        out.print(t)
