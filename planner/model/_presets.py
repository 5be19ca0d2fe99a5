"""Public architectures by name (`--model NAME`). Shapes from each model's published
config.json / paper; the default sequence length is the pre-training context.

Sources: GPT-2 (openai-community/gpt2* config.json), GPT-3 (arXiv:2005.14165 Table 2.1),
Llama 2 (meta-llama/Llama-2-*-hf config.json; arXiv:2307.09288), Llama 3/3.1
(meta-llama/Meta-Llama-3-*, Llama-3.1-405B config.json; arXiv:2407.21783 Table 3),
Mistral 7B / Mixtral 8x7B (mistralai/*-v0.1 config.json), Qwen2.5 (Qwen/Qwen2.5-*
config.json), DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json; arXiv:2412.19437).
"""

from __future__ import annotations

from catalog import UnknownNameError

from ._workload import Architecture

# name → (Architecture kwargs, pre-training sequence length)
_PRESETS: dict[str, tuple[dict, int]] = {
    "gpt2": (dict(layers=12, hidden=768, heads=12, kv_heads=12, ffn_hidden=3072, vocab=50257,
                  gated_ffn=False, tied_embeddings=True), 1024),
    "gpt2-medium": (dict(layers=24, hidden=1024, heads=16, kv_heads=16, ffn_hidden=4096,
                         vocab=50257, gated_ffn=False, tied_embeddings=True), 1024),
    "gpt2-large": (dict(layers=36, hidden=1280, heads=20, kv_heads=20, ffn_hidden=5120,
                        vocab=50257, gated_ffn=False, tied_embeddings=True), 1024),
    "gpt2-xl": (dict(layers=48, hidden=1600, heads=25, kv_heads=25, ffn_hidden=6400,
                     vocab=50257, gated_ffn=False, tied_embeddings=True), 1024),
    "gpt3-175b": (dict(layers=96, hidden=12288, heads=96, kv_heads=96, ffn_hidden=49152,
                       vocab=50257, gated_ffn=False, tied_embeddings=True), 2048),
    "llama2-7b": (dict(layers=32, hidden=4096, heads=32, kv_heads=32, ffn_hidden=11008,
                       vocab=32000), 4096),
    "llama2-13b": (dict(layers=40, hidden=5120, heads=40, kv_heads=40, ffn_hidden=13824,
                        vocab=32000), 4096),
    "llama2-70b": (dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672,
                        vocab=32000), 4096),
    "llama3-8b": (dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336,
                       vocab=128256), 8192),
    "llama3-70b": (dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672,
                        vocab=128256), 8192),
    "llama3-405b": (dict(layers=126, hidden=16384, heads=128, kv_heads=8, ffn_hidden=53248,
                         vocab=128256), 8192),
    "mistral-7b": (dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336,
                        vocab=32000), 8192),
    "mixtral-8x7b": (dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336,
                          vocab=32000, experts=8, experts_per_token=2), 4096),
    "qwen2.5-7b": (dict(layers=28, hidden=3584, heads=28, kv_heads=4, ffn_hidden=18944,
                        vocab=152064), 4096),
    "qwen2.5-72b": (dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=29568,
                         vocab=152064), 4096),
    # MLA attention: q_a 7168×1536 + q_b 1536×128·192 + kv_a 7168×576 + kv_b 512×128·256 +
    # o 128·128×7168 = 187,105,280 per layer; 3 dense layers (FFN 18432) then 58 MoE layers
    # of 256 routed (top-8) + 1 shared expert of width 2048. Score head dim 192 (128+64 rope).
    "deepseek-v3": (dict(layers=61, hidden=7168, heads=128, kv_heads=128, ffn_hidden=18432,
                         vocab=129280, head_dim=192, experts=256, experts_per_token=8,
                         shared_experts=1, moe_ffn_hidden=2048, dense_layers=3,
                         attention_params_per_layer=187_105_280), 4096),
}
ALIASES = {"llama3.1-405b": "llama3-405b", "llama-3-8b": "llama3-8b", "llama-2-7b": "llama2-7b",
           "llama3-1-405b": "llama3-405b", "llama3-1-8b": "llama3-8b",
           "llama3-1-70b": "llama3-70b", "llama3.1-8b": "llama3-8b",
           "llama3.1-70b": "llama3-70b", "gpt3": "gpt3-175b", "mixtral": "mixtral-8x7b"}


def preset_names() -> tuple[str, ...]:
    return tuple(_PRESETS)


def preset(name: str) -> tuple[Architecture, int]:
    key = name.strip().lower()  # " Llama2-7B " is the preset a person meant
    key = ALIASES.get(key, key)
    if key not in _PRESETS:
        raise UnknownNameError("model preset", name, _PRESETS, field="model",
                               hint=f"use one of {', '.join(_PRESETS)}, or `config` "
                                    "config.json, or `params`")
    kwargs, seq = _PRESETS[key]
    return Architecture(name=key, **kwargs), seq
