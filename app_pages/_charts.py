"""Chart conventions every page shares: one colour per pricing model, and axes people can read.

An axis of dollars reads "$7k", "$70k", "$1.2M" at every tick (never a bare "7" that means
$70k on one tick and $7k on the next); durations read "12 h", "3 d"; message sizes "1 MiB".
Each axis is linear when its data spans less than a factor of ``LOG_ABOVE_RATIO``, and
logarithmic otherwise, with the ticks placed and labelled here rather than by plotly (whose log
axes label minor ticks with their leading digit only).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import plotly.graph_objects as go

import catalog

LOG_ABOVE_RATIO = 10.0  # max/min of the data above which an axis is logarithmic
MAX_TICKS = 9

# One colour per pricing model, in the catalog's order, whatever a filter leaves on screen.
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#e377c2",
            "#7f7f7f", "#bcbd22", "#d62728")
PRICING_COLORS: dict[str, str] = {p: _PALETTE[i % len(_PALETTE)]
                                  for i, p in enumerate(catalog.PRICING_MODELS)}
DEADLINE_COLOR = "#d62728"
# a legend in rows under the plot, from its left: beside it, long names took a phone's width
LEGEND_BELOW = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom",
                "xref": "container", "x": 0, "xanchor": "left"}
SHORT_LABEL_CHARS = 24  # of a category's name an axis shows (the hover shows it whole)


def pricing_label(pricing: str) -> str:
    """'on_demand' → 'on-demand', 'reserved_1y' → 'reserved 1y' (as people write them)."""
    return pricing.replace("on_demand", "on-demand").replace("_", " ")


PRICING_LABELS: dict[str, str] = {p: pricing_label(p) for p in catalog.PRICING_MODELS}
# The colours keyed by label too, for charts whose legend shows the label.
PRICING_LABEL_COLORS: dict[str, str] = {PRICING_LABELS[p]: c for p, c in PRICING_COLORS.items()}


# ---- tick labels -------------------------------------------------------------------------------

def _trim(x: float, digits: int) -> str:
    text = f"{x:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def usd_tick(x: float, extra: int = 0) -> str:
    """$0.05, $0.50, $2, $2.50, $950, $7k, $70k, $1.2M, $3B (``extra`` digits for close
    ticks, such as $0.035 next to $0.04)."""
    sign, a = ("-" if x < 0 else ""), abs(x)
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if a >= scale * 0.9995:
            return f"{sign}${_trim(a / scale, (2 if a / scale < 10 else 1) + extra)}{suffix}"
    if a >= 100 or a == 0 or (float(a).is_integer() and not extra):
        return f"{sign}${a:,.{extra}f}" if extra else f"{sign}${a:,.0f}"
    digits = 2 + extra
    text = f"{a:.{digits}f}"
    # a cent is too coarse below a dollar ($0.125 is not "$0.12"): add digits until the label
    # reads its own value within 1%
    while digits < 6 and abs(float(text) - a) > 0.01 * a:
        digits += 1
        text = f"{a:.{digits}f}"
    if digits > 2 or extra:
        text = text.rstrip("0").rstrip(".") if "." in text else text
        if "." in text and len(text.split(".")[1]) == 1:
            text += "0"
    return f"{sign}${text}"


def hours_tick_unit(hi_hours: float) -> tuple[float, str]:
    """Hours up to three days, days beyond: (hours per unit, suffix)."""
    return (1.0, " h") if hi_hours <= 72 else (24.0, " d")


def bytes_tick(x: float, extra: int = 0) -> str:
    for suffix, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if x >= scale:
            return f"{_trim(x / scale, 1 + extra)} {suffix}"
    return f"{x:,.0f} B"


# ---- tick positions ----------------------------------------------------------------------------

def linear_ticks(lo: float, hi: float) -> list[float]:
    """Round steps (1, 2, 2.5, 5 × 10^k) from lo to hi, at most MAX_TICKS of them."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / (MAX_TICKS - 2)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    n = int(math.floor((hi - first) / step + 1e-9)) + 1
    return [round(first + i * step, 10) for i in range(n)]


def log_ticks(lo: float, hi: float) -> list[float]:
    """1/2/5 × 10^k, as dense as fits in MAX_TICKS - 1 ticks, within [lo, hi]."""
    lo_exp, hi_exp = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    best: list[float] = []
    for mantissas in ((1,), (1, 3), (1, 2, 5), (1, 1.5, 2, 3, 5, 7)):
        ticks = [m * 10.0 ** e for e in range(lo_exp, hi_exp + 1) for m in mantissas
                 if lo <= m * 10.0 ** e <= hi]
        if len(ticks) >= MAX_TICKS:
            break
        best = ticks
    if not best:  # a range wider than MAX_TICKS decades: every few decades
        every = math.ceil((hi_exp - lo_exp) / MAX_TICKS)
        best = [10.0 ** e for e in range(lo_exp, hi_exp + 1, every) if lo <= 10.0 ** e <= hi]
    return best


def _distinct_labels(label: Callable[..., str], ticks: list[float]) -> list[str]:
    """Labels with as many digits as it takes for no two ticks to read the same."""
    for extra in range(4):
        texts = [label(t, extra) for t in ticks]
        if len(set(texts)) == len(texts):
            return texts
    return texts


def _padded(lo: float, hi: float, log: bool, pad: float) -> tuple[float, float]:
    if log:
        f = (hi / lo) ** pad
        return lo / f, hi * f
    d = (hi - lo) * pad or abs(hi) * 0.1 or 1.0
    return lo - d, hi + d


def readable_axis(fig: go.Figure, values: Iterable[float], *, axis: str = "y",
                  label: Callable[[float], str], title: str, log: bool | None = None,
                  from_zero: bool = False, scale: float = 1.0, pad: float = 0.06,
                  log_steps: Callable[[float, float], list[float]] = log_ticks) -> bool:
    """Set ``fig``'s ``axis`` ("x", "y", "y2") to cover ``values`` with labelled ticks.

    Ticks are computed in display units (``value / scale``: hours → days with scale 24) and
    labelled with ``label``. Linear unless the data spans more than LOG_ABOVE_RATIO (or ``log``
    says otherwise); ``from_zero`` starts a linear axis at 0 (bars). Returns whether it is log.
    """
    vals = [v / scale for v in values if v is not None and math.isfinite(v)]
    positive = [v for v in vals if v > 0]
    if not positive:
        return False
    lo, hi = (0.0 if from_zero else min(vals)), max(vals)
    if log is None:
        log = not from_zero and min(positive) > 0 and hi / min(positive) > LOG_ABOVE_RATIO
    if log:
        lo = min(positive)
    a, b = _padded(lo, hi, log, pad)
    if from_zero:
        a = 0.0
    if log:
        ticks = log_steps(a, b)
        rng = [math.log10(a * scale), math.log10(b * scale)]
    else:
        ticks = linear_ticks(a, b)
        rng = [a * scale, b * scale]
    settings = {"type": "log" if log else "linear", "range": rng, "title": {"text": title},
                "tickmode": "array", "tickvals": [t * scale for t in ticks],
                "ticktext": _distinct_labels(label, ticks), "showgrid": True}
    fig.update_layout({f"{axis[0]}axis{axis[1:]}": settings})
    return log


def usd_axis(fig: go.Figure, values: Iterable[float], *, axis: str = "y", title: str,
             **kw) -> bool:
    return readable_axis(fig, values, axis=axis, label=usd_tick, title=title, **kw)


# Durations people think in, in hours: quarter hours up to a year.
NICE_HOURS = (0.25, 0.5, 1, 2, 3, 6, 12, 24, 48, 72, 120, 168, 240, 336, 720, 1440, 2160,
              4320, 8760)


def duration_tick(h: float, extra: int = 0) -> str:
    """'0.5 h', '12 h', '1 d', '14 d': hours below a day, days from a day on."""
    return f"{_trim(h, 1 + extra)} h" if h < 24 else f"{_trim(h / 24, 1 + extra)} d"


def duration_log_ticks(lo: float, hi: float) -> list[float]:
    ticks = [h for h in NICE_HOURS if lo <= h <= hi]
    while len(ticks) >= MAX_TICKS:
        ticks = ticks[::2]
    return ticks or log_ticks(lo, hi)


def hours_axis(fig: go.Figure, values: Iterable[float], *, axis: str = "x", title: str,
               **kw) -> bool:
    """Wall-clock hours: on a log axis, ticks at durations people use ("6 h", "1 d", "7 d");
    on a linear one, steps of hours or of days (whichever the largest value needs)."""
    values = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    lo, hi = min(values), max(values)
    if kw.get("log", hi / lo > LOG_ABOVE_RATIO):
        return readable_axis(fig, values, axis=axis, title=title, log=True,
                             label=duration_tick, log_steps=duration_log_ticks,
                             **{k: v for k, v in kw.items() if k != "log"})
    scale, suffix = hours_tick_unit(hi)
    return readable_axis(fig, values, axis=axis, scale=scale, title=title,
                         label=lambda t, extra=0: f"{_trim(t, 1 + extra)}{suffix}", **kw)


def _pow2_ticks(lo: float, hi: float) -> list[float]:
    k0, k1 = math.ceil(math.log2(lo)), math.floor(math.log2(hi))
    every = max(1, math.ceil((k1 - k0 + 1) / MAX_TICKS))
    return [2.0 ** k for k in range(k0, k1 + 1, every)]


def bytes_axis(fig: go.Figure, values: Iterable[float], *, axis: str = "x", title: str) -> bool:
    return readable_axis(fig, values, axis=axis, label=bytes_tick, title=title, log=True,
                         log_steps=_pow2_ticks)


def titled(text: str, subtitle: str | None = None) -> dict:
    """A chart's title that fits a phone's width (plotly cuts a title, it does not wrap it):
    the words that name the chart, and what qualifies them (an accelerator, how to read the
    marks) on a line under it in smaller type."""
    return {"text": text, **({"subtitle": {"text": subtitle}} if subtitle else {})}


def short_labels(names: Iterable[str], most: int = SHORT_LABEL_CHARS) -> list[str]:
    """Each name at most ``most`` characters, for an axis of categories: a long one keeps its
    start and its end ("llama3-70b-sft-i…ablation"), where names of one family differ; two
    that still read the same are numbered, so that they stay two rows."""
    out: list[str] = []
    for name in map(str, names):
        short = name if len(name) <= most else \
            name[:most - 1 - most // 3] + "…" + name[len(name) - most // 3:]
        n = 2
        while short in out:
            short = f"{short[:most - 2 - len(str(n))]}… {n}"
            n += 1
        out.append(short)
    return out
