"""Workload and hardware options shared by `estimate` and `plan` (one definition each), and
by `probe workload` (its own help where it times one setting instead of searching)."""

from __future__ import annotations

import math
from typing import Annotated

import typer

Model = Annotated[str | None, typer.Option("--model", help="Preset: gpt2, gpt2-medium, "
                  "gpt2-large, gpt2-xl, gpt3-175b, llama2-7b/13b/70b, llama3-8b/70b/405b, "
                  "mistral-7b, mixtral-8x7b, qwen2.5-7b/72b, deepseek-v3.")]
Config = Annotated[str | None, typer.Option("--config", help="A Hugging Face config.json "
                   "(read locally, no network).")]
Params = Annotated[str | None, typer.Option("--params", help="Total parameters (7B, 70e9): "
                   "a plausible architecture is inferred and stated.")]
ActiveParams = Annotated[str | None, typer.Option("--active-params", help="Active parameters "
                         "per token for MoE (with --params).")]
Experts = Annotated[int | None, typer.Option("--experts", help="MoE experts (with --params).")]
ExpertsPerToken = Annotated[int | None, typer.Option("--experts-per-token", help="Experts "
                            "each token is routed to (MoE, with --params).")]
Tokens = Annotated[str | None, typer.Option("--tokens", help="Training tokens: 2T, 300B, 2e12 "
                   "(default: 20 per active parameter, Chinchilla-optimal).")]
SeqLen = Annotated[int | None, typer.Option("--seq-len", help="Sequence length (default: the "
                   "model's pre-training context).")]
GlobalBatch = Annotated[str | None, typer.Option("--global-batch-tokens", help="Tokens per "
                        "optimizer step (default: by model size as GPT-3, at least one "
                        "sequence per 8 GPUs; 64 sequences when fine-tuning).")]
Precision = Annotated[str, typer.Option("--precision", help="bf16, fp16 or fp8 (mixed).")]
Optimizer = Annotated[str, typer.Option("--optimizer", help="adamw, sgd or adafactor.")]
Recompute = Annotated[str, typer.Option("--recompute", help="auto (searched), none, "
                      "selective, full.")]
Finetune = Annotated[str, typer.Option("--finetune", help="none (pre-training), full or lora "
                     "fine-tuning; fine-tuning gets fine-tuning defaults (4,096-token "
                     "sequences, 64-sequence batches) and needs --tokens.")]
LoraRank = Annotated[int | None, typer.Option("--lora-rank", help="LoRA adapter rank (with "
                     "--finetune lora; default 16).")]
Framework = Annotated[str, typer.Option("--framework", help="Training stack whose measured "
                      "efficiency to use: megatron (Megatron-LM/NeMo), fsdp (PyTorch FSDP, "
                      "torchtitan, llm-foundry), deepspeed, hf (Hugging Face Trainer).")]
Attention = Annotated[str, typer.Option("--attention", help="flash (the framework's flash "
                      "kernel: cuDNN/FA3 for megatron on Hopper, FlashAttention-2 otherwise), "
                      "triton (2022 FlashAttention in Triton, as MPT/llm-foundry), or unfused "
                      "(scores materialised).")]
Tp = Annotated[int | None, typer.Option("--tp", help="Pin the tensor-parallel degree "
               "(default: searched).")]
Pp = Annotated[int | None, typer.Option("--pp", help="Pin the pipeline-parallel degree.")]
Cp = Annotated[int | None, typer.Option("--cp", help="Pin the context-parallel degree.")]
Vp = Annotated[int | None, typer.Option("--vp", help="Pin the virtual pipeline stages per "
               "GPU (interleaved 1F1B).")]
Ep = Annotated[int | None, typer.Option("--ep", help="Pin the expert-parallel degree of a "
               "mixture of experts (a divisor of the expert count; default: searched).")]
Zero = Annotated[int | None, typer.Option("--zero", help="Pin the ZeRO/FSDP stage: 0 data "
                 "parallel, 1 sharded optimizer, 2 + gradients (FSDP SHARD_GRAD_OP), 3 + "
                 "weights (FSDP FULL_SHARD).")]
MicroBatch = Annotated[int | None, typer.Option("--micro-batch", help="Pin the sequences "
                       "per micro-batch per data-parallel rank.")]
# `probe workload` times one setting: nothing is searched there, so its help says what it times
ProbeRecompute = Annotated[str, typer.Option("--recompute", help="none, selective or full: "
                           "the activation recomputation timed (auto, which `estimate` and "
                           "`plan` search, is not taken here).")]
ProbeTp = Annotated[int | None, typer.Option("--tp", help="Tensor-parallel degree the layers "
                    "are split by (default: 1; the other processes are data parallel).")]
ProbeMicroBatch = Annotated[int | None, typer.Option("--micro-batch", help="Sequences per "
                            "micro-batch per data-parallel rank (default: 1).")]
Layers = Annotated[int | None, typer.Option("--layers", help="Override the layer count.")]
Hidden = Annotated[int | None, typer.Option("--hidden", help="Override the hidden size.")]
Heads = Annotated[int | None, typer.Option("--heads", help="Override the attention heads "
                  "(KV heads follow the grouped-query ratio unless given).")]
KvHeads = Annotated[int | None, typer.Option("--kv-heads", help="Override the key/value "
                    "heads (grouped-query attention).")]
FfnHidden = Annotated[int | None, typer.Option("--ffn-hidden", help="Override the FFN width.")]
Vocab = Annotated[int | None, typer.Option("--vocab", help="Override the vocabulary size.")]
Assume = Annotated[list[str] | None, typer.Option(
    "--assume", help="Override a model constant, e.g. --assume restart_minutes=30 "
    "(repeatable; `gpuplan estimate --list-assumptions` shows them).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
NoCalibration = Annotated[bool, typer.Option(
    "--no-calibration", help="Ignore ingested probe measurements: datasheet × published "
    "fractions only.")]


def workload_spec(*, model, config, params, active_params, experts, experts_per_token, tokens,
                  seq_len, global_batch_tokens, precision, optimizer, recompute, finetune,
                  lora_rank, layers, hidden, heads, kv_heads, ffn_hidden, vocab,
                  framework="megatron", attention="flash", tp=None, pp=None, cp=None, vp=None,
                  zero=None, micro_batch=None, ep=None):
    from planner.model import PlanPins, WorkloadError, WorkloadSpec, read_model_config

    from ._values import not_empty

    if lora_rank is not None and finetune.lower() != "lora":  # it would be ignored
        raise WorkloadError(f"--lora-rank {lora_rank} sets a LoRA adapter, but --finetune is "
                            f"{finetune!r}. To fix: add --finetune lora, or drop --lora-rank",
                            field="lora_rank", value=lora_rank)

    overrides = tuple((k, v) for k, v in (("layers", layers), ("hidden", hidden),
                                          ("heads", heads), ("kv_heads", kv_heads),
                                          ("ffn_hidden", ffn_hidden), ("vocab", vocab))
                      if v is not None)
    # the file is read only when it is the one source (two sources are one error, below);
    # --config '' is an error of its own, not "not given" (it was ignored beside --model)
    not_empty("--config", config)
    cfg = None if config is None else {} if (model or params) else read_model_config(config)
    return WorkloadSpec(model=model, config=cfg, config_name=config or "", params=params,
                        active_params=active_params,
                        experts=experts, experts_per_token=experts_per_token, tokens=tokens,
                        seq_len=seq_len, global_batch_tokens=global_batch_tokens,
                        precision=precision.lower(), optimizer=optimizer.lower(),
                        recompute=recompute.lower(), finetune=finetune.lower(),
                        **({} if lora_rank is None else {"lora_rank": lora_rank}),
                        framework=framework.lower(),
                        attention=attention.lower(),
                        pins=PlanPins(tp=tp, pp=pp, cp=cp, vp=vp, zero=zero,
                                      micro_batch=micro_batch, ep=ep),
                        arch_overrides=overrides)


def assumptions_from(assume: list[str] | None):
    from planner.model import Assumptions, PlannerError

    values = {}
    for item in assume or ():
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise PlannerError(f"--assume {item!r} is not name=value. To fix: e.g. --assume "
                               "restart_minutes=30")
        if key in values:  # two values for one constant: which one was meant is a guess
            raise PlannerError(f"--assume {key} is given twice. To fix: give each name once",
                               field="assume", value=item)
        try:
            if not raw.isascii():  # float() reads "٣٠" as 30; --tokens and --budget do not
                raise ValueError(raw)
            values[key] = float(raw)
        except ValueError:
            raise PlannerError(f"--assume {item!r}: {raw!r} is not a number. To fix: e.g. "
                               "--assume restart_minutes=30", field="assume",
                               value=item) from None
        if not math.isfinite(values[key]):  # 1e400 read as inf: say what was written
            raise PlannerError(f"--assume {item!r}: {raw.strip()!r} is not a finite number. To "
                               "fix: e.g. --assume restart_minutes=30", field="assume",
                               value=item)
    return Assumptions().with_overrides(**values)
