"""Small helpers several commands share, kept apart from the command modules so that a
command imports no other command's module for them: comma-separated option values, options
given empty, and the line saying which catalog priced a result."""

from __future__ import annotations

import datetime as dt

from ._flags import as_typed


def split_csv(values: list[str] | None, option: str | None = None) -> list[str]:
    """Accept both `--cloud aws --cloud gcp` and `--cloud aws,gcp`. With ``option``, a value
    that names nothing (`--cloud ''`, `--cloud ,`) is an error rather than "no filter", and so
    is an empty item beside names (`--gpu 'H100,,'`: a name left out, or a stray comma)."""
    from catalog import GpuplanError

    names = []
    for item in values or ():
        items = [v.strip() for v in item.split(",")]
        found = [v for v in items if v]
        if option is not None and not found:
            raise _empty(as_typed(option))
        if option is not None and len(found) < len(items):
            raise GpuplanError(f"{as_typed(option)} {item!r} has an empty item. To fix: remove "
                               "the extra comma")
        names.extend(found)
    return names


def comma_hint(names: list[str], option: str, resolve) -> None:
    """Refuse a name of ``names`` (from ``split_csv``) that ``resolve`` does not know but whose
    space-separated words it each does (`--gpu "H100 A10G"`), as two names to separate with a
    comma (``catalog.UnknownNameError`` says it, as for any list of names); anything else is
    left to the command (its "unknown name" error)."""
    from catalog import UnknownNameError

    for name in names:
        if len(name.split()) < 2 or _known(resolve, name):
            continue
        error = UnknownNameError("GPU", name, (), where=as_typed(option), resolves=resolve,
                                 listed=names)
        if error.spaced:
            raise error


def _known(resolve, name: str) -> bool:
    from catalog import GpuplanError

    try:
        resolve(name)
    except GpuplanError:
        return False
    return True


def _empty(option: str):
    from catalog import GpuplanError

    return GpuplanError(f"{option} is empty. To fix: give a value, or leave {option} out")


def not_empty(option: str, value: str | None) -> str | None:
    """``value``, after refusing '' (or spaces): an option given empty is an error, not "not
    given" (issue 16: `--overrides ''` silently read no overrides)."""
    if value is not None and not value.strip():
        raise _empty(option)
    return value


def catalog_banner(cat, today: dt.date | None = None, offers=None) -> str:
    """One line saying which catalog priced this, how old it is, and what to do about it;
    with ``offers`` (those printed, some), their dates and age rather than the catalog's."""
    from catalog import STALE_AFTER_DAYS, dates_of, price_dates, today_utc

    if offers:
        dates, age = dates_of(((o.cloud, o.as_of, o.as_of_approximate) for o in offers),
                              today or today_utc())
    else:
        age, dates = cat.age_days(today), price_dates(cat.provenance())
    line = f"Catalog: {cat.name} (prices as of {dates})"
    if cat.overrides_path:
        line += f"; overrides from {cat.overrides_path}"
    if age is not None and age > STALE_AFTER_DAYS:
        line += f". Prices are up to {age:,} days old"
        if cat.overrides_path:
            # overrides are already applied: telling the user to apply them is no help, and
            # they price only the rows they name
            line += " where the overrides set no rate"
        line += ": run `gpuplan catalog refresh` (AWS and Azure need no credentials)"
        if not cat.overrides_path:
            line += " or apply your own rates with --overrides"
    return line


def without_separators(value: str) -> str | None:
    """"write 250,000 as 250000" for a number typed with thousands separators (a number option
    said only "it takes a number in digits"); None for anything else."""
    import re

    text = value.strip()
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", text):
        return f"it takes digits without thousands separators: write {text} as " \
               f"{text.replace(',', '')}"
    return None


# Per command, the options whose value ``split_csv`` splits: several names go in one value,
# with commas (`estimate --gpu` and `launch --instance` take one name).
LIST_OPTIONS = {"offers": frozenset({"gpu", "cloud", "region", "pricing", "instance"}),
                "plan": frozenset({"gpu", "clouds", "regions", "pricing", "exclude"}),
                "refresh": frozenset({"cloud", "regions"})}


def spaced_list_fix(ctx, args: list[str]) -> str | None:
    """The fix for click's "Got unexpected extra argument(s) (gcp)" where the extra words
    follow a list option's value (`--cloud aws gcp`): that option with the words joined by
    commas. None for any other extra argument."""
    if ctx is None:
        return None
    names = LIST_OPTIONS.get(getattr(ctx, "info_name", None) or "", frozenset())
    lists = {opt: p for p in getattr(ctx.command, "params", ()) if p.name in names
             for opt in getattr(p, "opts", ())}
    for i, arg in enumerate(args[:-2]):
        if arg == "--":
            break
        if arg in lists:
            words = [args[i + 1]]
            for extra in args[i + 2:]:
                if extra.startswith("-"):
                    break
                words.append(extra)
            if len(words) > 1:
                return f"To fix: separate the names with commas: {arg} {','.join(words)}"
    return None
