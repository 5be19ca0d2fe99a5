#!/usr/bin/env python3
"""Golden comparison: a fixed set of plans (and two team allocations) whose JSON must not change
when the search is made faster.

    python benchmarks/golden_plans.py            # compare every case with the stored JSON
    python benchmarks/golden_plans.py --write    # (re)write the stored JSON (only from code
                                                 #  whose answers are known to be right)
    python benchmarks/golden_plans.py --only 7b-1024 125m

The cases cover models from 125M to 405B parameters, short and long deadlines, every kind of
pricing (on-demand, spot, reservations, commitments), single clouds, GPU filters, pinned plans,
long sequences (context parallelism), LoRA, a probe calibration (measured matmul, fabric and
layer time), budgets and quotas that make the plan infeasible (the diagnosis and its
relaxations), 200 candidates as the team allocator asks, chart points, max GPUs of 1,024 and
16,384, and two team allocations. Each case's JSON (``PlanResult.as_dict(points=True)``; for a
team the ``Allocation`` without the solver's wall time) is compared byte for byte with
``benchmarks/data/golden_plans/<case>.json.gz`` (gzip: the chart points make the JSON large),
line by line, each number within a relative 1e-9 (``REL_TOL``: a numpy release moves the last
bits of its exp and erf; anything else that differs is another answer).

The stored files were written from the code before the speed work of issue #19, and rewritten
once since, on 2026-12-03, when plans began to be ranked by time per sequence trained instead of
step time (``planner.model.seconds_per_sequence``: a wrong answer, not a speed change), on the
packaged catalog whose SHA-256 is in ``benchmarks/data/golden_plans/catalog.sha256``: a different
catalog is reported as such (the answers are expected to differ), not as a regression.
The two team cases were rewritten alone on 2026-12-03 for a wording fix in their assumptions (the
probability also covers the model's range, not only interruptions); their allocations are unchanged.
``70b-infeasible-deadline-quotas`` was rewritten alone the same day: its reason said "best 0.0%"
for a best probability of 0.02% (now "best 0.02%"); nothing else in it changed.
The thirteen plan cases were rewritten on 2026-12-03 for text alone: thousands separators in
the notes ("1,343 offers", "up to 1,024 GPUs", "MTBF 2,023.9 h") and the commitment warning's
last clause (it now says how the unused hours are charged); a comparison with the separators
and that clause normalised away found every file otherwise identical. Eleven were rewritten
again that day for the goodput note alone: a spot plan's restart names spot_restart_minutes
(the constant it uses; it said restart_minutes) and the spot interruption rate keeps two
significant digits ("spot 7e-05/node-h", not "spot 0.000/node-h"); with those two normalised
away every file is identical.
The thirteen plan cases were rewritten on 2026-12-04 for the described candidates' assumptions
alone: a multi-node candidate now states its own cluster's inter-node network ("inter-node: 3200
Gb/s efa × 0.75 = 300 GB/s per node"), NVLink domain and probe-measured fabric, as `estimate`
does (it was described from one node's figures); with lines starting "inter-node:", "NVLink
domain" and "inter-node busbw at" dropped from both, every file is identical.
``70b-infeasible-deadline-quotas`` was rewritten alone on 2026-12-04 for its diagnosis: its
reason quoted the fastest of all plans (301 h, outside the budget and quotas) beside a
``fastest`` block of 823.7 h within them, and named only the deadline as binding; now the
reason quotes the plans within the limits and ``binding`` adds the budget and the quotas.
Only ``infeasible.reason`` and ``infeasible.binding`` changed.
The thirteen plan cases were rewritten again that day for the chart points' cost P10/P90,
now the cost at the P10/P90 hours as candidates are costed (it was the cost scaled by the
hours' spread): in ``70b-commitments-storage`` the reserved points' ranges changed (a run
inside one term pays it whole: up to 26% apart), elsewhere the same figures to float rounding
(at most 4.7e-16 relative); no other field changed. ``70b-commitments-storage`` was rewritten
once more for ``commitment.effective_usd_per_hour`` (and the warning quoting it), which no
longer counts the checkpoints' storage ($13.42 → $13.41 per instance-hour); nothing else.
``mistral-32k-fsdp-by-cloud-top200`` (the one fsdp case) was rewritten on 2026-12-04 for the
activations of eager layers (silu(gate) and repeated K/V kept, as measured on an H200): its
A100-40GB plans need tp2·cp4 instead of cp8, and the recommendation moves from 7 Azure
ND96asr_v4 ($8,876, 424 h) to 3 AWS p5.48xlarge ($9,068, 413 h). With
``FrameworkProfile.eager_layers`` off for every profile the new code writes the old file byte
for byte; the other fourteen cases (megatron) are identical.
Nine plan cases were rewritten on 2026-12-07 for ``regions`` alone: a plan shown on the
frontier, as the best per pricing model or group or in an infeasible answer now lists every
region selling its configuration at its price, as the top list does (it listed one, found only
among the candidates the top list needed). With every ``regions`` list dropped from both, each
file is identical (numbers within 1e-9), and every old list is a subset of the new one.
The same day ``70b-commitments-storage`` was rewritten for one added note (it asks for
committed_1y, which the packaged catalog has no offer of: the note says so; it was dropped
without a word) and the two team cases for a ``warnings`` list added to every job (the
workload's and the chosen plan's warnings, as ``plan`` gives them); nothing else changed.
``team-12-jobs`` was rewritten once more that day for two quota rows alone (June, where
no run is but a deadline falls: the table covers every month of the job windows).
On 2026-12-07 (later) ``8b-calibrated`` was rewritten for its layer-time notes alone: the
range a workload measurement moved is said "from σ 0.264 to 0.238", not "to σ 0.238" (with
both σ wordings normalised, the files are identical); and the two team cases for a
``calibration`` list added to every job (the measurements its plan used; [] there, nothing
stored); with that key dropped, each is identical.
``8b-calibrated`` was rewritten on 2026-12-04 when a workload measurement began to transfer to
the neighbouring recomputation setting (distance 1): frontier plans with selective
recomputation now carry the measured layer's time ratio (126 fields of ``frontier`` and
``points``; the recommendation and candidates are unchanged). With the transfer switched off
(``shape_distance`` None across recomputation) the new code writes the old file byte for byte.
It was rewritten again the same day when the ratio began to reach every micro-batch and
recomputation of the measured layer sizes (``same_layer_sizes``): ``frontier`` and ``points``
only (2,679 fields; the recommendation and candidates are unchanged); with that switched off
the new code writes the previous file byte for byte.
The catalog stamp was rewritten on 2026-12-04 for the accelerators' new ``inference_only``
column (Inferentia1/2, Qualcomm AI100); every case rendered identical before the stamp changed.
It was rewritten on 2026-12-07 when Azure's partial-GPU sizes (NV4as/NV8as/NV16as_v4: 1/8–1/2
of an MI25 priced as a whole one) left the snapshot (14,532 → 14,493 offers); every case
rendered the same before the stamp changed.
``7b-infeasible-budget`` was rewritten alone on 2026-12-04 when ``meets_deadline`` became the
deadline alone (it also required the budget and quotas, which ``within_limits`` says): 775
``meets_deadline`` fields of over-budget plans went from false to true, nothing else changed;
the other fourteen cases are identical.
``gpt2xl-aws-on-demand-by-accelerator``, ``team-example`` and ``team-12-jobs`` were rewritten
the same day when a tied model's model FLOPs began to count its output head (the shared table):
only ``mfu``, ``model_tflops_per_gpu`` and the assumption line quoting the model FLOPs per token
changed (333, 1 and 2 fields); hours, costs and choices are identical.
``70b-commitments-storage``, ``70b-infeasible-deadline-quotas`` and ``13b-spot-flagged-top200``
were rewritten the same day when interleaving began to require a layer (or the embedding or the
loss) in every one of the pp·vp chunks: rows at pp 64 lost their vp and fit memory, so only
``search.model_evaluations`` and the note quoting it changed (+32, +20, +12 rows timed).
``125m-1d`` and ``gpt2xl-aws-on-demand-by-accelerator`` were rewritten the same day for the
assumption line "range P10–P90 …" alone, which reads minutes below an hour (57 and 69 lines).
``gpt2xl-aws-on-demand-by-accelerator``, ``70b-commitments-storage`` and
``mistral-32k-fsdp-by-cloud-top200`` were rewritten the same day for ``regions`` alone: a plan
on the frontier, a side of ``spot_vs_on_demand`` or a ``by_group`` entry lists every region
with its configuration at its price, as the candidates do (90, 124 and 6 lists).
``mixtral-pinned-budget`` and ``team-example`` were rewritten on 2026-12-05 when the window
data-parallel communication hides under became its pass's wall time (launch- and host-bound
time included, not the GPU's work alone: faster HBM had made GPT-2 on 4,096 H200 0.3% slower
than on H100) and the MoE constants were refitted on it (``ep_comm_overlap`` 0.5110 → 0.5114,
``moe_overhead_s_per_layer`` 4.058 → 4.065 ms; the dense ones did not move). Mixtral keeps its
recommendation and candidates (the same plans, hours within 0.3%); at large node counts more of
the all-reduce hides under MoE dispatch time (up to 4% faster), so its frontier gains 3 plans
(37 → 40) and its chart points 11 (987 → 998). ``team-example``: 22 fields of one MoE job
(hours, cost +0.008%, one end time a minute later); its allocation is unchanged. The thirteen
dense cases render byte-identical.
All fifteen were rewritten on 2026-12-05 when the ``catalog`` record of a plan or allocation
began to say which clouds' price dates are approximate (``as_of_approximate``, from
``Catalog.provenance``; the reports, banner and app show them with "~"): with that one field
dropped every file is identical.
The thirteen plan cases were rewritten the same day when each plan's ``workload`` began to state
its LoRA rank (``lora_rank``: null without LoRA) and ``70b-lora-a100``'s model-FLOPs assumption
the rank and the share of weights its adapters train ("LoRA rank 16: 4·N, adapters of 0.29% of
the weights trained" where it said "LoRA 4·N"); with those two normalised away every file is
identical.
The thirteen plan cases were rewritten the same day for the goodput note's checkpoint write
and interval alone, now in the unit each reads in ("checkpoint 0.014 s every 28 s" where it
said "checkpoint 0 s every 0.01 h"; "47 s every 7.9 h" for "47 s every 7.86 h"); with that
clause normalised away every file is identical.
``70b-lora-a100`` was rewritten alone on 2026-12-06 when LoRA adapters began to count as
parameters of their own (``ModelScalars.adapter_fraction``): their 6·N_a FLOPs per token in
the step time and MFU and their bf16 weights in memory, so its hours rose 0.33% (27.66 → 27.75
h) and its model-FLOPs note names the adapters' parameters; the other fourteen cases are
identical.
The thirteen plan cases were rewritten the same day when an estimate's P10–P90 became the
quantiles of the calendar time with Poisson interruptions, as a candidate's already were
(``_goodput.calendar_range``; `estimate` gave one configuration another range than `plan`):
each described plan's ``range`` (``distribution`` and its P10/P90 factors) and its "range
P10–P90" assumption changed — no hours, cost, probability or choice; the team cases are
identical.
Twelve plan cases were rewritten on 2026-12-06 for three warnings' durations alone, now written
as the cards write them (``format_hours``): "for 234 h (9.7 d) is above the 8-instance spot
fleet limit" where it said "for 234 h" (and "for 0 h" for a 27-minute run), "a 13.3 h run"
in the commitment warning, "expected … against …" in the deadline warning; with those clauses
normalised away every file is identical. The same twelve were rewritten again that day for the
notes' deadline alone, written as the cards write it ("deadline 336 h (14.0 d)", "deadline
3.0 h", where it said "deadline 336.0 h"); with it normalised away every file is identical.
``405b-16384-h100-h200`` and ``70b-infeasible-deadline-quotas`` were rewritten the same day
for the durations in ``infeasible.reason`` alone ("within 48 h (2.0 d)", "the fastest takes
331 h (13.8 d)"); with them normalised away both files are identical.
All fifteen cases were rewritten on 2026-12-06 (a later session) for one clause of the memory
note of megatron candidates alone ("; gradients in bf16 as they are reduced (grad_reduce_bytes
2, as NeMo's performance recipes; …)": Megatron holds gradients in the reduction's dtype, which
``--assume grad_reduce_bytes=4`` now also makes fp32 in memory); with it removed every file is
identical.
``125m-1d`` was rewritten alone on 2026-12-06 (a later session) for its sequence note: a model
given by its parameter count says "gpuplan's default: a parameter count gives no context
length" where it said "the model's pre-training context" (58 lines); with that clause
normalised away the file is identical.
``70b-lora-a100`` was rewritten alone on 2026-12-06 (the seventeenth session) when ZeRO-1/2
began to gather back only the weights the optimizer updated — a LoRA run's adapters, not the
frozen base (``_perf.evaluate``'s ``updated_bytes``): its recommendation (4 nodes, 27.75 h)
is unchanged; its frontier gains tensor-parallel ZeRO-1 layouts that were comm-bound before
(5 nodes, 22.6 h, tp4 dp10), so 60 of its 63 entries move; the other fourteen are identical.
Five cases were rewritten the same day when context parallelism began to be searched from
8,192-token sequences (``_grid.CP_SEARCH_MIN_SEQ``, was 16,384; NeMo's Llama 3 recipes run CP 2
there): ``405b-16384-h100-h200``'s fastest plan 2,420 → 2,247 h (cp2 halves its bubble share;
still infeasible in 120 d) and its frontier 145 → 74 plans; ``70b-commitments-storage`` and
``8b-calibrated`` keep their recommendations (frontiers 123 → 108 and 20 → 21 plans);
``team-12-jobs`` costs 0.46% less ($112,323 → $111,803; two Llama 3 jobs per size take fewer
GPUs for longer); ``team-example`` counts one more option (75 → 76). The other ten are
identical.
The thirteen plan cases were rewritten on 2026-12-06 (a later session) when each estimate's
``workload`` began to state the attention it times beyond full causal (``window_tokens``,
``windowed_layers``, ``chunk_tokens``, ``chunked_layers``: 0 without); with those four keys
removed every file is identical, and the team cases are unchanged.
``7b-16384`` was rewritten alone the same day when a step spent mostly waiting began to be
warned of (``planner/model/_waste.py``: communication and the pipeline bubble above half the
step): 171 of its 365 frontier plans (1,000 to 16,384 GPUs for a 7B model) gained that
warning; with it removed the file is identical.
``gpt2xl-aws-on-demand-by-accelerator`` and ``team-12-jobs`` were rewritten the same day when
sequences shorter than 2,048 tokens began to search micro-batches beyond 16 (``_grid.mb_options``:
up to 16 × 2,048 tokens a micro-batch): GPT-2 XL's 1,024-token sequences now run micro-batches of
32 (11.61 → 11.36 h, $1,323 → $1,294 on the same p6-b200.48xlarge; every listed plan's hours
and cost move alike), and the team case counts 86 options where it counted 84 (its allocation,
costs and dates are identical).
All cases but ``gpt2xl-aws-on-demand-by-accelerator`` were rewritten the same day, with the
catalog stamp, when the packaged snapshot was rebuilt (14,468 → 14,532 offers): AWS spot rows of
the 2025-11-30 table with an average but no minimum became offers at that average with their
date and interruption bucket (64 new, 58 re-dated from the v7 table), and GCP's a2-highgpu-1g/2g
in asia-southeast1 took their priced zones' prices. No recommendation changed, nor either team
allocation; the candidates, offer counts, flagged-offer notes and the team cases' option counts
did (a new p5.48xlarge ap-southeast-3 spot offer is among the 7B candidates).
Seven of them were rewritten again the same day, with the stamp, for those 122 offers' source
alone, which now says their average is a whole percentage below on-demand, as the Spot Instance
Advisor's savings estimate ("(spot: the row's average over the region's zones, given with no
minimum; …)"); with that text normalised every file is identical.
``gpt2xl-aws-on-demand-by-accelerator`` was rewritten again the same day when a micro-batch
beyond 16 began to need a 2% gain to be chosen (``_grid.MB_BEYOND_GAIN``; a 0.02% gain had
taken gpt2-medium from 8.5 to 37.5 GiB a GPU): its recommendation keeps 32 (11.36 h), while
three p5en.48xlarge candidates went back to 16 (22.37 → 22.56 h and alike) and the candidate
order moved with them.
Eleven cases were rewritten again the same day, with the stamp, when the outlier rule stopped
counting spot rows at or above on-demand (``catalog/_anomalies.py``: they had raised the
p5.4xlarge spot median to 8.26 $/GPU-h and flagged a 2.37 one): ten offers' flags changed, so
the flagged-offer notes and counts and one team case's option count moved; no recommendation,
allocation or cost changed.
The two team cases were rewritten on 2026-12-07 when the team MILP moved from scipy's ``milp``
to HiGHS' own binding (``planner/team/_highs.py``, the same solver, a newer release): the
solver's message reads "Optimal (HiGHS status 7)", and in ``team-12-jobs`` one job's instance
is a3-edgegpu-8g instead of a3-edgegpu-8g-nolssd, a tie (the same GPUs, price, hours and cost:
no other line of the file changed); the allocations' costs are identical.
``7b-16384`` and ``405b-16384-h100-h200`` were rewritten again the same day when the spot
capacity warning began to write its instance count with separators ("1,000 spot p5.48xlarge",
as the hours beside it are written): those warnings alone changed (155 lines in the first,
30 in the second: one per plan of more than 999 spot instances).
``125m-1d`` was rewritten alone on 2026-12-07 (a later session) for the name of a shape
inferred from ``params``: ``"model": "inferred"`` became ``"125M model (inferred shape)"`` (plan
headers read "gpuplan plan for inferred, 300B tokens"); those 58 lines (one per plan) alone
changed.
The thirteen plan cases were rewritten the same day for one added field per plan,
``checkpoint_storage_usd`` (what the checkpoints' storage adds to ``total_cost_usd``; null
without a storage price, 63.02 in ``70b-commitments-storage``'s recommendation): with that key
dropped, nine files are byte for byte the old ones and four differ in float rounding alone (at
most 4.3e-16 relative: ``gpt2xl-aws-on-demand-by-accelerator``,
``70b-infeasible-deadline-quotas``, ``7b-infeasible-budget``, ``13b-spot-flagged-top200``).
Exit status: 0 identical, 1 a case differs, 3 the packaged catalog is not the one the files
were written with.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = ROOT / "benchmarks" / "data" / "golden_plans"
CATALOG_FILES = ("accelerators.csv", "instance_types.csv", "offers.csv", "meta.json")

# name → plan() arguments: workload spec fields, constraints fields, plan() keywords
PLANS: dict[str, dict] = {
    "7b-1024": {"workload": {"model": "llama2-7b", "tokens": "1T"},
                "constraints": {"deadline": "14d", "max_gpus": 1024}},
    "7b-16384": {"workload": {"model": "llama2-7b", "tokens": "1T"},
                 "constraints": {"deadline": "14d", "max_gpus": 16384}},
    "125m-1d": {"workload": {"params": "125M", "tokens": "5B"},
                "constraints": {"deadline": "1d", "max_gpus": 1024}},
    "gpt2xl-aws-on-demand-by-accelerator": {
        "workload": {"model": "gpt2-xl", "tokens": "30B"},
        "constraints": {"deadline": "3d", "clouds": ("aws",), "pricing": ("on_demand",),
                        "group_by": "accelerator"},
        "top_n": 20},
    "70b-commitments-storage": {
        "workload": {"model": "llama3-70b", "tokens": "2T"},
        "constraints": {"deadline": "60d", "max_gpus": 2048,
                        "pricing": ("on_demand", "reserved_1y", "committed_1y",
                                    "capacity_block"),
                        "commitment_use": 0.5, "checkpoint_storage_usd_per_gb_month": 0.023}},
    "405b-16384-h100-h200": {
        "workload": {"model": "llama3-405b", "tokens": "15T"},
        "constraints": {"deadline": "120d", "max_gpus": 16384, "gpus": ("H100", "H200")}},
    "mixtral-pinned-budget": {
        "workload": {"model": "mixtral-8x7b", "tokens": "500B", "pins": {"tp": 2, "pp": 4}},
        "constraints": {"deadline": "30d", "budget_usd": 2_000_000}},
    "70b-infeasible-deadline-quotas": {
        "workload": {"model": "llama2-70b", "tokens": "2T"},
        "constraints": {"deadline": "5d", "budget_usd": 1_000_000,
                        "quotas": ({"cloud": "aws", "gpus": 256},)}},
    "7b-infeasible-budget": {
        "workload": {"model": "llama2-7b", "tokens": "1T"},
        "constraints": {"deadline": "14d", "budget_usd": 20_000,
                        "quotas": ({"cloud": "gcp", "gpus": 64},)}},
    "mistral-32k-fsdp-by-cloud-top200": {
        "workload": {"model": "mistral-7b", "tokens": "200B", "seq_len": 32768,
                     "framework": "fsdp"},
        "constraints": {"deadline": "20d", "min_probability": 0.0, "group_by": "cloud"},
        "top_n": 200},
    "13b-spot-flagged-top200": {
        "workload": {"model": "llama2-13b", "tokens": "500B"},
        "constraints": {"deadline": "21d", "pricing": ("spot",), "max_spot_instances": 4,
                        "allow_flagged": True, "min_probability": 0.95},
        "top_n": 200},
    "70b-lora-a100": {
        "workload": {"model": "llama3-70b", "tokens": "2B", "finetune": "lora"},
        "constraints": {"deadline": "2d", "gpus": ("A100-80GB",)}},
    "8b-calibrated": {
        "workload": {"model": "llama3-8b", "tokens": "1T"},
        "constraints": {"deadline": "10d", "max_gpus": 512, "gpus": ("H100",)},
        "calibration": True},
}
TEAMS = ("team-example", "team-12-jobs")
CASES = (*PLANS, *TEAMS)
FAST = ("7b-1024", "125m-1d", "7b-infeasible-budget", "70b-lora-a100", "8b-calibrated")


def catalog_sha256() -> str:
    """The packaged catalog the answers depend on (its data files, in a fixed order)."""
    import catalog

    packaged = Path(catalog.__file__).parent / "data"
    h = hashlib.sha256()
    for name in CATALOG_FILES:
        h.update(name.encode() + b"\0" + (packaged / name).read_bytes())
    return h.hexdigest()


def _calibration(cat):
    """A probe calibration: measured H100 matmul, p5 fabric at 2 and 8 nodes, and one
    measured layer of llama3-8b (micro-batch 1, no recomputation) under megatron."""
    from planner import WorkloadSpec, build_workload
    from planner.model import Calibration, Measurement, WorkloadMeasurement, shape_of

    h100 = cat.resolve_accelerator("H100")
    p5 = next(t.name for t in cat.instance_types if t.accelerator == h100 and t.cloud == "aws"
              and t.gpu_count == 8 and t.inter_node_gbps)
    w = build_workload(WorkloadSpec(model="llama3-8b", tokens="1T"))
    shape = shape_of(w, micro_batch=1, recompute="none")
    layer = WorkloadMeasurement(
        accelerator=h100, framework="megatron", shape=shape, measured_shape=shape,
        distance=0.0, measured_layer_seconds=0.031, modelled_layer_seconds=0.028,
        time_ratio=0.031 / 0.028, time_ratio_p10=1.08, time_ratio_p90=1.14,
        modelled_layer_memory_bytes=2.0e9, source="golden: report 1", report_ids=(1,))
    return Calibration(
        matmul_tflops={(h100, "bf16"): Measurement(720.0, "golden: report 1", unit="TFLOP/s")},
        inter_busbw_gb_per_s={(p5, 2): Measurement(300.0, "golden: report 2", unit="GB/s"),
                              (p5, 8): Measurement(240.0, "golden: report 3", unit="GB/s")},
        workload_layers={(h100, "megatron", shape): layer})


def run_plan(name: str, cat) -> dict:
    from planner import (
        NO_CALIBRATION,
        Constraints,
        PlanPins,
        WorkloadSpec,
        build_workload,
        parse_deadline,
        parse_quotas,
        plan,
    )

    case = PLANS[name]
    spec = dict(case["workload"])
    if "pins" in spec:
        spec["pins"] = PlanPins(**spec["pins"])
    workload = build_workload(WorkloadSpec(**spec))
    kw = dict(case["constraints"])
    kw["deadline_hours"] = parse_deadline(kw.pop("deadline"))
    if "quotas" in kw:
        kw["quotas"] = parse_quotas({"quotas": [dict(q) for q in kw["quotas"]]}, cat)
    cal = _calibration(cat) if case.get("calibration") else NO_CALIBRATION
    res = plan(workload, cat, Constraints(**kw), calibration=cal,
               top_n=case.get("top_n", 10), points=True)
    return res.as_dict(points=True)


def _team_12() -> dict:
    """Twelve jobs over the whole catalog: several models, windows and filters, a quota and
    budgets (the shape of benchmarks/team_report_speed.py, smaller)."""
    import datetime as dt

    models = ("llama3-8b", "llama2-7b", "llama2-13b", "mistral-7b", "llama3-70b", "gpt2-xl")
    jobs = []
    for i in range(12):
        model = models[i % len(models)]
        big = "70b" in model
        start = dt.date(2027, 1, 4) + dt.timedelta(days=9 * i)
        job = {"name": f"job-{i:02d}-{model}", "team": ("research", "product")[i % 2],
               "workload": {"model": model,
                            "tokens": f"{(20 + 10 * i) if big else (100 + 40 * i)}B"},
               "earliest_start": start.isoformat(),
               "deadline": (start + dt.timedelta(days=30 + 3 * i)).isoformat(),
               "priority": i % 3, "max_gpus": 512}
        if i % 4 == 3:
            job["clouds"] = [("aws", "gcp", "azure")[i % 3]]
        jobs.append(job)
    return {"name": "golden 12 jobs", "start_offsets_days": [0, 7], "min_probability": 0.9,
            "jobs": jobs,
            "quotas": [{"cloud": "aws", "accelerator": "H100", "gpus": 512},
                       {"cloud": "azure", "gpus": 256}],
            "budgets": {"2027Q1": 1_500_000, "2027Q2": 1_500_000}}


def run_team(name: str, cat) -> dict:
    from planner.team import allocate, load_team_plan, parse_team_plan

    if name == "team-example":
        tp = load_team_plan(ROOT / "examples" / "team.yaml", catalog=cat)
    else:
        tp = parse_team_plan(_team_12(), catalog=cat, source="golden-12.yaml")
    d = allocate(tp, catalog=cat).as_dict()
    d["solver"].pop("seconds", None)  # wall time of the solve: not part of the answer
    return d


def _finite(data):
    """NaN/infinity as null, as the CLI writes JSON."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(v) for v in data]
    return data


def render(name: str, cat) -> str:
    d = run_team(name, cat) if name in TEAMS else run_plan(name, cat)
    text = json.dumps(_finite(d), indent=1, default=str, allow_nan=False) + "\n"
    # the checkout's own path (a team plan names its file) is not part of the answer
    return text.replace(str(ROOT) + "/", "<repo>/")


def read_stored(name: str) -> str:
    return gzip.decompress((DATA / f"{name}.json.gz").read_bytes()).decode()


# Two answers are the same when every line is, its numbers within a relative 1e-9: a numpy
# release moves the last bits of exp/erf (numpy 2.3 -> 2.4 on 2026-12-06: 0.9393082113073747
# became 0.939308211307375 in every case's P(deadline)), which is no change of the answer; a
# change of plan, count or price moves a number far more than that, or a word.
REL_TOL = 1e-9
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


def _same_line(x: str, y: str) -> bool:
    if x == y:
        return True
    xs, ys = _NUMBER.findall(x), _NUMBER.findall(y)
    return (_NUMBER.sub("#", x) == _NUMBER.sub("#", y) and len(xs) == len(ys)
            and all(math.isclose(float(a), float(b), rel_tol=REL_TOL, abs_tol=1e-300)
                    for a, b in zip(xs, ys, strict=True)))


def first_difference(a: str, b: str) -> str | None:
    """Where ``b`` (now) gives another answer than ``a`` (stored); None if it is the same."""
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb, strict=False), start=1):
        if not _same_line(x, y):
            return f"line {i}: stored {x.strip()!r} now {y.strip()!r}"
    return None if len(la) == len(lb) else f"length: stored {len(la)} lines, now {len(lb)}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write the stored files")
    ap.add_argument("--only", nargs="*", choices=CASES, help="these cases only")
    args = ap.parse_args(argv)
    import catalog

    cat = catalog.load_catalog("packaged")
    names = args.only or CASES
    sha = catalog_sha256()
    stamp = DATA / "catalog.sha256"
    if args.write:
        DATA.mkdir(parents=True, exist_ok=True)
        stamp.write_text(sha + "\n")
    elif stamp.read_text().strip() != sha:
        print("the packaged catalog is not the one the golden files were written with: "
              "answers are expected to differ (rewrite them from trusted code)")
        return 3
    failed = 0
    for name in names:
        t = time.perf_counter()
        text = render(name, cat)
        s = time.perf_counter() - t
        path = DATA / f"{name}.json.gz"
        if args.write:
            path.write_bytes(gzip.compress(text.encode(), mtime=0))
            print(f"{name:40s} {s:6.2f} s  written ({len(text):,} bytes)")
            continue
        stored = read_stored(name)
        differs = first_difference(stored, text)
        failed += differs is not None
        print(f"{name:40s} {s:6.2f} s  "
              + ("identical" if stored == text else "the same (numbers within 1e-9)"
                 if differs is None else f"DIFFERS  ({differs})"))
    if not args.write:
        print(f"{len(names) - failed} of {len(names)} the same")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
