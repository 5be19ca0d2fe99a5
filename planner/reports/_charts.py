"""The PDF report's two charts, drawn with matplotlib's object API (no pyplot, so no global
state): a Gantt timeline of the jobs and a monthly burn chart, saved into the PDF by ``_pdf``.
The HTML report draws the same charts as SVG without matplotlib (``_svg``), so only the PDF
needs the ``report`` extra."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import warnings

from catalog import install_hint

from ..model import PlannerError
from ._svg import MAX_LABEL_PX, TEAM_COLOURS, _fit


def _mpl():
    # The charts draw on a bare Figure, never through pyplot, so no backend is used; but
    # importing matplotlib validates MPLBACKEND, and a bad one (MPLBACKEND=bogus) was a
    # traceback after the whole plan had run. It is left out while matplotlib loads.
    saved = os.environ.pop("MPLBACKEND", None)
    # A matplotlibrc that is not UTF-8 (in the working folder, or MATPLOTLIBRC's) fails the
    # import with a bare UnicodeDecodeError after a log line naming the file: the name is
    # kept for the error, the log line dropped (one error, not a warning and a traceback).
    undecodable = _UndecodableConfig()
    logger = logging.getLogger("matplotlib")
    logger.addFilter(undecodable)
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise PlannerError("the PDF report draws its charts with matplotlib, which is not "
                           f"installed. To fix: {install_hint('report')}, or use "
                           "--format html, md or csv") from None
    except UnicodeDecodeError as exc:
        where = os.path.abspath(undecodable.fname or "matplotlibrc")
        raise PlannerError(f"matplotlib's configuration file {where} is not UTF-8 text "
                           f"(byte 0x{exc.object[exc.start:exc.start + 1].hex()} at offset "
                           f"{exc.start:,}), so the PDF report's charts cannot be drawn. To "
                           "fix: correct or remove that file (or point MATPLOTLIBRC at a good "
                           "one), or use --format html, md or csv") from None
    finally:
        logger.removeFilter(undecodable)
        if saved is not None:
            os.environ["MPLBACKEND"] = saved
    return matplotlib, Figure


class _UndecodableConfig(logging.Filter):
    """Drops matplotlib's "Cannot decode configuration file %r" record, keeping the file."""

    fname: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Cannot decode configuration file") and record.args:
            self.fname = str(record.args[0])
            return False
        return True


@contextlib.contextmanager
def quiet_glyphs():
    """A job named with an emoji renders as a box; that is no reason to print a warning."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font")
        yield


def _plain(text: str) -> str:
    """Tick labels and legends go through mathtext, where a pair of "$" starts maths."""
    return text.replace("$", r"\$")


def _t(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%d %H:%M")


def _d(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _label(text: str) -> str:
    """A job or team name cut as the HTML timeline cuts its labels: a 200-character name left
    the axes no width (constrained_layout gave up with a warning) and ran off the page."""
    return _plain(_fit(text, MAX_LABEL_PX))


def gantt_figure(allocation):
    _, Figure = _mpl()  # first: a missing matplotlib is the PlannerError that says what to do
    import matplotlib.dates as mdates

    jobs = allocation.jobs
    fig = Figure(figsize=(10, 1.2 + 0.32 * len(jobs)), layout="constrained")
    ax = fig.add_subplot()
    teams = list(dict.fromkeys([*allocation.by_team, *(j["team"] for j in jobs)]))
    for i, j in enumerate(jobs):
        y = len(jobs) - 1 - i
        lo, hi = mdates.date2num(_d(j["earliest_start"])), mdates.date2num(_d(j["deadline"]))
        ax.barh(y, hi - lo, left=lo, height=0.8, color="#EEEEEE", edgecolor="#BBBBBB",
                linewidth=0.5)
        s, e = mdates.date2num(_t(j["start"])), mdates.date2num(_t(j["end"]))
        colour = TEAM_COLOURS[teams.index(j["team"]) % len(TEAM_COLOURS)]
        ax.barh(y, e - s, left=s, height=0.5, color=colour)
        ax.plot([hi, hi], [y - 0.4, y + 0.4], color="#8B0000", linewidth=1.2)
    ax.set_yticks(range(len(jobs)), [_label(j["job"]) for j in reversed(jobs)], fontsize=8)
    ax.xaxis_date()
    # At most 7 dates, slanted (fixed ticks so that the slant holds with matplotlib 3.8): with
    # long names the axes are narrow, and the default of up to ~10 upright dates ran together.
    first = min(min(_d(j["earliest_start"]), _t(j["start"])) for j in jobs) if jobs else None
    last = max(max(_d(j["deadline"]), _t(j["end"])) for j in jobs) if jobs else None
    if first is not None and last > first:
        ticks = [t for t in mdates.AutoDateLocator(minticks=3, maxticks=7).tick_values(first, last)
                 if mdates.date2num(first) <= t <= mdates.date2num(last)]
        ax.set_xticks(ticks, [f"{mdates.num2date(t):%Y-%m-%d}" for t in ticks], fontsize=8,
                      rotation=30, ha="right")
    else:
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%Y-%m-%d"))
        ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel("date (UTC)", fontsize=8)
    ax.grid(axis="x", color="#DDDDDD", linewidth=0.5)
    ax.set_axisbelow(True)
    from matplotlib.patches import Patch

    handles = [Patch(color=TEAM_COLOURS[k % len(TEAM_COLOURS)], label=_label(t))
               for k, t in enumerate(teams)]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1),
              title="team", title_fontsize=8)
    ax.set_title("Timeline (grey: earliest start → deadline, red: deadline)", fontsize=10)
    return fig


def burn_figure(allocation):
    _, Figure = _mpl()
    months = list(allocation.by_month)
    cost = [allocation.by_month[m]["cost_usd"] for m in months]
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    ax = fig.add_subplot()
    x = range(len(months))
    ax.bar(x, cost, color="#4C72B0", label="planned spend")
    budgets = [(i, allocation.by_month[m].get("budget_usd")) for i, m in enumerate(months)]
    budgets = [(i, b) for i, b in budgets if b is not None]
    if budgets:
        ax.scatter([i for i, _ in budgets], [b for _, b in budgets], marker="_", s=900,
                   color="#C44E52", linewidths=2, label="monthly budget", zorder=3)
    ax.set_xticks(list(x), months, fontsize=8)
    ax.set_ylabel("USD per month", fontsize=8)
    ax.tick_params(axis="y", labelsize=8)
    ax.yaxis.set_major_formatter(lambda v, _p: f"${v:,.0f}")
    cum = ax.twinx()
    running, total = [], 0.0
    for c in cost:
        total += c
        running.append(total)
    cum.plot(list(x), running, color="#55A868", marker="o", label="cumulative")
    cum.set_ylim(bottom=0)
    cum.tick_params(axis="y", labelsize=8)
    cum.yaxis.set_major_formatter(lambda v, _p: f"${v:,.0f}")
    cum.set_ylabel("cumulative USD", fontsize=8)
    lines = ax.get_legend_handles_labels()
    more = cum.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="upper center",
              bbox_to_anchor=(0.5, -0.1), ncol=3, frameon=False)
    ax.set_title("Monthly burn (cost pro rata of running hours)", fontsize=10)
    return fig
