"""Architectures by name: gpuplan's presets (`--model NAME`), and what transformers' config
classes mean by each Hugging Face model_type — the families ``_hfconfig`` reads, the defaults a
nested text_config leaves out, how a family lays out its windowed attention and Llama 4 its
experts.

Presets: shapes from each model's published config.json / paper; the default sequence length
is the pre-training context, and ``_CONTEXTS`` the context the config.json states (what a
longer `seq_len` passes: ``context_warning``).

Sources: GPT-2 (openai-community/gpt2* config.json), GPT-3 (arXiv:2005.14165 Table 2.1),
Llama 2 (meta-llama/Llama-2-*-hf config.json; arXiv:2307.09288), Llama 3/3.1
(meta-llama/Meta-Llama-3-*, Llama-3.1-405B config.json; arXiv:2407.21783 Table 3),
Mistral 7B / Mixtral 8x7B (mistralai/*-v0.1 config.json), Qwen2.5 (Qwen/Qwen2.5-*
config.json), DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json; arXiv:2412.19437).
``HF_TEXT_DEFAULTS``: the text config classes' defaults in transformers, by family.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping

from catalog import UnknownNameError

from ._errors import WorkloadError
from ._workload import Architecture

# name → (Architecture kwargs, pre-training sequence length)
_PRESETS: dict[str, tuple[dict, int]] = {
    "gpt2": (dict(layers=12, hidden=768, heads=12, kv_heads=12, ffn_hidden=3072, vocab=50257,
                  gated_ffn=False, tied_embeddings=True), 1024),
    "gpt2-medium": (dict(layers=24, hidden=1024, heads=16, kv_heads=16, ffn_hidden=4096,
                         vocab=50257, gated_ffn=False, tied_embeddings=True), 1024),
    "gpt2-large": (dict(layers=36, hidden=1280, heads=20, kv_heads=20, ffn_hidden=5120,
                        vocab=50257, gated_ffn=False, tied_embeddings=True), 1024),
    "gpt2-xl": (dict(layers=48, hidden=1600, heads=25, kv_heads=25, ffn_hidden=6400,
                     vocab=50257, gated_ffn=False, tied_embeddings=True), 1024),
    "gpt3-175b": (dict(layers=96, hidden=12288, heads=96, kv_heads=96, ffn_hidden=49152,
                       vocab=50257, gated_ffn=False, tied_embeddings=True), 2048),
    "llama2-7b": (dict(layers=32, hidden=4096, heads=32, kv_heads=32, ffn_hidden=11008,
                       vocab=32000), 4096),
    "llama2-13b": (dict(layers=40, hidden=5120, heads=40, kv_heads=40, ffn_hidden=13824,
                        vocab=32000), 4096),
    "llama2-70b": (dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672,
                        vocab=32000), 4096),
    "llama3-8b": (dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336,
                       vocab=128256), 8192),
    "llama3-70b": (dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672,
                        vocab=128256), 8192),
    "llama3-405b": (dict(layers=126, hidden=16384, heads=128, kv_heads=8, ffn_hidden=53248,
                         vocab=128256), 8192),
    # Mistral 7B v0.1 attends in a 4,096-token sliding window (its config.json: sliding_window
    # 4096; arXiv:2310.06825 Table 1: window_size 4096, context_len 8192); v0.2 and later have
    # none (sliding_window null). This preset is modelled without one, as before: the golden
    # plans pin its timing (`--config` with the v0.1 file models the window)
    "mistral-7b": (dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336,
                        vocab=32000), 8192),
    "mixtral-8x7b": (dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336,
                          vocab=32000, experts=8, experts_per_token=2), 4096),
    "qwen2.5-7b": (dict(layers=28, hidden=3584, heads=28, kv_heads=4, ffn_hidden=18944,
                        vocab=152064), 4096),
    "qwen2.5-72b": (dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=29568,
                         vocab=152064), 4096),
    # MLA attention: q_a 7168×1536 + q_b 1536×128·192 + kv_a 7168×576 + kv_b 512×128·256 +
    # o 128·128×7168 = 187,105,280 per layer; 3 dense layers (FFN 18432) then 58 MoE layers
    # of 256 routed (top-8) + 1 shared expert of width 2048. Score head dim 192 (128+64 rope).
    "deepseek-v3": (dict(layers=61, hidden=7168, heads=128, kv_heads=128, ffn_hidden=18432,
                         vocab=129280, head_dim=192, experts=256, experts_per_token=8,
                         shared_experts=1, moe_ffn_hidden=2048, dense_layers=3,
                         attention_params_per_layer=187_105_280), 4096),
}
ALIASES = {"llama3.1-405b": "llama3-405b", "llama-3-8b": "llama3-8b", "llama-2-7b": "llama2-7b",
           "llama3-1-405b": "llama3-405b", "llama3-1-8b": "llama3-8b",
           "llama3-1-70b": "llama3-70b", "llama3.1-8b": "llama3-8b",
           "llama3.1-70b": "llama3-70b", "gpt3": "gpt3-175b", "mixtral": "mixtral-8x7b"}
# name → (the context its config.json states, that key, whether its positions are a learned
# table): the positions the model was made for, which a longer `seq_len` passes
# (``context_warning``). Not the pre-training length where the file states more: Mistral and
# Mixtral v0.1 32,768, Qwen2.5 base 131,072, DeepSeek-V3 163,840 (YaRN), Llama 3.1 131,072 (its
# aliases, and 405B: released as 3.1 only). GPT-3: n_ctx of arXiv:2005.14165 Table 2.1, its
# positions learned as GPT-2's.
_MPE = "max_position_embeddings"
_CONTEXTS: dict[str, tuple[int, str, bool]] = {
    **dict.fromkeys(("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"),
                    (1024, "n_positions", True)),
    "gpt3-175b": (2048, "n_ctx", True),
    **dict.fromkeys(("llama2-7b", "llama2-13b", "llama2-70b"), (4096, _MPE, False)),
    **dict.fromkeys(("llama3-8b", "llama3-70b", "llama-3-8b"), (8192, _MPE, False)),
    **dict.fromkeys(("llama3-405b", "llama3.1-8b", "llama3-1-8b", "llama3.1-70b",
                     "llama3-1-70b"), (131072, _MPE, False)),
    **dict.fromkeys(("mistral-7b", "mixtral-8x7b"), (32768, _MPE, False)),
    **dict.fromkeys(("qwen2.5-7b", "qwen2.5-72b"), (131072, _MPE, False)),
    "deepseek-v3": (163840, _MPE, False)}
# Model types whose positions are a learned table of the context's size (their modeling files:
# wpe / embed_positions, an nn.Embedding): a position beyond it has no entry. Others rotate
# (RoPE) or bias (ALiBi) attention by position, which a longer context can stretch.
LEARNED_POSITIONS = frozenset({"gpt2", "gpt_neo", "opt", "gpt_bigcode"})


def context_warning(seq: int, *, model: str | None = None, cfg: Mapping | None = None,
                    name: str = "", positions: int | None = None, key: str = "") -> list[str]:
    """What a `seq_len` beyond the model's context means: for `model` NAME the context of
    ``_CONTEXTS`` (an alias's own first), for a config.json ``cfg`` the ``positions`` its
    ``key`` states (its text model's family says if they are learned); none within it, or where
    the context is not known (a parameter count). Training past it extends the context, a real
    practice timed as given, but a learned table of positions ends there."""
    learned = False
    if model is not None:
        name = model.strip().lower()
        positions, key, learned = (_CONTEXTS.get(name) or _CONTEXTS.get(ALIASES.get(name, name))
                                   or (None, "", False))  # a preset added without one: none
    elif isinstance(cfg, Mapping):
        inner = cfg.get("text_config")
        kind = (inner if isinstance(inner, Mapping) else cfg).get("model_type")
        learned, name = str(kind).lower() in LEARNED_POSITIONS, "" if name == "config" else name
    if positions is None or seq <= positions:
        return []
    name = name.replace("`", "'")  # a `word` in a config's own name would read as a field
    whose = f"{name}'s" if name else "the model's"
    said = f"`seq_len` {seq:,} is above {whose} context of {positions:,} ({key}): "
    return [said + (f"its positions are a learned table of {positions:,}, and positions beyond "
                    "it do not exist without changing the model (growing the table)" if learned
                    else "training at it extends the context (e.g. RoPE scaling)")
            + "; the longer sequence is timed as given"]  # by estimate, plan and probe alike


# ---- Hugging Face model types, as ``_hfconfig`` reads their config.json ----------------

# Hugging Face model types whose layers are not attention + MLP: their time is not this model's
NOT_TRANSFORMERS = frozenset({"mamba", "mamba2", "falcon_mamba", "rwkv", "rwkv5", "rwkv6",
                              "recurrent_gemma", "xlstm",
                              # hybrids: state-space layers between attention layers
                              "jamba", "zamba", "zamba2", "bamba", "falcon_h1"})
# Model types whose config.json keys ``_hfconfig`` reads as their modeling files mean them; any
# other is read as a Llama-style decoder, and the workload note says so (``family_note``)
KNOWN_MODEL_TYPES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
    "gemma2", "gemma3", "gemma3_text", "phi3", "phimoe", "olmo", "olmo2", "olmoe", "granite",
    "granitemoe", "cohere", "cohere2", "stablelm", "deepseek_v2",
    "deepseek_v3", "dbrx", "gpt2", "gpt_neox", "gptj", "gpt_neo", "opt", "bloom", "falcon",
    "phi", "starcoder2", "gpt_bigcode", "mpt", "codegen", "nemotron", "persimmon",
    "llama4_text"})
# Mixture-of-experts model types that keep their expert count in the top-level keys it reads
# (DBRX keeps it in ffn_config, read apart)
MOE_MODEL_TYPES = frozenset({"mixtral", "qwen2_moe", "qwen3_moe", "phimoe", "olmoe",
                             "granitemoe", "deepseek_v2", "deepseek_v3", "llama4_text"})
# Model types whose config class defaults to tied input/output embeddings (transformers 5.25:
# CONFIG_MAPPING[t]().tie_word_embeddings); every other known type defaults to untied
TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text", "cohere", "cohere2",
                             "gpt2", "gpt_neo", "opt", "bloom", "falcon", "starcoder2",
                             "gpt_bigcode", "mpt"})
# Hugging Face model types whose MLP is up + down (GELU, ReLU²), not gated (their modeling
# files: c_fc/c_proj, fc1/fc2, dense_h_to_4h/dense_4h_to_h, up_proj/down_proj only)
NOT_GATED = frozenset({"gpt2", "gpt_neox", "gptj", "gpt_neo", "opt", "bloom", "falcon", "phi",
                       "starcoder2", "gpt_bigcode", "mpt", "codegen", "nemotron", "persimmon"})
# Known model types whose modeling file makes the FFN 4 × hidden when the config gives no width
# (GPT-2, GPT-J, CodeGen, GPT-BigCode: n_inner null; GPT-Neo: intermediate_size null; BLOOM and
# Falcon always; MPT: expansion_ratio, default 4). Every other known type's config class has a
# fixed default instead (LlamaConfig: 11008, whatever the hidden size), which is no more this
# model's width than 4 × hidden: its real configs always state it, so a missing one is refused.
FFN_FROM_HIDDEN = frozenset({"gpt2", "gptj", "gpt_neo", "codegen", "gpt_bigcode", "bloom",
                             "falcon", "mpt"})
# The keys of HF_TEXT_DEFAULTS a top-level config also takes when it lacks them: how its
# attention is windowed (its sizes save_pretrained always writes); none where the family's
# use_sliding_window is false (Qwen2: it keeps a sliding_window it does not use)
ATTENTION_KEYS = frozenset({"sliding_window", "sliding_window_pattern", "max_window_layers",
                            "attention_chunk_size"})
# One full-attention layer in every n when the file gives no layer_types (the config classes'
# layer_types: gemma2 alternates; gemma3_text sliding_window_pattern default 6 — gemma3's
# text_config is always one —, cohere2 4)
# The keys that lay out a text model's attention and experts per layer: with a text_config they
# are read from it only (transformers' text config class never sees the top level's)
LAYOUT_KEYS = ("layer_types", "sliding_window", "sliding_window_pattern", "use_sliding_window",
               "max_window_layers", "attention_chunk_size", "no_rope_layers", "moe_layers",
               "interleave_moe_layer_step")
FIX = "To fix: correct the config.json, or give `params` instead"
WINDOW_PATTERN = {"gemma2": 2, "gemma3": 6, "gemma3_text": 6, "cohere2": 4}
OTHER_TOWERS = {"vision_config": "vision encoder", "audio_config": "audio encoder",
                "speech_config": "speech encoder"}  # beside the text model

# The defaults of transformers' text config classes, for the families whose nested text_config
# save_pretrained writes without them (it leaves out every key equal to the class's default):
# Gemma 3's text_config gives 6 keys, LLaVA-1.5's llama one 2. From huggingface/transformers
# src/transformers/models/<family>/configuration_<family>.py, the class's __init__ defaults:
#   llama, qwen2, gemma, gemma2, llama4: commit 008e574391258935f3ecc3035c882e73bbcac419
#   mistral: commit 001f85b38fb432858ace93f18622f07cec46d874
#   gemma3 (Gemma3TextConfig): commit 008f5c8c29be84d4721dc6d1e0fcd72300580be4
# and the same in the v5.23.0 release (CONFIG_MAPPING[model_type]()). Keys a class derives
# when absent (Llama's num_key_value_heads = heads, head_dim = hidden / heads) the reader
# derives alike.
HF_TEXT_DEFAULTS: dict[str, dict[str, int | bool]] = {
    "llama": dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008,
                  num_hidden_layers=32, num_attention_heads=32, max_position_embeddings=2048),
    "mistral": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336,
                    num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                    max_position_embeddings=131072, sliding_window=4096),
    "qwen2": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016,
                  num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
                  max_position_embeddings=32768, use_sliding_window=False, sliding_window=4096,
                  max_window_layers=28),
    "gemma": dict(vocab_size=256000, hidden_size=3072, intermediate_size=24576,
                  num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=16,
                  head_dim=256, max_position_embeddings=8192),
    "gemma2": dict(vocab_size=256000, hidden_size=2304, intermediate_size=9216,
                   num_hidden_layers=26, num_attention_heads=8, num_key_value_heads=4,
                   head_dim=256, max_position_embeddings=8192, sliding_window=4096),
    "gemma3_text": dict(vocab_size=262208, hidden_size=2304, intermediate_size=9216,
                        num_hidden_layers=26, num_attention_heads=8, num_key_value_heads=4,
                        head_dim=256, max_position_embeddings=131072, sliding_window=4096,
                        sliding_window_pattern=6),
    "llama4_text": dict(vocab_size=202048, hidden_size=5120, intermediate_size=8192,
                        intermediate_size_mlp=16384, num_hidden_layers=48,
                        num_attention_heads=40, num_key_value_heads=8, head_dim=128,
                        max_position_embeddings=131072, num_local_experts=16,
                        num_experts_per_tok=1, interleave_moe_layer_step=1,
                        attention_chunk_size=8192),
}


def defaults_filled(cfg: Mapping) -> dict:
    """The keys ``cfg``'s language model takes from its family's defaults (``HF_TEXT_DEFAULTS``)
    because the file leaves them out: any of them in a nested text_config, only
    ``ATTENTION_KEYS`` at the top level."""
    inner = cfg.get("text_config")
    section = inner if isinstance(inner, Mapping) else cfg
    family = section.get("model_type")
    defaults = HF_TEXT_DEFAULTS.get(family.lower(), {}) if isinstance(family, str) else {}
    unused = section.get("use_sliding_window", defaults.get("use_sliding_window")) is False
    return {k: v for k, v in defaults.items() if k not in section and (
        section is inner or (k in ATTENTION_KEYS and not unused))}


def config_notes(cfg: object) -> list[str]:
    """What reading a parsed config.json took from elsewhere than its keys (its family's
    defaults), and what it leaves out (a vision or audio tower beside the text model)."""
    if not isinstance(cfg, Mapping):
        return []
    notes = []
    filled = defaults_filled(cfg)
    inner = cfg.get("text_config")
    section = inner if isinstance(inner, Mapping) else cfg
    if filled:
        notes.append(f"{'its text_config' if section is inner else 'the file'} leaves out "
                     f"the values equal to transformers' {section['model_type']} config "
                     "defaults (save_pretrained omits them); filled in: "
                     + ", ".join(f"{k} {json.dumps(v)}" for k, v in filled.items()))
    if section is inner:
        text = {**filled, **inner}
        if differ := [k for k in LAYOUT_KEYS if k in cfg and cfg[k] != text.get(k)]:
            verb = "is" if len(differ) == 1 else "are"
            notes.append(f"the top level's {', '.join(differ)} (not text_config's) {verb} "
                         "ignored: the text model's layout is read from its text_config, as "
                         "transformers' text config class reads it")
    if note := _dense_llama4_note(cfg):
        notes.append(note)
    if towers := [k for k in OTHER_TOWERS if isinstance(cfg.get(k), Mapping)]:
        notes.append("only the text model's parameters and FLOPs are counted: the "
                     + " and the ".join(f"{OTHER_TOWERS[k]} ({k})" for k in towers)
                     + " and any projector into the text model are left out")
    return notes


def family_attention_layers(model_type: str, layers: int, size: Callable[[str, int], int],
                            cfg: Mapping, source: str, *, windowed: bool) -> tuple[int, int]:
    """(windowed, chunked) layers as the family's config class lays them out when the file
    gives no layer_types (its __post_init__ in transformers v5.23.0): ``WINDOW_PATTERN``'s one
    full layer in n; Qwen2/Qwen3 window the layers from max_window_layers (Qwen2Config and
    Qwen3Config: 28) on; Llama 4 chunks the layers no_rope_layers marks 1 (by default all but
    every no_rope_layer_interval-th, Llama4TextConfig's 4); any other family windows every
    layer (Mistral, Mixtral, Phi-3, StarCoder2 pass sliding_window to each layer).
    ``size(key, default)`` reads a checked whole number from the file."""
    if model_type == "llama4_text":
        rope = cfg.get("no_rope_layers")
        if rope is None or rope == []:  # Llama4TextConfig: `no_rope_layers or` its default
            return 0, layers - layers // size("no_rope_layer_interval", 4, 1)
        if not (isinstance(rope, list) and len(rope) == layers and all(
                type(x) in (int, bool) and x in (0, 1) for x in rope)):
            raise WorkloadError(f"{source}: no_rope_layers must name each of the {layers} "
                                "layers 1 (RoPE: chunked attention) or 0 (no RoPE: full "
                                f"attention), got {json.dumps(rope)[:40]}. {FIX}")
        return 0, sum(rope)
    if model_type in WINDOW_PATTERN:
        every = WINDOW_PATTERN[model_type] if model_type == "gemma2" else size(
            "sliding_window_pattern", WINDOW_PATTERN[model_type], 1)
        return layers - layers // every, 0
    if model_type in ("qwen2", "qwen3"):
        return max(0, layers - size("max_window_layers", 28)), 0
    if windowed and model_type in ("qwen2_moe", "qwen3_moe"):
        raise WorkloadError(f"{source}: use_sliding_window true: which {model_type} layers use "
                            "the window differs between transformers versions. To fix: add "
                            "layer_types, one entry per layer, or set use_sliding_window false")
    return layers, 0


def llama4_layers(cfg: Mapping, source: str, layers: int, ffn: int, more: dict,
                  optional: Callable[..., int], fix: str) -> tuple[int, int]:
    """Llama 4's MoE layout into ``more``, and the dense layers' FFN width. Its modeling file
    (modeling_llama4.py, v5.23.0): a layer in moe_layers (by default every
    interleave_moe_layer_step-th, from step − 1) is Llama4TextMoe — the routed experts of
    intermediate_size, a router and one shared expert Llama4TextMLP(intermediate_size) — and
    any other Llama4TextMLP(intermediate_size_mlp). ``optional(name, key, minimum=)`` reads a
    checked size from the file, 0 when absent. Returns (the FFN width, the MoE layers): none
    (moe_layers [], a step beyond the layers) builds every layer dense, as transformers does."""
    listed = cfg.get("moe_layers")
    if listed is not None and not (isinstance(listed, list) and all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers for i in listed)):
        raise WorkloadError(f"{source}: moe_layers must list layer indices from 0 to "
                            f"{layers - 1}, got {json.dumps(listed)[:40]}. {fix}")
    step = optional("dense_layers", "interleave_moe_layer_step", minimum=1) or 1
    moe = set(listed) if listed is not None else set(range(step - 1, layers, step))
    if moe:  # the dense layers: DeepSeek's come first, Llama 4's where moe_layers leaves them
        more.update(moe_ffn_hidden=ffn, shared_experts=1, dense_layers=layers - len(moe),
                    dense_interleaved=min(moe) != layers - len(moe))
    dense_ffn = optional("ffn_hidden", "intermediate_size_mlp", minimum=1)
    moe = len(moe)
    if moe == layers:  # no dense layer: intermediate_size_mlp is no layer's width
        return ffn, moe
    if not dense_ffn:
        raise WorkloadError(f"{source}: this llama4_text config has {layers - moe} dense "
                            f"layers but no intermediate_size_mlp, their FFN width. {fix}")
    return dense_ffn, moe


def _dense_llama4_note(cfg: Mapping) -> str:
    """What a Llama 4 config whose layers are all dense (``llama4_layers``) is read as."""
    inner = cfg.get("text_config")
    text = {**defaults_filled(cfg), **(inner if isinstance(inner, Mapping) else cfg)}
    listed, step = text.get("moe_layers"), text.get("interleave_moe_layer_step", 1)
    layers, experts = text.get("num_hidden_layers"), text.get("num_local_experts")
    if text.get("model_type") != "llama4_text" or not experts:
        return ""
    if listed == []:
        said = "moe_layers is []"
    elif listed is None and type(step) is type(layers) is int and step > layers:
        said = f"interleave_moe_layer_step {step} is more than its {layers} layers"
    else:
        return ""
    return (f"{said}: no layer is a mixture of experts (transformers builds each as a dense "
            "MLP of intermediate_size_mlp), so it is read as a dense model and its "
            f"num_local_experts {experts} are unused")


def rescaled_layers(arch, layers: int) -> tuple[dict, list[str]]:
    """The per-layer counts of ``arch`` at ``layers`` layers (`layers` given): windowed and
    chunked layers keep their share (at least one of each the model has while there is room,
    never more than the layers), Llama 4's interleaved dense layers too (at least one MoE
    layer); DeepSeek's leading dense layers stay, and `layers` must leave a MoE layer after."""
    def share(n: int) -> int:
        return math.floor(n * layers / arch.layers + 0.5) if n else 0

    values, notes, first = {}, [], arch.dense_layers
    if arch.is_moe and first and not arch.dense_interleaved and layers <= first:
        raise WorkloadError(f"`layers` {layers} leaves no mixture-of-experts layer: "
                            f"{arch.name or 'this model'}'s first {first} layers are dense "
                            f"(the experts come after them). To fix: give `layers` {first + 1} "
                            "or more", field="layers", value=layers)
    if arch.is_moe and first and arch.dense_interleaved:
        values["dense_layers"] = min(share(first), layers - 1)
        notes.append(f"dense_layers={values['dense_layers']} (the interleaved dense layers' "
                     f"share, {arch.layers - first} of {arch.layers} layers a mixture of "
                     "experts, at least one kept)")
    counts = {k: max(1, share(getattr(arch, k))) if getattr(arch, k) else 0
              for k in ("windowed_layers", "chunked_layers")}
    while sum(counts.values()) > layers:  # take from the larger (a lone layer: the chunks)
        counts[max(counts, key=lambda k: (counts[k], k == "chunked_layers"))] -= 1
    for count, size in (("windowed_layers", "window_tokens"), ("chunked_layers",
                                                                "chunk_tokens")):
        if not getattr(arch, count):
            continue
        values[count] = counts[count]
        why = ("same share of the layers" if counts[count] == share(getattr(arch, count)) else
               f"nearest to the model's {getattr(arch, count)} of {arch.layers} that fits")
        if not counts[count]:
            values[size] = 0
            why = f"no room in {layers} layer{'s' * (layers > 1)}: {size} dropped"
        notes.append(f"{count}={counts[count]} ({why})")
    return values, notes


def preset_names() -> tuple[str, ...]:
    return tuple(_PRESETS)


def preset(name: str) -> tuple[Architecture, int]:
    key = name.strip().lower()  # " Llama2-7B " is the preset a person meant
    key = ALIASES.get(key, key)
    if key not in _PRESETS:
        raise UnknownNameError("model preset", name, _PRESETS, field="model",
                               hint=f"use one of {', '.join(_PRESETS)}, or `config` "
                                    "config.json, or `params`")
    kwargs, seq = _PRESETS[key]
    return Architecture(name=key, **kwargs), seq
