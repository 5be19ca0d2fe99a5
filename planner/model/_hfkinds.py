"""Which Hugging Face configs ``_hfconfig`` can read as a decoder-only attention transformer, and
the older formats it reads as a family it knows.

Refused before their sizes are read (each size read anyway made a wrong model, in silence):

- state-space and recurrent models (``NOT_TRANSFORMERS``: Mamba, RWKV, Jamba …);
- hybrids whose attention layers share the stack with Mamba / linear-attention / convolution
  layers: Nemotron-H (hybrid_override_pattern) read as 17.0B dense for its 8.1B, Qwen3-Next
  (full_attention_interval: 36 of its 48 layers Gated DeltaNet) and MiniMax-Text-01 (linear
  attention in 7 of 8 layers) as full attention. Found by model_type and by the keys such
  layers need (``HYBRID_KEYS``, ``HYBRID_PREFIXES``), so a variant with a new name is caught;
- encoder-decoder (``is_encoder_decoder``: T5, BART, Whisper) and encoder-only models (BERT):
  T5's encoder and decoder read as one stack counted flan-t5-xl 39% low, BERT's layers as a
  decoder's with a gated FFN 46% high. Multimodal decoders (LLaVA, Qwen2-VL, Mllama, Gemma 3,
  Llama 4, Mistral 3) are *ForConditionalGeneration too, but decoders: only the text model's
  own model_type and is_encoder_decoder decide.

Read as the family transformers converted them to: Falcon's first format ("RefinedWebModel",
"RefinedWeb": n_layer, n_head, multi_query; read as Llama it was 9.86B for Falcon-7B's 6.92B)
and OLMo's own ("hf_olmo": d_model, n_layers, mlp_hidden_size the SwiGLU input width — twice
the gated width —, weight_tying; read as Llama it was 9.00B for OLMo-7B's 6.89B).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._errors import WorkloadError
from ._presets import KNOWN_MODEL_TYPES, NOT_TRANSFORMERS
from ._shown import format_params
from ._workload import Architecture

FFN_KEYS = ("intermediate_size", "n_inner", "ffn_dim")  # the FFN width, as families spell it
# heads × head_dim / hidden, the attention's width over the model's: 1 in most models, Gemma-7B
# 1.33 (16 × 256 / 3072), Qwen3 and MiniMax-M2 2, DeepSeek-V3's latent attention 3.43 (128 ×
# (128 + 64) / 7168). Beyond 4× either way a head_dim is a typo: 65,536 in a Llama-3-8B config
# counted 694B parameters. Warned, not refused: a new design may go further, and the sizes are
# still what the file says (``config_warnings``).
MAX_ATTENTION_WIDTH = 4.0

# Model types whose stack mixes attention with state-space, linear-attention or convolution
# layers (their transformers / remote-code config classes)
HYBRID_MODEL_TYPES = frozenset({"nemotron_h", "qwen3_next", "minimax", "minimax_text_01",
                                "minimax_m1", "granitemoehybrid", "lfm2", "lfm2_moe",
                                "kimi_linear", "plamo2"})
# Keys only such a stack's config has (the layout of its non-attention layers, their state)
HYBRID_KEYS = ("hybrid_override_pattern", "full_attention_interval", "linear_num_key_heads",
               "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
               "linear_conv_kernel_dim", "linear_attn_config", "attn_layer_period",
               "attn_layer_offset", "attn_type_list", "layers_block_type", "block_types",
               "full_attn_idxs", "time_step_rank")
HYBRID_PREFIXES = ("mamba_", "ssm_")  # mamba_num_heads, mamba_d_state, ssm_state_size, ssm_cfg
# (name, params, active_params, experts, experts_per_token) from each model card: the counts
# to give as `params` for a rough stand-in
HYBRID_EXAMPLES: dict[str, tuple[str, str, str, int, int]] = {
    "nemotron_h": ("Nemotron-H-8B", "8.1B", "", 0, 0),
    "qwen3_next": ("Qwen3-Next-80B-A3B", "80B", "3B", 512, 10),
    "minimax": ("MiniMax-Text-01", "456B", "45.9B", 32, 2),
    "minimax_text_01": ("MiniMax-Text-01", "456B", "45.9B", 32, 2),
    "granitemoehybrid": ("Granite-4.0-H-Small", "32B", "9B", 72, 10),
    "lfm2": ("LFM2-1.2B", "1.17B", "", 0, 0),
}
# transformers' encoder-decoder and encoder-only model types (hyphens as underscores)
ENCODER_DECODER_TYPES = frozenset({
    "t5", "mt5", "umt5", "longt5", "switch_transformers", "t5gemma", "bart", "mbart", "plbart",
    "pegasus", "pegasus_x", "bigbird_pegasus", "marian", "whisper", "led", "blenderbot",
    "blenderbot_small", "m2m_100", "nllb_moe", "fsmt", "prophetnet", "mvp", "speech_to_text",
    "seamless_m4t", "encoder_decoder"})
ENCODER_TYPES = frozenset({
    "bert", "roberta", "xlm_roberta", "xlm_roberta_xl", "deberta", "deberta_v2", "electra",
    "distilbert", "albert", "modernbert", "camembert", "mpnet", "roformer", "megatron_bert",
    "big_bird", "mobilebert", "squeezebert", "convbert", "funnel", "xlm", "flaubert", "esm"})
ENCODER_HEADS = ("ForMaskedLM", "ForSeq2SeqLM")  # architectures only encoders have
# older formats' model types, as the family whose modeling file reads them now
OLD_FORMATS = {"refinedwebmodel": "falcon", "refinedweb": "falcon", "hf_olmo": "olmo"}
FIX = "To fix: correct the config.json, or give `params` instead"


def text_model_type(cfg: Mapping) -> Any:
    """The text model's model_type as written: text_config's where it names one, else the top
    level's (None when neither does)."""
    inner = cfg.get("text_config")
    return (inner if isinstance(inner, Mapping) and "model_type" in inner else cfg).get(
        "model_type")


def known_family(model_type: Any) -> bool:
    """Whether ``model_type`` is a family whose keys are read as its modeling file means them."""
    return isinstance(model_type, str) and family_type(model_type).lower() in KNOWN_MODEL_TYPES


def ffn_guessed(cfg: Mapping) -> bool:
    """Whether the FFN width read from ``cfg`` is a guess, 4 × hidden: its family is not one
    gpuplan knows (or not named) and it gives no FFN width (``FFN_KEYS``, expansion_ratio)."""
    inner = cfg.get("text_config")
    merged = {**cfg, **inner} if isinstance(inner, Mapping) else cfg
    return not known_family(text_model_type(cfg)) and all(
        merged.get(k) is None for k in (*FFN_KEYS, "expansion_ratio"))


def config_warnings(cfg: Mapping, arch: Architecture, source: str) -> list[str]:
    """What in reading ``cfg`` as ``arch`` may make its parameter count wrong, as warnings
    (said only among the assumptions, scripts reading the warnings missed it): an FFN width
    guessed (``ffn_guessed``), an attention beyond MAX_ATTENTION_WIDTH × hidden either way."""
    out, total = [], format_params(arch.params_total())
    if ffn_guessed(cfg):
        kind = text_model_type(cfg)
        said = (f"its model_type {_show(kind)} is not a family gpuplan knows" if kind else
                "it names no model_type")
        out.append(f"{source}: the FFN width is a guess, 4 × hidden = {arch.ffn_hidden:,}: the "
                   f"file gives no intermediate_size and {said}, so the {total} parameters "
                   "counted may be off. To fix: add intermediate_size as the model's own "
                   "config.json has it, or give `params` from the model card")
    if arch.head_dim and (width := implausible_attention(arch)) is not None:
        key = ("qk_nope_head_dim + qk_rope_head_dim" if arch.attention_params_per_layer
               else "head_dim")
        out.append(f"{source}: {key} {arch.d_head:,} makes the attention {arch.heads} heads × "
                   f"{arch.d_head:,} = {arch.heads * arch.d_head:,} wide, {width:.3g} × the "
                   f"hidden size {arch.hidden:,} (real models: about 0.8 to 3.5), and the model "
                   f"{total} parameters. To fix: check {key} (hidden / heads is "
                   f"{arch.hidden // arch.heads:,}), or give `params` from the model card")
    return out


def implausible_attention(arch: Architecture) -> float | None:
    """The attention's width (heads × head dimension) over the hidden size where it is beyond
    MAX_ATTENTION_WIDTH × either way (real models: about 0.8 to 3.5), else None."""
    width = arch.heads * arch.d_head / arch.hidden
    return None if 1 / MAX_ATTENTION_WIDTH <= width <= MAX_ATTENTION_WIDTH else width


def family_type(model_type: str) -> str:
    """The family ``model_type`` is read as: an old format's (``OLD_FORMATS``), else itself."""
    return OLD_FORMATS.get(model_type.lower(), model_type)


def refuse_other_kinds(cfg: Mapping, source: str, model_type: str) -> None:
    """A WorkloadError for a config that is not a decoder-only attention transformer: ``cfg``
    is the text model's keys (text_config over the top level), ``model_type`` its own."""
    kind = model_type.lower()
    if kind in NOT_TRANSFORMERS:
        raise WorkloadError(f"{source}: model_type {model_type!r} is a state-space or "
                            "recurrent model (or a hybrid with such layers); gpuplan times "
                            "decoder-only transformers only. "
                            "To fix: give `params` for a transformer of the same size (a "
                            "rough stand-in), or use a transformer's config.json")
    named = cfg.get("architectures")
    heads = [a for a in named if isinstance(a, str) and a.endswith(ENCODER_HEADS)] \
        if isinstance(named, list) else []
    normal, seq2seq = kind.replace("-", "_"), cfg.get("is_encoder_decoder") is True
    if seq2seq or heads or normal in ENCODER_DECODER_TYPES | ENCODER_TYPES:
        both = seq2seq or normal in ENCODER_DECODER_TYPES
        why = "is_encoder_decoder true" if seq2seq else (heads[:1] or
                                                          [f"model_type {model_type!r}"])[0]
        raise WorkloadError(f"{source}: this is an {'encoder-decoder' if both else 'encoder-only'}"
                            f" model ({why}); gpuplan times decoder-only language models. To "
                            "fix: give `params` for a rough count (timed as a decoder of that "
                            "size), or use a decoder-only model's config.json")
    keys = [k for k in cfg if isinstance(k, str) and cfg[k] is not None and (
        k in HYBRID_KEYS or k.startswith(HYBRID_PREFIXES))]
    if kind in HYBRID_MODEL_TYPES or keys:
        said = ", ".join([f"model_type {model_type!r}"] * (kind in HYBRID_MODEL_TYPES)
                         + keys[:3])
        raise WorkloadError(f"{source}: this model mixes attention with Mamba, linear-attention "
                            f"or convolution layers ({said}); gpuplan times attention-only "
                            "decoders, and would count and time those layers as attention. "
                            f"To fix: {_stand_in(kind, cfg)}")


def _stand_in(kind: str, cfg: Mapping) -> str:
    """How to give a hybrid's counts instead: its model card's, with an example."""
    fix = ("give `params` with the total from the model card (a rough stand-in, timed as a "
           "transformer of that size)")
    experts = next((cfg[k] for k in ("num_local_experts", "num_experts", "n_routed_experts")
                    if cfg.get(k)), 0)
    if kind in HYBRID_EXAMPLES:
        name, total, active, n, k = HYBRID_EXAMPLES[kind]
        return fix + f", e.g. {name}: `params` {total}" + (
            f" `active_params` {active} `experts` {n} `experts_per_token` {k}" if active else "")
    if experts:
        fix += ", and `active_params`, `experts` and `experts_per_token` for its experts"
    return fix


def old_format_keys(cfg: dict, source: str, model_type: str) -> dict:
    """``cfg`` with an old format's keys as the family ``family_type`` names reads them:
    OLMo's own (hf_olmo) as transformers' OLMo; Falcon's first format needs none (its n_layer,
    n_head and multi_query are read as Falcon's)."""
    if model_type.lower() != "hf_olmo":
        return cfg
    act = cfg.get("activation_type", "swiglu")
    if act != "swiglu":  # its MLP is then two matrices, which "olmo" is not
        raise WorkloadError(f"{source}: this hf_olmo config's activation_type is {_show(act)}; "
                            "gpuplan reads OLMo's own format with a SwiGLU MLP only. To fix: "
                            "give `params` instead (a rough stand-in)")
    width = cfg.get("mlp_hidden_size")
    if width is None:  # OLMo's ModelConfig: mlp_ratio × d_model (default 4)
        ratio, hidden = cfg.get("mlp_ratio", 4), cfg.get("d_model")
        width = ratio * hidden if _whole(ratio) and _whole(hidden) else None
    if not _whole(width) or width % 2:
        raise WorkloadError(f"{source}: this hf_olmo config's MLP width (mlp_hidden_size, or "
                            f"mlp_ratio × d_model) must be an even whole number, got "
                            f"{_show(width)}: SwiGLU halves it. {FIX}")
    out = {**cfg, "intermediate_size": width // 2}
    # the embedding table is embedding_size rows (vocab_size padded), tied by weight_tying
    # (OLMo's default: true); kv heads n_kv_heads, or one with multi_query_attention
    if cfg.get("embedding_size") is not None:
        out["vocab_size"] = cfg["embedding_size"]
    out["tie_word_embeddings"] = cfg.get("weight_tying", True)
    if cfg.get("n_kv_heads") is not None:
        out["num_key_value_heads"] = cfg["n_kv_heads"]
    elif cfg.get("multi_query_attention") is True:
        out["num_key_value_heads"] = 1
    return out


def old_format_note(model_type: Any) -> str:
    """What an old format was read as, for the workload's notes; "" for any other."""
    kind = model_type.lower() if isinstance(model_type, str) else ""
    if kind == "hf_olmo":
        return ("model_type 'hf_olmo' (OLMo's own format) read as transformers' olmo: "
                "d_model, n_layers, n_heads; the gated FFN width mlp_hidden_size / 2 (SwiGLU "
                "splits it); vocab embedding_size (the padded table); weight_tying")
    if kind in OLD_FORMATS:
        return (f"model_type {model_type!r} (Falcon's first format) read as falcon: n_layer, "
                "n_head, multi_query or n_head_kv")
    return ""


def dbrx_keys(cfg: dict, source: str) -> dict:
    """DBRX's nested attn_config / ffn_config as the flat keys _hfconfig reads; every one must be
    there (without them DBRX read as a dense model of another size, in silence)."""
    attn, ffn = cfg.get("attn_config"), cfg.get("ffn_config")
    out = {}
    for section, value, pairs in (
            ("attn_config", attn, (("kv_n_heads", "num_key_value_heads"),)),
            ("ffn_config", ffn, (("ffn_hidden_size", "intermediate_size"),
                                 ("moe_num_experts", "num_local_experts"),
                                 ("moe_top_k", "num_experts_per_tok")))):
        for theirs, ours in pairs:
            if not isinstance(value, Mapping) or value.get(theirs) is None:
                raise WorkloadError(f"{source}: a dbrx config needs {section}.{theirs}. {FIX}")
            out[ours] = value[theirs]
    return out


def check_text_config(text_config: Any, source: str) -> None:
    """A text_config that is not a mapping (e.g. "llama") refused: it holds the text model's
    sizes, and read as absent its message said the config lacked them all."""
    if text_config is not None and not isinstance(text_config, Mapping):
        raise WorkloadError(f"{source}: text_config must be an object (the language model's "
                            f"settings), got {_show(text_config)}. {FIX}")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _show(value: Any) -> str:
    """A value as JSON writes it, cut to 40 characters."""
    text = json.dumps(value, default=repr)
    return text if len(text) <= 40 else text[:37] + "…"
