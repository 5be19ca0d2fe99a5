"""Hugging Face config.json files that are not a decoder of attention layers, and old formats.

Before: Nemotron-H (Mamba hybrid) read as a 17.0B dense transformer for its 8.1B, Qwen3-Next
and MiniMax-Text-01 (linear attention in most layers) as full attention; T5 accepted 38% low,
BERT 46% high, BART and Whisper refused as "config lacks num_hidden_layers"; Falcon's first
format (RefinedWebModel) read as Llama, 9.86B for 6.92B, OLMo's own (hf_olmo) 9.00B for 6.89B;
BLOOM-176B's n_embed refused as "config lacks hidden_size"; `--config FOLDER` refused though it
held a config.json. The files: tests/planner/data/hf_configs_refusals (README: their source)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from planner.cli import main
from planner.model import (
    WorkloadError,
    WorkloadSpec,
    architecture_from_config,
    build_workload,
    read_model_config,
)

DATA = Path(__file__).parent / "data" / "hf_configs_refusals"


def load(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


def total(name: str) -> int:
    return architecture_from_config(load(name), source=name)[0].params_total()


# -- 1: hybrids (Mamba, linear attention, convolution layers) -------------------------------
HYBRIDS = {"nemotron-h-8b": "Nemotron-H-8B: `params` 8.1B",
           "qwen3-next-80b-a3b": "`params` 80B `active_params` 3B `experts` 512",
           "minimax-text-01": "`params` 456B `active_params` 45.9B",
           "minimax-text-01-hf": "`params` 456B", "granite-4.0-h-small": "`params` 32B",
           "lfm2-1.2b": "`params` 1.17B"}


@pytest.mark.parametrize("name", HYBRIDS)
def test_a_hybrid_is_refused_with_its_total_to_give(name):
    with pytest.raises(WorkloadError) as err:
        architecture_from_config(load(name), source=name)
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"{name}: this model mixes attention with")
    assert "gpuplan times attention-only decoders" in line
    assert "To fix: give `params` with the total from the model card" in line
    assert HYBRIDS[name] in line


@pytest.mark.parametrize("name", ["nemotron-h-8b", "qwen3-next-80b-a3b", "minimax-text-01"])
def test_a_hybrid_under_a_new_model_type_is_caught_by_its_keys(name):
    """A future variant's name is not in any list: the keys its layers need give it away."""
    cfg = {**load(name), "model_type": "some_future_hybrid"}
    with pytest.raises(WorkloadError, match="mixes attention with Mamba, linear-attention"):
        architecture_from_config(cfg, source=name)


@pytest.mark.parametrize("key, value", [
    ("hybrid_override_pattern", "M-M*-"), ("full_attention_interval", 4),
    ("linear_num_key_heads", 16), ("linear_num_value_heads", 32), ("ssm_state_size", 128),
    ("mamba_num_heads", 128), ("mamba_d_state", 16), ("attn_layer_period", 8),
    ("attn_type_list", [0, 1])])
def test_one_hybrid_key_in_a_llama_config_is_refused(key, value):
    cfg = {**load("llama3.1-8b"), key: value}
    with pytest.raises(WorkloadError, match=rf"\({key}\); gpuplan times attention-only"):
        architecture_from_config(cfg, source="x")


def test_a_hybrid_is_one_line_and_exit_2_from_the_cli(capsys):
    code = main(["estimate", "--config", str(DATA / "nemotron-h-8b.json"), "--tokens", "1B",
                 "--gpu", "H100", "--gpus", "8"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "attention-only decoders" in err and "--params 8.1B" in err


# -- 2: encoder-decoder and encoder-only models ---------------------------------------------
ENCODERS = {"t5-base": "encoder-decoder model (is_encoder_decoder true)",
            "flan-t5-xl": "encoder-decoder model (is_encoder_decoder true)",
            "bart-large": "encoder-decoder model (is_encoder_decoder true)",
            "whisper-large-v3": "encoder-decoder model (is_encoder_decoder true)",
            "bert-base": "encoder-only model (BertForMaskedLM)"}


@pytest.mark.parametrize("name", ENCODERS)
def test_an_encoder_model_is_refused(name):
    with pytest.raises(WorkloadError) as err:
        architecture_from_config(load(name), source=name)
    line = str(err.value)
    assert line.startswith(f"{name}: this is an {ENCODERS[name]}; gpuplan times decoder-only "
                           "language models. To fix: give `params` for a rough count"), line
    assert "decoder-only model's config.json" in line and "lacks" not in line


@pytest.mark.parametrize("model_type", ["t5", "mt5", "umt5", "bart", "mbart", "pegasus",
                                        "marian", "whisper", "bert", "roberta", "xlm-roberta",
                                        "deberta", "deberta-v2", "electra", "distilbert",
                                        "albert", "modernbert"])
def test_an_encoder_model_type_with_llama_keys_is_refused(model_type):
    cfg = {**load("llama3.1-8b"), "model_type": model_type}
    with pytest.raises(WorkloadError, match="gpuplan times decoder-only language models"):
        architecture_from_config(cfg, source="x")


@pytest.mark.parametrize("arch", ["RobertaForMaskedLM", "FooForSeq2SeqLM"])
def test_an_encoders_architecture_is_refused(arch):
    cfg = {**load("llama3.1-8b"), "model_type": "custom", "architectures": [arch]}
    with pytest.raises(WorkloadError, match=rf"encoder-only model \({arch}\)"):
        architecture_from_config(cfg, source="x")


# published totals (each repository's safetensors count; Llama 4 Scout: its model card)
MULTIMODAL = {"llava-1.5-7b": 6_739_464_192, "llava-1.6-mistral-7b": 7_242_256_384,
              "qwen2-vl-7b-flat": 7_615_616_512, "qwen2.5-vl-7b-nested": 7_615_616_512,
              "mllama-11b-vision": 9_775_276_032, "gemma3-4b-mm": 3_880_263_168,
              "llama4-scout": 107_770_000_000, "mistral-small-3.1-24b": 23_572_403_200}


@pytest.mark.parametrize("name", MULTIMODAL)
def test_a_multimodal_decoder_for_conditional_generation_is_still_read(name):
    assert load(name)["architectures"][0].endswith("ForConditionalGeneration")
    assert total(name) == pytest.approx(MULTIMODAL[name], rel=0.001)


# -- 3: old formats ------------------------------------------------------------------------
def test_falcons_first_format_is_read_as_falcon():
    old, _ = architecture_from_config(load("falcon-7b-refinedweb-old"), source="x")
    assert old.params_total() == total("falcon-7b") == pytest.approx(6_921_720_704, rel=1e-4)
    assert (old.kv_heads, old.gated_ffn, old.tied_embeddings) == (1, False, True)
    w = build_workload(WorkloadSpec(config=load("falcon-7b-refinedweb-old"), tokens="1B"))
    assert any("'RefinedWebModel' (Falcon's first format) read as falcon" in n
               for n in w.inferred)
    assert not any("not a family gpuplan knows" in n for n in w.inferred)


@pytest.mark.parametrize("name, hf_name, expected", [
    ("olmo-7b-hf_olmo", None, 6_888_095_744), ("olmo-1b-hf_olmo", "olmo-1b-hf", 1_176_764_416)])
def test_olmos_own_format_is_read_as_olmo(name, hf_name, expected):
    arch, context = architecture_from_config(load(name), source=name)
    assert arch.params_total() == pytest.approx(expected, rel=1e-4)
    assert arch.gated_ffn and context == 2048
    if hf_name:  # the same model in transformers' format counts the same
        assert arch.params_total() == total(hf_name)
    w = build_workload(WorkloadSpec(config=load(name), tokens="1B"))
    assert any("mlp_hidden_size / 2" in n for n in w.inferred)


def test_olmos_own_format_with_another_activation_is_refused():
    cfg = {**load("olmo-7b-hf_olmo"), "activation_type": "gelu"}
    with pytest.raises(WorkloadError, match="activation_type is \"gelu\".*To fix"):
        architecture_from_config(cfg, source="x")


# -- 4: BLOOM's n_embed ----------------------------------------------------------------------
def test_blooms_n_embed_is_its_hidden_size():
    arch, _ = architecture_from_config(load("bloom-176b"), source="x")
    assert arch.hidden == 14336 and arch.layers == 70 and arch.heads == 112
    assert arch.params_total() == pytest.approx(176_247_271_424, rel=0.001)


# -- 5: smaller messages ---------------------------------------------------------------------
def test_tie_word_embeddings_null_is_untied_as_transformers_reads_it():
    arch, _ = architecture_from_config(load("h24-tie-null"), source="x")
    assert arch.tied_embeddings is False
    assert arch.params_total() == total("llama3.1-8b")


def test_zero_experts_per_token_is_said_to_be_invalid():
    with pytest.raises(WorkloadError) as err:
        architecture_from_config(load("h31-topk-zero"), source="x")
    assert "num_experts_per_tok is 0; it must be at least 1" in str(err.value)
    assert "does not give" not in str(err.value) and "but not how many" not in str(err.value)


def test_a_text_config_that_is_a_string_is_said_to_be_one():
    with pytest.raises(WorkloadError, match='text_config must be an object .*got "llama"'):
        architecture_from_config(load("h52-text-config-string"), source="x")


def test_one_expert_is_singular():
    w = build_workload(WorkloadSpec(config=load("h51-one-expert"), tokens="1B"))
    line = next(n for n in w.inferred if n.startswith("architecture from"))
    assert "1 expert top-1" in line and "1 experts" not in line


# -- 6: --config FOLDER ----------------------------------------------------------------------
def test_a_model_folder_is_read_through_its_config_json(tmp_path):
    folder = tmp_path / "Llama-3.1-8B"
    folder.mkdir()
    shutil.copy(DATA / "llama3.1-8b.json", folder / "config.json")
    assert read_model_config(str(folder)) == load("llama3.1-8b")
    w = build_workload(WorkloadSpec(config=read_model_config(str(folder)),
                                    config_name=str(folder), tokens="1B"))
    assert w.arch.name == "Llama-3.1-8B"


def test_a_hub_cache_snapshot_is_read_and_named_by_its_repository(tmp_path):
    snap = tmp_path / "models--meta-llama--Llama-3.1-8B" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").symlink_to(DATA / "llama3.1-8b.json")  # the cache links to blobs
    w = build_workload(WorkloadSpec(config=read_model_config(str(snap)), config_name=str(snap),
                                    tokens="1B"))
    assert w.arch.name == "meta-llama/Llama-3.1-8B"
    assert w.arch.params_total() == total("llama3.1-8b")


def test_a_folder_without_config_json_says_so(tmp_path, capsys):
    with pytest.raises(WorkloadError, match="is a directory, a folder without config.json. "
                                            "To fix: pass"):
        read_model_config(str(tmp_path))
    code = main(["estimate", "--config", str(tmp_path), "--tokens", "1B", "--gpu", "H100",
                 "--gpus", "8"])
    err = capsys.readouterr().err
    assert code == 2 and "a folder without config.json" in err and err.count("\n") == 1
