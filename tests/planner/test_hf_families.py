"""Hugging Face config.json files of model families that are not Llama-shaped, read to the
parameter counts their model cards publish. Before, every family was read as a gated (SwiGLU)
MLP with all heads as key/value heads, untied unless GPT-2-like, and DeepSeek's latent
attention as plain attention: StarCoder 24.8B for 15.5B, Falcon-7B 8.2B, Qwen1.5-MoE without
its shared expert (1.9B active for 2.7B), DeepSeek-V3's file 12% faster than its preset.

The configs are the published config.json files of each Hugging Face repository, trimmed to
the keys gpuplan reads (plus a few it must ignore)."""

from __future__ import annotations

import pytest

from planner.model import architecture_from_config, preset

QWEN15_MOE = {  # Qwen/Qwen1.5-MoE-A2.7B
    "architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe", "hidden_size": 2048,
    "intermediate_size": 5632, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
    "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
    "vocab_size": 151936, "max_position_embeddings": 8192, "tie_word_embeddings": False,
    "decoder_sparse_step": 1, "mlp_only_layers": []}
PHI2 = {  # microsoft/phi-2
    "architectures": ["PhiForCausalLM"], "hidden_act": "gelu_new", "hidden_size": 2560,
    "intermediate_size": 10240, "max_position_embeddings": 2048, "model_type": "phi",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": None,
    "partial_rotary_factor": 0.4, "tie_word_embeddings": False, "vocab_size": 51200}
STARCODER = {  # bigcode/starcoder (GPT-BigCode, multi-query attention)
    "architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode",
    "multi_query": True, "n_embd": 6144, "n_head": 48, "n_inner": 24576, "n_layer": 40,
    "n_positions": 8192, "vocab_size": 49152}
FALCON_7B = {  # tiiuae/falcon-7b
    "architectures": ["FalconForCausalLM"], "model_type": "falcon", "hidden_size": 4544,
    "multi_query": True, "new_decoder_architecture": False, "num_attention_heads": 71,
    "num_hidden_layers": 32, "parallel_attn": True, "vocab_size": 65024}
FALCON_40B = {  # tiiuae/falcon-40b (new decoder: 8 key/value groups)
    "architectures": ["FalconForCausalLM"], "model_type": "falcon", "hidden_size": 8192,
    "new_decoder_architecture": True, "num_attention_heads": 128, "num_hidden_layers": 60,
    "num_kv_heads": 8, "parallel_attn": True, "vocab_size": 65024}
GEMMA_7B = {  # google/gemma-7b: tied embeddings, so transformers wrote no tie key
    "architectures": ["GemmaForCausalLM"], "head_dim": 256, "hidden_act": "gelu",
    "hidden_size": 3072, "intermediate_size": 24576, "max_position_embeddings": 8192,
    "model_type": "gemma", "num_attention_heads": 16, "num_hidden_layers": 28,
    "num_key_value_heads": 16, "vocab_size": 256000}
DBRX = {  # databricks/dbrx-base: attention and MoE sizes nested
    "architectures": ["DbrxForCausalLM"], "model_type": "dbrx", "d_model": 6144,
    "n_heads": 48, "n_layers": 40, "max_seq_len": 32768, "vocab_size": 100352,
    "tie_word_embeddings": False,
    "attn_config": {"clip_qkv": 8, "kv_n_heads": 8, "rope_theta": 500000},
    "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4}}
DEEPSEEK_V3 = {  # deepseek-ai/DeepSeek-V3
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "first_k_dense_replace": 3, "num_hidden_layers": 61, "num_attention_heads": 128,
    "num_key_value_heads": 128, "vocab_size": 129280, "max_position_embeddings": 163840,
    "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "tie_word_embeddings": False}


@pytest.mark.parametrize("cfg,total_b,active_b,gated,kv_heads,tied", [
    (QWEN15_MOE, 14.3, 2.7, True, 16, False),   # model card: 14.3B, 2.7B activated
    (PHI2, 2.78, 2.78, False, 32, False),       # 2.7B (2,779,683,840 in the checkpoint)
    (STARCODER, 15.5, 15.5, False, 1, True),    # 15.5B
    (FALCON_7B, 6.92, 6.92, False, 1, True),    # 7B (6.92B in the checkpoint)
    (FALCON_40B, 41.3, 41.3, False, 8, True),   # 40B
    (GEMMA_7B, 8.54, 8.54, True, 16, True),     # 8.54B
    (DEEPSEEK_V3, 671, 37, True, 128, False),   # 671B total, 37B activated
    (DBRX, 132, 36, True, 8, False),            # 132B total, 36B active
], ids=["qwen1.5-moe", "phi-2", "starcoder", "falcon-7b", "falcon-40b", "gemma-7b",
        "deepseek-v3", "dbrx"])
def test_a_family_config_is_read_to_its_published_size(cfg, total_b, active_b, gated,
                                                       kv_heads, tied):
    arch, _ = architecture_from_config(cfg)
    assert arch.gated_ffn is gated and arch.kv_heads == kv_heads
    assert arch.tied_embeddings is tied
    assert arch.params_total() / 1e9 == pytest.approx(total_b, rel=0.015)
    assert arch.params_active() / 1e9 == pytest.approx(active_b, rel=0.03)


def test_deepseek_v3s_own_config_is_its_preset():
    arch, _ = architecture_from_config(DEEPSEEK_V3)
    ref = preset("deepseek-v3")[0]
    assert arch.attention_params_per_layer == ref.attention_params_per_layer == 187_105_280
    assert arch.d_head == ref.d_head == 192
    assert arch.params_total() == ref.params_total()
    assert arch.params_active() == ref.params_active()


def test_a_missing_tie_key_is_read_as_transformers_reads_it_by_the_model_types_default():
    untied = {**GEMMA_7B, "tie_word_embeddings": False}
    assert architecture_from_config(untied)[0].tied_embeddings is False
    assert architecture_from_config(GEMMA_7B)[0].tied_embeddings is True  # GemmaConfig: tied
    # LlamaConfig defaults to untied: a Llama-3-8B file without the key is still 8.03B
    llama = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
             "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
             "vocab_size": 128256}
    arch = architecture_from_config(llama)[0]
    assert arch.tied_embeddings is False and arch.params_total() / 1e9 == pytest.approx(8.03,
                                                                                     rel=0.005)
    # an unknown family is read Llama-style: untied
    assert architecture_from_config({**llama, "model_type": "weirdlm"})[0].tied_embeddings \
        is False


def test_the_workload_note_states_the_family_readings():
    from planner import WorkloadSpec, build_workload

    w = build_workload(WorkloadSpec(config=STARCODER, config_name="starcoder/config.json",
                                    tokens="1T"))
    note = next(n for n in w.inferred if n.startswith("architecture from"))
    assert "(1 KV)" in note and "two-matrix" in note and "(tied)" in note
    assert "15.46B parameters" in note  # the count it comes to (published: 15.5B)


@pytest.mark.parametrize("cfg,says", [
    ({**FALCON_7B, "multi_query": "yes"}, "multi_query must be true or false"),
    ({**DEEPSEEK_V3, "qk_rope_head_dim": None}, "needs qk_rope_head_dim"),
])
def test_a_family_key_that_cannot_be_read_is_named(cfg, says):
    from planner import WorkloadError

    with pytest.raises(WorkloadError, match=says):
        architecture_from_config(cfg)


def test_a_mixture_of_experts_type_without_its_expert_count_is_refused():
    """model_type mixtral without num_local_experts was read as a dense 7B-class model, where
    transformers builds its default 8 experts, top-2: a different model, silently."""
    from planner import WorkloadError

    with pytest.raises(WorkloadError, match="'mixtral' is a mixture of experts, but the file "
                                            "gives no expert count"):
        architecture_from_config({**GEMMA_7B, "model_type": "mixtral"})


@pytest.mark.parametrize("top", [None])  # 0 is said to be invalid: test_hfconfig_kinds
def test_experts_without_a_routing_count_name_the_key(top):
    """A mixtral config without num_experts_per_tok read it as 0 and said "experts_per_token
    must be between 1 and experts", a name no config.json uses."""
    from planner import WorkloadError

    cfg = {**GEMMA_7B, "model_type": "mixtral", "num_local_experts": 8}
    if top is not None:
        cfg["num_experts_per_tok"] = top
    with pytest.raises(WorkloadError, match="gives 8 experts but not how many each token is "
                                            r"routed to \(num_experts_per_tok or moe_top_k"):
        architecture_from_config(cfg)


def test_a_null_is_named_as_json_names_it():
    """'got None' and "config lacks ['vocab_size']" for a key that is there, null."""
    from planner import WorkloadError

    # (a null tie_word_embeddings reads untied, as transformers reads it: test_hfconfig_kinds)
    with pytest.raises(WorkloadError, match="tie_word_embeddings must be true or false, got "
                                            "'yes'"):
        architecture_from_config({**GEMMA_7B, "tie_word_embeddings": "yes"})
    with pytest.raises(WorkloadError, match=r"config lacks vocab_size \(vocab_size: null\)"):
        architecture_from_config({**GEMMA_7B, "vocab_size": None})


def test_two_spellings_of_one_size_must_agree():
    """num_hidden_layers 32 beside n_layer 24 was read as 32, silently."""
    from planner import WorkloadError

    with pytest.raises(WorkloadError, match="num_hidden_layers 32 and n_layer 24 name the same "
                                            "setting with different values"):
        architecture_from_config({**GEMMA_7B, "num_hidden_layers": 32, "n_layer": 24})
    assert architecture_from_config({**GEMMA_7B, "n_layer": GEMMA_7B["num_hidden_layers"]})


def test_a_hybrid_with_state_space_layers_is_refused():
    from planner import WorkloadError

    with pytest.raises(WorkloadError, match="'jamba' is a state-space or recurrent model"):
        architecture_from_config({**GEMMA_7B, "model_type": "jamba"})


def test_a_pure_state_space_config_is_refused_as_one_not_as_lacking_heads():
    # a Mamba config.json has no attention heads: "config lacks num_attention_heads. To fix:
    # use the model's config.json" — of the model's own config.json (hostile sweep)
    from planner import WorkloadError

    mamba = {"architectures": ["MambaForCausalLM"], "model_type": "mamba", "hidden_size": 768,
             "num_hidden_layers": 24, "vocab_size": 50280, "state_size": 16, "expand": 2}
    with pytest.raises(WorkloadError, match="'mamba' is a state-space or recurrent model"):
        architecture_from_config(mamba)


def test_a_huge_size_is_echoed_as_written_not_as_300_digits():
    from planner import WorkloadError

    with pytest.raises(WorkloadError) as err:
        architecture_from_config({**GEMMA_7B, "num_hidden_layers": 1e300})
    assert "num_hidden_layers is 1e+300; it must be at most 10,000" in str(err.value)
    assert len(str(err.value)) < 200


def test_an_unknown_family_is_read_as_llama_style_and_the_note_says_so():
    from planner import WorkloadSpec, build_workload
    from planner.model import family_note

    assert family_note(GEMMA_7B) == "" and family_note(DBRX) == ""
    odd = {**GEMMA_7B, "model_type": "weirdlm"}
    w = build_workload(WorkloadSpec(config=odd, config_name="config.json", tokens="1T"))
    assert any(n.startswith("model_type 'weirdlm' is not a family gpuplan knows: read as a "
                            "Llama-style decoder") for n in w.inferred)


OLMOE = {  # allenai/OLMoE-1B-7B-0924: each expert is intermediate_size wide
    "model_type": "olmoe", "hidden_size": 2048, "intermediate_size": 1024,
    "num_attention_heads": 16, "num_hidden_layers": 16, "num_key_value_heads": 16,
    "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 50304,
    "tie_word_embeddings": False}


def test_olmoe_experts_are_intermediate_size_wide():
    arch, _ = architecture_from_config(OLMOE)
    assert arch.params_total() / 1e9 == pytest.approx(6.9, rel=0.01)   # 6.9B total
    assert arch.params_active() / 1e9 == pytest.approx(1.3, rel=0.02)  # 1.3B active


@pytest.mark.parametrize("cfg,says", [
    # without them: DeepSeek-V3 as 5.9T parameters, DBRX as a dense 22.9B (or 12.7B, 294.7B)
    ({k: v for k, v in DEEPSEEK_V3.items() if k != "moe_intermediate_size"},
     "moe_intermediate_size .each expert's width. is missing"),
    ({k: v for k, v in QWEN15_MOE.items() if k != "shared_expert_intermediate_size"},
     "qwen2_moe config needs shared_expert_intermediate_size"),
    ({k: v for k, v in DBRX.items() if k != "ffn_config"}, "needs ffn_config.ffn_hidden_size"),
    ({**DBRX, "ffn_config": {"ffn_hidden_size": 10752, "moe_top_k": 4}},
     "needs ffn_config.moe_num_experts"),
    ({**DBRX, "attn_config": None}, "needs attn_config.kv_n_heads"),
])
def test_a_moe_config_missing_its_family_keys_is_refused_not_misread(cfg, says):
    from planner import WorkloadError

    with pytest.raises(WorkloadError, match=says):
        architecture_from_config(cfg)
