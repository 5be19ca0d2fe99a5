"""Sliding-window and chunked attention: read from config.json (``sliding_window``,
``layer_types``, the families' layouts), timed by what a flash kernel computes, and said.

Regression pinned: Mistral-7B-v0.1 (a 4,096-token window on every layer) at 32,768-token
sequences timed as full causal attention, with no word of the window.

Configs are published config.json files trimmed to the keys gpuplan reads:
mistralai/Mistral-7B-v0.1, Qwen/Qwen2-7B (a sliding_window it disables), google/gemma-2-9b,
openai/gpt-oss-20b (layer_types)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from planner.model import (
    Assumptions,
    ModelScalars,
    WorkloadError,
    WorkloadSpec,
    architecture_from_config,
    build_workload,
    evaluate,
    preset,
)

MISTRAL_7B_V01 = {
    "architectures": ["MistralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
    "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "rope_theta": 10000.0,
    "sliding_window": 4096, "tie_word_embeddings": False, "vocab_size": 32000}
QWEN2_7B = {
    "architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584, "intermediate_size": 18944,
    "max_position_embeddings": 131072, "max_window_layers": 28, "model_type": "qwen2",
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
    "sliding_window": 131072, "tie_word_embeddings": False, "use_sliding_window": False,
    "vocab_size": 152064}
GEMMA2_9B = {
    "architectures": ["Gemma2ForCausalLM"], "head_dim": 256, "hidden_size": 3584,
    "intermediate_size": 14336, "max_position_embeddings": 8192, "model_type": "gemma2",
    "num_attention_heads": 16, "num_hidden_layers": 42, "num_key_value_heads": 8,
    "sliding_window": 4096, "vocab_size": 256000}
GPT_OSS_20B = {
    "architectures": ["GptOssForCausalLM"], "head_dim": 64, "hidden_size": 2880,
    "intermediate_size": 2880, "layer_types": ["sliding_attention", "full_attention"] * 12,
    "max_position_embeddings": 131072, "model_type": "gpt_oss", "num_attention_heads": 64,
    "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 8,
    "num_local_experts": 32, "sliding_window": 128, "tie_word_embeddings": False,
    "vocab_size": 201088}
# one H100-like entry; the attention rate is what a kernel achieves
ONE = dict(tp=np.array([1.0]), pp=np.array([1.0]), dp=np.array([8.0]), zero=np.array([1.0]),
           mb=np.array([1.0]), rc=np.array([0.0]), gpus_per_node=np.array([8.0]),
           matmul_tflops=np.array([792.6]), attention_tflops=np.array([400.0]),
           hbm_gb_per_s=np.array([3350.0]), memory_gib=np.array([80.0]),
           intra_busbw_gb_per_s=np.array([360.0]), nic_gb_per_s_per_gpu=np.array([42.5]))


def workload(cfg, seq_len=32768, **spec):
    return build_workload(WorkloadSpec(config=cfg, tokens="1B", seq_len=seq_len,
                                       global_batch_tokens=64 * seq_len, **spec))


@pytest.mark.parametrize("s,w", [(1, 1), (7, 3), (16, 4), (10, 10), (10, 25), (33, 8)])
def test_window_keys_per_query_counts_each_querys_keys(s, w):
    from planner.model._workload import window_keys_per_query

    # query q sees keys max(0, q − w + 1) … q (transformers: kv > q − w)
    by_hand = sum(min(q + 1, w) for q in range(s)) / s
    assert window_keys_per_query(s, w) == pytest.approx(by_hand, rel=1e-12)


@pytest.mark.parametrize("s,c", [(1, 1), (7, 3), (16, 4), (10, 10), (10, 25), (33, 8)])
def test_chunk_keys_per_query_counts_each_querys_keys(s, c):
    from planner.model._workload import chunk_keys_per_query

    by_hand = sum(q % c + 1 for q in range(s)) / s  # its chunk's keys up to itself
    assert chunk_keys_per_query(s, c) == pytest.approx(by_hand, rel=1e-12)


def test_mistral_7b_v01_window_is_read_and_shrinks_attention():
    arch, _ = architecture_from_config(MISTRAL_7B_V01)
    assert (arch.window_tokens, arch.windowed_layers) == (4096, 32)
    # 4096 − 4096·4095/(2·32768) = 3840.0625 keys per query for (32768 + 1)/2 = 16384.5
    assert arch.attention_share(32768) == pytest.approx(3840.0625 / 16384.5, rel=1e-12)
    assert arch.attention_share(4096) == 1.0  # the window covers the sequence


def test_mistral_7b_v01_at_32k_times_fewer_attention_flops_than_without_its_window():
    windowed = workload(MISTRAL_7B_V01)
    plain = dataclasses.replace(windowed, arch=dataclasses.replace(
        windowed.arch, window_tokens=0, windowed_layers=0))
    A = Assumptions()
    ms_w, ms_p = ModelScalars.of(windowed), ModelScalars.of(plain)
    t_w, t_p = (float(evaluate(ms, A, **ONE)["compute_s"][0]) for ms in (ms_w, ms_p))
    # the attention core per layer and micro-batch: 3 passes × causal 0.5 × 4·s·s·a·d / rate,
    # over 32 layers and 8 micro-batches (64 sequences over dp 8, one each); the window
    # removes (1 − share) of it
    full = 3 * A.causal_fraction * 4 * 32768 * 32768 * 32 * 128 / 400e12 * 32 * 8
    share = 3840.0625 / 16384.5
    assert t_p - t_w == pytest.approx(full * (1 - share), rel=1e-6)
    # model FLOPs: 6·N plus 6·L·s·a·d causal attention, the attention × share
    attention = 6 * 32 * 32768 * 32 * 128
    assert ms_p.model_flops_per_token() - ms_w.model_flops_per_token() == pytest.approx(
        attention * (1 - share), rel=1e-9)


def test_the_window_is_stated_in_the_estimates_assumptions():
    note = next(n for n in workload(MISTRAL_7B_V01).inferred if n.startswith("attention:"))
    assert note.startswith("attention: a 4,096-token sliding window on all 32 layers: at "
                           "32,768 tokens a query attends to 3,840 keys on average, not "
                           "16,384.5; the attention FLOPs, timed and in the model FLOPs, × 0.234")
    short = workload(MISTRAL_7B_V01, seq_len=4096).inferred
    assert any("cover the whole 4,096-token sequence: no effect" in n for n in short)


@pytest.mark.parametrize("attention", ["triton", "unfused"])
def test_kernels_without_a_window_are_timed_as_before(attention):
    windowed = workload(MISTRAL_7B_V01, attention=attention)
    ms = ModelScalars.of(windowed)
    assert ms.attn_share_timed == 1.0 and ms.attn_share < 0.25  # model FLOPs still count it
    plain = ModelScalars.of(dataclasses.replace(windowed, arch=dataclasses.replace(
        windowed.arch, window_tokens=0, windowed_layers=0)))
    A = Assumptions()
    assert evaluate(ms, A, **ONE)["step_s"][0] == evaluate(plain, A, **ONE)["step_s"][0]
    assert any(f"the {attention} kernel computes the masked scores too" in n
               for n in windowed.inferred)


def test_qwen2_use_sliding_window_false_has_no_window():
    arch, _ = architecture_from_config(QWEN2_7B)
    assert (arch.window_tokens, arch.windowed_layers) == (0, 0)
    assert arch.attention_share(32768) == 1.0
    on = {**QWEN2_7B, "use_sliding_window": True, "sliding_window": 4096,
          "max_window_layers": 20}
    assert architecture_from_config(on)[0].windowed_layers == 8  # layers 20 … 27


def test_gemma2_alternates_window_and_full_layers():
    arch, _ = architecture_from_config(GEMMA2_9B)
    assert (arch.window_tokens, arch.windowed_layers) == (4096, 21)  # layers 0, 2, … 40


def test_gemma3_keeps_one_full_layer_in_six():
    from test_hfconfig_nested import GEMMA3_4B

    arch, _ = architecture_from_config(GEMMA3_4B)
    # sliding_window_pattern 6 (Gemma3TextConfig): layers 5, 11, 17, 23, 29 full, 29 windowed
    assert (arch.window_tokens, arch.windowed_layers) == (1024, 29)


def test_gpt_oss_layer_types_give_the_mix():
    arch, _ = architecture_from_config(GPT_OSS_20B)
    assert (arch.window_tokens, arch.windowed_layers, arch.experts) == (128, 12, 32)


def test_llama4_chunks_its_rope_layers():
    from test_hfconfig_nested import LLAMA4_SCOUT

    arch, _ = architecture_from_config(LLAMA4_SCOUT)
    assert (arch.chunk_tokens, arch.chunked_layers, arch.windowed_layers) == (8192, 36, 0)


@pytest.mark.parametrize("kinds,says", [
    (["linear_attention", "full_attention"] * 12, "layer_types has 'linear_attention' layers"),
    (["sliding_attention"] * 3, "layer_types must name each of the 24 layers"),
])
def test_layer_types_it_cannot_time_are_refused(kinds, says):
    with pytest.raises(WorkloadError, match=says) as info:
        architecture_from_config({**GPT_OSS_20B, "layer_types": kinds})
    assert "To fix" in str(info.value)


def test_presets_and_windowless_configs_are_timed_exactly_as_before():
    arch, _ = preset("mistral-7b")  # modelled without its window: the golden plans pin it
    assert arch.windowed_layers == 0 and arch.attention_share(32768) == 1.0


def test_fewer_layers_keep_the_share_of_windowed_layers():
    w = build_workload(WorkloadSpec(config=GEMMA2_9B, tokens="1B",
                                    arch_overrides=(("layers", 10),)))
    assert (w.arch.layers, w.arch.windowed_layers) == (10, 5)
    assert any("windowed_layers=5 (same share of the layers)" in n for n in w.inferred)


def _cli(capsys, tmp_path, cfg, *args):
    import json

    from planner.cli import main

    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code = main(["estimate", "--config", str(path), "--tokens", "1B", "--gpu", "H100",
                 "--gpus", "8", *args])
    out, err = capsys.readouterr()
    return code, " ".join((out + err).split())


def test_one_layer_keeps_a_window(capsys, tmp_path):
    # was: round(21 × 1/42) = 0 windowed layers → "window_tokens (4096) and windowed_layers (0)
    # go together … give both, or neither", exit 2 (neither is a CLI option)
    code, text = _cli(capsys, tmp_path, GEMMA2_9B, "--layers", "1")
    assert code == 0, text
    assert "windowed_layers=1" in text and "sliding window on the one layer" in text


MIXED = {**GPT_OSS_20B, "num_hidden_layers": 4, "layer_types": [
    "sliding_attention", "sliding_attention", "chunked_attention", "chunked_attention"],
    "attention_chunk_size": 8192, "num_local_experts": 0, "num_experts_per_tok": 0}


@pytest.mark.parametrize("layers,windowed,chunked", [(3, 2, 1), (2, 1, 1), (1, 1, 0),
                                                     (8, 4, 4)])
def test_windowed_and_chunked_counts_never_exceed_the_layers(layers, windowed, chunked):
    # was: --layers 3 → 2 + 2 "are some of the 3 layers, not more of them"
    w = build_workload(WorkloadSpec(config=MIXED, tokens="1B",
                                    arch_overrides=(("layers", layers),)))
    a = w.arch
    assert (a.windowed_layers, a.chunked_layers) == (windowed, chunked)
    assert bool(a.chunk_tokens) == bool(chunked)
    assert any(f"chunked_layers={chunked}" in n for n in w.inferred)


@pytest.mark.parametrize("cfg,says", [
    ({**MIXED, "attention_chunk_size": 0}, "attention_chunk_size is 0; it must be at least 1"),
    ({**GEMMA2_9B, "model_type": "gemma3_text", "sliding_window_pattern": 0},
     "sliding_window_pattern is 0; it must be at least 1"),
    ({**MISTRAL_7B_V01, "sliding_window": 0}, "sliding_window is 0; it must be at least 1"),
    # was: "is -1; it must be at least 0", and 0 was then refused with "at least 1"
    ({**MISTRAL_7B_V01, "sliding_window": -1}, "sliding_window is -1; it must be at least 1"),
])
def test_zero_window_chunk_or_pattern_is_refused(cfg, says, capsys, tmp_path):
    # was: read as "no window", exit 0 without a word
    code, text = _cli(capsys, tmp_path, cfg)
    assert code == 2 and says in text and "To fix" in text, text


def test_sliding_window_zero_is_fine_where_the_window_is_unused():
    arch, _ = architecture_from_config({**QWEN2_7B, "sliding_window": 0})
    assert arch.windowed_layers == 0


def test_a_one_token_window_note_is_singular_and_not_zero():
    w = workload({**MISTRAL_7B_V01, "sliding_window": 1}, seq_len=32768)
    note = next(n for n in w.inferred if n.startswith("attention:"))
    assert "attends to 1 key on average" in note and "× 0.0000610" in note, note


def test_estimate_json_states_the_window_it_timed(capsys, tmp_path):
    # was: the window changed the hours but `--json` had no field saying so (only a note)
    import json

    from planner.cli import main

    path = tmp_path / "config.json"
    path.write_text(json.dumps(MISTRAL_7B_V01))
    assert main(["estimate", "--config", str(path), "--tokens", "1B", "--gpu", "H100",
                 "--seq-len", "32768", "--json"]) == 0
    w = json.loads(capsys.readouterr().out)["workload"]
    assert (w["window_tokens"], w["windowed_layers"]) == (4096, 32)
    assert (w["chunk_tokens"], w["chunked_layers"]) == (0, 0)
