"""Regression tests for a tester's report on `gpuplan report` (each named after what it found):
an allocation called infeasible whose advice did not work, relaxations that were not the
cheapest, a missing matplotlib found after the solve, assumptions that misstated per-job
values, actuals rows numbered by physical line and actuals for jobs not yet started.

The first two plan real jobs on the packaged catalog (the bugs lived in the candidates plan()
gives); the rest use synthetic candidates."""

from __future__ import annotations

import json

import pytest

from planner.team import AllocationInfeasibleError, allocate, parse_team_plan

QUOTA_JOBS = [  # three 8-GPU jobs and one that also runs on 4 GPUs, all at once for 9 days
    {"name": name, "workload": {"model": model, "tokens": tokens},
     "earliest_start": "2027-03-01", "deadline": "2027-03-10"}
    for name, model, tokens in (("a", "llama3-8b", "30B"), ("b", "llama3-8b", "30B"),
                                ("c", "mistral-7b", "30B"), ("d", "qwen2.5-7b", "20B"))]


def _plan(catalog, *, gpus: int, jobs=QUOTA_JOBS, **more):
    data = {"name": "qr", "start_offsets_days": [0], "quotas": [{"gpus": gpus}], "jobs": jobs,
            **more}
    return parse_team_plan(data, catalog=catalog, source="qr.yaml")


def _applied(catalog, relax: dict, gpus: int, jobs=QUOTA_JOBS, **more):
    """The team plan with a relaxation's changes made as a user would make them."""
    dropped = {ch["job"] for ch in relax["changes"] if ch["kind"] == "drop_job"}
    gpus += sum(ch["more_gpus"] for ch in relax["changes"] if ch["kind"] == "quota")
    budgets = dict(more.pop("budgets", {}))
    for ch in relax["changes"]:
        if ch["kind"] == "budget":
            budgets[ch["period"]] = ch["budget_usd"] + ch["more_usd"]
    return _plan(catalog, gpus=gpus, jobs=[j for j in jobs if j["name"] not in dropped],
                 **({"budgets": budgets} if budgets else {}), **more)


def test_an_allocation_that_fits_is_found_and_the_quota_advice_works_when_applied(catalog):
    """Quota 28 was "infeasible" (the 4-GPU plan of 'd' was dropped from its candidates for
    more 8-GPU ones once the quota admitted 28-GPU clusters), and quota 8 advised "+20 GPUs"
    priced over the quota-8 candidates — which, applied, gave quota 28: infeasible again."""
    fits = allocate(_plan(catalog, gpus=28), catalog=catalog)
    assert sorted(j["gpus"] for j in fits.jobs) == [4, 8, 8, 8]
    with pytest.raises(AllocationInfeasibleError) as err:
        allocate(_plan(catalog, gpus=8), catalog=catalog)
    (quota,) = [r for r in err.value.relaxations if r["relax"] == "quotas"]
    assert [ch["more_gpus"] for ch in quota["changes"]] == [20]
    applied = allocate(_applied(catalog, quota, 8), catalog=catalog)  # it fits, at that cost
    assert applied.totals["cost_usd"] == pytest.approx(quota["cost_usd"], rel=1e-9)
    assert applied.totals["cost_usd"] == pytest.approx(fits.totals["cost_usd"], rel=1e-9)
    (drop,) = [r for r in err.value.relaxations if r["relax"] == "jobs"]
    kept = allocate(_applied(catalog, drop, 8), catalog=catalog)
    assert kept.totals["cost_usd"] == pytest.approx(drop["cost_usd"], rel=1e-9)


def test_the_quota_advice_checks_share_one_time_limit(catalog, monkeypatch):
    """Each re-check of a quota relaxation had a solver time limit of its own (up to three
    rounds each) where docs/team.md says the relaxation solves share one: once it is spent, an
    unchecked relaxation is left out and the rest are "maybe not the cheapest"."""
    import itertools

    from planner.team import _relax

    clock = itertools.count(0.0, 1e9)  # every look at the clock: the limit long spent

    class Clock:
        @staticmethod
        def monotonic():
            return next(clock)

    monkeypatch.setattr(_relax, "time", Clock)
    with pytest.raises(AllocationInfeasibleError) as err:
        allocate(_plan(catalog, gpus=8), catalog=catalog)
    assert [r["relax"] for r in err.value.relaxations] == ["jobs"]  # the quota one: unchecked
    assert "maybe not the cheapest" in str(err.value)


def test_planning_the_jobs_again_stops_when_the_checks_time_is_spent(catalog, monkeypatch):
    """The shared limit bounded the re-check's solves only: planning every job again ran to
    the end however long it took (32 s under a 1 s limit). Now the re-planning stops after
    the job that finishes past the limit, and that relaxation is left unchecked."""
    from planner.team import _allocate, _relax

    limit = 86_400  # far more than a real run takes: only the clock below spends it
    clock = iter(range(0, 10**9, 50_000))  # each look at the clock: 50,000 s later

    class Clock:
        @staticmethod
        def monotonic():
            return next(clock)

    planned = []
    real = _allocate._plan_one
    monkeypatch.setattr(_allocate, "_plan_one", lambda key, state: planned.append(key) or
                        real(key, state))
    monkeypatch.setattr(_relax, "time", Clock)
    monkeypatch.setattr(_allocate, "time", Clock, raising=False)
    with pytest.raises(AllocationInfeasibleError) as err:
        allocate(_plan(catalog, gpus=8), catalog=catalog, time_limit_s=limit)
    # 'a' and 'b' are one plan: 3 once, then 1 of them again before the clock ran out
    assert len(planned) == 3 + 1
    assert [r["relax"] for r in err.value.relaxations] == ["jobs"]
    assert "maybe not the cheapest" in str(err.value)


def test_a_quota_relaxation_is_checked_against_the_candidates_it_lets_in(catalog, monkeypatch):
    """Candidates change with the quota (plan() leaves out clusters above it): a relaxation
    found over the old ones is applied and solved again before it is advised. Here the raised
    quota lets only larger clusters in, so "+8 GPUs" (enough for the old candidates) is not,
    and the advice is what the plan needs once applied."""
    from planner.team import _allocate
    from tests.team.conftest import H100, cand

    def candidates(team_plan, *args, **kwargs):
        cap = team_plan.quotas[-1].gpus
        small, big = cand("aws", "us-east-1", H100, 8, 100, 10.0), \
            cand("aws", "us-east-1", H100, 16, 50, 21.0)
        return [[big] if cap >= 16 else [small]] * len(team_plan.jobs)

    monkeypatch.setattr(_allocate, "job_candidates", candidates)
    jobs = [{**QUOTA_JOBS[0], "name": n} for n in ("x", "y")]
    with pytest.raises(AllocationInfeasibleError) as err:
        allocate(_plan(catalog, gpus=8, jobs=jobs), catalog=catalog)
    (quota,) = [r for r in err.value.relaxations if r["relax"] == "quotas"]
    assert [ch["more_gpus"] for ch in quota["changes"]] == [24]  # 2 × 16, not 2 × 8
    assert quota["cost_usd"] == pytest.approx(2 * 21.0 * 2 * 50)  # two 2-node runs of 50 h
    assert ("+24 GPUs of */*/* in 2027-03 (quota 8 → 32), then the schedule costs $4,200"
            in str(err.value))
    assert str(err.value).startswith("qr.yaml: no allocation meets every quota and budget")
    allocate(_applied(catalog, quota, 8, jobs=jobs), catalog=catalog)  # it fits


BUDGET_JOBS = [
    {"name": name, "workload": {"model": model, "tokens": "30B"},
     "earliest_start": "2027-03-01", "deadline": "2027-04-15"}
    for name, model in (("a", "llama3-8b"), ("b", "llama3-8b"), ("c", "mistral-7b"))]


def test_the_job_to_drop_is_the_cheapest_to_drop_at_the_cost_quoted(catalog):
    """The elastic programme scaled its cost term to ~1e-6, under HiGHS' tolerances: "drop job
    'c' (then $2,078)" where dropping c costs $1,466 and dropping a $1,424."""
    from planner import Assumptions
    from planner.model import NO_CALIBRATION
    from planner.team import allocate_candidates, job_candidates, priced_catalog

    plan = _plan(catalog, gpus=8, jobs=BUDGET_JOBS, start_offsets_days=[0, 7, 14],
                 budgets={"2027-03": 2000})
    with pytest.raises(AllocationInfeasibleError) as err:
        allocate(plan, catalog=catalog)
    cands = job_candidates(plan, priced_catalog(plan, catalog), Assumptions(), NO_CALIBRATION)
    cost = {}  # the cheapest schedule without each job, over the same candidates
    for j, job in enumerate(BUDGET_JOBS):
        rest = _plan(catalog, gpus=8, jobs=[x for x in BUDGET_JOBS if x is not job],
                     start_offsets_days=[0, 7, 14], budgets={"2027-03": 2000})
        cost[job["name"]] = allocate_candidates(
            rest, [c for i, c in enumerate(cands) if i != j], catalog_info={}).totals["cost_usd"]
    (drop,) = [r for r in err.value.relaxations if r["relax"] == "jobs"]
    (named,) = [ch["job"] for ch in drop["changes"]]
    assert cost[named] == pytest.approx(min(cost.values()), rel=1e-9) and named != "c"
    assert drop["cost_usd"] == pytest.approx(cost[named], rel=1e-9)
    (budget,) = [r for r in err.value.relaxations if r["relax"] == "budgets"]
    applied = allocate(_applied(catalog, budget, 8, jobs=BUDGET_JOBS,
                                start_offsets_days=[0, 7, 14], budgets={"2027-03": 2000}),
                       catalog=catalog)
    assert applied.totals["cost_usd"] <= budget["cost_usd"] + 1e-6
    assert f"drop job '{named}', then the schedule costs ${cost[named]:,.0f}" in str(err.value)


# -- 3. a missing matplotlib was said after the whole plan was solved --------------------------

def test_a_pdf_without_matplotlib_is_refused_before_anything_is_planned(tmp_path, capsys,
                                                                          monkeypatch):
    import sys

    import yaml

    import planner.cli._report_cmds  # noqa: F401  (registers `report` on the app)
    from planner.cli import _app, main
    from tests.team.conftest import team_dict

    def planned(*args, **kwargs):
        raise AssertionError("the catalog was loaded: the plan was about to be solved")

    monkeypatch.setattr(_app, "load_priced_catalog", planned)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    team = tmp_path / "team.yaml"
    team.write_text(yaml.safe_dump(team_dict()))
    out = tmp_path / "r.pdf"
    for args in (["--out", str(out)], ["--out", str(out), "--json"],
                 ["--format", "pdf", "--out", "-"]):
        code = main(["report", str(team), *args])
        captured = capsys.readouterr()
        assert code == 2 and not out.exists() and not captured.out
        assert captured.err.startswith("error: the PDF report draws its charts with matplotlib, "
                                       "which is not installed. To fix: pip install -e "
                                       "'.[report]' in the gpuplan checkout"), captured.err
        assert "Traceback" not in captured.err
    # --json alone renders no PDF: nothing to check (it fails later, on the stubbed catalog)
    with pytest.raises(AssertionError, match="the catalog was loaded"):
        main(["report", str(team), "--json"])


# -- 4. the assumptions misstated per-job start offsets and min_probability --------------------

def test_the_assumptions_say_each_jobs_own_start_offsets_and_probability(catalog):
    """Jobs with start_offsets_days [3, 5] and [1] and min_probability 0.3 and 0 read "Starts
    considered: earliest_start + 1, 3, 5 days." and "Only plans at least 0.3 likely …"."""
    from planner.reports import render
    from planner.reports._pdf import _lines
    from planner.team import allocate_candidates
    from tests.team.conftest import CATALOG_INFO, golden_candidates, team_dict

    data = team_dict()
    del data["budgets"]  # the later starts would not fit them
    data["jobs"][0].update(start_offsets_days=[3, 5], min_probability=0.3)
    data["jobs"][1].update(start_offsets_days=[1], min_probability=0)
    plan = parse_team_plan(data, catalog=catalog, source="t.yaml")
    said = allocate_candidates(plan, golden_candidates(), catalog_info=CATALOG_INFO).assumptions
    starts = ("Starts considered: earliest_start + 3, 5 days for 'pretrain-8b'; + 1 day for "
              "'eval|sweep <b>'; + 0, 7 days for 'sft-70b'.")
    likely = ("Plans considered: at least 0.3 likely to finish by the deadline for "
              "'pretrain-8b'; expected to end by the deadline (no probability asked) for "
              "'eval|sweep <b>'; at least 0.9 likely to finish by the deadline for 'sft-70b'; "
              "the probability includes")
    assert starts in said and any(x.startswith(likely) for x in said)
    assert not any(x.startswith("Only plans at least") for x in said)
    allocation = allocate_candidates(plan, golden_candidates(), catalog_info=CATALOG_INFO)
    assert starts in allocation.as_dict()["assumptions"]  # --json
    md = render(allocation, "md").decode()
    assert "Starts considered: earliest_start + 3, 5 days for 'pretrain-8b'; + 1 day" in md
    assert "at least 0.3 likely to finish by the deadline for 'pretrain-8b'" in md
    html = render(allocation, "html").decode()
    assert "+ 1 day for &#x27;eval|sweep &lt;b&gt;&#x27;; + 0, 7 days" in html  # escaped
    pdf = [text for style, text in _lines(allocation, None) if style == "mono"]
    assert f"- {starts}" in pdf
    # one value for every job: said once, as before
    same = allocate_candidates(parse_team_plan(team_dict(), catalog=catalog, source="t.yaml"),
                               golden_candidates(), catalog_info=CATALOG_INFO).assumptions
    assert "Starts considered: earliest_start + 0, 7 days." in same
    assert any(x.startswith("Only plans at least 0.9 likely to finish by the deadline were "
                            "considered; the probability includes") for x in same)


def test_many_jobs_with_their_own_values_are_said_compactly(catalog):
    from planner.team import allocate_candidates
    from tests.team.conftest import CATALOG_INFO, golden_candidates, team_dict

    data = team_dict()
    del data["budgets"]
    job = data["jobs"][1]
    data["jobs"] = [{**job, "name": f"j{i}", "start_offsets_days": [i % 3 == 0 and 1 or 0]}
                    for i in range(9)]
    plan = parse_team_plan(data, catalog=catalog, source="t.yaml")
    said = allocate_candidates(plan, [golden_candidates()[1]] * 9,
                               catalog_info=CATALOG_INFO).assumptions
    assert ("Starts considered: earliest_start + 1 day for 'j0', 'j3', 'j6'; + 0 days for every "
            "other job.") in said


# -- 5. actuals rows were numbered by physical line; ",," was an unknown job '' ---------------

def test_actuals_rows_are_numbered_as_a_spreadsheet_shows_them_and_empty_rows_skipped(catalog):
    from planner.reports import parse_actuals
    from planner.team import TeamPlanError
    from tests.team.conftest import team_dict

    plan = parse_team_plan(team_dict(), catalog=catalog, source="t.yaml")
    note = 'job,gpu_hours,cost_usd,note\npretrain-8b,1,2,"March\ninvoice\n#12"\n'
    with pytest.raises(TeamPlanError, match=r"^actuals.csv: row 3: unknown job 'pretrain-8bb'"):
        parse_actuals(note + "pretrain-8bb,1,2,x\n", plan)  # it said "row 5"
    with pytest.raises(TeamPlanError, match=r"^actuals.csv: row 3 \(job 'sft-70b'\): cost_usd"):
        parse_actuals(note + "sft-70b,1,ten,x\n", plan)
    # a spreadsheet's empty rows and blank lines are skipped, and still counted as rows
    text = "job,gpu_hours,cost_usd\n,,\npretrain-8b,1,2\n\n , ,\nsft-70b,3,4\n,,\n"
    assert parse_actuals(text, plan) == {"pretrain-8b": {"gpu_hours": 1.0, "cost_usd": 2.0},
                                         "sft-70b": {"gpu_hours": 3.0, "cost_usd": 4.0}}
    with pytest.raises(TeamPlanError, match=r"^actuals.csv: row 5: unknown job 'x'"):
        parse_actuals("job,gpu_hours,cost_usd\n,,\npretrain-8b,1,2\n\nx,1,2\n", plan)


# -- 6. actuals for a job that has not started were taken silently ----------------------------

def test_actuals_for_a_job_that_starts_after_today_are_warned_about(catalog, tmp_path, capsys,
                                                                   monkeypatch):
    import yaml

    import planner.cli._report_cmds  # noqa: F401  (registers `report` on the app)
    import planner.team
    from planner.cli import main
    from planner.team import allocate_candidates
    from tests.team.conftest import CATALOG_INFO, golden_candidates, team_dict

    def allocate_fast(team_plan, **kwargs):  # the golden candidates: no planning
        return allocate_candidates(team_plan, golden_candidates(), catalog_info=CATALOG_INFO)

    monkeypatch.setattr(planner.team, "allocate", allocate_fast)
    team = tmp_path / "team.yaml"
    team.write_text(yaml.safe_dump(team_dict()))  # every job starts in 2027; today 2026-12-01
    spent = tmp_path / "spent.csv"
    spent.write_text("job,gpu_hours,cost_usd\nsft-70b,500,9000\n")
    assert main(["report", str(team), "--actuals", str(spent), "--json"]) == 0
    captured = capsys.readouterr()
    (warning,) = json.loads(captured.out)["warnings"]
    assert warning == (f"{team}: jobs[3] 'sft-70b': {spent} reports spending for it, but its "
                       "earliest_start 2027-04-01 is after today (2026-12-01), so it has not "
                       f"started. To fix: check the job names in {spent}, or move "
                       "earliest_start to 2026-12-01 or earlier")
    assert "warning: " in captured.err and "so it has not started" in " ".join(
        captured.err.split())
