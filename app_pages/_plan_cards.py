"""The Plan page's answer as cards: the recommendation (its range, regions, commitment and
warnings), the infeasible answer (what binds, and the plan without each limit), the best plan
per accelerator or cloud side by side, and the flagged offers left out.

Everything here reads the dict of ``PlanResult.as_dict``; the only arithmetic is for display
(a commitment's term cost is nodes × list price × paid hours, as the planner charged it).
"""

from __future__ import annotations

import streamlit as st

from app_pages import _charts as C
from app_pages import _format as F
from app_pages import _shared as S

L = S.FIELD_LABELS
LIMIT_WORDS = {"deadline": "the deadline", "budget": "the budget",
               "min_probability": "the minimum probability", "quotas": "the quotas"}
CARDS_PER_ROW = 3  # at 4 an 800-px window broke "Warnings: capacity" one letter a line


# ---- pieces every plan shows ----------------------------------------------------------------

def warning_lines(p: dict, *, leave_out: frozenset[str] = frozenset()) -> list[str]:
    """Each warning of a plan as one escaped markdown line, its kind in bold, in the app's
    words (inputs by their labels, never CLI flags); ``leave_out``: those said once already."""
    return [f"**{F.warning_kind(w).capitalize()}:** {F.md(S.app_words(F.warning_text(w)))}"
            for w in p.get("warnings") or () if w not in leave_out]


def common_warnings(plans: list[dict]) -> frozenset[str]:
    """The warnings every one of two or more ``plans`` has: the workload's ("the FFN width is
    a guess", an old probe report's caution), said once above the plans, not under each."""
    if len(plans) < 2:
        return frozenset()
    return frozenset.intersection(*(frozenset(p.get("warnings") or ()) for p in plans))


def common_lines(plans: list[dict], common: frozenset[str]) -> list[str]:
    """``common`` as ``warning_lines`` words them, in the order the plans give them."""
    return warning_lines({"warnings": [w for w in plans[0].get("warnings") or ()
                                       if w in common]}) if common else []


def show_warnings(p: dict) -> None:
    lines = warning_lines(p)
    if lines:
        st.warning("\n".join(f"- {x}" for x in lines), icon=":material/warning:")


def warning_kinds(p: dict) -> str:
    return ", ".join(dict.fromkeys(F.warning_kind(w) for w in p.get("warnings") or ()))


def offering(p: dict) -> str | None:
    """'standard, all upfront': how a reservation is offered (None for pay-as-you-go)."""
    parts = [p.get("offering_class"), f"{p['upfront']} upfront" if p.get("upfront") else None]
    return ", ".join(x for x in parts if x) or None


def commitment_line(p: dict) -> str | None:
    """How a reserved / committed / capacity-block price was charged: whole terms, the term
    cost, and the effective rate for this run."""
    c = p.get("commitment")
    if not c:
        return None
    kind = C.PRICING_LABELS.get(p["pricing"], p["pricing"])
    detail = offering(p)
    term_usd = p["nodes"] * p["usd_per_hour"] * c["paid_hours"]
    per = "the instance" if p["nodes"] == 1 else f"each of {p['nodes']} instances"
    return (f"**Commitment:** {kind}{f' ({F.md(detail)})' if detail else ''}, paid for whole "
            f"terms: {c['terms']:,} × {c['term_hours']:,.0f} h for {per}, "
            f"{F.usd_md(term_usd)} for the term ({F.usd_md(p['usd_per_hour'], 2)} per "
            f"instance-hour). This run uses {F.hours(p['wall_clock_hours'])} of it; with "
            f"{c['commitment_use']:.0%} of the rest used afterwards "
            f"(“{L['commitment_use']}”) it is charged {F.usd_md(p['total_cost_usd'])}, an "
            f"effective {F.usd_md(c['effective_usd_per_hour'], 2)} per instance-hour.")


def regions_line(p: dict) -> str | None:
    names = F.regions(p)
    if len(names) < 2:
        return None
    return (f"Same configuration and price in {len(names)} regions: "
            f"{F.md(', '.join(names))}.")


def summary(p: dict) -> str:
    """'$313 · 42.7 h · P(deadline) 99.9%' for a plan in a card."""
    return (f"{F.usd_md(p['total_cost_usd'])} · {F.duration(p['wall_clock_hours'])} · "
            f"P(deadline) {F.chance(p['deadline_probability'])}")


# ---- the recommendation -----------------------------------------------------------------------

def recommendation_card(r: dict, deadline_hours: float) -> None:
    with st.container(border=True, key="recommendation"):
        st.markdown(f"### Recommendation: {F.md(F.config_line(r))}")
        # two rows of two: four across cut "$25,381" to "$25,…" in an 800-px window
        c = [*st.columns(2), *st.columns(2)]
        c[0].metric("Total cost", F.usd(r["total_cost_usd"]),
                    help=f"{F.usd(r['usd_per_hour_cluster'], 2)} per hour for the cluster")
        c[1].metric("Wall-clock", F.duration(r["wall_clock_hours"]),
                    help=f"{F.hours(r['wall_clock_hours'])}; deadline "
                         f"{F.hours(deadline_hours)}")
        c[2].metric("P(finish by deadline)", F.chance(r["deadline_probability"]),
                    help="The model's range and interruptions together")
        c[3].metric("MFU", f"{r['mfu']:.1%}", help=f"goodput {r['goodput']:.1%}")
        wall = F.duration_range(r["wall_clock_hours_p10"], r["wall_clock_hours_p90"],
                                r["wall_clock_hours"])
        n = r["expected_interruptions"]
        # a commitment pays whole terms: its cost does not move with the run's length
        cost = F.cost_range(r, markdown=True)
        c[0].caption(cost if cost == F.FIXED_COST else f"P10–P90 {cost}")
        c[1].caption(f"P10–P90 {wall}")
        from planner.model import format_expected  # loaded already: a plan is shown

        c[2].caption(f"{format_expected(n)} interruptions expected")  # as the CLI says it
        st.caption(F.md(f"Plan {F.plan_text(r)} · {r['memory_per_gpu_gib']:.1f} GiB per GPU · "
                        f"{F.amount(r['gpu_hours'])} GPU-hours · price as of {r['price_as_of']}"
                        + (" (approximate)" if r.get("price_as_of_approximate") else "")
                        + (f" · price flags: {', '.join(r['price_flags'])}"
                           if r["price_flags"] else "")))
        for line in (regions_line(r), commitment_line(r)):
            if line:
                st.markdown(line)
        show_warnings(r)


def flagged_line(result: dict) -> None:
    """The offers left out because the catalog flags their price, and how to use them."""
    skipped = result.get("flagged_offers_skipped") or {}
    if not skipped.get("count"):
        return
    o = skipped.get("cheapest") or {}
    cheapest = (f" The cheapest, {o['instance_type']} "
                f"{C.PRICING_LABELS.get(o['pricing'], o['pricing'])} in {o['cloud']} "
                f"{o['region']} at {F.usd(o['usd_per_gpu_hour'], 2)} per GPU-hour, is flagged "
                f"{o.get('reasons') or ', '.join(o.get('flags') or ())}." if o else "")
    with st.container(key="flagged_skipped"):
        st.caption(F.md(f"{skipped['count']:,} offers were left out because the catalog "
                        f"flags their prices.{cheapest} Tick “{L['allow_flagged']}” to plan "
                        "with them."))


# ---- nothing feasible --------------------------------------------------------------------------

def infeasible_view(inf: dict, constraints: dict) -> None:
    binding = [LIMIT_WORDS.get(b, b) for b in inf.get("binding") or ()]
    st.warning(f"**Infeasible:** {F.md(S.app_words(inf['reason']))}."
               + (f" **What binds:** {', '.join(binding)}." if binding else ""),
               icon=":material/block:")
    relaxed = inf.get("relaxed") or {}
    for limit, p in relaxed.items():
        with st.container(border=True, key=f"relaxed_{limit}"):
            st.markdown(f"**Without {LIMIT_WORDS.get(limit, limit)}:** "
                        f"{F.md(F.config_line(p))} for {F.usd_md(p['total_cost_usd'])} in "
                        f"{F.duration(p['wall_clock_hours'])}, P(deadline) "
                        f"{F.chance(p['deadline_probability'])}")
            st.caption(F.md(F.range_line(p)) + " · " + _relaxed_needs(limit, p, constraints))
            show_warnings(p)
    if not relaxed and inf.get("binding") == ["deadline"]:
        st.caption("No plan meets the deadline whatever the budget: only a later deadline, "
                   f"more GPUs (“{L['max_gpus']}”) or more offers would.")
    cols = st.columns(2)
    for col, label in zip(cols, ("fastest", "cheapest"), strict=True):
        p, miss = inf[label], inf[f"{label}_misses_by_hours"]
        with col.container(border=True, key=f"infeasible_{label}"):
            st.markdown(f"**{label.title()} alternative:** {F.md(F.config_line(p))}")
            st.markdown(summary(p))
            st.caption((f"misses the deadline by {F.hours(miss)}" if miss > 0 else
                        "meets the deadline but not the other limits")
                        + " · " + F.md(F.range_line(p)))
            show_warnings(p)
    st.markdown("To fix: " + _fix(inf, relaxed, constraints.get("budget_usd")))


def _relaxed_needs(limit: str, p: dict, constraints: dict) -> str:
    if limit == "budget":
        # rounded up as the fix says it: $22,664.49 needs $22,665, not "$22,664"
        return (f"needs a budget of {F.usd_md(F.usd_at_least(p['total_cost_usd']))} "
                f"(“{L['budget']}” is {F.usd_md(constraints.get('budget_usd'))})")
    if limit == "min_probability":
        return (f"finishes in time with probability {F.chance(p['deadline_probability'])}, "
                f"below “{L['min_probability']}” "
                f"({F.chance(constraints.get('min_probability') or 0)})")
    return "above the quotas"


def _fix(inf: dict, relaxed: dict, budget_usd: float | None = None) -> str:
    """The ways out, with the answer's figures: each limit that binds alone raised (lowered)
    to what its plan needs, and limits that bind together named together, with what the
    fastest plan needs of them ("What binds: the minimum probability, the budget" was
    followed by a fix that named neither). A budget below every plan at any duration is the
    one limit to raise: a later deadline or more GPUs cannot lower the cheapest cost, and
    where nothing is in time either, both must change (as `gpuplan plan` says it)."""
    cheapest = inf["cheapest"]["total_cost_usd"]
    binding = inf.get("binding") or ()
    # (with the probability binding too, what the fastest plan needs of both says more)
    if budget_usd is not None and cheapest > budget_usd and "budget" in binding \
            and "min_probability" not in binding:
        if "budget" in relaxed:  # the cheapest plan in time: what the budget must reach
            # ("no plan costs less at any duration" sat under a cheaper, later plan's card)
            need = (f"raise “{L['budget']}” to "
                    f"{F.usd_md(F.usd_at_least(relaxed['budget']['total_cost_usd']))} (the "
                    f"cheapest plan in time; none costs less than {F.usd_md(cheapest)} at any "
                    "duration)")
        else:  # nothing is in time at any price either
            need = (f"raise “{L['budget']}” to at least {F.usd_md(F.usd_at_least(cheapest))} "
                    f"(no plan costs less at any duration) and also extend the deadline or "
                    f"raise “{L['max_gpus']}”")
        return need + "; or allow more clouds, regions or pricing models."
    ways = []
    if "budget" in relaxed:
        ways.append(f"raise “{L['budget']}” to "
                    f"{F.usd_md(F.usd_at_least(relaxed['budget']['total_cost_usd']))}")
    if "min_probability" in relaxed:
        ways.append(f"lower “{L['min_probability']}” to "
                    f"{_at_most(relaxed['min_probability']['deadline_probability'])}")
    together = [b for b in ("budget", "min_probability")
                if b in (inf.get("binding") or ()) and b not in relaxed]
    if together:
        ways.append(_together(inf, together))
    ways.append("extend the deadline, raise the max GPUs, or allow more clouds, regions or "
                "pricing models")
    return "; ".join(ways) + "."


def _at_most(p: float) -> str:
    """A minimum probability ``p`` meets, as the slider (steps of 1%) can be set to it: 81%
    for 81.8% ("82%" would still refuse the plan)."""
    return F.pct(max(0.0, (p * 100 + 1e-9) // 1 / 100))


def _together(inf: dict, limits: list[str]) -> str:
    """The limits that bind with no plan without just one of them (``relaxed`` has none):
    both changed, to what the fastest plan needs when it meets the deadline."""
    f = inf["fastest"]
    meets = inf.get("fastest_misses_by_hours", 0) <= 0
    moves = {"budget": f"raise “{L['budget']}”" + (
        f" to {F.usd_md(F.usd_at_least(f['total_cost_usd']))}" if meets else ""),
             "min_probability": f"lower “{L['min_probability']}”" + (
        f" to {_at_most(f['deadline_probability'])}" if meets else "")}
    said = " and ".join(moves[b] for b in limits)
    if not meets:
        return said
    chance = f["deadline_probability"]  # a decimal: "to 81%" beside "probability 82%" read odd
    chance = F.pct(chance, 1) if 0.001 <= chance < 0.999 else F.chance(chance)
    return (f"{said} (the fastest plan, {F.md(F.config_line(f).split(' · ')[0])}, costs "
            f"{F.usd_md(f['total_cost_usd'])} and finishes in time with probability {chance})")


# ---- best plan per accelerator or cloud -------------------------------------------------------

def by_group_view(result: dict) -> None:
    """``by_group`` side by side: the best plan of each accelerator (or cloud), cheapest
    first."""
    group = result.get("by")
    if not group:
        return
    best = sorted((result.get("by_group") or {}).items(),
                  key=lambda kv: kv[1]["total_cost_usd"])
    st.markdown(f"#### Best plan per {group}")
    if not best:
        st.caption(f"No {group} has a plan that meets the deadline and limits.")
        return
    cheapest = best[0][1]["total_cost_usd"]
    common = common_warnings([p for _, p in best])
    if said := common_lines([p for _, p in best], common):
        st.warning(f"Every {group}'s plan:\n" + "\n".join(f"- {x}" for x in said),
                   icon=":material/warning:")
    with st.container(key="by_group"):
        for start in range(0, len(best), CARDS_PER_ROW):
            cols = st.columns(CARDS_PER_ROW)
            for col, (name, p) in zip(cols, best[start:start + CARDS_PER_ROW], strict=False):
                with col.container(border=True):
                    more = p["total_cost_usd"] / cheapest - 1 if cheapest else 0.0
                    st.markdown(f"**{F.md(name)}** · "
                                + (f"+{more:.0%}" if more >= 0.005 else "the cheapest"))
                    st.markdown(f"**{F.usd_md(p['total_cost_usd'])}** in "
                                f"{F.duration(p['wall_clock_hours'])}  \nP(deadline) "
                                f"{F.chance(p['deadline_probability'])}")
                    st.caption(F.md(_where(p, group)) + "  \n" + F.md(F.range_line(p)))
                    lines = warning_lines(p, leave_out=common)  # its own only
                    if lines:
                        with st.popover(f"{len(lines)} warning{'s' if len(lines) > 1 else ''}",
                                        icon=":material/warning:", help=warning_kinds(p)):
                            st.markdown("\n".join(f"- {x}" for x in lines))


def _where(p: dict, group: str) -> str:
    """The plan without what its group already says: '4× p5.48xlarge · aws eu-north-1 ·
    spot' under an accelerator, '4× p5.48xlarge (32× H100-SXM5-80GB) · eu-north-1 · spot'
    under a cloud."""
    what = p["instance_type"] if group == "accelerator" else \
        f"{p['instance_type']} ({p['gpus']}× {p['accelerator']})"
    where = F.regions_text(p) if group == "cloud" else f"{p['cloud']} {F.regions_text(p)}"
    return (f"{p['nodes']}× {what} · {where} · "
            f"{C.PRICING_LABELS.get(p['pricing'], p['pricing'])}")


# ---- the candidates -----------------------------------------------------------------------------

# what sets the plans apart first (as the Catalog table puts price first): at 390 px only the
# first four columns show, and "#, Cloud, Regions, Instance type" hid every cost and time;
# cost, time and probability before the ranges: a 1280-px page cut the table after wall-clock
CANDIDATE_COLUMNS = {
    "rank": ("#", "int"), "total_cost_usd": ("Total cost", "usd"),
    "wall_clock": ("Wall-clock ({unit})", "num1"),  # in one unit, the first row's card's
    "pricing": ("Pricing", "pricing"), "instance_type": ("Instance type", "text"),
    "deadline_probability": ("P(deadline)", "chance"),
    "cloud": ("Cloud", "text"), "regions_shown": ("Regions", "text"),
    "accelerator": ("Accelerator", "text"), "nodes": ("Nodes", "int"), "gpus": ("GPUs", "int"),
    "offering": ("Offering", "text"),
    "cost_range": ("Cost P10–P90", "text"), "wall_range": ("Wall-clock P10–P90", "text"),
    "warning_kinds": ("Warnings", "text"),
    "usd_per_hour_cluster": ("$/h (cluster)", "usd2"), "mfu": ("MFU", "pct1"),
    "memory_per_gpu_gib": ("GiB per GPU", "num1"), "gpu_hours": ("GPU-hours", "amount"),
    "plan": ("Parallel plan", "text"), "price_as_of": ("Price as of", "text"),
    "price_flags": ("Price flags", "text"),
}


def candidates_tab(candidates: list[dict]) -> None:
    """The listed plans as a table, and each one's warnings in full below it."""
    if not candidates:
        st.caption("No candidate meets the deadline and limits.")
        return
    like = F.column_like([p["wall_clock_hours"] for p in candidates])
    rows = [dict(F.candidate_row(p), rank=i, regions_shown=", ".join(F.regions(p)),
                 cost_range=F.cost_range(p),
                 wall_clock=F.in_unit(p["wall_clock_hours"], like),
                 wall_range=F.duration_range(p["wall_clock_hours_p10"],
                                             p["wall_clock_hours_p90"], like),
                 warning_kinds=warning_kinds(p), offering=offering(p))
            for i, p in enumerate(candidates, start=1)]
    columns = {k: (head.format(unit=F.unit_name(like)), kind)
               for k, (head, kind) in CANDIDATE_COLUMNS.items()  # "Offering": reservations only
               if k != "offering" or any(r["offering"] for r in rows)}
    import pandas as pd  # here: the recommendation above is drawn before pandas loads

    F.show_table(pd.DataFrame(rows), columns, key="candidates_table", wide=("plan",))
    # the workload's warnings, which every plan has, once above the plans' own
    common = common_warnings(candidates)
    warned = [(i, p, lines) for i, p in enumerate(candidates, start=1)
              if (lines := warning_lines(p, leave_out=common))]
    if warned or common:
        with st.expander(f"Warnings of {len(warned)} of the {len(candidates)} plans listed"
                         + (" and of all of them" if common else "")):
            if said := common_lines(candidates, common):
                st.markdown(f"**All {len(candidates)} plans**\n\n"
                            + "\n".join(f"- {x}" for x in said))
            for i, p, lines in warned:
                st.markdown(f"**#{i}** {F.md(F.config_line(p))}\n\n"
                            + "\n".join(f"- {x}" for x in lines))
