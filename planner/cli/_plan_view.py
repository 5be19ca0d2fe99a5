"""Rendering a PlanResult for people: the recommendation, top-N, frontier, spot vs on-demand."""

from __future__ import annotations

from ._app import console


def _plan_text(p: dict) -> str:
    plan = p["plan"]
    return (f"tp={plan['tp']} pp={plan['pp']} dp={plan['dp']} zero={plan['zero_stage']} "
            f"mb={plan['micro_batch']}×{plan['grad_accumulation']} {plan['recompute']}")


def _hours(h: float) -> str:
    return f"{h:,.1f} h ({h / 24:,.1f} d)"


def print_plan(result, constraints) -> None:
    from rich.panel import Panel
    from rich.table import Table

    out = console()
    if result.infeasible is not None:
        inf = result.infeasible
        out.print(f"[bold red]infeasible:[/bold red] {inf['reason']}.")
        for label, key in (("fastest", "fastest"), ("cheapest", "cheapest")):
            p = inf[key]
            miss = inf[f"{key}_misses_by_hours"]
            out.print(f"  {label}: {p['nodes']}x {p['instance_type']} ({p['cloud']} "
                      f"{p['region']}, {p['pricing']}) — {_hours(p['wall_clock_hours'])}, "
                      f"${p['total_cost_usd']:,.0f}; "
                      + (f"misses the deadline by {_hours(miss)}" if miss > 0 else
                         "meets the deadline but not the other limits"))
        out.print("To fix: extend --deadline, raise --max-gpus/--budget/quotas, or allow more "
                  "clouds, regions or pricing models.")
        return
    r = result.recommendation
    body = (f"[bold]{r['nodes']}x {r['instance_type']}[/bold] ({r['gpus']}x {r['accelerator']}) "
            f"in {r['cloud']} {r['region']}, {r['pricing']}\n"
            f"cost [bold]${r['total_cost_usd']:,.0f}[/bold] at ${r['usd_per_hour_cluster']:,.2f}"
            f"/h · wall-clock {_hours(r['wall_clock_hours'])} · {r['gpu_hours']:,.0f} GPU-h\n"
            f"P(finish by deadline) {r['deadline_probability']:.1%} · MFU {r['mfu']:.1%} · "
            f"goodput {r['goodput']:.1%}\nplan {_plan_text(r)} · memory "
            f"{r['memory_per_gpu_gib']:.1f} GiB/GPU")
    body += f"\nprice ${r['usd_per_hour']:,.4g}/instance-h as of {r['price_as_of']}"
    if r["price_flags"]:
        body += f" · flags: {', '.join(r['price_flags'])}"
    out.print(Panel(body, title=f"Recommendation (deadline {_hours(constraints.deadline_hours)})"))

    def table(title: str, rows: list[dict]) -> Table:
        t = Table(title=title)
        for col in ("cloud", "region", "instance", "nodes", "GPUs", "pricing", "$/h", "cost $",
                    "wall-clock", "P(deadline)", "MFU", "plan"):
            t.add_column(col, justify="right" if col in ("nodes", "GPUs", "$/h", "cost $",
                                                         "P(deadline)", "MFU") else "left")
        for p in rows:
            t.add_row(p["cloud"], p["region"], p["instance_type"], str(p["nodes"]),
                      str(p["gpus"]), p["pricing"], f"{p['usd_per_hour_cluster']:,.2f}",
                      f"{p['total_cost_usd']:,.0f}", _hours(p["wall_clock_hours"]),
                      f"{p['deadline_probability']:.0%}", f"{p['mfu']:.0%}", _plan_text(p))
        return t

    out.print(table(f"Top {len(result.candidates)} plans meeting the deadline",
                    list(result.candidates)))
    out.print(table("Cost/time frontier (no plan is both cheaper and faster)",
                    list(result.frontier)[:15]))
    sv = result.spot_vs_on_demand
    if sv:
        parts = []
        for k in ("on_demand", "spot"):
            if k in sv:
                p = sv[k]
                parts.append(f"{k}: ${p['total_cost_usd']:,.0f}, {_hours(p['wall_clock_hours'])}"
                             f", P={p['deadline_probability']:.0%} ({p['nodes']}x "
                             f"{p['instance_type']} {p['cloud']} {p['region']})")
        out.print("Spot vs on-demand — " + " | ".join(parts))
    for note in result.notes:
        out.print(f"[dim]{note}[/dim]")
