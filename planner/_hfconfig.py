"""Read a Hugging Face ``config.json`` (no network) into an Architecture.

Understands the Llama family (llama, mistral, qwen2, qwen3, gemma-style keys), Mixtral-style
MoE (num_local_experts / num_experts_per_tok), Qwen-MoE / DeepSeek (n_routed_experts,
moe_intermediate_size, n_shared_experts, first_k_dense_replace) and GPT-2 (n_layer, n_embd).
"""

from __future__ import annotations

import json
from pathlib import Path

from ._errors import WorkloadError
from ._workload import Architecture


def _get(cfg: dict, *keys: str, default=None):
    for k in keys:
        if k in cfg and cfg[k] is not None:
            return cfg[k]
    return default


def architecture_from_config(path: str | Path) -> tuple[Architecture, int | None]:
    path = Path(path)
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read config ({exc.strerror}). To fix: pass the "
                            "path of a Hugging Face config.json") from None
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}). To fix: "
                            "pass a Hugging Face config.json") from None
    if not isinstance(cfg, dict):
        raise WorkloadError(f"{path}: expected a JSON object of model settings, found "
                            f"{type(cfg).__name__}. To fix: pass a Hugging Face config.json")
    if isinstance(cfg.get("text_config"), dict):  # multimodal wrappers keep the LM inside
        cfg = {**cfg, **cfg["text_config"]}
    layers = _get(cfg, "num_hidden_layers", "n_layer", "num_layers")
    hidden = _get(cfg, "hidden_size", "n_embd", "d_model")
    heads = _get(cfg, "num_attention_heads", "n_head")
    vocab = _get(cfg, "vocab_size")
    missing = [n for n, v in (("num_hidden_layers", layers), ("hidden_size", hidden),
                              ("num_attention_heads", heads), ("vocab_size", vocab)) if v is None]
    if missing:
        raise WorkloadError(f"{path}: config lacks {missing}. To fix: use the model's "
                            "config.json, or give --params instead")
    try:
        return _architecture(cfg, path, layers, hidden, heads, vocab)
    except (TypeError, ValueError) as exc:
        raise WorkloadError(f"{path}: a size in the config is not a whole number ({exc}). "
                            "To fix: correct the config.json") from None


def _architecture(cfg: dict, path: Path, layers, hidden, heads, vocab):
    model_type = str(cfg.get("model_type", ""))
    gpt2_like = model_type in ("gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon")
    ffn = _get(cfg, "intermediate_size", "n_inner", "ffn_dim", default=None) or 4 * hidden
    experts = int(_get(cfg, "num_local_experts", "n_routed_experts", "num_experts", default=0))
    arch = Architecture(
        layers=int(layers), hidden=int(hidden), heads=int(heads),
        kv_heads=int(_get(cfg, "num_key_value_heads", default=heads)), ffn_hidden=int(ffn),
        vocab=int(vocab), gated_ffn=not gpt2_like,
        tied_embeddings=bool(cfg.get("tie_word_embeddings", gpt2_like)),
        head_dim=int(_get(cfg, "head_dim", default=0) or 0),
        experts=experts,
        experts_per_token=int(_get(cfg, "num_experts_per_tok", "moe_top_k", default=0)
                              if experts else 0),
        shared_experts=int(_get(cfg, "n_shared_experts", default=0) or 0),
        moe_ffn_hidden=int(_get(cfg, "moe_intermediate_size", default=0) or 0),
        dense_layers=int(_get(cfg, "first_k_dense_replace", default=0) or 0),
        name=str(cfg.get("_name_or_path") or path.parent.name or "config"),
    )
    seq = _get(cfg, "max_position_embeddings", "n_positions", "n_ctx")
    return arch, int(seq) if seq else None
