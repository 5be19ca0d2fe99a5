"""A Hugging Face ``config.json``, as parsed data, turned into an Architecture.

Understands the Llama family (llama, mistral, qwen2, qwen3, gemma-style keys), Mixtral-style
MoE, Qwen-MoE (shared_expert_intermediate_size) and DeepSeek (n_routed_experts,
moe_intermediate_size, n_shared_experts, first_k_dense_replace; latent attention from
q_lora_rank / kv_lora_rank), GPT-2 (n_layer, n_embd), BLOOM (n_embed), MPT and GPT-Neo
(n_layers, n_heads, num_heads), Llama 4 (one shared expert per MoE layer, dense layers of
intermediate_size_mlp between), and multi-query models' key/value heads (Falcon, GPT-BigCode).
Two-matrix MLPs (GPT-2, Phi-1/2, StarCoder, Falcon, …: ``NOT_GATED``) are read so; every other
family as gated (SwiGLU/GeGLU), as the workload note states. ``_hfkinds`` refuses what is not
a decoder of attention layers (Mamba hybrids, T5, BERT) and reads old formats (hf_olmo).

A missing ``tie_word_embeddings`` means what transformers reads it as: the default of that
model type's config class (``TIED_BY_DEFAULT``: Gemma, GPT-2, Falcon, StarCoder2 … tie; Llama,
Mistral, Qwen, GPT-NeoX … do not). save_pretrained leaves the key out when it equals both
that default and ``PretrainedConfig``'s (True), so Gemma-7B's file says nothing and is tied.
An unknown model type is read Llama-style: untied. A null one is untied, as transformers'
`if tie_word_embeddings` reads it.

A multimodal config's language model is its ``text_config``, written without the keys equal to
its family's defaults: filled in for ``HF_TEXT_DEFAULTS``' families (``config_notes`` says
which), else a missing size is refused. Its layout (``LAYOUT_KEYS``) is text_config's alone;
its name the top level's. A top-level config takes from the defaults only its windows.

``architecture_from_config`` takes the parsed JSON mapping: the front ends read the file
(``catalog.read_json_file``: regular files only, at most MAX_CONFIG_BYTES — a real
config.json is a few KB — no NaN or Infinity, no 400-digit numbers) or the upload, and pass
the data. Every size must be a whole number within ``SIZE_LIMITS``; booleans, fractions and
negative sizes are errors, not silently converted. A missing FFN width is 4 × hidden only for
the families whose modeling files mean that (``FFN_FROM_HIDDEN``); other known families must
state it, and an unknown one read without it has the guess said in its note and warned
(``config_readings``), as is a head_dim far from hidden / heads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from . import _hfkinds as kinds
from ._errors import WorkloadError
from ._presets import (
    FFN_FROM_HIDDEN,
    HF_TEXT_DEFAULTS,
    KNOWN_MODEL_TYPES,
    LAYOUT_KEYS,
    MOE_MODEL_TYPES,
    NOT_GATED,
    TIED_BY_DEFAULT,
    config_notes,
    defaults_filled,
    family_attention_layers,
    llama4_layers,
)
from ._workload import ARCH_LIMITS, OPTIONAL_ARCH_LIMITS, Architecture

MAX_CONFIG_BYTES = 2**20
MAX_CONFIG_DEPTH = 32  # nesting of a config.json (multimodal wrappers nest two or three deep)
FIX = "To fix: correct the config.json, or give `params` instead"
FFN_KEYS = kinds.FFN_KEYS
CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "n_ctx", "max_seq_len", "seq_length",
                "max_sequence_length")  # the last: OLMo's own format (hf_olmo)

# The bounds a size may take: the Architecture's own (generous: the largest published models are
# 10–100× below each; they catch typos and hostile values before the performance model), so a
# size is refused here, naming its key, with the bound the Architecture would have said. A
# context is bounded as the windows are.
SIZE_LIMITS: dict[str, int] = {**ARCH_LIMITS, **{k: OPTIONAL_ARCH_LIMITS[k] for k in (
    "head_dim", "experts", "experts_per_token", "shared_experts", "moe_ffn_hidden",
    "dense_layers")}, "context": OPTIONAL_ARCH_LIMITS["window_tokens"]}


def _get(cfg: dict, *keys: str, default=None) -> tuple[str | None, Any]:
    """(the key found, its value) for the first of ``keys`` present and not null."""
    for k in keys:
        if k in cfg and cfg[k] is not None:
            return k, cfg[k]
    return None, default


def _one(cfg: dict, source: str, *keys: str) -> tuple[str | None, Any]:
    """``_get`` for a size several families spell differently (num_hidden_layers, n_layer):
    two spellings with different values are an error, not a silent choice of the first."""
    given = [(k, cfg[k]) for k in keys if k in cfg and cfg[k] is not None]

    def same(v) -> object:  # 32 and 32.0 are one size
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else repr(v)

    if len({same(v) for _, v in given}) > 1:
        (k1, v1), (k2, v2) = given[:2]
        raise WorkloadError(f"{source}: {k1} {_show(v1)} and {k2} {_show(v2)} name the same "
                            f"setting with different values. {FIX}")
    return given[0] if given else (None, None)


def config_file_error(exc: Exception, *, fix: str | None = None) -> WorkloadError:
    """The one message for a config.json that could not be read (``exc``: the catalog's
    reader's error), with ``fix``: the front end's way of giving another (default a path)."""
    fix = fix or "pass the path of a Hugging Face config.json"
    message = str(exc).replace("cannot read it", "cannot read config")
    message = message.replace("invalid JSON", "not valid JSON")
    message = message.replace("is a directory, not a regular file", "is a directory, a "
                              "folder without config.json")  # one with it is read: its file
    message, _, own = message.partition("To fix:")
    own = own.strip().rstrip(".")  # the content or its encoding is wrong, not the path: the
    fix = f"{own}, or {fix}" if own.startswith(("correct", "save")) else fix  # reader's first
    return WorkloadError(f"{message.rstrip()} To fix: {fix}", field="config")


def read_model_config(path: str, *, fix: str | None = None) -> dict:
    """The parsed config.json at ``path``, or in the folder ``path`` (`--config`, the workload
    probe's, a team plan's jobs'): one reader, bounded in size and depth, its errors
    ``config_file_error``'s, ending in ``fix`` when given (how the user names another file)."""
    from catalog import CatalogFileError, read_json_file

    # (a leading ~ is the home folder: read_user_text expands it, messages name it as typed)
    folder = os.path.expanduser(path) if isinstance(path, str) else path
    if os.path.isdir(folder) and os.path.lexists(os.path.join(folder, "config.json")):
        path = os.path.join(path, "config.json")  # a model's folder (a download, a snapshot)
    try:
        return read_json_file(path, what="model config", max_bytes=MAX_CONFIG_BYTES,
                              max_depth=MAX_CONFIG_DEPTH)
    except CatalogFileError as exc:
        raise config_file_error(exc, fix=fix) from None


def architecture_from_config(cfg: Any, *, source: str = "config.json",
                             default_name: str = "") -> tuple[Architecture, int | None]:
    """The architecture and context length described by a parsed config.json mapping."""
    if not isinstance(cfg, Mapping):
        raise WorkloadError(f"{source}: expected a JSON object of model settings, found "
                            f"{type(cfg).__name__}. To fix: pass a Hugging Face config.json")
    name = _config_name(cfg)  # the top level's: text_config's names the LM it started from
    filled, text_config = defaults_filled(cfg), cfg.get("text_config")
    kinds.check_text_config(text_config, source)
    cfg = ({**{k: v for k, v in cfg.items() if k not in LAYOUT_KEYS}, **filled, **text_config}
           if isinstance(text_config, Mapping) else {**filled, **cfg})  # its layout: its own
    if str(cfg.get("model_type", "")).lower() == "dbrx":  # DBRX nests attention, MoE sizes
        cfg = {**cfg, **kinds.dbrx_keys(cfg, source)}
    # first: a Mamba config lacks attention heads, and that is not what is wrong with it
    model_type = cfg.get("model_type")
    if model_type is None:  # absent or null: read Llama-style, and the note says so
        model_type = ""
    elif not isinstance(model_type, str):  # 5 or ["llama"] was read as "no model_type"
        raise WorkloadError(f"{source}: model_type must be text, the family's name (e.g. "
                            f"\"llama\"), got {_show(model_type)}. {FIX}")
    kinds.refuse_other_kinds(cfg, source, model_type)  # not a decoder of attention layers
    cfg, model_type = kinds.old_format_keys(cfg, source, model_type), kinds.family_type(model_type)
    found = {name: _one(cfg, source, *keys) for name, keys in (
        ("layers", ("num_hidden_layers", "n_layer", "num_layers", "n_layers")),
        ("hidden", ("hidden_size", "n_embd", "d_model", "n_embed")),  # n_embed: BLOOM's
        ("heads", ("num_attention_heads", "n_head", "n_heads", "num_heads")),
        ("vocab", ("vocab_size",)))}
    missing = [keys for keys, (key, _) in zip(("num_hidden_layers", "hidden_size",
                                               "num_attention_heads", "vocab_size"),
                                              found.values(), strict=True) if key is None]
    if missing:
        said = [k for k in missing if cfg.get(k, "absent") is None]
        fix = "To fix: use the model's config.json, or give `params` instead"
        if isinstance(text_config, Mapping) and not said:
            fix = (f"Its text_config (model_type {_show(text_config.get('model_type'))}) "
                   "leaves out the values equal to its family's defaults in transformers, "
                   f"which gpuplan fills in for {', '.join(HF_TEXT_DEFAULTS)} only. To fix: "
                   f"write {', '.join(missing)} into text_config as transformers' config class "
                   "for that model_type has them, or give `params` instead")
        raise WorkloadError(f"{source}: config lacks {', '.join(missing)}"
                            + (f" ({', '.join(said)}: null)" if said else "") + f". {fix}")
    sizes = {name: _size(source, key, value, name, minimum=1)
             for name, (key, value) in found.items()}

    # each size's key as this file spells it, for the errors the Architecture raises
    keys_of = {name: key for name, (key, _) in found.items()}

    def optional(name: str, *keys: str, minimum: int = 0) -> int:
        key, value = _one(cfg, source, *keys)
        if key is not None:
            keys_of[name] = key
        return 0 if key is None else _size(source, key, value, name, minimum=minimum)

    gated = model_type.lower() not in NOT_GATED
    # absent: 4 × hidden (GPT-2's rule; MPT's expansion_ratio); present, it must be a real size
    # (0 is not "absent")
    ratio = optional("ffn_hidden", "expansion_ratio", minimum=1)
    ffn = optional("ffn_hidden", *FFN_KEYS, minimum=1)
    if not ffn and not ratio and model_type.lower() in KNOWN_MODEL_TYPES - FFN_FROM_HIDDEN:
        key = "ffn_dim" if model_type.lower() == "opt" else "intermediate_size"
        raise WorkloadError(f"{source}: this {model_type} config has no {key}"
                            + (" (it is null)" if key in cfg else "") + ", the FFN width: "
                            "4 × hidden would only guess it, and transformers would use its "
                            "config's default, not this model's. To fix: add it (the model "
                            "card's config.json has it), or give `params` instead")
    if not ffn:  # the width is a product: an error names it so ("expansion_ratio … got
        # 409600000" quoted d_model × the ratio as the ratio)
        keys_of["ffn_hidden"] = f"{keys_of['hidden']} × {'expansion_ratio' if ratio else '4'}"
    ffn = ffn or (ratio or 4) * sizes["hidden"]
    kv_heads = _kv_heads(cfg, source, model_type.lower(), sizes["heads"])
    experts = optional("experts", "num_local_experts", "n_routed_experts", "num_experts")
    if not experts and model_type.lower() in MOE_MODEL_TYPES:
        # transformers would build its config class's default experts (Mixtral: 8, top-2):
        # read as a dense model it was a different model, silently
        raise WorkloadError(f"{source}: model_type {model_type!r} is a mixture of experts, but "
                            "the file gives no expert count (num_local_experts, "
                            "num_experts or n_routed_experts). To fix: add the expert count "
                            "and experts per token as the model's own config.json has them")
    per_token = optional("experts_per_token", "num_experts_per_tok", "moe_top_k", minimum=1) \
        if experts else 0
    if experts and not per_token:  # 0 went on to "experts_per_token must be between 1 and …"
        raise WorkloadError(f"{source}: the file gives {experts} experts but not how many each "
                            "token is routed to (num_experts_per_tok or moe_top_k, at least "
                            "1). To fix: add it as the model's own config.json has it")
    tied = cfg.get("tie_word_embeddings", model_type.lower() in TIED_BY_DEFAULT)
    tied = False if tied is None else tied  # null: transformers' `if tie_word_embeddings`
    if not isinstance(tied, bool):
        raise WorkloadError(f"{source}: tie_word_embeddings must be true or false, got "
                            f"{_show(tied)}. {FIX}")
    seq_key, seq_value = _get(cfg, *CONTEXT_KEYS)
    context = None if seq_key is None else _size(source, seq_key, seq_value, "context",
                                                 minimum=1)
    # read outside the try below: their errors already name the file
    more = {"head_dim": optional("head_dim", "head_dim", minimum=1),
            "shared_experts": optional("shared_experts", "n_shared_experts"),
            "moe_ffn_hidden": optional("moe_ffn_hidden", "moe_intermediate_size"),
            "dense_layers": optional("dense_layers", "first_k_dense_replace")}
    if experts and model_type.lower() == "llama4_text":
        ffn, moe = llama4_layers(cfg, source, sizes["layers"], ffn, more, optional, FIX)
        experts, per_token = (experts, per_token) if moe else (0, 0)  # all dense: a note says
    # Families whose experts have a width of their own (DeepSeek's n_routed_experts, Qwen-MoE)
    # need it stated: the dense width in its place read DeepSeek-V3 as 5.9T parameters
    # (transformers writes model-specific keys always, so a missing one is a hand edit).
    # Mixtral, OLMoE and the like give each expert intermediate_size: nothing to check.
    if experts and not more["moe_ffn_hidden"] and (
            _get(cfg, "n_routed_experts")[0] is not None
            or model_type.lower() in ("qwen2_moe", "qwen3_moe")):
        raise WorkloadError(f"{source}: this config has routed experts, but "
                            f"moe_intermediate_size (each expert's width) is missing. {FIX}")
    if model_type.lower() == "qwen2_moe" and _get(cfg, "shared_expert_intermediate_size")[0] \
            is None:
        raise WorkloadError(f"{source}: a qwen2_moe config needs "
                            f"shared_expert_intermediate_size (its shared expert). {FIX}")
    if experts:
        _refuse_unmodelled_moe(cfg, source, model_type.lower())
    shared_width = optional("moe_ffn_hidden", "shared_expert_intermediate_size")
    if experts and shared_width and not more["shared_experts"]:
        # Qwen-MoE: one shared expert as wide as n routed ones (Qwen1.5-MoE-A2.7B 5632 =
        # 4 × 1408); counted as that many experts of the routed width (nearest when it does
        # not divide: the shared gate, hidden → 1, is left out either way)
        more["shared_experts"] = max(1, round(shared_width / (more["moe_ffn_hidden"] or ffn)))
    if _get(cfg, "kv_lora_rank")[0] is not None:
        more.update(_latent_attention(cfg, source, sizes["hidden"], sizes["heads"]))
    more.update(_attention_layers(cfg, source, model_type.lower(), sizes["layers"]))
    try:
        arch = Architecture(
            layers=sizes["layers"], hidden=sizes["hidden"], heads=sizes["heads"],
            kv_heads=kv_heads, ffn_hidden=ffn, vocab=sizes["vocab"], gated_ffn=gated,
            tied_embeddings=tied, experts=experts, experts_per_token=per_token, **more,
            name=name or default_name or "config",
        )
    except WorkloadError as exc:
        # The Architecture speaks of its fields and CLI options; here the sizes came from the
        # file: "experts_per_token must be between 1 and experts (2)" named no key it has
        keys_of.setdefault("kv_heads", next((k for k in ("num_key_value_heads", "n_head_kv",
                                                         "num_kv_heads") if k in cfg),
                                            "num_key_value_heads"))
        said = re.sub(r"\b(" + "|".join(sorted(keys_of, key=len, reverse=True)) + r")\b",
                      lambda m: keys_of[m.group(1)], str(exc).split(" To fix")[0])
        raise WorkloadError(f"{source}: {said} {FIX}") from None
    return arch, context


def _attention_layers(cfg: dict, source: str, model_type: str, layers: int) -> dict:
    """The Architecture's window and chunk: by layer_types where given (Gemma 3, gpt-oss),
    else as the family's config class lays them out (``family_attention_layers``)."""
    def size(key: str, default: int = 0, minimum: int = 0) -> int:
        k, value = _get(cfg, key)
        return default if k is None else _size(source, k, value, "context", minimum=minimum)

    use = cfg.get("use_sliding_window", not model_type.startswith("qwen"))
    if not isinstance(use, bool):
        raise WorkloadError(f"{source}: use_sliding_window must be true or false, got "
                            f"{_show(use)}. {FIX}")
    window, kinds = size("sliding_window", minimum=-2**62) if use else 0, cfg.get("layer_types")
    if kinds is None:
        windowed, chunked = family_attention_layers(model_type, layers, size, cfg, source,
                                                    windowed=bool(window))
    elif not (isinstance(kinds, list) and len(kinds) == layers):
        raise WorkloadError(f"{source}: layer_types must name each of the {layers} layers' "
                            f"attention, got {_show(kinds)}. {FIX}")
    elif other := sorted({_show(k) for k in kinds} - {"'full_attention'", "'attention'",
                                                       "'sliding_attention'",
                                                       "'chunked_attention'"}):
        raise WorkloadError(f"{source}: layer_types has {', '.join(other)} layers; gpuplan times "
                            "full, sliding-window and chunked attention only. To fix: give "
                            "`params` for a transformer of the same size (a rough stand-in)")
    else:
        windowed, chunked = kinds.count("sliding_attention"), kinds.count("chunked_attention")
    if window < 0 or windowed and not window and use and _get(cfg, "sliding_window")[0] is not None:
        raise WorkloadError(f"{source}: sliding_window is {window}; it must be at least 1 (with "
                            "fewer, transformers' mask lets a query see no key). To fix: "
                            "give the model's window, or null for none")
    chunk = size("attention_chunk_size", minimum=1) if chunked else 0
    return {"window_tokens": window if windowed else 0, "windowed_layers": windowed if window
            else 0, "chunk_tokens": chunk, "chunked_layers": chunked if chunk else 0}


def _refuse_unmodelled_moe(cfg: dict, source: str, model_type: str) -> None:
    """MoE keys the model does not read, refused: Qwen-MoE's dense layers (mlp_only_layers,
    decoder_sparse_step; real configs: [] and 1), a DeepSeek config's missing n_shared_experts."""
    dense = cfg.get("mlp_only_layers")
    step = cfg.get("decoder_sparse_step")
    if dense not in (None, []) or (step is not None and (isinstance(step, bool)
                                                        or step != 1)):
        raise WorkloadError(f"{source}: mlp_only_layers {_show(dense)} / decoder_sparse_step "
                            f"{_show(step)} make some layers dense, which gpuplan does not model "
                            "(it counts every layer past first_k_dense_replace as a mixture of "
                            "experts). To fix: give mlp_only_layers [] and decoder_sparse_step 1 "
                            "as the released configs do, or give `params` and `active_params` "
                            "instead")
    if model_type.startswith("deepseek") and _get(cfg, "n_routed_experts")[0] is not None \
            and _get(cfg, "n_shared_experts")[0] is None:
        raise WorkloadError(f"{source}: this {model_type} config has routed experts but no "
                            "n_shared_experts (the released configs state it; transformers "
                            f"would assume 1). {FIX}")


def family_note(cfg: Any) -> str:
    """'' for a model type read as its modeling file means it, else what was assumed."""
    if not isinstance(cfg, Mapping):
        return ""
    model_type = kinds.text_model_type(cfg)
    if kinds.known_family(model_type):
        return kinds.old_format_note(model_type)
    if model_type is None or model_type == "":
        said = "the config.json names no model_type"
    elif isinstance(model_type, str):
        said = f"model_type {_show(model_type)} is not a family gpuplan knows"
    else:  # architecture_from_config refuses it; this note is public and says it too
        said = f"model_type {_show(model_type)} is not text"
    # the width read is then a guess, which the architecture line alone showed as read
    ffn = ("; its FFN is 4 × hidden, as the file gives no intermediate_size"
           if kinds.ffn_guessed(cfg) else "")
    return (f"{said}: read as a Llama-style decoder (the keys above{ffn}; compare the "
            "parameter count with the model card, or give `params`)")


def config_readings(cfg: Mapping, arch: Architecture,
                    source: str) -> tuple[list[str], list[str]]:
    """What a workload read from ``cfg`` as ``arch`` adds: its notes (``family_note``,
    ``config_notes``) and its warnings (``kinds.config_warnings``: a guess or an implausible
    size that may make the parameter count wrong)."""
    notes = [n for n in (family_note(cfg),) if n] + config_notes(cfg)
    return notes, kinds.config_warnings(cfg, arch, source)


def _kv_heads(cfg: dict, source: str, model_type: str, heads: int) -> int:
    """Key/value heads: num_key_value_heads (Llama), num_kv_heads / n_head_kv (Falcon's new
    decoder), or 1 for a multi-query model (Falcon-7B, GPT-BigCode: ``multi_query``); all
    heads otherwise. Falcon reads num_kv_heads only with its new decoder architecture, as its
    modeling file does."""
    keys = ["num_key_value_heads", "n_head_kv"]
    if model_type != "falcon" or cfg.get("new_decoder_architecture") is True:
        keys.append("num_kv_heads")
    key, value = _get(cfg, *keys)
    if key is not None:
        return _size(source, key, value, "kv_heads", minimum=1)
    multi_query = cfg.get("multi_query", False)
    if not isinstance(multi_query, bool):
        raise WorkloadError(f"{source}: multi_query must be true or false, got "
                            f"{_show(multi_query)}. {FIX}")
    return 1 if multi_query else heads


def _latent_attention(cfg: dict, source: str, hidden: int, heads: int) -> dict:
    """DeepSeek-V2/V3's multi-head latent attention: the score head dimension (nope + rope)
    and the parameters of one layer's attention, as ``_presets`` documents for deepseek-v3:
    q (through q_lora_rank when given) + kv_a (kv_lora_rank + rope) + kv_b + o."""
    def size(key: str, default: int | None = None) -> int:
        k, value = _get(cfg, key)
        if k is None:
            if default is not None:
                return default
            raise WorkloadError(f"{source}: kv_lora_rank (latent attention) needs {key}. {FIX}")
        return _size(source, k, value, "head_dim", minimum=1)

    kv_rank, nope, rope = size("kv_lora_rank"), size("qk_nope_head_dim"), size("qk_rope_head_dim")
    v_dim = size("v_head_dim", nope)
    q_key, q_value = _get(cfg, "q_lora_rank")
    q_rank = 0 if q_key is None else _size(source, q_key, q_value, "head_dim", minimum=1)
    q = hidden * q_rank + q_rank * heads * (nope + rope) if q_rank else \
        hidden * heads * (nope + rope)
    params = (q + hidden * (kv_rank + rope) + kv_rank * heads * (nope + v_dim)
              + heads * v_dim * hidden)
    return {"head_dim": nope + rope, "attention_params_per_layer": params}


def _size(source: str, key: str, value: Any, name: str, *, minimum: int) -> int:
    """``value`` as a whole number in [minimum, SIZE_LIMITS[name]], or a clear error."""
    whole = None
    if isinstance(value, int) and not isinstance(value, bool):
        whole = value
    elif isinstance(value, float) and value.is_integer():
        whole = int(value)  # e.g. 4096.0 written by some exporters
    if whole is None:
        raise WorkloadError(f"{source}: {key} must be a whole number, got {_show(value)}. {FIX}")
    upper = SIZE_LIMITS[name]
    if not minimum <= whole <= upper:
        bound = f"at least {minimum}" if whole < minimum else f"at most {upper:,}"
        # as written when huge: 1e300 read as a 301-digit integer of float noise
        shown = f"{whole:,}" if abs(whole) < 10**15 else _show(value)
        raise WorkloadError(f"{source}: {key} is {shown}; it must be {bound}. {FIX}")
    return whole


def _show(value: Any) -> str:
    """A config value as JSON spells it (true, null), cut to 40 characters."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


def _config_name(cfg: Mapping) -> str:
    """The model's name from the top level's ``_name_or_path``: a Hugging Face cache path
    named by its repository (``hub_repo_name``), anything else as written."""
    name = printable_name(cfg.get("_name_or_path"))
    return hub_repo_name(name) or name


def hub_repo_name(path: str) -> str:
    """"org/name" for a path in the Hugging Face cache (…/models--org--name/snapshots/<hash>/
    config.json: huggingface_hub's repo_folder_name joins "models" and the repository id's
    parts with "--", which a repository id may not contain), else ""."""
    folder = next((p for p in reversed(PurePath(path).parts) if p.startswith("models--")), "")
    return printable_name(folder[len("models--"):].replace("--", "/"))


def printable_name(value: Any) -> str:
    """A model name fit to print in plans, reports and launch files' comments: one line of
    printable characters (a newline in a folder name would start a line of shell code in a
    torchrun script's header), at most 120 of them; "" for anything but text."""
    if not isinstance(value, str):
        return ""
    return "".join(c for c in value if c.isprintable()).strip()[:120]
