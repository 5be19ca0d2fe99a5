"""Text for people: numbers with units, markdown that cannot be hijacked, and tables with human
column names, ``$`` on prices and "—" for a missing value (never ``None``).

Every string that did not come from this code (URL parameters, uploaded file names and
contents, error messages quoting them, job names) goes through ``md`` before it reaches
``st.markdown``/``st.error``/``st.caption``/``st.table`` (all of which render markdown, where
``![x](https://…)`` is an image, ``[x](…)`` a link, ``$…$`` maths and ``:red[x]`` colour), and
through ``plot_text`` before it reaches a plotly label (which renders ``<a href>``).

pandas is imported only by the table functions (and the planner only by ``plan_text``): the
Plan page draws its recommendation before either has loaded (issue 19, the app's cold start).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import streamlit as st

from app_pages._charts import PRICING_LABELS

if TYPE_CHECKING:
    import pandas as pd

MISSING = "—"


def missing(x: object) -> bool:
    """None, NaN, or pandas' NA/NaT in a table cell (what ``pd.isna`` says of a scalar),
    without importing pandas."""
    if x is None or type(x).__name__ in ("NAType", "NaTType"):
        return True
    try:
        return bool(x != x)  # NaN of any float type, numpy's NaT: unequal to themselves
    except (TypeError, ValueError):  # a list or an array is a value, not a missing one
        return False

# CommonMark lets any ASCII punctuation be escaped with a backslash; these are the ones that
# start markup in Streamlit's markdown (GFM, LaTeX, :colour[…], :emoji: and :material/…:).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&@])")


# GFM also turns bare "https://…", "www.…" and "user@host" into links, after escapes are
# resolved; a zero-width space after the scheme, "www" or "@" keeps them text.
_AUTOLINK = re.compile(r"(?i)(?:https?|ftp|mailto|www)(?=[:.])|@")
ZWSP = "\u200b"


def md(text: object) -> str:
    """``text`` shown literally in markdown: one line, every markup character escaped, no
    address turned into a link."""
    text = _AUTOLINK.sub(lambda m: m[0] + ZWSP, " ".join(str(text).split()))
    return _MD_SPECIAL.sub(r"\\\1", text)


def sentence(text: str) -> str:
    """``text`` with its first letter a capital, as a sentence starts (the planner's and the
    store's phrases start in lower case: they are also said after a colon)."""
    return text[:1].upper() + text[1:]


def plot_text(text: object) -> str:
    """``text`` shown literally in a plotly label (plotly renders a subset of HTML)."""
    return html.escape(str(text), quote=False)


# ---- numbers -----------------------------------------------------------------------------------

def count(n: float) -> str:
    """``planner.model.format_count``: 50e9 → '50B', 1.5e12 → '1.5T'."""
    from planner.model import format_count

    return format_count(n)


def _below_shown(x: float, least: float, prefix: str = "") -> str | None:
    from planner.model import below_shown  # the one rule for figures below their digits

    return below_shown(x, least, prefix)


def usd_digits(x: float) -> int:
    """The decimals an amount shows by default: none from $100, cents below, four below one
    cent (a $0.0084 run read "$0", and "raise the budget to $0")."""
    x = abs(x)  # 99.995 is "$100" (it read "$100.00" beside 100's "$100")
    return 0 if round(x, 2) >= 100 else 2 if x >= 0.01 or x == 0 else 4


def usd(x: float | None, digits: int | None = None) -> str:
    """'$20,570', '$0.31', '$0.0084'; ``digits`` fixes the decimals."""
    if missing(x) or not math.isfinite(x):  # "$inf" is no amount of money
        return MISSING
    if digits is None and (bound := _below_shown(x, 0.0001, "$")):  # not "$0.0000", "$1e-05"
        return bound
    digits = usd_digits(x) if digits is None else digits
    x = x + 0.0  # -0.0 is "$0.00", not "$-0.00"
    return f"-${-x:,.{digits}f}" if x < 0 else f"${x:,.{digits}f}"


def usd_at_least(x: float) -> float:
    """``x`` rounded up to the decimals ``usd`` shows: a budget to raise to must cover it."""
    scale = 10 ** usd_digits(x)
    return math.ceil(x * scale - 1e-9) / scale


def hours(h: float) -> str:
    """A duration for captions and help text, as the CLI writes it (``format_hours``: minutes
    below an hour, "36.0 h" below two days, "217 h (9.0 d)" beyond): the app's own rule added
    days from a day and wrote "217.0 h (9.0 d)" beside the CLI's "217 h (9.0 d)"."""
    from planner.model import format_hours  # loaded already: only plan pages show hours

    return format_hours(h)


def _unit(h: float) -> tuple[float, str]:
    """(hours per unit, unit) for a duration like ``h``: the unit the CLI picks
    (``planner.model.duration_unit``: the card's metric said "0.1 h" beside its help's
    "6.0 min"), days written out."""
    from planner.model import duration_unit  # loaded already: only plan pages show durations

    return _HOURS_PER[duration_unit(h)[1]]


_HOURS_PER = {"s": (1 / 3600, " s"), "min": (1 / 60, " min"), "h": (1.0, " h"),
              "d": (24.0, " days")}


def column_like(hours: list[float]) -> float:
    """The duration whose unit a column of ``hours`` is shown in (one unit per table: "118.5"
    hours beside "3.5–6.9 days"): the first row's, as its card shows it, or the shortest's
    where that unit would read the shortest as "0.0"."""
    per, _ = _unit(hours[0])
    return hours[0] if min(hours) / per >= 0.05 else min(hours)


def unit_name(like: float) -> str:
    """'h', 'days', 'min' or 's': the unit ``duration(like)`` writes."""
    return _unit(like)[1].strip()


def in_unit(h: float, like: float) -> float:
    """``h`` in the unit of ``duration(like)``."""
    return h / _unit(like)[0]


def duration(h: float) -> str:
    """Short enough for a metric: '36.0 h' up to two days, '13.5 days' beyond, '4.2 min'
    below 0.1 h and '3.0 s' below a minute (a short run read "0.0 h", then "0.0 min")."""
    per, unit = _unit(h)
    return f"{h / per:,.1f}{unit}"


def duration_range(lo: float, hi: float, like: float | None = None) -> str:
    """'30.3–60.0 h', '9.8–19.6 days': a P10–P90 range in the unit ``duration`` picks for
    ``like`` (the expected time it goes with; default the upper end)."""
    per, unit = _unit(hi if like is None else like)
    return f"{lo / per:,.1f}–{hi / per:,.1f}{unit}"


def amount(x: float) -> str:
    """A count such as GPU-hours: '1,234', '7.5', '0.012' (a small job's read '0'); judged on
    the figure as shown (9.96 read "10.0" beside 10's "10")."""
    if bound := _below_shown(x, 0.001):  # ".2g" wrote "1e-05"
        return bound
    return f"{x:,.0f}" if abs(x) >= 9.95 else f"{x:,.1f}" if abs(x) >= 0.095 or x == 0 \
        else f"{x:.2g}"


def _amount_digits(x: float) -> int:
    return 0 if abs(x) >= 9.95 else 1


def figure_decimals(values, least: Callable[[float], int]) -> int:
    """The decimals a column of figures shows: those ``least`` gives its smallest non-zero
    figure (``usd_digits``: cents below $100, as the card), and at least two significant
    digits of it — a small job's costs read "$0.00" in every row, then "$0.0009"."""
    small = min((abs(v) for v in values if not missing(v) and v != 0 and math.isfinite(v)),
                default=None)
    if small is None:
        return least(0.0)
    return max(least(small), 1 - math.floor(math.log10(small)))


def usd_range(lo: float, hi: float, *, markdown: bool = False) -> str:
    """'$222–$440', '$0.0060–$0.0115': both ends with the decimals of the smaller
    (``markdown``: as ``usd_md`` writes them)."""
    digits = usd_digits(min(abs(lo), abs(hi)))
    text = usd_md if markdown else usd
    return f"{text(lo, digits)}–{text(hi, digits)}"


FIXED_COST = "the same whatever the run's length (whole terms)"


def cost_range(p: dict, *, markdown: bool = False) -> str:
    """A plan's P10–P90 of cost: ``FIXED_COST`` for a commitment, whose whole terms cost the
    same however long the run takes (it read "$4,252,572–$4,252,572")."""
    lo, hi = p["total_cost_usd_p10"], p["total_cost_usd_p90"]
    return FIXED_COST if p.get("commitment") and hi - lo < 0.5 else \
        usd_range(lo, hi, markdown=markdown)


def pct(x: float | None, digits: int = 0) -> str:
    return MISSING if missing(x) else f"{x:.{digits}%}"


def chance(p: float | None, *, below: float | None = None) -> str:
    """A probability as ``planner.model.format_chance`` shows it ("would cost less … with
    probability 100%" for 99.97% read as no risk at all); ``below``: a threshold it misses,
    kept visibly missed."""
    if missing(p):
        return MISSING
    from planner.model import format_chance  # loaded already where a plan is shown

    return format_chance(p, below=below)


def duration_beside(h: float, other: float) -> str:
    """``duration(h)``, with two decimals where one would read the same as ``other``'s (a
    plan 1.04 h long past a 1.0 h deadline read "1.0 h"; 96.4 h past 96 h read "4.0 days")."""
    text = duration(h)
    if text == duration(other) and h != other:
        return f"{h:,.2f} h" if h < 48 else f"{h / 24:,.2f} days"
    return text


def usd_md(x: float | None, digits: int | None = None) -> str:
    """A dollar amount for markdown: ``\\$`` so that two amounts on a line are not maths."""
    return usd(x, digits).replace("$", r"\$")


# ---- plans -------------------------------------------------------------------------------------

def plan_text(p: dict) -> str:
    """A candidate's parallel plan as every plan is written (``ParallelPlan.__str__``)."""
    from planner.model import ParallelPlan

    return str(ParallelPlan.from_dict(p["plan"]))


def regions(p: dict) -> list[str]:
    """Every region with this configuration at this price (``regions``), else ``region``."""
    return list(p.get("regions") or [p["region"]])


def regions_text(p: dict, limit: int = 3) -> str:
    """'us-east-1, us-east-2 +3 more': the regions of an offer, the first ``limit`` named."""
    names = regions(p)
    more = f" +{len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def config_line(p: dict) -> str:
    """'5× Standard_ND96asr_v4 (40× A100-SXM4-40GB) · azure eastus, westus2 · spot'."""
    return (f"{p['nodes']:,}× {p['instance_type']} ({p['gpus']:,}× {p['accelerator']}) · "
            f"{p['cloud']} {regions_text(p)} · "
            f"{PRICING_LABELS.get(p['pricing'], p['pricing'])}")


def range_line(p: dict) -> str:
    """'P10–P90: 30.3–60.0 h, $222–$440' (the model's range and interruptions together);
    a commitment's cost 'the same whatever the run's length (whole terms)'."""
    wall = duration_range(p["wall_clock_hours_p10"], p["wall_clock_hours_p90"],
                          p["wall_clock_hours"])
    cost = cost_range(p)
    return f"P10–P90: {wall}, " + (f"cost {cost}" if cost == FIXED_COST else cost)


# The kinds of warning a plan carries, by how the planner's text starts or what it names.
WARNING_KINDS = (("capacity:", "capacity"), ("commitment:", "commitment"),
                 ("flagged price", "flagged price"), ("the pipeline bubble", "pipeline bubble"),
                 ("the global batch", "batch"))


def warning_kind(text: str) -> str:
    """'capacity', 'commitment', 'flagged price', 'pipeline bubble', 'batch' or 'note'."""
    low = text.lower()
    return next((kind for start, kind in WARNING_KINDS if low.startswith(start)), "note")


def warning_text(text: str) -> str:
    """The warning without the kind the planner put in front ('capacity: 11 spot …' →
    '11 spot …'), for a line that names the kind itself."""
    head, sep, rest = text.partition(": ")
    if sep and head.lower() in ("capacity", "commitment"):
        return rest
    if warning_kind(text) == "flagged price" and "): " in text:  # "flagged price used (…): "
        return text.partition("): ")[2]
    return text


# candidate_row's columns, in its order: the CSV's header even when no plan is listed
CANDIDATE_ROW_COLUMNS = (
    "cloud", "region", "regions", "instance_type", "accelerator", "nodes", "gpus", "pricing",
    "usd_per_hour_cluster", "total_cost_usd", "total_cost_usd_p10", "total_cost_usd_p90",
    "wall_clock_hours", "wall_clock_hours_p10", "wall_clock_hours_p90", "gpu_hours",
    "deadline_probability", "expected_interruptions", "commitment_terms",
    "commitment_term_hours", "effective_usd_per_hour", "mfu", "memory_per_gpu_gib",
    "meets_deadline", "plan", "price_as_of", "price_flags", "warnings")


_ROW_NUMBERS = ("usd_per_hour_cluster", "total_cost_usd", "total_cost_usd_p10",
                "total_cost_usd_p90", "wall_clock_hours", "wall_clock_hours_p10",
                "wall_clock_hours_p90", "gpu_hours", "deadline_probability",
                "expected_interruptions")


def candidate_row(p: dict) -> dict:
    """One flat row for a candidate plan: the table's and the CSV's (machine names, numbers
    as the planner gave them: rounded to cents and tenths, a $0.0009 job read "0.0" in the
    CSV); its keys are CANDIDATE_ROW_COLUMNS."""
    c = p.get("commitment") or {}
    return {"cloud": p["cloud"], "region": p["region"],
            "regions": " ".join(regions(p)), "instance_type": p["instance_type"],
            "accelerator": p["accelerator"], "nodes": p["nodes"], "gpus": p["gpus"],
            "pricing": p["pricing"], **{k: p[k] for k in _ROW_NUMBERS},
            "commitment_terms": c.get("terms"), "commitment_term_hours": c.get("term_hours"),
            "effective_usd_per_hour": c["effective_usd_per_hour"] if c else None,
            "mfu": p["mfu"], "memory_per_gpu_gib": p["memory_per_gpu_gib"],
            "meets_deadline": p["meets_deadline"], "plan": plan_text(p),
            "price_as_of": p["price_as_of"], "price_flags": ",".join(p["price_flags"]),
            "warnings": " | ".join(p["warnings"])}


# ---- tables ------------------------------------------------------------------------------------

# kind → how a cell is shown by the browser (interactive tables: numbers stay numbers, so a
# column still sorts as one) and by this module (static tables).
FORMAT: dict[str, tuple[str, float]] = {  # NumberColumn (format, step: the decimals shown)
    "usd2": ("dollar", 0.01), "usd3": ("dollar", 0.001),
    "usd4": ("dollar", 0.0001), "int": ("localized", 1), "num1": ("localized", 0.1),
    "num2": ("localized", 0.01), "pct": ("percent", 0.01), "pct1": ("percent", 0.001),
}
# kind → (format, the decimals of a figure): the column shows ``figure_decimals`` of its
# figures, so that each row keeps figures and reads as the card above does
FIGURES: dict[str, tuple[str, Callable[[float], int]]] = {
    "usd": ("dollar", usd_digits), "amount": ("localized", _amount_digits)}
CELL: dict[str, Callable[[object], str]] = {
    "text": str,
    "usd": usd,  # cents below $100: a $0.31 job read "$0"
    "amount": amount,
    "usd2": lambda v: usd(v, 2),
    "usd3": lambda v: usd(v, 3),
    "usd4": lambda v: usd(v, 4),
    "int": lambda v: f"{v:,.0f}",
    "num1": lambda v: f"{v:,.1f}",
    "num2": lambda v: f"{v:,.2f}",
    "pct": lambda v: pct(v),
    "pct1": lambda v: pct(v, 1),
    # a probability: text, so 0.99996 is "> 99.99%", not the "100.0%" a percent column rounds
    # it to (the card above said "> 99.99%"); the column sorts as text
    "chance": lambda v: chance(float(v)),
    "pricing": lambda v: PRICING_LABELS.get(str(v), str(v)),
    "list": lambda v: ", ".join(map(str, v)) if isinstance(v, list | tuple) else str(v),
}


def _present(value: object) -> bool:
    if isinstance(value, list | tuple):
        return len(value) > 0
    return not missing(value) and value != ""


def _cells(df: pd.DataFrame, columns: Mapping[str, tuple[str, str]]) -> pd.DataFrame:
    """``df``'s ``columns`` in order; text kinds as display text, None where missing."""
    keep = [c for c in columns if c in df.columns]
    data = df[keep].copy()
    for c in keep:
        kind = columns[c][1]
        if kind not in FORMAT and kind not in FIGURES:
            data[c] = data[c].map(lambda v, f=CELL[kind]: f(v) if _present(v) else None)
    return data


def show_table(df: pd.DataFrame, columns: Mapping[str, tuple[str, str]], *, key: str,
               wide: tuple[str, ...] = (), height: int | str = "auto") -> None:
    """An interactive table (sortable, scrollable) of ``df``'s ``columns`` (name → (heading,
    kind)) in that order: numbers formatted by the browser ("$1,234", "54.8%"), a missing
    value "—"; ``wide`` columns get room for long text. Fast for the catalog's 10,000s of rows.
    """
    import pandas as pd

    data = _cells(df, columns)
    config = {}
    for c in data.columns:
        label, kind = columns[c]
        width = "large" if c in wide else None
        if kind in FIGURES or kind in FORMAT:
            if kind in FIGURES:
                fmt, least = FIGURES[kind]
                step = 10.0 ** -figure_decimals(pd.to_numeric(data[c], errors="coerce"), least)
            else:
                fmt, step = FORMAT[kind]
            # rounded here to the digits shown: the browser cuts them off ($318.52 → "$318")
            data[c] = pd.to_numeric(data[c], errors="coerce").round(_decimals(step))
            config[c] = st.column_config.NumberColumn(label, format=fmt, step=step,
                                                      width=width)
        else:
            config[c] = st.column_config.TextColumn(label, width=width)
    st.dataframe(data, hide_index=True, key=key, column_config=config, height=height,
                 placeholder=MISSING)


def _decimals(step: float) -> int:
    """0.01 → 2, 1 → 0: the decimals a NumberColumn step shows."""
    return max(0, round(-math.log10(step)))


def show_static_table(df: pd.DataFrame, columns: Mapping[str, tuple[str, str]]) -> None:
    """A static table that shows every cell in full, wrapping long text (as the HTML report
    does): for the few rows of a team allocation. Cells are escaped markdown."""
    import pandas as pd

    data = _cells(df, columns)  # text kinds are text already; numbers are formatted here

    def shown(v, kind: str) -> str:
        return md(CELL[kind](v) if kind in FORMAT or kind in FIGURES else v) \
            if _present(v) else MISSING

    out = pd.DataFrame({columns[c][0]: [shown(v, columns[c][1]) for v in data[c]]
                        for c in data.columns})
    st.table(out, hide_index=True)
