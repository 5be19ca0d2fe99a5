"""A config.json read with a guess or an implausible size that changes the parameter count is
a warning, not only an assumption (scripts read `warnings`): an FFN width guessed as 4 × hidden
for a family gpuplan does not know, a head_dim making the attention far wider (or narrower)
than the model. The bounds a config's sizes are checked against are the Architecture's, so the
table and the errors name one limit."""

from __future__ import annotations

import json

import pytest

from planner.model import (
    SIZE_LIMITS,
    WorkloadError,
    WorkloadSpec,
    architecture_from_config,
    build_workload,
)
from planner.model._workload import ARCH_LIMITS, OPTIONAL_ARCH_LIMITS

# meta-llama/Meta-Llama-3-8B/config.json, trimmed: 8.03B parameters
LLAMA3_8B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
             "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
             "vocab_size": 128256, "max_position_embeddings": 8192,
             "tie_word_embeddings": False}
GUESSED = {k: v for k, v in LLAMA3_8B.items() if k not in ("model_type", "intermediate_size")}
GEMMA_7B = {"model_type": "gemma", "head_dim": 256, "hidden_size": 3072,
            "intermediate_size": 24576, "max_position_embeddings": 8192,
            "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 16,
            "vocab_size": 256000}
QWEN3_30B_A3B = {"model_type": "qwen3_moe", "head_dim": 128, "hidden_size": 2048,
                 "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128,
                 "num_experts_per_tok": 8, "num_hidden_layers": 48, "num_attention_heads": 32,
                 "num_key_value_heads": 4, "vocab_size": 151936, "decoder_sparse_step": 1,
                 "mlp_only_layers": [], "max_position_embeddings": 40960,
                 "tie_word_embeddings": False}  # attention 2 × hidden
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
               "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
               "num_experts_per_tok": 8, "first_k_dense_replace": 3, "num_hidden_layers": 61,
               "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280,
               "max_position_embeddings": 163840, "kv_lora_rank": 512, "q_lora_rank": 1536,
               "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
               "tie_word_embeddings": False}  # latent attention 3.43 × hidden


def workload(cfg: dict, name: str = "c.json"):
    return build_workload(WorkloadSpec(config=cfg, config_name=name, tokens="1T"))


def test_a_guessed_ffn_width_is_a_warning_naming_the_count_and_the_fix():
    w = workload(GUESSED)
    assert round(w.arch.params_total() / 1e9, 2) == 8.84  # 4 × 4096, not 14336
    assert len(w.warnings) == 1
    said = w.warnings[0]
    assert said.startswith("c.json: the FFN width is a guess, 4 × hidden = 16,384")
    assert "names no model_type" in said and "8.84B parameters" in said
    assert "To fix: add intermediate_size" in said and "`params`" in said
    # the assumption still says it, and the tokens note does not blame `params`
    assert any("its FFN is 4 × hidden" in n for n in w.inferred)
    assert not any("not `params`" in n for n in w.inferred)


def test_an_unknown_family_without_a_width_warns_and_with_one_does_not():
    mystery = {**GUESSED, "model_type": "mystery"}
    assert "model_type \"mystery\" is not a family gpuplan knows" in workload(mystery).warnings[0]
    assert workload({**mystery, "intermediate_size": 14336}).warnings == ()
    # a multimodal wrapper whose text_config gives the width: not a guess
    assert workload({"text_config": {**mystery, "intermediate_size": 14336}}).warnings == ()


def test_a_known_family_reads_its_width_without_a_warning():
    assert workload(LLAMA3_8B).warnings == ()
    gpt2 = {"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12,
            "vocab_size": 50257, "n_positions": 1024}  # 4 × hidden is GPT-2's own rule
    assert workload(gpt2).warnings == ()


def test_an_implausible_head_dim_is_a_warning():
    w = workload({**LLAMA3_8B, "head_dim": 65536})
    assert len(w.warnings) == 1
    said = w.warnings[0]
    assert said.startswith("c.json: head_dim 65,536 makes the attention 32 heads × 65,536")
    assert "512 × the hidden size 4,096" in said and "693.88B parameters" in said
    assert "To fix: check head_dim (hidden / heads is 128)" in said
    narrow = workload({**LLAMA3_8B, "head_dim": 16})  # 32 × 16 = 512: an eighth of 4096
    assert "head_dim 16 makes the attention" in narrow.warnings[0]


@pytest.mark.parametrize("cfg", [GEMMA_7B, QWEN3_30B_A3B, DEEPSEEK_V3,
                                 {**LLAMA3_8B, "head_dim": 128}],
                         ids=["gemma-7b", "qwen3-30b-a3b", "deepseek-v3", "llama3-8b"])
def test_real_models_wider_attention_is_not_warned(cfg):
    assert workload(cfg).warnings == ()


def test_the_size_limits_are_the_architectures_and_the_errors_name_them():
    assert {k: SIZE_LIMITS[k] for k in ARCH_LIMITS} == ARCH_LIMITS
    for k in ("head_dim", "experts", "moe_ffn_hidden", "dense_layers"):
        assert SIZE_LIMITS[k] == OPTIONAL_ARCH_LIMITS[k]
    for key, name in (("intermediate_size", "ffn_hidden"), ("vocab_size", "vocab")):
        too_big = SIZE_LIMITS[name] + 1
        with pytest.raises(WorkloadError) as info:
            architecture_from_config({**LLAMA3_8B, key: too_big}, source="c.json")
        assert str(info.value).startswith(
            f"c.json: {key} is {too_big:,}; it must be at most {SIZE_LIMITS[name]:,}")
        arch, _ = architecture_from_config({**LLAMA3_8B, key: SIZE_LIMITS[name]})
        assert getattr(arch, name) == SIZE_LIMITS[name]  # the bound itself is taken


def test_the_estimate_json_carries_the_warning(capsys, tmp_path, monkeypatch):
    from planner.cli import main

    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "c.json"
    path.write_text(json.dumps(GUESSED))
    code = main(["estimate", "--config", str(path), "--gpu", "H100", "--gpus", "16",
                 "--tokens", "100B", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert any("the FFN width is a guess" in w and "--params" in w for w in data["warnings"])
