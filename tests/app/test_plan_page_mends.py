"""The Plan page's defects from a tester's pass (app sweep 2026-12-06), each pinned where it
was: Back after another page reset every input, a small job's table read "$0.00" and "0.0 h",
a fix that named no binding limit, an upload lost to a radio, a budget box that took 0 and
showed 0.00 for 0.001, hours beside days, "would cost less" without the largest saving, and
breakdown bars labelled with the planner's keys."""

from __future__ import annotations

import csv
import functools
import io
import math
import re

import pytest

from ._apptest import app, assert_clean, chart, everything, plain, recommendation, texts, warnings

LLAMA = {"model": "llama2-7b", "tokens": "2T", "deadline": "30d"}
FIXED_COST = "the same whatever the run's length (whole terms)"  # the recommendation's words


# ---- 1. Back to the Plan page ----------------------------------------------------------------

@pytest.fixture
def history_navigation(monkeypatch):
    """The next ``run`` as the browser's Back button makes it: Streamlit resets every bound
    widget whose parameter the URL lacks to its default, over session state (``RerunData``'s
    ``is_history_navigation``, which AppTest never sets)."""
    from streamlit.testing.v1 import local_script_runner

    def back(at):
        with monkeypatch.context() as m:
            m.setattr(local_script_runner, "RerunData", functools.partial(
                local_script_runner.RerunData, is_history_navigation=True))
            return at.run()

    return back


def test_back_to_a_bare_plan_url_after_another_page_gives_back_the_plan_left(
        history_navigation):
    """/?model=llama2-7b&tokens=2T&deadline=30d, Catalog, Back: Streamlit had pushed a bare
    "/" when the page was left, and the page planned gpt2-xl 50B 7d."""
    at = app(**LLAMA)
    left = recommendation(at)
    at.switch_page("app_pages/catalog.py").run()
    at.query_params.clear()  # the entry Back returns to: "/"
    history_navigation(at.switch_page("app_pages/plan.py"))
    assert_clean(at)
    assert recommendation(at) == left
    assert at.selectbox(key="model").value == "llama2-7b"
    assert at.text_input(key="tokens").value == "2T"
    assert at.text_input(key="deadline").value == "30d"
    assert {k: at.query_params.get(k) for k in LLAMA} == LLAMA  # the URL is the plan again


def test_back_to_a_bare_catalog_url_after_another_page_gives_back_the_filters_left(
        history_navigation):
    """The Catalog page's filters are bound to the URL as the Plan page's inputs: Back after
    another page showed every offer again."""
    at = app()
    at.switch_page("app_pages/catalog.py").run()
    at.multiselect(key="offers_gpu").set_value(["H100-SXM5-80GB"]).run()
    at.selectbox(key="offers_sort").set_value("pflop_price").run()
    at.switch_page("app_pages/plan.py").run()
    at.query_params.clear()  # the entry Back returns to: a bare URL
    history_navigation(at.switch_page("app_pages/catalog.py"))
    assert_clean(at)
    assert at.multiselect(key="offers_gpu").value == ["H100-SXM5-80GB"]
    assert at.selectbox(key="offers_sort").value == "pflop_price"


def test_back_to_a_plan_url_with_inputs_follows_the_url(history_navigation):
    """A history entry that names inputs is what Back shows: the kept plan is not forced on
    it."""
    at = app(**LLAMA)
    at.switch_page("app_pages/catalog.py").run()
    at.query_params.clear()
    at.query_params.update(deadline="60d")
    history_navigation(at.switch_page("app_pages/plan.py"))
    assert_clean(at)
    assert at.text_input(key="deadline").value == "60d"
    assert at.selectbox(key="model").value == "gpt2-xl"  # not in the entry: its default


def test_inputs_set_back_to_their_defaults_on_the_page_stay_so(history_navigation):
    at = app(deadline="30d")
    at.text_input(key="deadline").set_value("7d").run()
    at.query_params.clear()  # as the browser's URL says (AppTest keeps the link's)
    at.switch_page("app_pages/catalog.py").run()
    at.query_params.clear()
    history_navigation(at.switch_page("app_pages/plan.py"))
    assert_clean(at)
    assert at.text_input(key="deadline").value == "7d"
    assert "deadline" not in at.query_params


# ---- 5. the uploaded config.json ---------------------------------------------------------------

CONFIG = (b'{"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, '
          b'"num_attention_heads": 16, "intermediate_size": 5632, "vocab_size": 32000, '
          b'"max_position_embeddings": 2048}')


def test_an_uploaded_config_survives_another_choice_and_another_page():
    """config → params → config lost the upload (so did Catalog and back): "Upload a Hugging
    Face config.json" again."""
    at = app(source="config")
    at.file_uploader(key="config_file").set_value(("my-config.json", CONFIG,
                                                   "application/json")).run()
    planned = recommendation(at)
    at.radio(key="source").set_value("params").run()
    at.radio(key="source").set_value("config").run()
    assert_clean(at)
    assert recommendation(at) == planned
    assert "Using my-config.json, uploaded earlier" in everything(at).replace("\\", "")
    at.switch_page("app_pages/catalog.py").run()
    at.switch_page("app_pages/plan.py").run()
    assert_clean(at)
    assert recommendation(at) == planned


# ---- 2 and 8. the candidates table, the CSV, one unit of time -------------------------------

SMALL = {"source": "params", "params": "10M", "tokens": "10M", "deadline": "2h"}


def candidates_table(at):
    """(data, column settings) of the Top candidates table: settings as Streamlit sends them
    (``type_config``: the browser's format, and the step that sets the decimals shown)."""
    import json

    (table,) = [d for d in at.dataframe if "regions_shown" in d.value.columns]
    return table.value, json.loads(table.proto.columns)


def wall_clock(data, columns) -> tuple[str, list[float]]:
    """The table's wall-clock column: (heading, figures)."""
    (key,) = [k for k, c in columns.items() if c.get("label", "").startswith("Wall-clock (")]
    return columns[key]["label"], list(data[key])


def shown(value: float, column: dict) -> float:
    """A number as the table shows it: rounded to the decimals its step gives."""
    step = column["type_config"]["step"]
    return round(value, max(0, round(-math.log10(step))))


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_a_small_jobs_table_keeps_its_figures_and_reads_as_its_card():
    """$0.0009 and 8.3 s on the card, "$0.00" and "0.0" h in every row of the table."""
    at = app(**SMALL)
    assert_clean(at)
    data, columns = candidates_table(at)
    costs = [shown(v, columns["total_cost_usd"]) for v in data["total_cost_usd"]]
    assert all(costs) and len(set(costs)) > len(costs) // 2  # figures, telling rows apart
    card = float(metric(at, "Total cost").removeprefix("$"))  # "$0.0009"
    assert round(costs[0], 4) == card
    wall = metric(at, "Wall-clock")  # "8.3 s"
    figure, unit = wall.split(" ")
    heading, figures = wall_clock(data, columns)
    assert heading == f"Wall-clock ({unit})" and f"{figures[0]:.1f}" == figure
    assert all(r.endswith(f" {unit}") for r in data["wall_range"])
    assert all(shown(v, columns["gpu_hours"]) for v in data["gpu_hours"])


def test_the_candidates_csv_carries_the_planners_figures_unrounded():
    import catalog
    import planner
    from app_pages.plan import candidates_csv

    work = planner.build_workload(planner.WorkloadSpec(params="10M", tokens="10M"))
    result = planner.plan(work, catalog.load_catalog(),
                          planner.Constraints(deadline_hours=2.0)).as_dict()
    rows = list(csv.DictReader(io.StringIO(candidates_csv(result))))
    first = result["candidates"][0]
    for key in ("total_cost_usd", "total_cost_usd_p90", "wall_clock_hours", "gpu_hours",
                "usd_per_hour_cluster", "deadline_probability", "mfu"):
        assert float(rows[0][key]) == first[key], key
    assert float(rows[0]["total_cost_usd"]) > 0


def test_durations_keep_the_cards_unit_in_the_table_and_the_spot_tab():
    """Card "4.9 days", table "Wall-clock (h) 118.5" beside "Wall-clock P10–P90 3.5–6.9 days",
    and "119 h (4.9 d)" in the Spot vs on-demand tab."""
    at = app(tokens="1.5T")
    assert_clean(at)
    wall = metric(at, "Wall-clock")
    assert wall.endswith(" days"), wall
    data, columns = candidates_table(at)
    heading, figures = wall_clock(data, columns)
    assert heading == "Wall-clock (days)" and f"{figures[0]:.1f} days" == wall
    assert all(r.endswith(" days") for r in data["wall_range"])
    cards = [t for t in texts(at) if " · P(deadline) " in t]  # each plan's figures
    assert cards and not [t for t in cards if re.search(r"\d h \(\d+\.\d d\)", t)], cards
    assert any(f" · {wall} · " in t for t in cards), cards


def test_a_commitments_fixed_cost_reads_the_same_in_every_card_and_row():
    """The reserved card of the Spot vs on-demand tab said "$4,252,572–$4,252,572" where the
    recommendation said "the same whatever the run's length (whole terms)"."""
    at = app(pricing="reserved_1y")
    assert_clean(at)
    said = everything(at).replace("\\", "")
    assert not re.search(r"(\$[\d,]+)–\1\b", said), said
    ranges = [plain(c.value) for c in at.caption if "P10–P90: " in plain(c.value)]
    assert [r for r in ranges if FIXED_COST in r], ranges
    data, _ = candidates_table(at)
    reserved = data[data["pricing"] == "reserved 1y"]
    assert len(reserved) and set(reserved["cost_range"]) == {FIXED_COST}


# ---- 3. the chart on a phone ----------------------------------------------------------------

def test_the_cost_time_chart_keeps_its_legend_under_the_plot_and_its_ticks_level():
    spec = chart(app(tokens="1.5T"), "frontier_chart")
    layout = spec["layout"]
    assert layout["legend"]["orientation"] == "h" and layout["legend"]["yanchor"] == "bottom"
    assert layout["xaxis"]["tickangle"] == 0 and len(layout["xaxis"]["tickvals"]) <= 6
    (label,) = [a for a in layout["annotations"] if "deadline" in a["text"]]
    assert label["yref"] == "paper" and label["y"] == 1 and label["yanchor"] == "top"


# ---- 4. limits that bind together ---------------------------------------------------------------

def test_limits_binding_together_are_each_named_in_the_fix_with_figures_that_suffice():
    """"What binds: the minimum probability, the budget", then "To fix: extend the deadline,
    raise the max GPUs, or allow more clouds…"."""
    at = app(source="params", params="1.5T", budget="50000")
    assert not at.exception
    said = everything(at).replace("\\", "")
    assert "What binds:** the minimum probability, the budget" in said
    fix = next(t for t in texts(at) if t.startswith("To fix:"))
    budget = re.search(r"raise “Budget, USD” to \$([\d,]+)", fix)
    prob = re.search(r"lower “Min\. probability of meeting the deadline” to (\d+)%", fix)
    assert budget and prob, fix
    # what it says is enough: the plan it names becomes feasible
    again = app(source="params", params="1.5T", budget=budget[1].replace(",", ""),
                min_prob=str(int(prob[1]) / 100))
    assert_clean(again)
    recommendation(again)


# ---- 6 and 7. the budget box --------------------------------------------------------------------

@pytest.mark.parametrize("given", ["0", "-5", "0.00001", "2e12"])
def test_the_budget_box_link_and_planner_take_one_range(given):
    """The box took 0, which the planner always refused ("“Budget, USD”: the budget (USD)
    must be…", the box named twice), and the link's warning said "0 to 1,000,000,000,000"."""
    import planner
    from planner.search import MAX_BUDGET_USD

    at = app(budget=given)
    assert_clean(at)  # no planner error: the box cannot hold what the planner refuses
    box = at.number_input(key="budget")
    low, high = box.min, box.max
    assert low > 0 and high == MAX_BUDGET_USD
    for ok in (low, high):  # both ends are budgets the planner takes
        planner.Constraints(deadline_hours=1.0, budget_usd=ok)
    said = " ".join(warnings(at))
    assert f"budget={given} (Budget, USD: not a valid value: {low:g} to " \
           f"{high:,.0f}; showing the default)" in said, said
    assert box.value is None
    recommendation(at)


def test_the_budget_box_shows_the_figures_the_plan_uses():
    """0.001 read "0.00" (the box's default two decimals) while the plan used $0.001."""
    at = app(tokens="1", budget="0.001")
    box = at.number_input(key="budget")
    assert box.value == 0.001 and box.proto.format % 0.001 == "0.001"
    assert "(“Budget, USD” is $0.0010)" in everything(at).replace("\\", "")


# ---- 9. what a later deadline saves ----------------------------------------------------------

def test_the_largest_saving_of_a_later_deadline_is_listed():
    """/?tokens=1.5T listed only the three soonest cheaper plans, all before the deadline: the
    frontier plans past it, which save $1,122 more, were not named."""
    from app_pages._format import usd

    at = app(tokens="1.5T")
    spec = chart(at, "frontier_chart")
    front = next(t for t in spec["data"] if t.get("name") == "cost/time frontier")
    rec = next(t for t in spec["data"] if t.get("name") == "recommendation")["y"][0]
    lines = [t for t in texts(at) if "would cost less:**" in t]
    later = [t for t in lines if t.startswith("**A later deadline would cost less:**")]
    assert later, lines
    assert f"({usd(rec - min(front['y']))} less" in later[0]
    assert all(t.count("; ") <= 1 for t in lines)  # short: at most two plans a line


# ---- 10. the breakdown's labels --------------------------------------------------------------

def test_the_breakdown_bars_are_labelled_in_words():
    at = app()
    step = chart(at, "step_chart")["data"][0]["y"]
    memory = chart(at, "memory_chart")["data"][0]["y"]
    assert not [y for y in [*step, *memory] if "_" in y], (step, memory)
    assert "pipeline bubble" in step and "runtime reserve (CUDA, NCCL)" in memory


@pytest.mark.parametrize("deadline,also", [("3650d", False), ("10d", True)])
def test_a_budget_below_every_plan_is_said_as_the_limit_to_raise(deadline, also):
    """A budget no plan fits at any duration: "extend the deadline, raise the max GPUs" was
    offered as a way out, which cannot lower the cheapest cost; where nothing is in time
    either, both must change ("and also"), as `gpuplan plan` says it."""
    at = app(model="llama3-70b", tokens="2T", deadline=deadline, budget="100000")
    assert not at.exception
    fix = next(t for t in texts(at) if t.startswith("To fix:"))
    assert "raise “Budget, USD” to " in fix
    # where a plan is in time, what it costs and the cheapest at any duration, as the CLI
    # (it said "no plan costs less at any duration" under a cheaper, later plan's card)
    assert ("(no plan costs less at any duration)" in fix) is also, fix
    assert ("(the cheapest plan in time; none costs less than $" in fix.replace("\\$", "$")) \
        is not also, fix
    assert ("and also extend the deadline or raise" in fix) is also, fix
    if not also:
        assert "extend the deadline" not in fix, fix
