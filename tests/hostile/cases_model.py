"""Hostile inputs for `gpuplan estimate` and `gpuplan plan`: numbers that are not numbers or not
sensible, pins that cannot work, constants that cannot be overridden, limits out of range,
outputs that must not be written. Every case runs the real CLI in process (``_runner``).

Plans are kept small (gpt2 on AWS H100s, at most 16 GPUs) so the whole file runs in seconds.
"""

from __future__ import annotations

import json

from ._runner import Case, Directory, still_char_device

EST = ("estimate", "--model", "gpt2", "--gpu", "H100", "--gpus", "8", "--tokens", "1B")
PLAN = ("plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "2d", "--clouds", "aws",
        "--gpu", "H100", "--max-gpus", "16")


def est(id_: str, *extra: str, expect: int = 2, says: str = "", **kw) -> Case:
    return Case(id=f"estimate-{id_}", argv=(*EST, *extra), expect=expect, says=says, **kw)


def pln(id_: str, *extra: str, expect: int = 2, says: str = "", **kw) -> Case:
    return Case(id=f"plan-{id_}", argv=(*PLAN, *extra), expect=expect, says=says, **kw)


def nothing_printed(outcome) -> None:
    """The command stopped before printing a plan (its options are checked first)."""
    assert outcome.out == "", outcome.out[:200]


def stdout_is_json(outcome) -> None:
    """What a script reads is JSON and nothing after it (notes went to stderr)."""
    json.loads(outcome.out)
    assert "wrote" in outcome.err


NOT_NUMBERS = ("nan", "inf", "-inf", "1e400", "abc", "", "0x10", "1,5")

CASES: list[Case] = [
    # ---- the good ones: the limits do not refuse real input -------------------------------
    est("ok", expect=0),
    est("ok-json", "--json", expect=0, says='"wall_clock_hours_p90"'),
    est("ok-pinned", "--tp", "2", "--pp", "1", "--zero", "1", "--micro-batch", "4", expect=0),
    est("ok-fsdp", "--framework", "fsdp", expect=0),
    est("ok-hf-unfused", "--framework", "hf", "--attention", "unfused", expect=0),
    est("ok-triton", "--attention", "triton", expect=0),
    est("ok-assume-table", "--assume", "matmul_fraction.hopper=0.7", expect=0),
    est("ok-no-calibration", "--no-calibration", expect=0),
    Case(id="estimate-ok-list-assumptions", argv=("estimate", "--list-assumptions"), expect=0,
         says="gemm_efficiency"),
    Case(id="estimate-ok-lora", argv=("estimate", "--model", "llama3-8b", "--gpu", "H100",
                                      "--finetune", "lora", "--tokens", "100M"), expect=0),
    pln("ok", expect=0),
    pln("ok-by-accelerator", "--by", "accelerator", expect=0, says="Best plan per"),
    pln("ok-json", "--json", expect=0, says='"total_cost_usd_p90"'),
    pln("ok-reserved", "--pricing", "reserved_1y", "--commitment-use", "0.5", expect=0),
    pln("ok-allow-flagged", "--allow-flagged", expect=0),
    # ---- pins -----------------------------------------------------------------------------
    *[est(f"tp-{v or 'empty'}", "--tp", v) for v in ("nan", "0", "-2", "", "1.5")],
    est("tp-above-node", "--tp", "16", says="above the 8 GPUs per node"),
    est("tp-not-dividing-heads", "--tp", "8", says="must divide both"),
    est("tp-huge", "--tp", "99999999999999999999", says="from 1 to 131,072"),
    est("pp-above-layers", "--pp", "100000", says="above the model's 12 layers"),
    est("pp-zero", "--pp", "0", says="from 1 to"),
    est("cp-not-dividing-seq", "--cp", "3", says="must divide the sequence length"),
    est("cp-zero", "--cp", "0", says="from 1 to"),
    est("vp-zero", "--vp", "0", says="from 1 to"),
    est("vp-not-dividing", "--pp", "2", "--vp", "4", says="must divide"),
    *[est(f"ep-{v or 'empty'}", "--ep", v) for v in ("nan", "0", "-8", "", "2.5")],
    est("ep-on-dense", "--ep", "2", says="this model has no experts"),
    est("ep-huge", "--ep", "99999999999999999999", says="from 1 to 131,072"),
    Case(id="estimate-ep-not-dividing-experts",
         argv=("estimate", "--model", "mixtral-8x7b", "--gpu", "H100", "--gpus", "16",
               "--tokens", "1B", "--ep", "6"), expect=2, says="must divide the 8 experts"),
    Case(id="estimate-ep-above-the-cluster",
         argv=("estimate", "--model", "mixtral-8x7b", "--gpu", "H100", "--gpus", "4",
               "--tokens", "1B", "--ep", "8"), expect=2, says="To fix"),
    Case(id="estimate-ep-hf", argv=("estimate", "--model", "mixtral-8x7b", "--gpu", "H100",
                                    "--gpus", "16", "--tokens", "1B", "--framework", "hf",
                                    "--ep", "2"), expect=2, says="has no expert parallelism"),
    Case(id="estimate-ok-ep", argv=("estimate", "--model", "mixtral-8x7b", "--gpu", "H100",
                                    "--gpus", "16", "--tokens", "1B", "--ep", "4", "--json"),
         expect=0, says='"ep": 4'),
    Case(id="estimate-experts-beyond-the-count",
         argv=("estimate", "--params", "100B", "--active-params", "10B", "--experts",
               "100000000", "--gpu", "H100", "--gpus", "8", "--tokens", "1B"), expect=2,
         says="must be a whole number from 0 to 65,536"),
    Case(id="estimate-experts-no-shape",
         argv=("estimate", "--params", "1B", "--active-params", "0.9B", "--experts",
               "60000", "--gpu", "H100", "--gpus", "8", "--tokens", "1B"), expect=2,
         says="no Llama-style shape"),
    est("zero-5", "--zero", "5", says="zero must be one of 0, 1, 2, 3"),
    est("zero-neg", "--zero", "-1", says="zero must be one of 0, 1, 2, 3"),
    est("zero-2-megatron", "--zero", "2", says="has no ZeRO stage 2"),
    est("hf-tp", "--framework", "hf", "--tp", "2", says="has no tensor parallelism"),
    est("deepspeed-cp", "--framework", "deepspeed", "--cp", "2",
        says="has no context parallelism"),
    est("micro-batch-zero", "--micro-batch", "0", says="from 1 to"),
    est("micro-batch-huge", "--micro-batch", "100000000", says="from 1 to 65,536"),
    est("split-not-dividing", "--tp", "2", "--pp", "3", says="does not divide the 8 GPUs"),
    pln("tp-no-instance", "--tp", "9", says="pinned plan"),
    pln("zero-3-pp-megatron", "--zero", "3", "--pp", "2", says="cannot combine ZeRO stage 3"),
    pln("pp-above-layers", "--pp", "100", says="above the model's 12 layers"),
    pln("ep-on-dense", "--ep", "4", says="this model has no experts"),
    Case(id="plan-ep-not-dividing-experts",
         argv=("plan", "--model", "mixtral-8x7b", "--tokens", "1B", "--deadline", "2d",
               "--clouds", "aws", "--max-gpus", "32", "--ep", "16"), expect=2,
         says="ep=16 must divide the 8 experts"),
    # ---- the stack ------------------------------------------------------------------------
    est("framework-typo", "--framework", "megatronn", says="--framework 'megatronn'"),
    est("framework-empty", "--framework", "", says="--framework ''"),
    est("attention-typo", "--attention", "flashh", says="--attention 'flashh'"),
    est("precision-typo", "--precision", "fp4", says="--precision 'fp4'"),
    est("optimizer-typo", "--optimizer", "adam", says="--optimizer 'adam'"),
    est("recompute-typo", "--recompute", "some", says="--recompute 'some'"),
    est("finetune-typo", "--finetune", "qlora", says="--finetune 'qlora'"),
    Case(id="estimate-finetune-needs-tokens", argv=("estimate", "--model", "gpt2", "--gpu",
                                                    "H100", "--finetune", "full"),
         expect=2, says="fine-tuning needs"),
    Case(id="estimate-lora-rank-zero", argv=("estimate", "--model", "gpt2", "--gpu", "H100",
                                             "--finetune", "lora", "--lora-rank", "0",
                                             "--tokens", "1M"), expect=2, says="--lora-rank"),
    Case(id="estimate-lora-rank-huge", argv=("estimate", "--model", "gpt2", "--gpu", "H100",
                                             "--finetune", "lora", "--lora-rank", "100000000",
                                             "--tokens", "1M"), expect=2, says="--lora-rank"),
    # ---- sizes ----------------------------------------------------------------------------
    *[est(f"seq-len-{v}", "--seq-len", v) for v in ("0", "-1", "100000000000", "nan", "")],
    *[est(f"global-batch-{v or 'empty'}", "--global-batch-tokens", v)
      for v in ("0", "nan", "inf", "10", "-4M", "1e400", "")],
    *[est(f"{f}-{v}", f"--{f}", v) for f in ("layers", "hidden", "heads", "kv-heads",
                                              "ffn-hidden", "vocab")
      for v in ("0", "-1", "1000000000000")],
    est("kv-heads-not-dividing", "--kv-heads", "5", says="multiple of kv_heads"),
    # beside --model an empty --config was ignored (exit 0); alone it blamed the sources
    est("config-empty-beside-model", "--config", "", says="--config is empty"),
    Case(id="estimate-config-empty-alone", argv=("estimate", "--config", "", "--gpu", "H100",
                                                 "--gpus", "8"), expect=2,
         says="--config is empty"),
    *[Case(id=f"estimate-gpus-{v or 'empty'}", argv=("estimate", "--model", "gpt2", "--gpu",
                                                     "H100", "--gpus", v, "--tokens", "1B"),
           expect=2) for v in ("0", "-8", "1000000000", "nan", "12", "")],
    *[Case(id=f"estimate-nodes-{v}", argv=("estimate", "--model", "gpt2", "--instance",
                                           "p5.48xlarge", "--nodes", v, "--tokens", "1B"),
           expect=2) for v in ("0", "-1", "100000000", "1e3")],
    *[Case(id=f"estimate-tokens-{v or 'empty'}", argv=("estimate", "--model", "gpt2", "--gpu",
                                                       "H100", "--tokens", v), expect=2)
      for v in ("0", "-1T", "nan", "inf", "1e400", "", "2X", "1e16")],
    *[Case(id=f"estimate-params-{v or 'empty'}", argv=("estimate", "--params", v, "--gpu",
                                                       "H100", "--tokens", "1B"), expect=2)
      for v in ("0", "-7B", "nan", "1e15", "", "seven")],
    Case(id="estimate-active-above-total", argv=("estimate", "--params", "10B",
                                                 "--active-params", "20B", "--gpu", "H100",
                                                 "--tokens", "1B"),
         expect=2, says="cannot exceed --params"),
    Case(id="estimate-model-typo", argv=("estimate", "--model", "llama3-8", "--gpu", "H100",
                                         "--tokens", "1B"), expect=2, says="Did you mean"),
    Case(id="estimate-gpu-typo", argv=("estimate", "--model", "gpt2", "--gpu", "H10O",
                                       "--tokens", "1B"), expect=2, says="Did you mean"),
    Case(id="estimate-two-sources", argv=("estimate", "--model", "gpt2", "--params", "7B",
                                          "--gpu", "H100"), expect=2, says="exactly one of"),
    Case(id="estimate-no-hardware", argv=("estimate", "--model", "gpt2"), expect=2,
         says="give either --instance"),
    Case(id="estimate-fp8-on-v100", argv=("estimate", "--model", "gpt2", "--gpu",
                                          "V100-32GB", "--precision", "fp8", "--tokens", "1B"),
         expect=2, says="no fp8 peak"),
    Case(id="estimate-t4-bf16", argv=("estimate", "--model", "gpt2", "--gpu", "T4",
                                      "--gpus", "4", "--tokens", "1B"), expect=2,
         says="no bf16 peak"),
    Case(id="estimate-t4-fp16", argv=("estimate", "--model", "gpt2", "--gpu", "T4",
                                      "--gpus", "4", "--tokens", "1B", "--precision", "fp16"),
         expect=0),
    # ---- --assume -------------------------------------------------------------------------
    *[est(f"assume-{name}", "--assume", value, says=says) for name, value, says in (
        ("nan", "restart_minutes=nan", "finite"), ("inf", "restart_minutes=inf", "finite"),
        ("1e400", "restart_minutes=1e400", "finite"), ("negative", "restart_minutes=-5",
                                                          "outside"),
        ("table", "matmul_fraction=0.5", "is a table"), ("no-eq", "restart_minutes",
                                                          "not name=value"),
        ("empty", "=", "not name=value"), ("text", "restart_minutes=abc", "not a number"),
        ("typo", "restart_minuts=30", "Did you mean"), ("entry-typo",
                                                         "matmul_fraction.hoper=0.5",
                                                         "Did you mean 'hopper'"),
        ("share-above-one", "gemm_efficiency.fsdp=1.5", "outside"),
        ("scalar-entry", "restart_minutes.x=1", "single number"),
        ("integer", "kernels_per_layer=1.5", "whole number"),
        ("fraction-zero", "memory_bandwidth_efficiency=0", "outside"))],
    est("assume-twice", "--assume", "restart_minutes=1", "--assume", "restart_minutes=2",
        says="--assume restart_minutes is given twice"),
    # each share is in range alone; together they left no time ("the fastest takes inf h")
    pln("assume-lost-time-sums-to-one", "--assume", "evaluation_fraction=0.5", "--assume",
        "operational_loss_fraction=0.5", says="leave no calendar time for training"),
    pln("assume-lost-time-above-one", "--assume", "operational_loss_fraction=0.999",
        says="0.0075 + 0.999 leave no calendar time"),
    Case(id="estimate-fewer-tokens-than-one-step",
         argv=("estimate", "--model", "gpt2", "--gpu", "H100", "--gpus", "8", "--tokens", "3",
               "--json"), expect=0, says="the run (3 tokens) is shorter than one optimizer"),
    # a count is whole: 1.5 tokens ran as one step and read "2 tokens"
    Case(id="estimate-fractional-tokens",
         argv=("estimate", "--model", "gpt2", "--gpu", "H100", "--gpus", "8", "--tokens", "1.5"),
         expect=2, says="--tokens must be a whole number of tokens, got 1.5"),
    Case(id="estimate-model-empty", argv=("estimate", "--model", "", "--gpu", "H100"), expect=2,
         says="--model is empty"),
    # ---- workload options that the chosen source does not take ------------------------------
    est("lora-rank-without-lora", "--lora-rank", "8", says="but --finetune is 'none'"),
    Case(id="estimate-lora-rank-negative", argv=("estimate", "--model", "llama2-7b", "--gpu",
                                                 "H100", "--finetune", "lora", "--tokens", "10M",
                                                 "--lora-rank", "-1"), expect=2,
         says="between 1 and the hidden size (4096)"),
    est("experts-with-a-preset", "--experts", "0", says="describes a model given by --params"),
    Case(id="estimate-experts-zero-is-dense-not-inferred",
         argv=("estimate", "--params", "47B", "--active-params", "13B", "--experts", "0",
               "--experts-per-token", "0", "--gpu", "H100", "--gpus", "64"), expect=2,
         says="--experts 0 says the model is dense, but --active-params is below"),
    # it inferred "8 experts top-2" from 0, and then blamed a default --experts-per-token
    Case(id="estimate-experts-for-a-dense-count",
         argv=("estimate", "--params", "47B", "--active-params", "47B", "--experts", "8",
               "--gpu", "H100", "--gpus", "64"), expect=2,
         says="--experts 8 describes a mixture of experts, but --active-params equals"),
    # the default top-2 was blamed as if given: "--experts (1) must exceed --experts-per-token"
    Case(id="estimate-experts-one-with-the-default-top-2",
         argv=("estimate", "--params", "47B", "--active-params", "13B", "--experts", "1",
               "--gpu", "H100", "--gpus", "64"), expect=2,
         says="--experts 1: a mixture routes each token to fewer experts than it has, and "
              "the default is 2 per token. To fix: give more --experts"),
    Case(id="estimate-experts-active-above-total",  # still "cannot exceed", not "equals"
         argv=("estimate", "--params", "47B", "--active-params", "50B", "--experts", "8",
               "--gpu", "H100", "--gpus", "64"), expect=2,
         says="--active-params cannot exceed --params"),
    Case(id="estimate-experts-per-token-without-a-mixture",
         argv=("estimate", "--params", "7B", "--experts-per-token", "2", "--gpu", "H100"),
         expect=2, says="--experts-per-token describes a mixture of experts"),
    Case(id="estimate-experts-negative", argv=("estimate", "--params", "7B", "--experts", "-1",
                                               "--gpu", "H100"), expect=2,
         says="from 0 to 65,536"),
    # ---- plan limits ----------------------------------------------------------------------
    *[pln(f"budget-{v or 'empty'}", "--budget", v) for v in ("nan", "inf", "-5", "0", "")],
    *[pln(f"min-probability-{v}", "--min-probability", v) for v in ("nan", "2", "-0.1",
                                                                     "inf", "1", "1.0")],
    *[pln(f"top-{v}", "--top", v) for v in ("0", "-1", "100000000", "nan")],
    *[Case(id=f"plan-max-gpus-{v}", argv=(*PLAN[:-1], v), expect=2)
      for v in ("0", "-1", "1000000000000", "nan")],
    *[pln(f"commitment-use-{v}", "--commitment-use", v) for v in ("2", "-0.5", "nan", "inf")],
    *[pln(f"max-spot-{v}", "--max-spot-instances", v) for v in ("0", "-3", "1000000000")],
    pln("by-region", "--by", "region", says="group by 'region'"),
    *[pln(f"storage-{v}", "--checkpoint-storage-usd-per-gb-month", v)
      for v in ("nan", "-1", "1e9")],
    pln("pricing-typo", "--pricing", "free", says="unknown pricing model"),
    pln("region-typo", "--regions", "us-east-l", says="unknown region"),
    pln("cloud-typo", "--clouds", "oracle", says="unknown cloud"),
    pln("exclude-typo", "--exclude", "p5.48xlarg", says="Did you mean"),
    pln("everything-excluded", "--exclude", "aws", says="no offer matches"),
    pln("quota-file-empty", "--quota-file", "", says="empty"),
    pln("quota-file-missing", "--quota-file", "/nonexistent/quotas.yaml"),
    pln("overrides-missing", "--overrides", "/nonexistent/overrides.yaml"),
    *[Case(id=f"plan-deadline-{v or 'empty'}", argv=(*PLAN[:6], v, *PLAN[7:]), expect=2,
           says="deadline")
      for v in ("0h", "-1d", "nanh", "2000-01-01", "", "soon", "100000w")],
    Case(id="plan-impossible-deadline", argv=("plan", "--model", "gpt2", "--tokens", "1T",
                                              "--deadline", "2h", *PLAN[7:]), expect=2,
         says="infeasible"),
    # ---- launch files from plan --emit ----------------------------------------------------
    pln("emit-typo", "--emit", "kubernetes", says="unknown --emit target"),
    pln("emit-out-directory", "--emit", "skypilot", "--emit-out", "{d}",
        files={"d": Directory()}, says="is a directory"),
    pln("emit-out-device", "--emit", "skypilot", "--emit-out", "/dev/null",
        says="is a device", check=still_char_device("/dev/null")),
    pln("emit-out-missing-dir", "--emit", "dstack", "--emit-out", "{tmp}/no/such/dir/t.yml"),
    pln("emit-ok", "--emit", "torchrun", "--emit-out", "{tmp}/launch.sh", expect=0),
    # refused before the search: no plan printed, then an error (exit 2 after a whole plan)
    pln("emit-out-proc", "--emit", "skypilot", "--emit-out", "/proc/gpuplan-task.yaml",
        says="/proc", check=nothing_printed),
    pln("emit-out-trailing-slash", "--emit", "skypilot", "--emit-out", "{tmp}/t.yaml/",
        says="ends with '/'", check=nothing_printed),
    pln("emit-out-without-emit", "--emit-out", "{tmp}/t.yaml", says="no --emit was given",
        check=nothing_printed),
    pln("emit-empty", "--emit", "", says="unknown --emit target ''", check=nothing_printed),
    pln("by-empty", "--by", "", says="group by ''"),
    pln("emit-to-stdout-beside-json", "--json", "--emit", "skypilot",
        says="--json and the --emit launch file would both go to stdout", check=nothing_printed),
    pln("emit-to-a-file-beside-json", "--json", "--emit", "skypilot", "--emit-out",
        "{tmp}/t.yaml", expect=0, says='"recommendation"', check=stdout_is_json),
    # ---- pins too large for the grid's integers (were OverflowError tracebacks) ------------
    est("vp-huge", "--pp", "2", "--vp", "9" * 23, says="from 1 to 10,000"),
    est("micro-batch-2-to-63", "--micro-batch", str(2**63), says="from 1 to 65,536"),
    pln("micro-batch-20-digits", "--micro-batch", "9" * 20, says="from 1 to 65,536"),
    est("vp-without-pipeline", "--pp", "1", "--vp", "2", says="pp=1 has no pipeline"),
    est("vp-above-layers", "--vp", "64", says="above the model's 12 layers"),
    pln("quota-month", "--quota-file", "{q}", files={"q": "quotas:\n  - {cloud: aws, gpus: 8, "
        "month: '2026-12'}\n"}, says="only team plans have"),
]

