"""Workload and hardware options shared by `estimate` and `plan` (one definition each)."""

from __future__ import annotations

from typing import Annotated

import typer

Model = Annotated[str | None, typer.Option("--model", help="Preset: gpt2, gpt3-175b, "
                  "llama2-7b/13b/70b, llama3-8b/70b/405b, mistral-7b, mixtral-8x7b, "
                  "qwen2.5-7b/72b, deepseek-v3.")]
Config = Annotated[str | None, typer.Option("--config", help="A Hugging Face config.json "
                   "(read locally, no network).")]
Params = Annotated[str | None, typer.Option("--params", help="Total parameters (7B, 70e9): "
                   "a plausible architecture is inferred and stated.")]
ActiveParams = Annotated[str | None, typer.Option("--active-params", help="Active parameters "
                         "per token for MoE (with --params).")]
Experts = Annotated[int | None, typer.Option("--experts", help="MoE experts (with --params).")]
ExpertsPerToken = Annotated[int | None, typer.Option("--experts-per-token")]
Tokens = Annotated[str | None, typer.Option("--tokens", help="Training tokens: 2T, 300B, 2e12 "
                   "(default: 20 per active parameter, Chinchilla-optimal).")]
SeqLen = Annotated[int | None, typer.Option("--seq-len", help="Sequence length (default: the "
                   "model's pre-training context).")]
GlobalBatch = Annotated[str | None, typer.Option("--global-batch-tokens", help="Tokens per "
                        "optimizer step (default ≈ 4M).")]
Precision = Annotated[str, typer.Option("--precision", help="bf16, fp16 or fp8 (mixed).")]
Optimizer = Annotated[str, typer.Option("--optimizer", help="adamw, sgd or adafactor.")]
Recompute = Annotated[str, typer.Option("--recompute", help="auto (searched), none, "
                      "selective, full.")]
Finetune = Annotated[str, typer.Option("--finetune", help="full or lora.")]
LoraRank = Annotated[int, typer.Option("--lora-rank")]
Layers = Annotated[int | None, typer.Option("--layers", help="Override the layer count.")]
Hidden = Annotated[int | None, typer.Option("--hidden", help="Override the hidden size.")]
Heads = Annotated[int | None, typer.Option("--heads")]
KvHeads = Annotated[int | None, typer.Option("--kv-heads")]
FfnHidden = Annotated[int | None, typer.Option("--ffn-hidden")]
Vocab = Annotated[int | None, typer.Option("--vocab")]
Assume = Annotated[list[str] | None, typer.Option(
    "--assume", help="Override a model constant, e.g. --assume restart_minutes=30 "
    "(repeatable; `gpuplan estimate --list-assumptions` shows them).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def workload_spec(*, model, config, params, active_params, experts, experts_per_token, tokens,
                  seq_len, global_batch_tokens, precision, optimizer, recompute, finetune,
                  lora_rank, layers, hidden, heads, kv_heads, ffn_hidden, vocab):
    from planner import WorkloadSpec

    overrides = tuple((k, v) for k, v in (("layers", layers), ("hidden", hidden),
                                          ("heads", heads), ("kv_heads", kv_heads),
                                          ("ffn_hidden", ffn_hidden), ("vocab", vocab))
                      if v is not None)
    return WorkloadSpec(model=model, config=config, params=params, active_params=active_params,
                        experts=experts, experts_per_token=experts_per_token, tokens=tokens,
                        seq_len=seq_len, global_batch_tokens=global_batch_tokens,
                        precision=precision.lower(), optimizer=optimizer.lower(),
                        recompute=recompute.lower(), finetune=finetune.lower(),
                        lora_rank=lora_rank, arch_overrides=overrides)


def assumptions_from(assume: list[str] | None):
    from planner import Assumptions, PlannerError

    values = {}
    for item in assume or ():
        key, sep, raw = item.partition("=")
        if not sep:
            raise PlannerError(f"--assume {item!r} is not name=value. To fix: e.g. --assume "
                               "restart_minutes=30")
        try:
            values[key.strip()] = float(raw)
        except ValueError:
            raise PlannerError(f"--assume {key}: {raw!r} is not a number") from None
    return Assumptions().with_overrides(**values)
