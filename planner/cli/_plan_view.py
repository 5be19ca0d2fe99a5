"""Rendering a PlanResult for people: the recommendation, top plans, frontier, side by side."""

from __future__ import annotations

import math

from ..model import (
    MAX_DEADLINE_HOURS,
    MAX_PLAN_GPUS,
    duration_unit,
    format_amount,
    format_chance,
    format_expected,
    format_hours,
    format_hours_range,
    format_requirement,
    format_usd,
    format_usd_at_least,
)
from ._app import console, print_hanging
from ._flags import flag_for, say_fields

_hours = format_hours  # whole hours and days from 48 h, minutes and seconds below an hour


FRONTIER_ROWS = 15  # frontier plans a table shows (spread over the whole frontier)
_CLASS = {"standard": "std", "convertible": "conv"}  # AWS RI offering classes, short


def _regions(c) -> str:
    return c.offer.region + (f" +{len(c.regions) - 1}" if len(c.regions) > 1 else "")


def _pricing(o) -> str:
    """The pricing model, with a reservation's class and upfront option ("reserved_1y
    conv/all"): without them three reservations of one instance read as one plan thrice."""
    if not o.offering_class and not o.upfront:
        return o.pricing
    return f"{o.pricing} {_CLASS.get(o.offering_class, o.offering_class or '')}/" \
        f"{o.upfront or '?'}"


def _table_hours(h: float, per_hour: float = 1.0) -> str:
    # a decimal below 100 h: on the frontier 4.4 h and 4.0 h both read "4", so a dearer plan
    # looked no faster; below an hour two significant digits (0.04 read "0.0", and 0.135 h
    # "0.1" beside 0.099). ``per_hour``: the column's unit (``_time_column``)
    x = h * per_hour
    if 0 < x < 0.001:  # .2g wrote "9e-05" beside the card's "0.32 s"
        return "< 0.001"
    return f"{x:,.1f}" if 1 <= x < 100 else format_amount(x)


_UNIT_WORDS = {"s": "seconds", "min": "minutes"}  # the table's unit, as its header says it


def _time_column(rows) -> tuple[float, str]:
    """(per hour, header) of a table's time column: one unit for every row, the one the card
    would give its slowest P90 — seconds and minutes where all are that short (a 7-second run
    read "0.002 (0.0028)" hours, and 0.3 s "9e-05"), else hours (days read no better in a
    column of node counts' hours)."""
    slowest = max((c.wall_clock_hours_p90 for c in rows
                   if math.isfinite(c.wall_clock_hours_p90)), default=math.nan)
    per_hour, unit = duration_unit(slowest) if math.isfinite(slowest) else (1.0, "h")
    return (per_hour, f"{_UNIT_WORDS[unit]} (P90)") if unit in _UNIT_WORDS else \
        (1.0, "hours (P90)")


def candidate_table(title: str, rows, *, width: int | None,
                    group: tuple[str, list[str]] | None = None,
                    below: float | None = None) -> str:
    """Top plans or frontier, one line per plan in ``width`` columns (None: every column);
    ``group``: (its name, each row's value), a first column (the best plan per accelerator);
    ``below``: the minimum probability asked, which a row's P below it never reads as met.

    What goes first when the terminal is narrow: the cloud (the instance type names it),
    then recomputation (both are in the recommendation card and in --json); instance, region,
    node count, pricing, cost, hours and the probability are never left out (without the node
    count two distinct plans of one instance read as the same row; without the hours a
    cost/time frontier at 60 columns was a list of rising costs)."""
    from ._tables import ESSENTIAL, OPTIONAL, Column, render_table

    per_hour, time_header = _time_column(rows)
    columns = (Column("cloud", OPTIONAL), Column("region", ESSENTIAL),
               Column("instance", ESSENTIAL), Column("n", ESSENTIAL, align="right"),
               Column("pricing", ESSENTIAL), Column("cost $", ESSENTIAL, align="right"),
               Column(time_header, ESSENTIAL, align="right"),
               Column("P", ESSENTIAL, align="right"), Column("plan"),
               Column("recompute", OPTIONAL))
    cells = [(c.offer.cloud, _regions(c), c.offer.instance_type, c.nodes, _pricing(c.offer),
              format_usd(c.cost_usd).lstrip("$"), f"{_table_hours(c.wall_clock_hours, per_hour)}"
              f" ({_table_hours(c.wall_clock_hours_p90, per_hour)})",
              format_chance(c.deadline_probability, below=below), c.estimate.plan.layout(),
              c.estimate.plan.recompute) for c in rows]
    if group is not None:  # in front, in place of a column of the same name (`--by cloud`
        # showed the cloud twice)
        keep = [k for k, c in enumerate(columns) if c.header != group[0]]
        columns = (Column(group[0], ESSENTIAL), *(columns[k] for k in keep))
        cells = [(g, *(row[k] for k in keep)) for g, row in zip(group[1], cells, strict=True)]
    return render_table(columns, cells, width=width, title=title, gap=" ", fit=True).text


def frontier_rows(frontier, recommendation) -> list:
    """At most ``FRONTIER_ROWS`` plans of the frontier (cheapest first), spread evenly over
    all of it and including the recommendation where it lies on it: its 15 cheapest plans
    were often all too slow, never reaching the plan recommended."""
    rows = list(frontier)
    n = len(rows)
    if n <= FRONTIER_ROWS:
        return rows
    picks = {round(i * (n - 1) / (FRONTIER_ROWS - 1)) for i in range(FRONTIER_ROWS)}
    if recommendation is not None:
        key = _key(recommendation)
        at = next((i for i, c in enumerate(rows) if _key(c) == key), None)
        if at is not None and at not in picks:
            picks.remove(min(sorted(picks - {0, n - 1}), key=lambda i: abs(i - at)))
            picks.add(at)
    return [rows[i] for i in sorted(picks)]


def _key(c) -> tuple:
    return (c.offer.key, c.nodes)


def _beyond(c, constraints) -> str:
    """"; beyond the budget and the quotas": the limits plan ``c`` breaks (not every limit
    given: a 1,016-GPU plan was "beyond the quotas" of 100,000)."""
    o, q = c.offer, constraints.quotas
    broken = [w for w, over in (
        ("the budget", constraints.budget_usd is not None
         and c.cost_usd > constraints.budget_usd),
        ("the quotas", q is not None and c.gpus > q.limit(o.cloud, o.region, c.accelerator)))
        if over]
    return "; beyond " + " and ".join(broken or ["the limits"])


def _budget_to(need: float, budget: float) -> str:
    """The budget that covers ``need``: ``format_usd_at_least``, or where the need and the
    budget read the same whole dollars, the need in cents rounded up, as the reason quotes it
    (``_select._usd_need``): "$25,381.05" for $25,381.0407 beside a budget of $25,381.04."""
    if format_usd(need) != format_usd(budget):
        return format_usd_at_least(need)
    return format_usd_at_least(need, cents=True)


def infeasible_fixes(inf, constraints) -> str:
    """What would make some plan feasible, as the flags to change: the limits that bind
    (a probability is lowered, the others raised), and where speed is short (nothing in time)
    the GPU limit the fastest plan is at and a batch that caps data parallelism; the user's
    pins, and the filters. A budget no plan fits at any duration must be raised: "extend
    --deadline or raise --max-gpus" cannot help there, and where the deadline binds too both
    must change ("and", not "or": either alone left the plan infeasible)."""
    c = constraints
    slow = "deadline" in inf.binding or "min_probability" in inf.binding
    shut = (c.budget_usd is not None and "budget" in inf.binding
            and inf.cheapest.cost_usd > c.budget_usd)
    fastest = inf.fastest
    # no deadline the CLI takes helps where even the fastest plan's P10 is beyond the latest
    # (3,650d: "extend --deadline" was all it said)
    speed = ["extend --deadline"] if fastest.estimate.wall_clock.p10 <= MAX_DEADLINE_HOURS \
        else []
    if slow and fastest.gpus + fastest.gpus // fastest.nodes > c.max_gpus < MAX_PLAN_GPUS:
        speed.append(f"raise --max-gpus (now {c.max_gpus:,})")
    if slow and not speed:  # the workload itself is too large for any plan in 10 years
        speed.append("train on fewer --tokens or a smaller model (no deadline or GPU count "
                     "gpuplan takes is enough)")
    est = fastest.estimate
    gbt = est.workload.global_batch_tokens
    if slow and gbt is not None and est.plan.micro_batches == 1:
        # one micro-batch per rank: the given batch is what stops more data parallelism (8,192
        # tokens, one sequence: "the fastest takes 1,217.8 h" never named the batch)
        seqs = est.tokens_per_step // est.workload.seq_len
        speed.append(f"raise --global-batch-tokens (now {gbt:,}: {seqs:,} "
                     f"sequence{'s' if seqs != 1 else ''} a step, which caps data parallelism)")
    limits = []
    for limit in inf.binding:
        if limit == "min_probability":
            limits.append("lower --min-probability")
        elif limit == "quotas":  # a file: the fix is a limit inside it
            limits.append(f"raise a quota in {flag_for(limit) or limit}")
        elif limit == "budget" and not shut and "budget" in inf.relaxed:
            # the amount, as where no plan fits it ("raise --budget" alone left it to guess)
            limits.append(f"raise {flag_for(limit) or limit} to "
                          f"{_budget_to(inf.relaxed['budget'].cost_usd, c.budget_usd)}")
        elif limit not in ("deadline", "budget") or (limit == "budget" and not shut):
            limits.append(f"raise {flag_for(limit) or limit}")
    pins = est.workload.pins.as_dict()
    if pins:
        limits.append("change or drop the pins (" + ", ".join(
            f"{flag_for(k) or k} {v}" for k, v in pins.items()) + ")")
    rest = " or allow more clouds, regions, GPU types or pricing models"
    if shut:
        if "lower --min-probability" in limits:  # it too makes up for speed: "and also" it
            limits.remove("lower --min-probability")
            speed.append("lower --min-probability")
        flag = flag_for("budget") or "budget"
        in_time = inf.relaxed.get("budget")  # the cheapest plan in time, where one is
        least = _budget_to(inf.cheapest.cost_usd, c.budget_usd)
        needed = (f"raise {flag} to {_budget_to(in_time.cost_usd, c.budget_usd)} (the "
                  f"cheapest plan in time; none costs less than "
                  f"{format_usd(inf.cheapest.cost_usd)} at any duration)"
                  if in_time is not None and not slow else
                  f"raise {flag} to at least {least} (no plan costs less at any duration)")
        if slow:  # (never without a remedy for speed: the workload's own is said then)
            needed += f", and also {' or '.join(speed)}"
        return needed + "".join(f", or {x}" for x in limits) + "," + rest
    return ", ".join(speed + limits) + rest if speed or limits else rest.removeprefix(" or ")


def _cents(usd: float) -> str:
    """A small amount as the cost line says it: "< $0.01" below a cent ("$9.3e-06")."""
    return format_usd(usd) if usd >= 0.005 else "< $0.01"


def _card(c, constraints, below: float | None = None) -> str:
    o, e, p = c.offer, c.estimate, c.estimate.plan
    lines = [
        f"[bold]{c.nodes}x {o.instance_type}[/bold] ({c.gpus}x {c.accelerator}) in "
        f"{o.cloud} {', '.join(c.regions)}, {o.pricing}"
        + (f" ({o.offering_class}, {o.upfront} upfront)" if o.offering_class else ""),
        f"cost [bold]{format_usd(c.cost_usd)}[/bold] (P10–P90 {format_usd(c.cost_usd_p10)}–"
        f"{format_usd(c.cost_usd_p90)}) at ${c.usd_per_hour_cluster:,.2f}/h"
        + (f" + {_cents(c.checkpoint_storage_usd)} checkpoint storage"
           if c.checkpoint_storage_usd else ""),
        f"wall-clock {_hours(c.wall_clock_hours)}, P10–P90 "
        f"{format_hours_range(c.wall_clock_hours_p10, c.wall_clock_hours_p90)} · "
        f"{format_amount(c.gpu_hours)} GPU-h",
        f"P(finish by the deadline) {format_chance(c.deadline_probability, below=below)} "
        f"(model range and "
        f"{format_expected(c.expected_interruptions)} expected interruptions) · MFU "
        f"{e.mfu:.1%} · "
        f"goodput {e.goodput.fraction:.1%}",
        f"plan {p} (tensor × pipeline×virtual × data parallel, ZeRO stage, micro-batch × "
        f"accumulation) · memory {e.memory['total_gib']:.1f} GiB/GPU · framework "
        f"{e.workload.framework}",
        f"price ${o.usd_per_hour:,.4g}/instance-h as of {o.as_of.isoformat()}"
        + (" (approximate)" if o.as_of_approximate else "")
        + (f" · flags: {', '.join(o.flags)}" if o.flags else ""),
    ]
    if c.commitment:
        m = c.commitment
        lines.append(f"commitment: {m.terms} × {m.term_hours:,.0f} h term(s) paid per instance"
                     f", effective ${m.effective_usd_per_hour:,.2f}/instance-h for this run "
                     f"(commitment use after the run {m.commitment_use:.0%})")
    return "\n".join(lines)


def print_plan(result, constraints, *, wide: bool = False) -> None:
    """The plan for people, fitted to the terminal (100 columns when piped; ``wide``: tables
    show every column and prose is not wrapped)."""
    import sys

    from rich.panel import Panel

    from ._tables import terminal_width

    out = console(fit=not wide)
    width = terminal_width(wide=wide)

    below = constraints.probability_required  # a P below it never reads as the minimum

    def table(title: str, rows, group=None) -> None:
        out.file.flush()
        sys.stdout.write(candidate_table(title, rows, width=width, group=group, below=below))
        sys.stdout.flush()

    if result.infeasible is not None:
        inf = result.infeasible
        # wrapped under itself, as the notes below it are (it ran on at column 0)
        print_hanging(out, f"{say_fields(inf.reason)}.", first="infeasible: ", rest="  ",
                      first_style="bold red")

        for label, c, miss in (("fastest", inf.fastest, inf.fastest_misses_by_hours),
                               ("cheapest", inf.cheapest, inf.cheapest_misses_by_hours)):
            # wrapped under itself (a wrapped line at column 0 read as a new item)
            print_hanging(out, f"{label}: {c.nodes}x {c.offer.instance_type} ({c.offer.cloud} "
                          f"{c.offer.region}, {c.offer.pricing}) — "
                          f"{_hours(c.wall_clock_hours)}, {format_usd(c.cost_usd)}; "
                          + (f"misses the deadline by {_hours(miss)}" if miss > 0 else
                             f"P(deadline) {format_chance(c.deadline_probability, below=below)}")
                          # none within the budget and quotas: these are shown beyond them
                          + ("" if c.within_limits else _beyond(c, constraints)))
        for limit, c in inf.relaxed.items():
            # no flag has no minimum probability: leaving it out is the 0.9 default again
            said = (f"with --min-probability {math.floor(c.deadline_probability * 100) / 100:g} "
                    "or less" if limit == "min_probability" else
                    f"without {flag_for(limit) or limit}")
            print_hanging(out, f"{said}: {c.nodes}x {c.offer.instance_type} ({c.offer.cloud} "
                          f"{c.offer.region}, {c.offer.pricing}) meets the deadline for "
                          f"{format_usd(c.cost_usd)} "
                          f"(P {format_chance(c.deadline_probability, below=below)})")
        print_hanging(out, f"{infeasible_fixes(inf, constraints)}.", first="To fix: ",
                      rest="  ")
        # what both plans shown warn of is the workload's (a head_dim typo counting 694B
        # parameters): said here too, as --json's plans carry it (it was said nowhere)
        theirs = set(inf.cheapest.warnings)
        for w in (w for w in inf.fastest.warnings if w in theirs):
            print_hanging(out, say_fields(w), first="warning: ", rest="  ",
                          first_style="yellow")
        _flagged(out, result)
        return
    r = result.recommendation
    # --min-probability 0 asks for the expected time alone: "P ≥ 0%" said something else
    asked = (f"P ≥ {format_requirement(constraints.min_probability)}"
             if constraints.probability_required else "expected time within it")
    out.print(Panel(_card(r, constraints, below), expand=False,
                    title=f"Recommendation (deadline {_hours(constraints.deadline_hours)}, "
                          f"{asked})"))
    for w in r.warnings:  # continued two columns in: a line at column 0 is the next item
        print_hanging(out, say_fields(w), first="warning: ", rest="  ", first_style="yellow")
    if r.estimate.calibrated:  # a measurement may have changed the recommendation: say so
        from ._model_cmds import print_measured

        print_measured(out, r.estimate.calibrated)
    if result.group_by:
        table(f"Best plan per {result.group_by}", list(result.by_group.values()),
              group=(result.group_by, list(result.by_group)))
    table(f"Top {len(result.candidates)} distinct plans meeting the deadline",
          list(result.candidates))
    shown = frontier_rows(result.frontier, r)
    table("Cost/time frontier (no plan is both cheaper and faster"
          + (f"; {len(shown)} of its {len(result.frontier)} plans, spread over it; --json lists"
             " all)" if len(shown) < len(result.frontier) else ")"), shown)
    sv = result.spot_vs_on_demand
    if len(sv) > 1:
        print_hanging(out, "Best per pricing model — " + " | ".join(
            f"{k}: {format_usd(c.cost_usd)}, {_hours(c.wall_clock_hours)}, "
            f"P {format_chance(c.deadline_probability, below=below)} "
            f"({c.nodes}x {c.offer.instance_type})"
            for k, c in sv.items()), first="", rest="  ")
    _flagged(out, result)
    for note in result.notes:
        print_hanging(out, say_fields(note), first="", rest="  ", style="dim")


def _flagged(out, result) -> None:
    f = result.flagged_skipped
    if f and f.count and f.cheapest is not None:
        o = f.cheapest
        print_hanging(out, f"{f.count} offers with flagged prices were skipped "
                      f"(--allow-flagged to use them); the cheapest was {o.instance_type} "
                      f"{o.cloud} {o.region} {o.pricing} at "
                      f"${f.cheapest_usd_per_gpu_hour:,.2f}/GPU-h: "
                      f"{o.flag_reasons or ', '.join(o.flags)}", first="", rest="  ",
                      style="dim")
