"""Uneven pipeline stages with interleaving: the launch files carry Megatron-LM's
--pipeline-model-parallel-layout (deepseek-v3's default plan, pp 8 × vp 4, has a last stage
of 5 layers, which the uniform split's rule — every stage's layers divisible by vp — cannot
place), and the two-variable summary only where it says the whole split (12 layers over 8
stages read as 2 × 7 + 1 = 15)."""

from __future__ import annotations

from planner.launch._spec import pipeline_layout, plan_env, stage_layers


def _layers(layout: str) -> list[list[int]]:
    """Each chunk's layer count, as Megatron would read the layout string."""
    out = []
    for chunk in layout.split("|"):
        n = 0
        for part in chunk.split(","):
            part = part.replace("E", "").replace("L", "")
            if part.startswith("t*"):
                n += int(part[2:])
            else:
                n += part.count("t")
        out.append(n)
    return out


def test_deepseek_v3s_stages_at_vp_4_are_laid_out_chunk_by_chunk():
    split = stage_layers(61, 8)
    layout = pipeline_layout(split, 4)
    chunks = _layers(layout)
    assert len(chunks) == 32 and sum(chunks) == 61
    assert layout.startswith("E,t*2|") and layout.endswith("|t,L")
    # virtual rank v of stage p is chunk v·pp + p: the last stage's 5 layers are 2, 1, 1, 1
    assert [chunks[v * 8 + 7] for v in range(4)] == [2, 1, 1, 1]
    assert max(chunks) == 2  # no chunk holds more than the model timed (8 / 4)


def test_every_split_is_laid_out_whole():
    for layers in range(2, 80):
        for pp in range(2, min(layers, 17)):
            split = stage_layers(layers, pp)
            if split is None:
                continue
            for vp in (1, 2, 3, 4):
                chunks = _layers(pipeline_layout(split, vp))
                assert sum(chunks) == layers and len(chunks) == pp * vp
                for p, n in enumerate(split):
                    assert sum(chunks[v * pp + p] for v in range(vp)) == n


def _env(layers: int, pp: int, vp: int = 1) -> dict:
    class Arch:
        pass

    class W:
        arch = Arch()
        seq_len, precision, framework, global_batch_tokens = 4096, "bf16", "megatron", 0
    W.arch.layers = layers
    plan = {"tp": 1, "pp": pp, "dp": 1, "virtual_stages": vp, "zero_stage": 1,
            "micro_batch": 1, "grad_accumulation": 1, "recompute": "none"}
    return plan_env(plan, W)


def test_the_summary_pair_is_given_only_where_it_says_the_whole_split():
    assert _env(61, 8)["GPUPLAN_LAYERS_PER_STAGE"] == "8"
    assert _env(61, 8)["GPUPLAN_LAST_STAGE_LAYERS"] == "5"
    twelve = _env(12, 8)  # 2, 2, 2, 2, 1, 1, 1, 1: "2 each, the last 1" would be 15 layers
    assert twelve["GPUPLAN_STAGE_LAYERS"] == "2,2,2,2,1,1,1,1"
    assert "GPUPLAN_LAYERS_PER_STAGE" not in twelve and "GPUPLAN_LAST_STAGE_LAYERS" not in twelve
    assert _env(61, 8, 4)["GPUPLAN_PIPELINE_LAYOUT"] == pipeline_layout(stage_layers(61, 8), 4)
    assert "GPUPLAN_PIPELINE_LAYOUT" not in _env(64, 8, 4)  # even: the uniform split
