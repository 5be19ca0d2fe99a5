"""Three workload inputs that were taken without a word, now said: experts per token beside a
dense model (refused: it was ignored, and the run timed dense), a sequence longer than the
model's context (a warning in `estimate` and `plan`, table and --json: training past it is
context extension, and a learned table of positions has no entry there), and a comma list with
an empty item (`--gpu 'H100,,'`, refused for every list option).

Regressions pinned: `estimate --params 7B --experts 0 --experts-per-token 2` and `--params 7B
--active-params 7B --experts-per-token 2` ran a dense model, silently; `--model gpt2 --seq-len
8192` and `--model llama2-7b --seq-len 32768` ran without a word; `plan --gpu 'H100,,'`,
`--clouds 'aws,'`, `offers --gpu 'H100,,'` were accepted."""

from __future__ import annotations

import json

import pytest

from planner.cli import main
from planner.model import (
    Architecture,
    WorkloadError,
    WorkloadSpec,
    architecture_from_config,
    build_workload,
)

ESTIMATE = ("estimate", "--gpu", "H100", "--gpus", "8")
PLAN = ("plan", "--gpu", "H100", "--tokens", "1B")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and "To fix:" in lines[0]
    return lines[0]


# ---- experts per token beside a dense model ---------------------------------------------


def test_experts_per_token_beside_zero_experts_is_refused(capsys):
    code, out, err = run(capsys, *ESTIMATE, "--params", "7B", "--experts", "0",
                         "--experts-per-token", "2")
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert line.startswith("error: --experts-per-token 2 needs --experts: a model with 0 "
                           "experts is dense. To fix:")
    assert "--experts N" in line and "drop --experts-per-token" in line


def test_experts_per_token_beside_a_dense_active_count_is_refused(capsys):
    # `active_params` equal to `params` is every parameter active: the routing was ignored
    code, out, err = run(capsys, *ESTIMATE, "--params", "7B", "--active-params", "7B",
                         "--experts-per-token", "2")
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert "--experts-per-token describes a mixture of experts" in line
    assert "--active-params equals --params" in line and "drop --experts-per-token" in line


def test_a_dense_model_said_twice_still_runs(capsys):
    # 0 experts and 0 per token agree: nothing is ignored
    code, _, err = run(capsys, *ESTIMATE, "--params", "7B", "--experts", "0",
                       "--experts-per-token", "0", "--json")
    assert code == 0, err


def test_python_api_refuses_it_with_the_field_named():
    with pytest.raises(WorkloadError) as info:
        build_workload(WorkloadSpec(params="7B", experts=0, experts_per_token=2))
    assert info.value.field == "experts_per_token" and info.value.value == 2
    assert str(info.value).startswith("`experts_per_token` 2 needs `experts`")
    with pytest.raises(WorkloadError) as info:
        Architecture(layers=2, hidden=64, heads=2, kv_heads=2, ffn_hidden=128, vocab=10,
                     experts=0, experts_per_token=2)
    assert info.value.field == "experts_per_token" and info.value.value == 2
    assert "a model with 0 experts is dense" in str(info.value) and "To fix:" in str(info.value)


def test_a_config_read_dense_with_its_routing_left_is_still_read():
    # Llama 4 with moe_layers []: transformers builds every layer dense; the file's
    # num_experts_per_tok is not the user's, and the reader sets both counts to 0
    cfg = {"model_type": "llama4_text", "hidden_size": 512, "head_dim": 64,
           "num_attention_heads": 8, "num_key_value_heads": 2, "num_hidden_layers": 4,
           "intermediate_size": 256, "intermediate_size_mlp": 1024, "vocab_size": 1000,
           "num_local_experts": 16, "num_experts_per_tok": 1, "moe_layers": [],
           "attention_chunk_size": 8192, "max_position_embeddings": 8192}
    arch, _ = architecture_from_config(cfg)
    assert (arch.experts, arch.experts_per_token) == (0, 0)
    assert build_workload(WorkloadSpec(config=cfg, tokens="1B")).arch.experts == 0


# ---- a sequence longer than the model's context ------------------------------------------

LEARNED = ("--seq-len 8,192 is above gpt2's context of 1,024 (n_positions): its positions "
           "are a learned table of 1,024, and positions beyond it do not exist without "
           "changing the model")
EXTENDED = ("--seq-len 32,768 is above llama2-7b's context of 4,096 (max_position_embeddings): "
            "training at it extends the context (e.g. RoPE scaling); the longer sequence is "
            "timed as given")


def _flat(text: str) -> str:
    """The table's wrapped warning as one line."""
    return " ".join(text.split())


@pytest.mark.parametrize("model,seq,said", [("gpt2", "8192", LEARNED),
                                            ("llama2-7b", "32768", EXTENDED)])
def test_estimate_says_a_sequence_beyond_the_context(capsys, model, seq, said):
    code, out, err = run(capsys, *ESTIMATE, "--model", model, "--seq-len", seq)
    assert code == 0, err
    assert "warning: " + said in _flat(out)
    code, out, err = run(capsys, *ESTIMATE, "--model", model, "--seq-len", seq, "--json")
    assert code == 0, err
    assert any(w.startswith(said) for w in json.loads(out)["warnings"])


def test_plan_says_it_in_its_table_and_json(capsys):
    code, out, err = run(capsys, *PLAN, "--model", "llama2-7b", "--seq-len", "32768")
    assert code == 0, err
    assert "warning: " + EXTENDED in _flat(out)
    code, out, err = run(capsys, *PLAN, "--model", "gpt2", "--seq-len", "8192", "--json")
    assert code == 0, err
    data = json.JSONDecoder().raw_decode(out)[0]
    assert any(w.startswith(LEARNED) for w in data["recommendation"]["warnings"])


@pytest.mark.parametrize("argv", [
    ("--model", "llama2-7b", "--seq-len", "4096"),  # at the context
    ("--model", "llama2-7b"),  # the default: the pre-training context
    ("--model", "llama3.1-8b", "--seq-len", "32768"),  # Llama 3.1: 131,072
    ("--params", "7B", "--seq-len", "32768")])  # a parameter count knows no context
def test_nothing_is_said_within_the_context_or_without_one(capsys, argv):
    code, out, err = run(capsys, *ESTIMATE, *argv, "--json")
    assert code == 0, err
    assert not any("context of" in w for w in json.loads(out)["warnings"])


GPT2_CONFIG = {"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12,
               "n_positions": 1024, "n_ctx": 1024, "vocab_size": 50257,
               "_name_or_path": "openai-community/gpt2"}
LLAMA2_CONFIG = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
                 "max_position_embeddings": 4096, "num_attention_heads": 32,
                 "num_hidden_layers": 32, "num_key_value_heads": 32, "vocab_size": 32000}


@pytest.mark.parametrize("cfg,seq,said", [
    (GPT2_CONFIG, "2048", "--seq-len 2,048 is above openai-community/gpt2's context of 1,024 "
                          "(n_positions): its positions are a learned table"),
    (LLAMA2_CONFIG, "8192", "--seq-len 8,192 is above Llama-2-7b-hf's context of 4,096 "
                            "(max_position_embeddings): training at it extends the context")])
def test_a_config_json_context_is_said_too(capsys, tmp_path, cfg, seq, said):
    (tmp_path / "Llama-2-7b-hf").mkdir()
    path = tmp_path / "Llama-2-7b-hf" / "config.json"  # named by its folder, or its own name
    path.write_text(json.dumps(cfg), encoding="utf-8")
    code, out, err = run(capsys, *ESTIMATE, "--config", str(path), "--seq-len", seq, "--json")
    assert code == 0, err
    assert any(w.startswith(said) for w in json.loads(out)["warnings"])


# ---- a comma list with an empty item ------------------------------------------------------


@pytest.mark.parametrize("argv,said", [
    (("plan", "--params", "7B", "--tokens", "1B", "--gpu", "H100,,"), "--gpu 'H100,,'"),
    (("plan", "--params", "7B", "--tokens", "1B", "--gpu", "H100", "--clouds", "aws,"),
     "--clouds 'aws,'"),
    (("plan", "--params", "7B", "--tokens", "1B", "--gpu", "H100", "--regions",
      ",us-east-1"), "--regions ',us-east-1'"),
    (("plan", "--params", "7B", "--tokens", "1B", "--gpu", "H100", "--pricing",
      "spot, ,on_demand"), "--pricing 'spot, ,on_demand'"),
    (("plan", "--params", "7B", "--tokens", "1B", "--gpu", "H100", "--exclude", "aws,,gcp"),
     "--exclude 'aws,,gcp'"),
    (("offers", "--gpu", "H100,,"), "--gpu 'H100,,'"),
    (("offers", "--cloud", "aws,,"), "--cloud 'aws,,'"),
    (("offers", "--region", "us-east-1,"), "--region 'us-east-1,'"),
    (("offers", "--instance", "p5.48xlarge,,"), "--instance 'p5.48xlarge,,'"),
    (("catalog", "refresh", "--cloud", "aws,,"), "--cloud 'aws,,'")])
def test_an_empty_list_item_is_refused(capsys, argv, said):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert one_error_line(err) == (f"error: {said} has an empty item. To fix: remove the "
                                   "extra comma")


def test_spaces_beside_commas_are_still_taken(capsys):
    code, _, err = run(capsys, "offers", "--gpu", "H100, A100-SXM4-80GB", "--limit", "1")
    assert code == 0, err
