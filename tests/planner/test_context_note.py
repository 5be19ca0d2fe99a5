"""The model's context beside `seq_len` (``context_warning``): every preset and alias knows its
own, its default sequence is within it, and a config.json's comes from the key it states."""

from __future__ import annotations

import pytest

from planner.model import WorkloadSpec, build_workload
from planner.model._presets import ALIASES, context_warning, preset, preset_names


@pytest.mark.parametrize("name", [*preset_names(), *ALIASES])
def test_every_preset_and_alias_has_a_context_its_default_stays_within(name):
    _, default_seq = preset(name)
    assert context_warning(default_seq, model=name) == []
    said = context_warning(default_seq * 1000, model=name)
    assert len(said) == 1 and said[0].startswith(f"`seq_len` {default_seq * 1000:,} is above "
                                                 f"{name}'s context of ")


def test_an_alias_says_its_own_model():
    # Llama 3.1 (131,072) is modelled as the Llama 3 preset (8,192): the alias's own context
    assert context_warning(32768, model="llama3.1-8b") == []
    assert context_warning(32768, model="llama3-8b")[0].startswith(
        "`seq_len` 32,768 is above llama3-8b's context of 8,192 (max_position_embeddings)")


def test_learned_positions_by_family():
    learned = context_warning(4096, cfg={"model_type": "opt"}, name="facebook/opt-1.3b",
                              positions=2048, key="max_position_embeddings")
    assert "learned table of 2,048" in learned[0]
    rope = context_warning(4096, cfg={"model_type": "gpt_neox"}, name="config",
                           positions=2048, key="max_position_embeddings")
    assert rope[0].startswith("`seq_len` 4,096 is above the model's context of 2,048")
    assert "extends the context" in rope[0]
    # a multimodal file: its text model's family
    nested = context_warning(4096, cfg={"model_type": "llava", "text_config": {
        "model_type": "gpt2"}}, name="x", positions=1024, key="n_positions")
    assert "learned table" in nested[0]


def test_no_context_no_word():
    assert context_warning(10**6) == []
    assert context_warning(10**6, cfg={"model_type": "llama"}, positions=None) == []
    assert build_workload(WorkloadSpec(params="7B", seq_len=1_000_000,
                                       tokens="1B")).warnings == ()


def test_the_overrides_note_is_not_taken_for_a_size_warning():
    # the workload's warnings were the overrides' alone; a context warning beside overrides
    # must not add "not the … of `params`" to their note
    w = build_workload(WorkloadSpec(model="llama2-7b", seq_len=8192, tokens="1B",
                                    arch_overrides=(("layers", 16),)))
    assert len(w.warnings) == 1 and "context of 4,096" in w.warnings[0]
    assert not any("of `params`" in n for n in w.inferred)


def _llama_config(positions: int) -> dict:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "llama-3.2-1b" / "config.json"
    return {**json.loads(path.read_text()), "max_position_embeddings": positions}


@pytest.mark.parametrize("finetune", ["none", "lora"])
def test_a_config_context_no_model_trains_at_is_warned(finetune):
    """max_position_embeddings 1 planned 1,024 one-token sequences a step, with no warning
    (hostile-input review, 2026-12-07)."""
    w = build_workload(WorkloadSpec(config=_llama_config(1), config_name="c.json",
                                    tokens="10B", finetune=finetune))
    assert w.seq_len == 1
    assert [x for x in w.warnings if x.startswith(
        "c.json: max_position_embeddings 1 is shorter than any language model's training "
        "context, and the run is planned at sequence length 1. To fix: ")], w.warnings


@pytest.mark.parametrize(("positions", "seq_len"), [(512, None), (1, 2048)])
def test_a_real_context_or_a_given_sequence_is_not_warned_of_so(positions, seq_len):
    w = build_workload(WorkloadSpec(config=_llama_config(positions), config_name="c.json",
                                    tokens="10B", seq_len=seq_len))
    assert not [x for x in w.warnings if "shorter than any" in x], w.warnings
