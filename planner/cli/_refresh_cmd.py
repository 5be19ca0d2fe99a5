"""`gpuplan catalog refresh`: fetch current prices into a new catalog, then say what changed."""

# No `from __future__ import annotations` in a command module: see planner/cli/_main.py

from typing import Annotated

import typer

from ._app import console, print_json, progress_on_stderr
from ._catalog_cmds import MAX_NAME_CHARS, REGION_NAME, _money
from ._tables import ESSENTIAL, OPTIONAL, Column, Wide, print_table
from ._values import split_csv


def refresh_cmd(
    cloud: Annotated[list[str] | None, typer.Option("--cloud", "--clouds", help="Clouds to refresh "
                     "(default aws,gcp,azure); others keep their rows.")] = None,
    regions: Annotated[list[str] | None, typer.Option("--regions", "--region",
                       help="Only these regions; every other offer is kept.")] = None,
    prune: Annotated[bool, typer.Option("--prune", help="Remove offers of the refreshed "
                     "clouds that the refresh looked for but no longer found (by default "
                     "they keep their old price and date).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the refresh's result (counts, "
                        "changes, warnings) as JSON for scripts.")] = False,
    wide: Wide = False,
) -> None:
    """Fetch current prices into a new catalog in your data directory, check it, and make
    it active (the previous one stays selectable). AWS (public bulk price files) and Azure
    (public Retail Prices API) need no credentials; GCP needs GOOGLE_CLOUD_API_KEY or
    application-default credentials and a project (GOOGLE_CLOUD_PROJECT, else gcloud's).
    Offers a refresh does not fetch keep their price and date."""
    from catalog import (
        CLOUDS,
        GpuplanError,
        UnknownNameError,
        active_catalog_name,
        refresh_catalog,
    )

    # names as `offers` and `plan` read them: AWS is aws
    clouds = [c.lower() for c in split_csv(cloud, "--cloud")] or list(CLOUDS)
    for c in clouds:
        if c not in CLOUDS:
            raise UnknownNameError("cloud", c, CLOUDS, hint=f"use one of {', '.join(CLOUDS)}")
    region_names = split_csv(regions, "--regions")
    for r in region_names:
        if len(r) > MAX_NAME_CHARS or not REGION_NAME.fullmatch(r):
            raise GpuplanError(f"{r[:MAX_NAME_CHARS]!r} is not a region name (lower-case "
                               f"letters, digits and '-', at most {MAX_NAME_CHARS} "
                               "characters, e.g. us-east-1). To fix: `gpuplan catalog info` "
                               "and `gpuplan offers` show the regions")
    before = active_catalog_name()
    try:
        with progress_on_stderr() as update:

            def progress(cloud_name: str, step: str, done: int, total: int) -> None:
                update(cloud_name, done, total, step)

            result = refresh_catalog(clouds=clouds, regions=region_names or None,
                                     progress=progress, prune=prune)
    except BaseException:
        # refresh_catalog switches catalogs before it returns: a Ctrl-C (or an error) after
        # the switch said "interrupted" alone, and the new catalog was active unannounced
        _say_if_applied(before)
        raise
    try:
        if json_out:
            print_json(result.to_dict())
            return
        _print_refresh(result, wide=wide)
    except BaseException:  # the summary was cut short, not the refresh: "interrupted" alone
        # read as a refresh that failed
        _say_if_applied(before)
        raise


def _say_if_applied(before: str) -> None:
    """On stderr, when a refresh that was stopped had already made its catalog active."""
    import sys

    from catalog import active_catalog_name

    from ._tables import one_line

    try:
        now = active_catalog_name()
        if now != before:
            print(one_line(f"note: the refresh was applied before it was stopped: {now} is now "
                           "the active catalog (`gpuplan catalog use previous` switches back)"),
                  file=sys.stderr, flush=True)
    except Exception:  # noqa: BLE001 -- the interrupt's own message follows either way
        pass


CHANGE_COLUMNS = (
    Column("cloud"), Column("instance", ESSENTIAL), Column("region", ESSENTIAL),
    Column("pricing", ESSENTIAL), Column("term", OPTIONAL),
    Column("old $/h", ESSENTIAL, align="right"), Column("new $/h", ESSENTIAL, align="right"),
    Column("change", align="right"),
)


def _print_refresh(result, *, wide: bool = False) -> None:
    out = console(fit=True)
    for c, reason in result.skipped.items():
        out.print(f"skipped {c}: {reason.removeprefix(c + ': ')}", markup=False)
    for w in result.warnings:
        out.print(f"warning: {w}", markup=False)
    out.print(f"refreshed {', '.join(result.refreshed)} → {result.name} (now active; "
              "`gpuplan catalog use previous` switches back)", markup=False)
    if result.removed_catalogs:  # a refresh's own older catalogs, past the newest three
        out.print("removed older refreshed catalogs (the newest 3 and the previous one are "
                  "kept): " + ", ".join(result.removed_catalogs), markup=False)
    kept = ", ".join(f"{c} {n}" for c, n in result.kept_unfetched.items() if n)
    out.print(f"{len(result.added)} offers added, {len(result.price_changes)} prices changed, "
              f"{len(result.removed)} removed" + (f"; kept unchanged (not fetched): {kept}"
                                                  if kept else ""), markup=False)
    for label, keys in (("new instance types", result.new_instance_types),
                        ("removed instance types", result.removed_instance_types)):
        if keys:
            out.print(f"{label}: " + ", ".join(f"{c}/{n}" for c, n in keys[:20])
                      + (f" and {len(keys) - 20} more" if len(keys) > 20 else ""),
                      markup=False)
    large = result.large_price_changes
    if large:
        print_table(CHANGE_COLUMNS, [
            (pc.cloud, pc.instance_type, pc.region, pc.pricing, pc.option,
             _money(pc.old_usd_per_hour, 3), _money(pc.new_usd_per_hour, 3),
             f"{pc.change_fraction:+.0%}")
            for pc in sorted(large, key=lambda c: -abs(c.change_fraction or 0))[:40]],
            title=f"{len(large)} prices changed by more than 10%"
            + (" (the 40 largest)" if len(large) > 40 else ""), wide=wide)
