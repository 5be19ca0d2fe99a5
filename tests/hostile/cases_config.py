"""Hostile Hugging Face config.json files for `gpuplan estimate --config` (split from
``cases_files``): each refused in one line naming the file's own keys, the good ones beside
them planned. Case ids start with "config-"."""

from __future__ import annotations

import json

import pytest

from ._runner import Case, Directory, Fifo

# ---- Hugging Face config.json (`estimate --config`) ---------------------------------------------

ESTIMATE = ("estimate", "--gpu", "H100", "--gpus", "8", "--tokens", "2B")
CONFIG = (*ESTIMATE, "--config", "{config}")
LLAMA = {"architectures": ["LlamaForCausalLM"], "hidden_size": 2048, "intermediate_size": 8192,
         "max_position_embeddings": 131072, "model_type": "llama", "num_attention_heads": 32,
         "num_hidden_layers": 16, "num_key_value_heads": 8, "tie_word_embeddings": True,
         "vocab_size": 128256}  # Llama 3.2 1B (examples/llama-3.2-1b/config.json)


def config(case_id: str, text: str | bytes | dict, expect: int = 2, says: str = "") -> Case:
    body = json.dumps(text) if isinstance(text, dict) else text
    return Case(f"config-{case_id}", CONFIG, expect, {"config": body}, says)


def raw(**changes) -> str:
    """LLAMA as JSON text with some values replaced by raw JSON tokens."""
    text = json.dumps({**LLAMA, **{k: f"@@{k}@@" for k in changes}})
    for k, token in changes.items():
        text = text.replace(f'"@@{k}@@"', token)
    return text


CONFIG_CASES = [
    config("hidden-below-heads", {**LLAMA, "hidden_size": 8},  # head dimension 0: NaN hours
           says="hidden_size (8) is not a multiple of num_attention_heads (32)"),
    config("hidden-not-heads-multiple", {**LLAMA, "hidden_size": 4100},  # 128.125 wide heads
           says="hidden_size (4,100) is not a multiple of num_attention_heads (32): each head "
                "is hidden_size / num_attention_heads wide"),

    config("head-dim-zero", {**LLAMA, "head_dim": 0}, says="head_dim is 0; it must be at least 1"),
    # the width is d_model × expansion_ratio: not "expansion_ratio … got 409600000"
    config("mpt-ratio-huge", {"model_type": "mpt", "n_layers": 2, "d_model": 4096, "n_heads": 32,
                              "expansion_ratio": 100000, "vocab_size": 100},
           says="d_model × expansion_ratio must be a whole number between 1 and 4,194,304, "
                "got 409600000"),
    config("ffn-zero", {**LLAMA, "intermediate_size": 0},
           says="intermediate_size is 0; it must be at least 1"),
    config("state-space-model", {**LLAMA, "model_type": "mamba"},
           says="model_type 'mamba' is a state-space or recurrent model"),
    Case("config-head-dim-negative", CONFIG, 2, {"config": json.dumps({**LLAMA, "head_dim": -1})},
         says="config: head_dim is -1; it must be at least 1",  # the path once (was twice)
         check=lambda o: o.err.count("/config:") == 1 or pytest.fail(o.err)),
    config("good-llama-3.2-1b", LLAMA, 0, says="1.24B params"),
    Case("config-example-file", (*ESTIMATE, "--config", "examples/llama-3.2-1b/config.json"),
         0, says="llama-3.2-1b"),
    Case("config-missing-file", (*ESTIMATE, "--config", "{tmp}/nope.json"), 2,
         says="cannot read config"),
    Case("config-dev-zero", (*ESTIMATE, "--config", "/dev/zero"), 2, says="is a device"),
    Case("config-directory", CONFIG, 2, {"config": Directory()}, "is a directory"),
    Case("config-fifo", CONFIG, 2, {"config": Fifo()}, "named pipe"),
    config("infinity", raw(hidden_size="Infinity"), says="Infinity is not a number"),
    config("nan", raw(vocab_size="NaN"), says="NaN is not a number"),
    config("minus-infinity", raw(rope_theta="-Infinity"), says="-Infinity is not a number"),
    config("400-digit-number", raw(vocab_size="9" * 400), says="400-digit number"),
    config("1e400", raw(hidden_size="1e400"), says="too large for a number"),
    config("boolean-size", {**LLAMA, "hidden_size": True},
           says="hidden_size must be a whole number, got true"),
    config("negative-size", {**LLAMA, "num_hidden_layers": -16}, says="must be at least 1"),
    config("zero-heads", {**LLAMA, "num_attention_heads": 0}, says="must be at least 1"),
    config("fraction-size", {**LLAMA, "hidden_size": 2048.5}, says="must be a whole number"),
    config("text-size", {**LLAMA, "hidden_size": "2048"}, says="must be a whole number"),
    config("huge-hidden", {**LLAMA, "hidden_size": 10**7}, says="at most 1,048,576"),
    config("huge-context", {**LLAMA, "max_position_embeddings": 10**12}, says="at most"),
    config("negative-head-dim", {**LLAMA, "head_dim": -64}, says="must be at least 1"),
    config("tie-embeddings-text", {**LLAMA, "tie_word_embeddings": "yes"},
           says="tie_word_embeddings must be true or false"),
    # the file's keys, not the Architecture's fields ("heads (32) … kv_heads (5)")
    config("kv-heads-not-dividing", {**LLAMA, "num_key_value_heads": 5},
           says="num_attention_heads (32) must be a multiple of num_key_value_heads (5)"),
    config("top-k-above-experts", {**LLAMA, "num_local_experts": 4, "num_experts_per_tok": 8},
           says="num_experts_per_tok must be between 1 and num_local_experts (4), got 8"),
    config("missing-layers", {k: v for k, v in LLAMA.items() if k != "num_hidden_layers"},
           says="lacks num_hidden_layers"),
    config("a-list", "[1, 2, 3]", says="found list"),
    config("a-string", '"config"', says="found str"),
    config("empty-file", "", says="is empty. To fix: "),
    config("trailing-comma", '{"hidden_size": 1,}', says="not valid JSON at line 1"),
    config("duplicate-key", '{"hidden_size": 1, "hidden_size": 2}', says="duplicate key"),
    config("deep-nesting", "[" * 100_000 + "]" * 100_000, says="nesting deeper than 32"),
    config("latin-1", json.dumps({**LLAMA, "_name_or_path": "caf\xe9"}, ensure_ascii=False)
           .encode("latin-1"), says="not UTF-8"),
    config("over-a-mebibyte", b" " * (2**20 + 1), says="more than the 1 MiB"),
    config("text-config-bad", {"model_type": "llava", "text_config": {**LLAMA,
                                                                      "hidden_size": -1}},
           says="must be at least 1"),
    config("name-with-control-chars", {**LLAMA, "_name_or_path": "a\x1b[31mred\nb"}, 0),
]

CASES = CONFIG_CASES
