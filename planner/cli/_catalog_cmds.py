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
                 "region?, pricing?, percent}], prices: [{cloud, instance_type, region, "
                 "pricing, usd_per_hour}]."),
]


def split_csv(values: list[str] | None) -> list[str]:
    """Accept both `--cloud aws --cloud gcp` and `--cloud aws,gcp`."""
    return [v.strip() for item in values or () for v in item.split(",") if v.strip()]


def load(overrides: str | None):
    from catalog import load_catalog

    return load_catalog(overrides=overrides or overrides_option_default())


def catalog_banner(cat, today: dt.date | None = None) -> str:
    """One line saying which catalog priced this, how old it is, and what to do about it."""
    from catalog import CLOUDS, STALE_AFTER_DAYS

    dates = ", ".join(f"{c} ~{cat.as_of(c):%Y-%m}" for c in CLOUDS if cat.as_of(c))
    age = cat.age_days(today)
    line = f"Catalog: {cat.name} ({dates}; approximate dates)"
    if cat.overrides_path:
        line += f"; overrides from {cat.overrides_path}"
    if age is not None and age > STALE_AFTER_DAYS:
        line += (f". Prices are up to {age} days old: run `gpuplan catalog refresh` or apply "
                 "your own rates with --overrides")
    return line


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


@app.command("offers")
def offers_cmd(
    gpu: Annotated[list[str] | None, typer.Option("--gpu", help="Accelerator name or alias "
                   "(H100, a100-80gb, …); repeat or comma-separate.")] = None,
    cloud: Annotated[list[str] | None, typer.Option("--cloud", help="aws, gcp, azure.")] = None,
    region: Annotated[list[str] | None, typer.Option("--region")] = None,
    pricing: Annotated[list[str] | None, typer.Option(
        "--pricing", help="on_demand, spot, reserved_1y, reserved_3y, committed_1y, "
        "committed_3y, capacity_block.")] = None,
    instance: Annotated[list[str] | None, typer.Option("--instance",
                        help="Instance type name(s).")] = None,
    min_gpus: Annotated[int | None, typer.Option("--min-gpus")] = None,
    max_price: Annotated[float | None, typer.Option("--max-price",
                         help="Max USD per instance-hour.")] = None,
    sort: Annotated[str, typer.Option("--sort", help="price ($/instance-h), gpu_price "
                    "($/GPU-h) or pflop_price ($ per bf16 PFLOP/s-hour).")] = "price",
    limit: Annotated[int, typer.Option("--limit", help="Rows in the table (0 = all); "
                     "--json/--csv print all.")] = 40,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    csv_out: Annotated[bool, typer.Option("--csv", help="Print CSV for spreadsheets.")] = False,
    overrides: OverridesOpt = None,
) -> None:
    """Priced offers (instance type × region × pricing model), filtered and sorted."""
    from catalog import select_offers

    cat = load(overrides)
    rows = select_offers(
        cat, gpus=split_csv(gpu), clouds=split_csv(cloud), regions=split_csv(region),
        pricing=split_csv(pricing), instance_types=split_csv(instance), min_gpus=min_gpus,
        max_price=max_price, sort=sort)
    if json_out or csv_out:
        dicts = [r.as_dict() for r in rows]
        if json_out:
            print_json(dicts)
        else:
            buf = io.StringIO()
            fields = list(dicts[0]) if dicts else ["cloud", "instance_type", "region"]
            writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
            writer.writeheader()
            for d in dicts:
                writer.writerow({**d, "flags": ";".join(d.get("flags", []))})
            sys.stdout.write(buf.getvalue())
        console(stderr=True).print(catalog_banner(cat))
        return
    from rich.table import Table

    table = Table(title=f"{len(rows)} offers" + (f" (first {limit})" if 0 < limit < len(rows)
                                                 else ""))
    for col in ("cloud", "instance", "region", "accelerator", "GPUs", "pricing", "$/h",
                "$/GPU-h", "$/PFLOP-h", "as of", "flags"):
        table.add_column(col, justify="right" if col.startswith("$") or col == "GPUs"
                         else "left")
    for r in rows[: limit or None]:
        o = r.offer
        table.add_row(o.cloud, o.instance_type, o.region, r.accelerator.name,
                      str(r.instance.gpu_count), o.pricing, _money(o.usd_per_hour, 3),
                      _money(r.usd_per_gpu_hour, 3), _money(r.usd_per_bf16_pflop_hour, 2),
                      o.as_of.isoformat(), ",".join(o.flags))
    out = console()
    out.print(table)
    if any(r.offer.flags for r in rows):
        from catalog import OFFER_FLAGS

        used = sorted({f for r in rows for f in r.offer.flags})
        out.print("Flags: " + "; ".join(f"{f} = {OFFER_FLAGS[f]}" for f in used))
    out.print(catalog_banner(cat))


@catalog_app.command("info")
def info_cmd(
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    overrides: OverridesOpt = None,
) -> None:
    """Which catalog is active, its date and source, and what it holds per cloud."""
    from catalog import CLOUDS, STALE_AFTER_DAYS

    cat = load(overrides)
    age = cat.age_days()
    per_cloud = {}
    for c in CLOUDS:
        types = [t for t in cat.instance_types if t.cloud == c]
        offers = [o for o in cat.offers if o.cloud == c]
        per_cloud[c] = {
            "instance_types": len(types),
            "priced_instance_types": len({o.instance_type for o in offers if o.price_usable}),
            "regions": len({o.region for o in offers}), "offers": len(offers),
            "offers_by_pricing": {p: sum(o.pricing == p for o in offers)
                                  for p in sorted({o.pricing for o in offers})},
            "as_of": cat.as_of(c).isoformat() if cat.as_of(c) else None,
            "as_of_basis": cat.meta.get("clouds", {}).get(c, {}).get("basis"),
            "source": cat.meta.get("clouds", {}).get(c, {}).get("source"),
        }
    stale = age is not None and age > STALE_AFTER_DAYS
    from catalog._refresh import catalog_status

    status = catalog_status()
    info = {"active": cat.name, "path": str(cat.path), "source": cat.source,
            "refreshed_exists": status["refreshed_exists"],
            "previous_exists": status["previous_exists"],
            "refreshed_at": status["refreshed_at"],
            "oldest_as_of": cat.oldest_as_of().isoformat() if cat.oldest_as_of() else None,
            "age_days": age, "stale": stale, "overrides": cat.overrides_path,
            "accelerators": len(cat.accelerators), "clouds": per_cloud}
    if stale:
        info["warning"] = (f"catalog is {age} days old (> {STALE_AFTER_DAYS}): prices may be "
                           "wrong. Run `gpuplan catalog refresh` or use --overrides")
    if json_out:
        print_json(info)
        return
    from rich.table import Table

    out = console()
    out.print(f"Active catalog: [bold]{cat.name}[/bold] ({cat.path})")
    out.print(f"Source: {cat.source}")
    other = ("a refreshed catalog exists (`gpuplan catalog use refreshed`)"
             if cat.name == "packaged" and status["refreshed_exists"] else
             "the packaged snapshot is available (`gpuplan catalog use packaged`)"
             if cat.name != "packaged" else "no refreshed catalog yet (`gpuplan catalog refresh`)")
    out.print(other)
    table = Table()
    for col in ("cloud", "instance types", "priced", "regions", "offers", "as of", "basis"):
        table.add_column(col)
    for c, d in per_cloud.items():
        table.add_row(c, str(d["instance_types"]), str(d["priced_instance_types"]),
                      str(d["regions"]), str(d["offers"]), f"~{d['as_of']}",
                      d["as_of_basis"] or "")
    out.print(table)
    if stale:
        out.print(f"[yellow]warning:[/yellow] {info['warning']}")


@catalog_app.command("use")
def use_cmd(
    name: Annotated[str, typer.Argument(help="packaged (the embedded snapshot) or refreshed "
                                        "(the last `gpuplan catalog refresh`).")],
) -> None:
    """Switch which catalog every command reads."""
    from catalog._refresh import use_catalog

    path = use_catalog(name)
    console().print(f"active catalog: {name} ({path})")


@catalog_app.command("refresh")
def refresh_cmd(
    cloud: Annotated[list[str] | None, typer.Option("--cloud", help="Clouds to refresh "
                     "(default aws,gcp,azure); others keep their rows.")] = None,
    regions: Annotated[list[str] | None, typer.Option("--regions", "--region",
                       help="Only these regions (their offers are replaced; others kept).")]
    = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Rebuild the catalog from the clouds' own APIs into your data directory, check it,
    and make it active (the previous one is kept). A cloud without credentials is skipped
    with what to set up; Azure prices need no credentials."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from catalog import CLOUDS
    from catalog._refresh import refresh_catalog

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
                                 progress=progress)
    if json_out:
        print_json(result.to_dict())
        return
    out = console()
    for c, reason in result.skipped.items():
        out.print(f"[yellow]skipped {c}:[/yellow] {reason.removeprefix(c + ': ')}")
    for w in result.warnings:
        out.print(f"[yellow]warning:[/yellow] {w}")
    if result.refreshed:
        out.print(f"refreshed {', '.join(result.refreshed)} → {result.path} (now active; "
                  "`gpuplan catalog use packaged` switches back)")
    if result.new_instance_types:
        out.print("new instance types: " + ", ".join(f"{c}/{n}" for c, n in
                                                     result.new_instance_types[:20])
                  + (" …" if len(result.new_instance_types) > 20 else ""))
    if result.removed_instance_types:
        out.print("removed instance types: " + ", ".join(f"{c}/{n}" for c, n in
                                                         result.removed_instance_types[:20])
                  + (" …" if len(result.removed_instance_types) > 20 else ""))
    if result.price_changes:
        from rich.table import Table

        t = Table(title=f"{len(result.price_changes)} prices changed by more than 10%")
        for col in ("cloud", "instance", "region", "pricing", "old $/h", "new $/h", "change"):
            t.add_column(col)
        for pc in result.price_changes[:40]:
            t.add_row(pc.cloud, pc.instance_type, pc.region, pc.pricing,
                      f"{pc.old_usd_per_hour:,.3f}", f"{pc.new_usd_per_hour:,.3f}",
                      f"{pc.change_fraction:+.0%}")
        out.print(t)
