"""Messages of the performance model from a hostile sweep: each names what the user gave and
suggests a change that can help. A default the user did not give is blamed as a default; a
hint to change the accelerator names the option that chose it (`instance` or `gpu`); a
runtime reserve above a GPU's memory is not "use more GPUs"; a config.json without its FFN
width or with a model_type that is not text is refused, not read as a guess; an `assume` spot
rate that an offer's own published rate overrides says so."""

from __future__ import annotations

import json

import pytest

from planner.model import (
    Assumptions,
    HardwareError,
    NoFitError,
    WorkloadError,
    WorkloadSpec,
    architecture_from_config,
    build_cluster,
    build_workload,
    estimate,
    family_note,
)
from planner.model._assumptions import overrides_note

# Trimmed from meta-llama/Llama-3.2-1B/config.json (examples/llama-3.2-1b).
LLAMA = {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
         "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
         "vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": True}


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    from planner.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(code: int, out: str, err: str) -> str:
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    return err


# -- 1. the default token count above the model's limit is blamed as a default ---------------
def test_a_default_token_count_above_the_limit_says_it_is_the_default():
    with pytest.raises(WorkloadError) as info:
        build_workload(WorkloadSpec(params="1e14"))
    text = str(info.value)
    assert text.startswith("`tokens` was not given, and its default, 20 per active parameter")
    assert "is above the 1,000T (1e+15) tokens" in text and "To fix: give `tokens`" in text
    assert info.value.field == "tokens" and info.value.value is None


def test_the_cli_says_the_default_tokens_are_too_many(capsys):
    err = one_error_line(*cli(capsys, "estimate", "--params", "1e14", "--gpu", "H100",
                              "--gpus", "8"))
    assert err.startswith("error: --tokens was not given, and its default")
    assert "2000052862320640" not in err and "To fix: give --tokens" in err


def test_a_moe_shape_too_deep_to_infer_does_not_blame_layers():
    """The inferred shape needed 19,315 layers and the Architecture's bound said "pass a
    sensible `layers`", an option the user had not given (nor could: inference runs first)."""
    with pytest.raises(WorkloadError) as info:
        build_workload(WorkloadSpec(params="1e14", active_params="6e13", experts=8,
                                    tokens="1e12"))
    text = str(info.value)
    assert "within 10,000 layers" in text and "`layers`" not in text
    assert "To fix: lower `active_params`" in text and info.value.field == "active_params"


# -- 2. hints name the option the user used, and only changes that can help ------------------
@pytest.fixture(scope="module")
def llama8b():
    return build_workload(WorkloadSpec(model="llama3-8b", tokens="1T"))


def test_an_instance_without_tensor_peaks_says_pick_another_instance(catalog, llama8b):
    cluster, mem = build_cluster(catalog, instance="Standard_NV32as_v4")
    with pytest.raises(HardwareError) as info:
        estimate(llama8b, cluster, memory_gib=mem)
    text = str(info.value)
    assert "has no published tensor peaks" in text and text.endswith("pick another `instance`")
    # a probe's measurement cannot help: the model needs the peak before it reads any
    assert "`gpu`" not in text and "probe" not in text


def test_the_cli_names_instance_for_an_instance_and_gpu_for_a_gpu(capsys):
    err = one_error_line(*cli(capsys, "estimate", "--model", "llama3-8b", "--instance",
                              "Standard_NV32as_v4"))
    assert "To fix: pick another --instance" in err and "--gpu" not in err
    err = one_error_line(*cli(capsys, "estimate", "--model", "llama3-8b", "--gpu", "Gaudi"))
    assert "To fix: pick another --gpu" in err and "probe" not in err


def test_a_missing_precision_peak_on_an_instance_names_instance(catalog, llama8b):
    cluster, mem = build_cluster(catalog, instance="p4d.24xlarge")  # A100: no fp8 peak
    fp8 = build_workload(WorkloadSpec(model="llama3-8b", tokens="1T", precision="fp8"))
    with pytest.raises(HardwareError, match=r"To fix: choose `precision` fp16, or another "
                                            r"`instance`$"):
        estimate(fp8, cluster, memory_gib=mem)


def test_an_inference_instance_names_training_instances(capsys):
    err = one_error_line(*cli(capsys, "estimate", "--model", "gpt2", "--instance",
                              "inf2.48xlarge"))
    assert "with --instance, e.g. trn1.32xlarge (Trainium1)" in err and "--gpu" not in err


def test_a_reserve_above_the_gpu_memory_says_lower_it_not_use_more_gpus(catalog, llama8b):
    cluster, mem = build_cluster(catalog, gpu="H100", gpus=8)
    A = Assumptions().with_overrides(runtime_reserve_gib=1000)
    with pytest.raises(NoFitError) as info:
        estimate(llama8b, cluster, assumptions=A, memory_gib=mem)
    text = str(info.value)
    assert "runtime_reserve_gib = 1000 GiB, kept on every GPU) is at least the 76.0 GiB " \
           "usable on each H100-SXM5-80GB" in text
    assert "To fix: lower it with `assume` runtime_reserve_gib=… below 76.0" in text
    assert "more GPUs" not in text


def test_the_cli_says_the_reserve_is_too_large(capsys):
    err = one_error_line(*cli(capsys, "estimate", "--model", "llama3-8b", "--gpu", "H100",
                              "--assume", "runtime_reserve_gib=1000"))
    assert "--assume runtime_reserve_gib=…" in err and "use more GPUs" not in err


# -- 3. a config.json without the FFN width ---------------------------------------------------
@pytest.mark.parametrize("missing", ["absent", "null"])
def test_a_llama_config_without_intermediate_size_is_refused(missing):
    cfg = {k: v for k, v in LLAMA.items() if k != "intermediate_size"}
    if missing == "null":
        cfg["intermediate_size"] = None
    with pytest.raises(WorkloadError) as info:
        architecture_from_config(cfg, source="m.json")
    text = str(info.value)
    assert text.startswith("m.json: this llama config has no intermediate_size")
    assert "To fix: add it (the model card's config.json has it)" in text


def test_the_cli_refuses_a_config_without_intermediate_size(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({k: v for k, v in LLAMA.items() if k != "intermediate_size"}))
    err = one_error_line(*cli(capsys, "estimate", "--config", str(path), "--gpu", "H100",
                              "--gpus", "8"))
    assert "has no intermediate_size" in err and "To fix: add it" in err


def test_families_whose_ffn_is_four_times_hidden_still_read_without_it():
    gpt2 = {"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12,
            "vocab_size": 50257, "n_positions": 1024, "n_inner": None}
    arch, _ = architecture_from_config(gpt2)
    assert arch.ffn_hidden == 4 * 768


def test_an_unknown_family_without_intermediate_size_states_the_guess():
    cfg = {**{k: v for k, v in LLAMA.items() if k != "intermediate_size"},
           "model_type": "mystery"}
    arch, _ = architecture_from_config(cfg)
    assert arch.ffn_hidden == 4 * 2048
    assert "its FFN is 4 × hidden, as the file gives no intermediate_size" in family_note(cfg)
    assert "4 × hidden" not in family_note({**LLAMA, "model_type": "mystery"})


# -- 4. a model_type that is not text ---------------------------------------------------------
@pytest.mark.parametrize(("value", "shown"), [(5, "got 5"), (["llama"], "got ['llama']")])
def test_a_model_type_that_is_not_text_is_refused(value, shown):
    with pytest.raises(WorkloadError) as info:
        architecture_from_config({**LLAMA, "model_type": value}, source="m.json")
    text = str(info.value)
    assert text.startswith("m.json: model_type must be text") and shown in text
    assert "names no model_type" not in text and "To fix:" in text
    assert family_note({**LLAMA, "model_type": value}).startswith(
        f"model_type {value!r} is not text")


def test_a_null_model_type_is_still_read_llama_style():
    arch, _ = architecture_from_config({**LLAMA, "model_type": None})
    assert arch.ffn_hidden == 8192
    assert family_note({**LLAMA, "model_type": None}).startswith(
        "the config.json names no model_type")


# -- 5. an assumed spot rate an offer's own published rate overrides --------------------------
def test_an_assumed_spot_rate_is_said_to_cover_offers_without_their_own():
    A = Assumptions().with_overrides(**{"spot_interruptions_per_hour.aws": 1.0})
    assert "spot_interruptions_per_hour.aws = 1 (default 0.01; for aws spot offers without a " \
           "published rate)" in overrides_note(A)


def test_a_spot_offer_with_its_own_rate_warns_that_the_assumed_rate_did_nothing(catalog):
    from planner.search import Constraints, plan

    workload = build_workload(WorkloadSpec(model="gpt2", tokens="10B"))
    A = Assumptions().with_overrides(**{"spot_interruptions_per_hour.aws": 1.0})
    result = plan(workload, catalog, Constraints(deadline_hours=720, clouds=("aws",),
                                                 pricing=("spot",), gpus=("A10G",)),
                  assumptions=A, top_n=20)
    said = {c.spot_interruptions_per_hour: any(
        "`assume` spot_interruptions_per_hour.aws has no effect on this spot" in w
        for w in c.warnings) for c in result.candidates}
    assert any(said.values())  # AWS advisor buckets: most A10G offers publish a rate
    for rate, warned in said.items():
        assert warned == (rate != 1.0), rate  # the assumed rate, where used, says nothing
    # without the override the same plans carry no such warning
    plain = plan(workload, catalog, Constraints(deadline_hours=720, clouds=("aws",),
                                                pricing=("spot",), gpus=("A10G",)), top_n=20)
    assert not any("has no effect" in w for c in plain.candidates for w in c.warnings)


def _qwen3_moe(**extra):
    return {"model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048,
            "num_attention_heads": 32, "num_key_value_heads": 4, "intermediate_size": 6144,
            "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
            "vocab_size": 151936, "head_dim": 128, **extra}


@pytest.mark.parametrize("extra", [{"mlp_only_layers": [0, 1]}, {"decoder_sparse_step": 2},
                                   {"mlp_only_layers": [100, -1, "a"]},
                                   {"decoder_sparse_step": 0}])
def test_qwen_moe_dense_layers_are_refused_not_ignored(extra):
    # every layer was read as sparse: "128 experts top-8: 30.53B" for an all-dense config
    with pytest.raises(WorkloadError, match="make some layers dense, which gpuplan does not "
                                            "model"):
        architecture_from_config(_qwen3_moe(**extra), source="c.json")


def test_qwen_moe_released_values_are_read():
    arch, _ = architecture_from_config(_qwen3_moe(mlp_only_layers=[], decoder_sparse_step=1),
                                       source="c.json")
    assert arch.experts == 128


def test_a_deepseek_config_without_shared_experts_is_refused():
    # read as 0 shared experts; transformers assumes 1, the released configs state it
    cfg = {"model_type": "deepseek_v3", "num_hidden_layers": 61, "hidden_size": 7168,
           "num_attention_heads": 128, "num_key_value_heads": 128, "intermediate_size": 18432,
           "moe_intermediate_size": 2048, "n_routed_experts": 256, "num_experts_per_tok": 8,
           "first_k_dense_replace": 3, "vocab_size": 129280}
    with pytest.raises(WorkloadError, match="routed experts but no n_shared_experts"):
        architecture_from_config(cfg, source="c.json")
    arch, _ = architecture_from_config({**cfg, "n_shared_experts": 1}, source="c.json")
    assert arch.shared_experts == 1
