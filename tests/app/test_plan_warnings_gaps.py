"""A workload's warnings (a config.json whose FFN width is a guess) were said under every one
of the ten plans listed: said once for all of them, each plan keeping only its own."""

from __future__ import annotations

import json

from ._apptest import app, assert_clean

GUESSED = {"model_type": "mystery-lm", "num_hidden_layers": 16, "hidden_size": 2048,
           "num_attention_heads": 16, "vocab_size": 32000, "max_position_embeddings": 2048,
           "_name_or_path": "mystery-1b"}


def test_a_warning_every_plan_has_is_said_once(monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", "2026-12-01")
    at = app(source="config")
    at.file_uploader(key="config_file").set_value(
        ("config.json", json.dumps(GUESSED).encode(), "application/json")).run()
    assert_clean(at)
    expander = next(e for e in at.expander if e.label.startswith("Warnings of"))
    text = "\n".join(m.value for m in expander.markdown).replace("\\", "")
    assert text.count("is a guess") == 1, text
    assert text.startswith("**All "), text
