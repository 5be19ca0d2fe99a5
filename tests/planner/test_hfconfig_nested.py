"""Multimodal config.json files, whose language model sits in a ``text_config`` written without
the values equal to its family's defaults, read to the published text models; and what the
estimate says of them: the defaults filled in, the towers left out, the sequence length's
origin, the model's name.

Regressions pinned (each test's name says which): Gemma 3 4B and LLaVA-1.5 were refused
("config lacks num_attention_heads, vocab_size. To fix: use the model's config.json" — it
was); LLaVA was named by its text_config's language model; a Hugging Face cache path was
named by its snapshot hash; the capped default sequence length was called the pre-training
context; a vision tower was dropped without a word; Llama 4 Scout lost its shared expert
(101.7B / 11.1B for the published 109B / 17B).

Configs are the published config.json files, trimmed to the keys gpuplan reads (plus a few
it must ignore): google/gemma-3-4b-it, llava-hf/llava-1.5-7b-hf,
meta-llama/Llama-4-Scout-17B-16E and -Maverick-17B-128E (text_config; Maverick interleaves
its MoE layers, interleave_moe_layer_step 2, and has 128 experts)."""

from __future__ import annotations

import copy
import json

import pytest

from planner.cli import main
from planner.model import WorkloadError, WorkloadSpec, architecture_from_config, build_workload

GEMMA3_4B = {  # google/gemma-3-4b-it: text_config gives 6 keys, the rest are Gemma3TextConfig's
    "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "text_config": {"hidden_size": 2560, "intermediate_size": 10240,
                    "model_type": "gemma3_text", "num_hidden_layers": 34,
                    "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                    "sliding_window": 1024},
    "vision_config": {"hidden_size": 1152, "intermediate_size": 4304,
                      "model_type": "siglip_vision_model", "num_attention_heads": 16,
                      "num_hidden_layers": 27}}
LLAVA_15_7B = {  # llava-hf/llava-1.5-7b-hf: a LlamaConfig text_config (Vicuna-7B v1.5)
    "architectures": ["LlavaForConditionalGeneration"], "image_token_index": 32000,
    "model_type": "llava", "tie_word_embeddings": False, "vocab_size": 32064,
    "text_config": {"_name_or_path": "lmsys/vicuna-7b-v1.5",
                    "architectures": ["LlamaForCausalLM"], "max_position_embeddings": 4096,
                    "model_type": "llama", "rms_norm_eps": 1e-05, "torch_dtype": "float16",
                    "vocab_size": 32064},
    "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
                      "model_type": "clip_vision_model", "num_attention_heads": 16,
                      "num_hidden_layers": 24, "patch_size": 14}}
LLAMA4_SCOUT = {  # meta-llama/Llama-4-Scout-17B-16E
    "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
    "text_config": {"attention_chunk_size": 8192, "head_dim": 128, "hidden_size": 5120,
                    "interleave_moe_layer_step": 1, "intermediate_size": 8192,
                    "intermediate_size_mlp": 16384, "max_position_embeddings": 10485760,
                    "model_type": "llama4_text",
                    "no_rope_layers": [int((i + 1) % 4 != 0) for i in range(48)],
                    "num_attention_heads": 40, "num_experts_per_tok": 1,
                    "num_hidden_layers": 48, "num_key_value_heads": 8,
                    "num_local_experts": 16, "vocab_size": 202048},
    "vision_config": {"hidden_size": 1408, "model_type": "llama4_vision_model"}}
LLAMA2_7B = {  # meta-llama/Llama-2-7b-hf: a top-level config states its sizes
    "architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 11008,
    "max_position_embeddings": 4096, "model_type": "llama", "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 32, "vocab_size": 32000}
LLAMA4_MAVERICK = copy.deepcopy(LLAMA4_SCOUT)
LLAMA4_MAVERICK["text_config"].update(interleave_moe_layer_step=2, num_local_experts=128,
                                      max_position_embeddings=1048576)


def workload(cfg, name="config.json", **spec):
    return build_workload(WorkloadSpec(config=cfg, config_name=name, tokens="1B", **spec))


def test_gemma3_4b_text_config_reads_with_gemma3_text_defaults():
    arch, context = architecture_from_config(GEMMA3_4B)
    # Gemma3TextConfig: 8 heads, 4 KV heads of 256, vocabulary 262,208, tied, 131,072 context
    assert (arch.layers, arch.hidden, arch.heads, arch.kv_heads, arch.d_head, arch.vocab,
            arch.ffn_hidden, arch.tied_embeddings) == (34, 2560, 8, 4, 256, 262208, 10240, True)
    assert context == 131072
    assert arch.params_total() == pytest.approx(3.88e9, rel=0.005)  # the text model's 3.88B


def test_gemma3_4b_estimate_runs_and_says_the_defaults_it_filled(capsys, tmp_path):
    path = tmp_path / "gemma-3-4b-it" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(GEMMA3_4B))
    code = main(["estimate", "--config", str(path), "--tokens", "1B", "--gpu", "H100",
                 "--gpus", "64"])
    out, err = capsys.readouterr()
    assert code == 0, err
    text = " ".join(out.split())
    assert "filled in: vocab_size 262208, num_attention_heads 8" in text
    assert "gemma3_text config defaults" in text


def test_llava_15_text_config_reads_as_vicuna_7b_with_llama_defaults():
    arch, context = architecture_from_config(LLAVA_15_7B)
    # LlamaConfig: hidden 4096, FFN 11008, 32 layers of 32 heads — Llama 2 7B's shape
    assert (arch.layers, arch.hidden, arch.heads, arch.kv_heads, arch.ffn_hidden,
            arch.vocab, context) == (32, 4096, 32, 32, 11008, 32064, 4096)
    notes = workload(LLAVA_15_7B).inferred
    assert any("llama config defaults" in n and "intermediate_size 11008" in n for n in notes)


def test_unknown_nested_family_missing_sizes_says_why_and_how():
    cfg = {"model_type": "paligemma", "vision_config": {"hidden_size": 1152},
           "text_config": {"model_type": "phi3", "hidden_size": 3072, "num_hidden_layers": 32,
                           "intermediate_size": 8192}}
    with pytest.raises(WorkloadError) as info:
        architecture_from_config(cfg, source="pg.json")
    message = str(info.value)
    assert "lacks num_attention_heads, vocab_size" in message
    assert "Its text_config (model_type 'phi3') leaves out the values equal to its family's " \
           "defaults" in message
    assert "To fix: write num_attention_heads, vocab_size into text_config" in message
    assert "use the model's config.json" not in message


def test_unknown_nested_family_is_one_line_exit_2_on_the_cli(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "x", "text_config": {"model_type": "phi3", '
                    '"hidden_size": 8, "num_hidden_layers": 2}}')
    code = main(["estimate", "--config", str(path), "--tokens", "1B", "--gpu", "H100",
                 "--gpus", "8"])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err and "To fix: write" in err


def test_llava_is_named_by_its_top_level_not_its_text_configs_language_model():
    arch, _ = architecture_from_config(LLAVA_15_7B, default_name="llava-1.5-7b-hf")
    assert arch.name == "llava-1.5-7b-hf"
    named = {**LLAVA_15_7B, "_name_or_path": "llava-hf/llava-1.5-7b-hf"}
    assert architecture_from_config(named)[0].name == "llava-hf/llava-1.5-7b-hf"


@pytest.mark.parametrize("source,name", [
    ("/root/.cache/huggingface/hub/models--mistralai--Mistral-7B-v0.1/snapshots/"
     "26bca36bde8333b5d7f72e9ed20ccda6a618af24/config.json", "mistralai/Mistral-7B-v0.1"),
    ("models--gpt2/snapshots/607a30d783dfa663caf39e06633721c8d4cfcd7e/config.json", "gpt2"),
    ("/data/Meta-Llama-3-8B/config.json", "Meta-Llama-3-8B"),
])
def test_hugging_face_cache_path_is_named_by_its_repository(source, name):
    assert workload(LLAMA2_7B, source).arch.name == name


def test_hub_cache_name_or_path_is_named_by_its_repository():
    cfg = {**LLAMA2_7B, "_name_or_path":
           "/home/u/.cache/huggingface/hub/models--lmsys--vicuna-7b-v1.5/snapshots/abc"}
    assert architecture_from_config(cfg)[0].name == "lmsys/vicuna-7b-v1.5"


def test_default_sequence_length_says_it_was_capped():
    notes = workload(GEMMA3_4B).inferred
    assert ("sequence length 8192 (max_position_embeddings 131,072 capped at 8,192; "
            "`seq_len` to change)") in notes
    assert "sequence length 4096 (the config's max_position_embeddings; `seq_len` to change)" \
        in workload(LLAVA_15_7B).inferred


def test_default_sequence_length_without_a_context_says_the_default():
    cfg = {k: v for k, v in LLAMA2_7B.items() if k != "max_position_embeddings"}
    assert any(n.startswith("sequence length 4096 (gpuplan's default: the config gives no "
                            "context length (max_position_embeddings)")
               for n in workload(cfg).inferred)


def test_a_parameter_counts_sequence_length_is_not_called_its_pre_training_context():
    """`--params 125M` has no context to speak of: its 4,096 is gpuplan's default."""
    notes = build_workload(WorkloadSpec(params="125M", tokens="1B")).inferred
    assert ("sequence length 4096 (gpuplan's default: a parameter count gives no context "
            "length; `seq_len` to change)") in notes


@pytest.mark.parametrize("cfg", [GEMMA3_4B, LLAVA_15_7B, LLAMA4_SCOUT])
def test_a_vision_tower_is_said_to_be_left_out(cfg):
    assert any(n.startswith("only the text model's parameters and FLOPs are counted: the "
                            "vision encoder (vision_config)") for n in workload(cfg).inferred)


def test_llama4_scout_counts_its_shared_expert():
    arch, _ = architecture_from_config(LLAMA4_SCOUT)
    # Meta: 109B total (the vision encoder included), 17B active; every layer MoE, 16 routed
    # experts top-1 + 1 shared, each 3 × 5120 × 8192
    assert (arch.experts, arch.experts_per_token, arch.shared_experts, arch.moe_ffn_hidden,
            arch.dense_layers) == (16, 1, 1, 8192, 0)
    assert arch.params_total() == pytest.approx(107.8e9, rel=0.002)
    assert arch.params_active() == pytest.approx(17.2e9, rel=0.002)


def test_llama4_maverick_interleaves_dense_layers():
    arch, _ = architecture_from_config(LLAMA4_MAVERICK)
    # interleave_moe_layer_step 2: layers 1, 3, … 47 are MoE; the other 24 dense, 16384 wide
    assert (arch.dense_layers, arch.moe_layers, arch.ffn_hidden, arch.experts) == \
        (24, 24, 16384, 128)
    assert arch.params_total() == pytest.approx(400.7e9, rel=0.002)  # Meta: 400B
    assert arch.params_active() == pytest.approx(17.2e9, rel=0.002)  # Meta: 17B
    listed = copy.deepcopy(LLAMA4_MAVERICK)
    listed["text_config"]["moe_layers"] = list(range(1, 48, 2))
    assert architecture_from_config(listed)[0] == arch


def _text(cfg, **changes):
    out = copy.deepcopy(cfg)
    out["text_config"].update(changes)
    return out


def _cli(capsys, tmp_path, cfg, *args):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code = main(["estimate", "--config", str(path), "--tokens", "1B", "--gpu", "H100", *args])
    out, err = capsys.readouterr()
    return code, " ".join((out + err).split())


def test_maverick_with_fewer_layers_keeps_its_interleaved_share_of_dense_layers(capsys,
                                                                               tmp_path):
    # was: "`layers` 24 leaves no mixture-of-experts layer: … first 24 layers are dense (the
    # experts come after them)" — Maverick's dense layers alternate with the MoE ones
    w = workload(LLAMA4_MAVERICK, arch_overrides=(("layers", 24),))
    assert (w.arch.layers, w.arch.dense_layers, w.arch.moe_layers) == (24, 12, 12)
    assert any("dense_layers=12" in n for n in w.inferred)
    one = workload(LLAMA4_MAVERICK, arch_overrides=(("layers", 1),)).arch
    assert (one.dense_layers, one.moe_layers) == (0, 1)
    code, text = _cli(capsys, tmp_path, LLAMA4_MAVERICK, "--layers", "24", "--gpus", "64")
    assert code == 0 and "come after them" not in text, text


def test_deepseek_style_leading_dense_layers_still_refuse_too_few_layers():
    leading = _text(LLAMA4_MAVERICK, moe_layers=list(range(24, 48)))
    assert not architecture_from_config(leading)[0].dense_interleaved
    with pytest.raises(WorkloadError, match="first 24 layers are dense"):
        workload(leading, arch_overrides=(("layers", 24),))


@pytest.mark.parametrize("rope", [
    [1] * 10, [1] * 100, {"0": 1}, [-1] * 48, ["0"] * 48, [2] * 48, [1.0] * 48, "1" * 48])
def test_a_wrong_no_rope_layers_is_refused(rope, capsys, tmp_path):
    # was: 10 entries read as "chunks on 10 of 48 layers", 100 cut to 48, a dict read as the
    # default, -1 and "0" as chunked
    with pytest.raises(WorkloadError, match="no_rope_layers must name each of the 48 layers "
                                            "1 .* or 0 ") as info:
        architecture_from_config(_text(LLAMA4_SCOUT, no_rope_layers=rope))
    assert "To fix" in str(info.value)
    code, text = _cli(capsys, tmp_path, _text(LLAMA4_SCOUT, no_rope_layers=rope), "--gpus", "8")
    assert code == 2 and "To fix" in text


@pytest.mark.parametrize("rope,chunked", [([True, False] * 24, 24), ([], 36), (None, 36)])
def test_no_rope_layers_as_transformers_reads_them(rope, chunked):
    arch, _ = architecture_from_config(_text(LLAMA4_SCOUT, no_rope_layers=rope))
    assert arch.chunked_layers == chunked


@pytest.mark.parametrize("change,said", [
    (dict(interleave_moe_layer_step=49), "interleave_moe_layer_step 49 is more than its 48"),
    (dict(moe_layers=[]), "moe_layers is []")])
def test_llama4_without_moe_layers_is_read_dense_and_said(change, said):
    # was: "16 experts … in 0 of 48 layers" (transformers builds every layer dense)
    w = workload(_text(LLAMA4_SCOUT, **change))
    assert (w.arch.experts, w.arch.dense_layers, w.arch.ffn_hidden) == (0, 0, 16384)
    assert any(n.startswith(said) and "read as a dense model" in n for n in w.inferred)


GEMMA3_27B = {  # google/gemma-3-27b-it's text_config
    "model_type": "gemma3", "text_config": {
        "head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504,
        "model_type": "gemma3_text", "num_attention_heads": 32, "num_hidden_layers": 62,
        "num_key_value_heads": 16, "query_pre_attn_scalar": 168, "sliding_window": 1024}}


def test_top_level_layout_keys_do_not_override_text_config():
    # was: a top-level layer_types of 62 full layers silently removed the 1,024-token window
    cfg = {**GEMMA3_27B, "layer_types": ["full_attention"] * 62, "sliding_window": 4096}
    arch, _ = architecture_from_config(cfg)
    assert (arch.window_tokens, arch.windowed_layers) == (1024, 52)
    assert arch == architecture_from_config(GEMMA3_27B)[0]
    notes = workload(cfg).inferred
    assert any("the top level's layer_types, sliding_window (not text_config's) are ignored"
               in n for n in notes)
    assert not any("top level's" in n for n in workload(GEMMA3_27B).inferred)
