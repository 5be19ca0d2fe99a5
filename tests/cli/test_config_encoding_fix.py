"""A config.json read but wrong in its encoding is told how to mend the file first, as one wrong
inside is ("correct the file, or …"): a UTF-16 save was told only "pass the path of a Hugging
Face config.json" on the CLI, which it is (the app had its own twin of the right words)."""

from __future__ import annotations

import json

import pytest

from planner.cli import main

CONFIG = {"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 2,
          "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 1000}


@pytest.mark.parametrize(("encoding", "says"), [
    ("utf-16", "is UTF-16 text, not UTF-8. To fix: save the file as UTF-8, or pass the path"),
    ("latin-1", "is not UTF-8 text (byte 0xe8 at byte offset"),  # the è
])
def test_a_config_in_another_encoding_is_told_to_be_saved_as_utf8(tmp_path, capsys, encoding,
                                                                   says):
    path = tmp_path / "config.json"
    path.write_bytes(json.dumps({**CONFIG, "name_or_path": "modèle"},
                                ensure_ascii=False).encode(encoding))
    code = main(["estimate", "--config", str(path), "--tokens", "1B", "--gpu", "H100",
                 "--gpus", "8"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert says in err
    assert "To fix: save the file as UTF-8, or pass the path of a Hugging Face config.json" in err
