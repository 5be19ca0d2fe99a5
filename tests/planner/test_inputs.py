"""What people type and what the model reads from it: counts and deadlines, an architecture
inferred from a parameter count, a Hugging Face config.json — each against the published value
or a hand calculation, and each mistake as one error that says how to fix it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest

from planner import (
    PlannerError,
    WorkloadError,
    infer_architecture,
    parse_count,
    parse_deadline,
    preset,
)
from planner.model import architecture_from_config

# ---- quantities people type ------------------------------------------------------------

@pytest.mark.parametrize("text,value", [
    ("2T", 2e12), ("300B", 3e11), ("2e12", 2e12), ("4M", 4e6), ("1.5k", 1500.0),
    (" 15t ", 15e12), (7e9, 7e9), (100, 100.0),
])
def test_parse_count(text, value):
    assert parse_count(text) == value


@pytest.mark.parametrize("text", ["2X", "-1", "", "T", "1e400", 0, -5.0, "nan"])
def test_parse_count_rejects_with_a_fix(text):
    with pytest.raises(PlannerError, match="To fix"):
        parse_count(text)


NOW = dt.datetime(2027, 3, 1, tzinfo=dt.UTC)


@pytest.mark.parametrize("text,hours", [
    ("14d", 336.0), ("36h", 36.0), ("2w", 336.0), ("1.5 days", 36.0),
    ("2027-03-31", 30 * 24.0),  # midnight UTC, 30 days after NOW
    ("2027-03-02T12:00:00", 36.0),
    ("2027-03-01T12:00:00+02:00", 10.0),  # 10:00 UTC
])
def test_parse_deadline(text, hours):
    assert parse_deadline(text, now=NOW) == pytest.approx(hours)


@pytest.mark.parametrize("text,fragment", [
    ("2027-02-01", "in the past"), ("0h", "in the future"), ("soon", "not a duration"),
])
def test_parse_deadline_rejects_with_a_fix(text, fragment):
    with pytest.raises(PlannerError, match=fragment) as info:
        parse_deadline(text, now=NOW)
    assert "To fix" in str(info.value)


def test_a_dated_deadline_counts_from_gpuplan_today(monkeypatch):
    """`plan --deadline 2027-03-31` counted from the machine's clock while a team report of
    the same day counted from GPUPLAN_TODAY: a date past by it was planned for."""
    monkeypatch.setenv("GPUPLAN_TODAY", "2027-03-01")
    hours = parse_deadline("2027-03-31")
    assert 29 * 24 < hours <= 30 * 24  # from some time on 2027-03-01 (UTC)
    monkeypatch.setenv("GPUPLAN_TODAY", "2027-05-01")
    with pytest.raises(PlannerError, match="in the past"):
        parse_deadline("2027-03-31")


# ---- architecture inferred from a parameter count --------------------------------------

@pytest.mark.parametrize("count", [125e6, 7e9, 70e9, 175e9])
def test_inferred_architecture_has_the_requested_size(count):
    arch, notes = infer_architecture(count)
    assert arch.params_total() == pytest.approx(count, rel=0.05)
    assert not arch.is_moe
    assert 0.5 < arch.hidden / arch.layers / 128 < 2  # hidden ≈ 128 · layers
    assert "inferred from parameter count" in notes[0]


def test_inferred_moe_architecture_has_total_and_active_sizes():
    arch, notes = infer_architecture(46.7e9, 12.9e9)  # Mixtral-sized
    assert arch.is_moe and (arch.experts, arch.experts_per_token) == (8, 2)
    assert arch.params_total() == pytest.approx(46.7e9, rel=0.05)
    assert arch.params_active() == pytest.approx(12.9e9, rel=0.05)
    assert "8 experts top-2" in notes[0]


# (total, active, experts, top-k) as the models' cards publish them
PUBLISHED_MOE_COUNTS = [
    (46.7e9, 12.9e9, 8, 2),      # Mixtral 8x7B
    (671e9, 37e9, 256, 8),       # DeepSeek-V3
    (30.5e9, 3.3e9, 128, 8),     # Qwen3-30B-A3B
    (6.9e9, 1.3e9, 64, 8),       # OLMoE-1B-7B
    (132e9, 36e9, 16, 4),        # DBRX
    (117e9, 5.1e9, 128, 4),      # gpt-oss-120b
    (15.7e9, 2.4e9, 64, 6),      # DeepSeek-V2-Lite
]


@pytest.mark.parametrize("total,active,experts,top", PUBLISHED_MOE_COUNTS)
def test_inferred_moe_shapes_match_both_published_counts(total, active, experts, top):
    """Active parameters set the compute (6·N_active), the total the memory: both within 2%
    (one rounding of a narrow expert to 128 used to miss Qwen3-30B-A3B's total by 10%)."""
    arch, _ = infer_architecture(total, active, experts=experts, experts_per_token=top)
    assert arch.params_total() == pytest.approx(total, rel=0.02)
    assert arch.params_active() == pytest.approx(active, rel=0.02)


def test_an_moe_count_no_shape_matches_is_refused_not_planned_as_another_model():
    """Active 99.9% of the total with top-8 of 256: even 16-wide experts weigh too much (the
    nearest shape has 289B); before, the check looked at the total only and allowed 25%."""
    with pytest.raises(WorkloadError, match=r"no Llama-style shape with 256 experts \(top-8\) "
                                            r"has about 235B parameters \(235B active\); the "
                                            r"nearest has 289B"):
        infer_architecture(235e9, 0.999 * 235e9, experts=256, experts_per_token=8)


@pytest.mark.parametrize("total,active,fragment", [
    (0, None, "`params` must be positive"), (-7e9, None, "`params` must be positive"),
    (7e9, 8e9, "cannot exceed"), (1e6, None, "too small"),
])
def test_infer_architecture_rejects(total, active, fragment):
    with pytest.raises(WorkloadError, match=fragment):
        infer_architecture(total, active)


# ---- Hugging Face config.json ----------------------------------------------------------

# Trimmed from meta-llama/Meta-Llama-3-8B/config.json (keys and values as published).
LLAMA3_8B = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "bos_token_id": 128000,
    "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096,
    "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 8192,
    "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": None, "rope_theta": 500000.0, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 128256,
}
# Trimmed from mistralai/Mixtral-8x7B-v0.1/config.json.
MIXTRAL = {
    "architectures": ["MixtralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mixtral",
    "num_attention_heads": 32, "num_experts_per_tok": 2, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "num_local_experts": 8, "output_router_logits": False,
    "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.02,
    "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "vocab_size": 32000,
}
# Trimmed from openai-community/gpt2/config.json (no n_inner key: the FFN is 4·n_embd).
GPT2 = {
    "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
    "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256,
    "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
    "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024,
    "resid_pdrop": 0.1, "vocab_size": 50257,
}


def write_config(tmp_path, folder: str, cfg) -> str:
    path = tmp_path / folder / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text(cfg if isinstance(cfg, str) else json.dumps(cfg, indent=2))
    return str(path)


def config_file(path):
    """What `gpuplan estimate --config PATH` does: the CLI reads the file (its edge), the model
    parses the data, named by the file's folder."""
    from planner.model import read_model_config

    return architecture_from_config(read_model_config(path), source=str(path),
                                    default_name=Path(path).parent.name)


@pytest.mark.parametrize("folder,cfg,preset_name,seq", [
    ("Meta-Llama-3-8B", LLAMA3_8B, "llama3-8b", 8192),
    ("Mixtral-8x7B-v0.1", MIXTRAL, "mixtral-8x7b", 32768),
    ("gpt2", GPT2, "gpt2", 1024),
])
def test_config_json_reads_as_the_published_architecture(tmp_path, folder, cfg, preset_name,
                                                         seq):
    arch, context = config_file(write_config(tmp_path, folder, cfg))
    expected, _ = preset(preset_name)
    assert dataclasses.replace(arch, name="") == dataclasses.replace(expected, name="")
    assert arch.name == folder and context == seq


def test_config_json_name_or_path_names_the_model(tmp_path):
    cfg = {**LLAMA3_8B, "_name_or_path": "meta-llama/Meta-Llama-3-8B"}
    arch, _ = config_file(write_config(tmp_path, "x", cfg))
    assert arch.name == "meta-llama/Meta-Llama-3-8B"


def test_multimodal_config_reads_its_text_config(tmp_path):
    cfg = {"model_type": "llava", "text_config": LLAMA3_8B, "vision_config": {"hidden_size": 1}}
    arch, _ = config_file(write_config(tmp_path, "llava", cfg))
    assert (arch.layers, arch.hidden, arch.kv_heads) == (32, 4096, 8)


@pytest.mark.parametrize("text,fragment", [
    ('{"hidden_size": 4096,', "not valid JSON"),
    (json.dumps({k: v for k, v in LLAMA3_8B.items() if k != "num_hidden_layers"}),
     r"lacks num_hidden_layers"),
    (json.dumps({"model_type": "llama"}), "lacks"),
])
def test_bad_config_json_names_the_file(tmp_path, text, fragment):
    path = write_config(tmp_path, "broken", text)
    with pytest.raises(WorkloadError, match=fragment) as info:
        config_file(path)
    assert path in str(info.value) and "To fix" in str(info.value)


@pytest.mark.parametrize("text", ['{"hidden_size": 2048, "hidden_size": 4096}',
                                  '{"hidden_size": NaN}'])
def test_a_config_json_with_bad_content_is_told_to_correct_it_first(tmp_path, text):
    """Its fix named only the path ("give the path of the model's config.json") for a file
    found and read whose content is wrong: the reader's own fix comes first."""
    path = write_config(tmp_path, "bad", text)
    with pytest.raises(WorkloadError) as info:
        config_file(path)
    assert str(info.value).endswith("To fix: correct the file, or pass the path of a Hugging "
                                    "Face config.json")


def test_missing_config_json_names_the_file(tmp_path):
    path = tmp_path / "nowhere" / "config.json"
    with pytest.raises(WorkloadError, match="cannot read config") as info:
        config_file(path)
    assert str(path) in str(info.value)


def test_config_json_that_is_not_an_object_names_the_file(tmp_path):
    path = write_config(tmp_path, "list", "[1, 2, 3]")
    with pytest.raises(WorkloadError, match="list"):
        config_file(path)


def test_config_json_with_a_non_numeric_size_names_the_file(tmp_path):
    path = write_config(tmp_path, "bad", {**LLAMA3_8B, "hidden_size": "4096x"})
    with pytest.raises(WorkloadError, match="bad"):
        config_file(path)


def test_moe_inference_with_every_expert_active_is_a_workload_error():
    with pytest.raises(WorkloadError, match="experts"):
        infer_architecture(46e9, 12e9, experts=2, experts_per_token=2)


def test_moe_inference_explains_an_impossible_active_share():
    with pytest.raises(WorkloadError, match="active"):
        infer_architecture(50e9, 10e9)  # top-2 of 8: active ≥ 25% of total


def test_inference_that_cannot_reach_the_count_says_so_instead_of_planning_another_size():
    """10⁸ experts cannot fit in 100B parameters: even 128-wide experts and the router
    overshoot by orders of magnitude, so the inferred shape would be another model (and the
    count is above what an Architecture takes)."""
    with pytest.raises(WorkloadError, match="100000000 experts|experts must be a whole number "
                                            "from 0 to 65,536, got 100000000"):
        infer_architecture(100e9, 10e9, experts=100_000_000, experts_per_token=2)
    with pytest.raises(WorkloadError, match="no Llama-style shape with 60000 experts"):
        infer_architecture(1e9, 0.9e9, experts=60_000, experts_per_token=2)


def test_a_config_file_of_json_null_is_named_not_taken_for_no_config():
    """`--config f.json` holding `null` said "give exactly one of --model, --config or
    --params" although --config was given."""
    from planner import WorkloadSpec, build_workload

    with pytest.raises(WorkloadError, match=r"^f\.json: expected a JSON object of model "
                                            r"settings, found null\. To fix"):
        build_workload(WorkloadSpec(config=None, config_name="f.json", tokens="1B"))


def test_a_fractional_global_batch_is_refused_not_truncated():
    from planner import WorkloadSpec, build_workload

    with pytest.raises(PlannerError, match="whole number of tokens per step, got 1.5"):
        build_workload(WorkloadSpec(model="llama2-7b", tokens="1B", global_batch_tokens="1.5"))
    assert build_workload(WorkloadSpec(model="llama2-7b", tokens="1B",
                                       global_batch_tokens="4.5M")).global_batch_tokens == 4_501_504


@pytest.mark.parametrize("text", ["1.5", "1.0005K", 2.5])
def test_a_fractional_count_is_refused(text):
    # 1.5 tokens ran as one step and read "2 tokens" (hostile sweep)
    from planner.model import parse_count

    with pytest.raises(PlannerError, match="`tokens` must be a whole number of tokens, got"):
        parse_count(text, "tokens")


@pytest.mark.parametrize("text, value", [("2.3T", 2.3e12), ("7.24B", 7.24e9), ("1.5K", 1500),
                                         ("0.1234567891T", 123456789100)])
def test_a_decimal_with_a_suffix_is_a_whole_count(text, value):
    from planner.model import parse_count

    assert parse_count(text, "tokens") == pytest.approx(value)
