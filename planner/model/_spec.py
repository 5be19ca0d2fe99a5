"""Turning what a user said into a Workload and a Cluster: shared by the CLI, the app, team plans
and tests. Data in, records out: a model config arrives parsed (the front ends read files)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from pathlib import PurePath
from types import MappingProxyType

from catalog import Catalog, record

from ._arch_overrides import checked_overrides, departure, overridden, shape_warnings
from ._errors import HardwareError, WorkloadError
from ._hardware import MAX_CLUSTER_GPUS, Cluster, cluster_for_instance, reference_cluster
from ._hfconfig import (
    CONTEXT_KEYS,
    architecture_from_config,
    config_readings,
    hub_repo_name,
    printable_name,
)
from ._inference import infer_architecture
from ._presets import context_warning, defaults_filled, preset
from ._shown import format_count, format_params
from ._units import parse_count
from ._workload import (
    DEFAULT_ATTENTION,
    DEFAULT_FINETUNE,
    DEFAULT_FRAMEWORK,
    DEFAULT_LORA_RANK,
    DEFAULT_OPTIMIZER,
    DEFAULT_PRECISION,
    DEFAULT_RECOMPUTE,
    FINETUNE_SEQ_LEN,
    MAX_SEQ_LEN,
    MAX_TOKENS,
    OPTIONAL_ARCH_LIMITS,
    Architecture,
    PlanPins,
    Workload,
    attention_note,
)

DEFAULT_SEQ_LEN, MAX_DEFAULT_SEQ_LEN = 4096, 8192  # without `seq_len`: a config's context, capped
# a config's context below this is warned of: no released model trains at fewer tokens a
# sequence (BERT 512, GPT-2 1,024), so it is a typo or a test model's
MIN_CONFIG_CONTEXT = 128
CHINCHILLA_TOKENS_PER_PARAM = 20  # compute-optimal tokens per parameter (arXiv:2203.15556)


@record
class WorkloadSpec:
    """What a user said about the workload, before it is resolved."""

    model: str | None = None
    config: Mapping | None = None  # a parsed Hugging Face config.json
    config_name: str = ""  # where it came from (a path, an upload's name), for notes
    params: str | float | None = None
    active_params: str | float | None = None
    experts: int | None = None
    experts_per_token: int | None = None
    tokens: str | float | None = None  # None: 20 tokens per active parameter
    seq_len: int | None = None
    global_batch_tokens: str | float | None = None
    precision: str = DEFAULT_PRECISION
    optimizer: str = DEFAULT_OPTIMIZER
    recompute: str = DEFAULT_RECOMPUTE
    finetune: str = DEFAULT_FINETUNE
    lora_rank: int = DEFAULT_LORA_RANK
    framework: str = DEFAULT_FRAMEWORK
    attention: str = DEFAULT_ATTENTION
    pins: PlanPins = PlanPins()
    arch_overrides: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        if self.config is not None and isinstance(self.config, Mapping):
            # frozen: a read-only view of the caller's mapping at the time it was given
            object.__setattr__(self, "config", MappingProxyType(dict(self.config)))


def build_workload(spec: WorkloadSpec) -> Workload:
    if spec.model is not None and not isinstance(spec.model, str):
        raise WorkloadError(f"`model` must be a preset name, got {spec.model!r}. To fix: pass "
                            "e.g. `model` llama3-8b (`params` for a parameter count)",
                            field="model", value=spec.model)
    for name in ("model", "params"):  # "" is a value left out by mistake, not a missing one
        if isinstance(getattr(spec, name), str) and not getattr(spec, name).strip():
            raise WorkloadError(f"`{name}` is empty. To fix: pass e.g. "
                                f"{'`model` llama3-8b' if name == 'model' else '`params` 7B'}",
                                field=name, value=getattr(spec, name))
    if spec.config is None and spec.config_name:  # a config file whose JSON is `null`
        raise WorkloadError(f"{spec.config_name}: expected a JSON object of model settings, "
                            "found null. To fix: pass a Hugging Face config.json",
                            field="config")
    sources = [x for x in (spec.model, spec.config, spec.params) if x not in (None, "")]
    if len(sources) != 1:
        raise WorkloadError("give exactly one of `model` NAME, `config` config.json or "
                            "`params` N. To fix: e.g. `model` llama3-8b or `params` 7B")
    for name in ("experts", "experts_per_token", "active_params"):
        value = getattr(spec, name)
        if value is None or (name == "active_params" and value == ""):
            continue
        if spec.params in (None, ""):  # a preset or config.json has its own expert counts
            raise WorkloadError(f"`{name}` describes a model given by `params`; with `model` "
                                "or `config` the architecture has its own. To fix: drop "
                                f"`{name}`", field=name, value=value)
        if name == "active_params":
            continue
        top = OPTIONAL_ARCH_LIMITS[name]
        # `experts` 0 says "dense"; a mixture routes each token to at least one expert (0 was
        # let through here, then refused as "between 1 and experts")
        low = 1 if name == "experts_per_token" and spec.experts != 0 else 0
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= top:
            raise WorkloadError(f"`{name}` must be a whole number from {low} to {top:,}, got "
                                f"{value!r}. To fix: e.g. `{name}` "
                                f"{2 if low else 8}", field=name, value=value)
    # checked before the inference, which takes `vocab` from them
    overrides = checked_overrides(spec.arch_overrides) \
        if spec.arch_overrides else {}
    notes: list[str] = []
    warnings: list[str] = []
    departed: list[str] = []  # sizes given beside `params` changed its count (``departure``)
    default_seq, seq_why = None, "the model's pre-training context"
    context = {}  # where the model's context is known: ``context_warning``'s
    if spec.model:
        arch, default_seq = preset(spec.model)
        context = {"model": spec.model}
    elif spec.config is not None:
        source = spec.config_name or "config.json"
        arch, positions = architecture_from_config(spec.config, source=source,
                                                   default_name=_model_name(source))
        default_seq, seq_why, key = _config_seq_len(spec.config, positions)
        context = {"cfg": spec.config, "name": arch.name, "positions": positions, "key": key}
        # the family-dependent readings (gated MLP, tied embeddings, latent attention) are
        # said, so a misread family shows
        notes.append(f"architecture from {source}: {arch.layers} layers, hidden "
                     f"{arch.hidden}, {arch.heads} heads ({arch.kv_heads} KV"
                     + (", latent attention" if arch.attention_params_per_layer else "")
                     + f"), FFN {arch.ffn_hidden} ({'gated' if arch.gated_ffn else 'two-matrix'})"
                     f", vocab {arch.vocab} ({'tied' if arch.tied_embeddings else 'untied'})"
                     + (f", {arch.experts} expert{'s' * (arch.experts != 1)} "
                        f"top-{arch.experts_per_token}"
                        + (f" + {arch.shared_experts} shared" if arch.shared_experts else "")
                        + (f", {arch.moe_ffn_hidden} wide" if arch.moe_ffn_hidden not in (
                            0, arch.ffn_hidden) else "")
                        + (f" in {arch.moe_layers} of {arch.layers} layers"
                           if arch.dense_layers else "") if arch.experts else "")
                     + f": {format_params(arch.params_total())} parameters")
        notes.extend((readings := config_readings(spec.config, arch, source))[0])
        warnings.extend(readings[1])  # a guessed FFN width, an implausible head_dim
    else:
        seq_why = "gpuplan's default: a parameter count gives no context length"
        total = parse_count(spec.params, "params")
        active = parse_count(spec.active_params, "active_params") \
            if spec.active_params not in (None, "") else None
        kwargs = {}
        if (spec.experts_per_token is not None and spec.experts is None
                and active in (None, total)):  # nothing says it is a mixture: ignored
            raise WorkloadError("`experts_per_token` describes a mixture of experts, but " + (
                "neither `experts` nor `active_params` says the model is one. To fix: add "
                "`experts` (and `active_params`), or drop " if active is None else
                "`active_params` equals `params` (every parameter active: a dense model). To "
                "fix: give the parameters one token uses as `active_params`, or drop ")
                + "`experts_per_token`", field="experts_per_token", value=spec.experts_per_token)
        if spec.experts == 0 and (k := spec.experts_per_token):  # ran dense, k was ignored
            raise WorkloadError(f"`experts_per_token` {k} needs `experts`: a model with 0 experts "
                                f"is dense. To fix: for a mixture give `experts` N (N > {k}) and "
                                "`active_params`, or drop `experts_per_token`",
                                field="experts_per_token", value=k)
        if spec.experts and active is None:  # nothing says how much of the model a token uses
            raise WorkloadError(f"`experts` {spec.experts} describes a mixture of experts, whose "
                                "time depends on the parameters each token uses. To fix: add "
                                "`active_params` (e.g. Mixtral 8x7B: `params` 47B, "
                                "`active_params` 13B, `experts` 8), or drop `experts` for a "
                                "dense model", field="experts", value=spec.experts)
        if spec.experts and active is not None and active == total:  # it ran dense, silently
            raise WorkloadError(f"`experts` {spec.experts} describes a mixture of experts, but "
                                "`active_params` equals `params` (every parameter active: a "
                                "dense model). To fix: give the parameters one token uses as "
                                "`active_params`, or drop `experts`", field="experts",
                                value=spec.experts)
        if spec.experts and spec.experts_per_token is None and 0 < spec.experts <= 2:
            # the default top-2 was blamed as if the user had given it
            raise WorkloadError(f"`experts` {spec.experts}: a mixture routes each token to "
                                "fewer experts than it has, and the default is 2 per token. "
                                "To fix: give more `experts`" + (
                                    ", or `experts_per_token` 1" if spec.experts == 2 else
                                    ""), field="experts", value=spec.experts)
        if spec.experts == 0 and active is not None and active < total:
            raise WorkloadError("`experts` 0 says the model is dense, but `active_params` is "
                                "below `params` (a mixture of experts). To fix: drop `experts` "
                                "0, or drop `active_params`", field="experts", value=0)
        if spec.experts is not None:  # 0 says "dense", not "infer"
            kwargs["experts"] = spec.experts
        if spec.experts_per_token is not None:
            kwargs["experts_per_token"] = spec.experts_per_token
        if "vocab" in overrides:  # the shape is sized around the vocabulary the user gave
            kwargs["vocab"] = overrides["vocab"]
        arch, inferred = infer_architecture(total, active, **kwargs)
        notes.extend(inferred)
    if overrides:
        arch, derived = overridden(before := arch, overrides)
        warnings.extend(shape_warnings(before, arch, overrides))
        notes.append("architecture overridden: " + ", ".join(f"{k}={v}"
                                                              for k, v in spec.arch_overrides)
                     + (f" (kept consistent: {', '.join(derived)})" if derived else "")
                     + f" → {format_params(arch.params_total())} parameters"
                     + (f", {format_params(arch.params_active())} active" if arch.is_moe
                        else ""))
        if spec.params not in (None, ""):
            warnings.extend(departed := departure(arch, overrides, total, active))
            if departed:  # the note stands alone where the warnings are not shown
                notes[-1] += f", not the {format_params(total)} of `params`"
    if spec.seq_len is not None and (isinstance(spec.seq_len, bool) or not isinstance(
            spec.seq_len, numbers.Real) or not 1 <= spec.seq_len <= MAX_SEQ_LEN
            or spec.seq_len != int(spec.seq_len)):
        raise WorkloadError(f"`seq_len` must be a whole number between 1 and {MAX_SEQ_LEN:,} "
                            f"tokens, got {spec.seq_len!r}. To fix: pass e.g. `seq_len` 4096",
                            field="seq_len", value=spec.seq_len)
    finetuning = spec.finetune not in ("none", "")
    if spec.seq_len is not None:
        seq = spec.seq_len
    elif finetuning:
        seq = min(FINETUNE_SEQ_LEN, default_seq or FINETUNE_SEQ_LEN)
        notes.append(f"sequence length {seq} (fine-tuning default: Llama 2's supervised "
                     "fine-tuning used 4,096, capped at the model's context; `seq_len` to "
                     "change)")
    else:
        seq = default_seq or DEFAULT_SEQ_LEN
        notes.append(f"sequence length {seq} ({seq_why}; `seq_len` to change)")
    if spec.seq_len is None and context.get("key") and seq < MIN_CONFIG_CONTEXT:
        # max_position_embeddings 1 planned 1,024 one-token sequences a step without a word
        warnings.append(f"{source}: {context['key']} {context['positions']:,} is shorter than "
                        f"any language model's training context, and the run is planned at "
                        f"sequence length {seq:,}. To fix: check {context['key']}, or give "
                        "`seq_len`, e.g. 4096")
    if arch.windowed_layers or arch.chunked_layers:
        notes.append(attention_note(arch, int(seq), spec.attention))
    if spec.global_batch_tokens == "":
        raise WorkloadError("`global_batch_tokens` is empty. To fix: pass a count such as 4M, "
                            "or leave it out for the stated default",
                            field="global_batch_tokens", value="")
    if spec.global_batch_tokens is None:
        gbt = None  # the default rule, which depends on the cluster: stated per estimate
    else:
        gbt = round(parse_count(spec.global_batch_tokens, "global_batch_tokens"))  # whole
        # a step trains whole sequences: 16,383 tokens of 8,192 was 1 (floored); below one
        # sequence the Workload refuses it
        if gbt % seq and gbt > seq:
            sequences = max(1, math.floor(gbt / seq + 0.5))  # halves up (round() goes to even)
            said = (f"global batch {gbt:,} tokens is {gbt / seq:,.2f} sequences of {seq:,}: "
                    f"taken as {sequences:,} ({sequences * seq:,} tokens; a plan may round it up "
                    "to fill its data-parallel ranks, and says so)")
            # beyond a tenth, as a plan's own rounding up is warned: another recipe, not a note
            # (12,000 tokens of 8,192 trained 8,192, a third less, said among the assumptions)
            (warnings if abs(sequences * seq - gbt) > 0.1 * gbt else notes).append(said)
            gbt = sequences * seq
    if spec.tokens == "":
        raise WorkloadError("`tokens` is empty. To fix: pass a count such as 2T or 300B, or "
                            "leave `tokens` out for the stated default", field="tokens",
                            value="")
    if spec.tokens is None:
        if finetuning:
            raise WorkloadError("fine-tuning needs the number of tokens you will train on. To "
                                "fix: pass `tokens`, e.g. 3 epochs of a 50M-token dataset is "
                                "`tokens` 150M", field="tokens", value=None)
        tokens = CHINCHILLA_TOKENS_PER_PARAM * arch.params_active()
        if tokens > MAX_TOKENS:  # the Workload's bound blamed `tokens`, which was not given
            raise WorkloadError(_default_tokens_message(arch, tokens), field="tokens",
                                value=None)
        notes.append(f"tokens {format_count(tokens)}: {CHINCHILLA_TOKENS_PER_PARAM} per active "
                     "parameter"
                     # the count it multiplies is the one modelled, which is not `params`
                     + (f" of the {format_params(arch.params_active())} modelled, not "
                        "`params`" if departed else "") + ", "
                     "compute-optimal per Hoffmann et al. 2022 (`tokens` to change)")
    else:
        tokens = parse_count(spec.tokens)
    warnings += context_warning(int(seq), **context)  # last: those above are the overrides'
    return Workload(arch=arch, tokens=tokens, seq_len=int(seq),
                    global_batch_tokens=gbt, precision=spec.precision,
                    optimizer=spec.optimizer, recompute=spec.recompute,
                    finetune=spec.finetune, lora_rank=spec.lora_rank,
                    framework=spec.framework, attention=spec.attention, pins=spec.pins,
                    inferred=tuple(notes), warnings=tuple(warnings))


def _config_seq_len(cfg: Mapping, context: int | None) -> tuple[int, str, str]:
    """The sequence length a config.json gives by default, why, and the key of its context:
    its context length up to MAX_DEFAULT_SEQ_LEN, or DEFAULT_SEQ_LEN when it states none."""
    if context is None:
        return DEFAULT_SEQ_LEN, (f"gpuplan's default: the config gives no context length "
                                 f"({CONTEXT_KEYS[0]})"), ""
    inner = cfg.get("text_config")
    merged = {**cfg, **defaults_filled(cfg), **(inner if isinstance(inner, Mapping) else {})}
    key = next((k for k in CONTEXT_KEYS if merged.get(k) is not None), CONTEXT_KEYS[0])
    if context > MAX_DEFAULT_SEQ_LEN:
        return MAX_DEFAULT_SEQ_LEN, f"{key} {context:,} capped at {MAX_DEFAULT_SEQ_LEN:,}", key
    return context, f"the config's {key}", key


def _model_name(source: str) -> str:
    """A model's name from where its config came from: the repository of a Hugging Face cache
    path (``…/models--ORG--NAME/snapshots/<hash>/config.json``: ORG/NAME), else the folder of
    ``…/NAME/config.json``, else the file's stem (an upload ``NAME.json``); "" for a bare
    ``config.json``. A source not named ``*.json`` is the model's folder (`--config NAME`
    reads NAME/config.json): its own name."""
    if hub := hub_repo_name(source):
        return hub
    path = PurePath(source)
    folder = not path.name.lower().endswith(".json") and path.name not in ("", "config")
    name = printable_name(path.name if folder else path.parent.name or path.stem)
    return "" if name in ("", "config", ".") else name


def _default_tokens_message(arch: Architecture, tokens: float) -> str:
    """Why the default token count (CHINCHILLA_TOKENS_PER_PARAM per active parameter) is
    refused: the model is too large for it, and `tokens` is what to give."""
    what = "active parameters" if arch.is_moe else "parameters"
    return (f"`tokens` was not given, and its default, {CHINCHILLA_TOKENS_PER_PARAM} per active "
            f"parameter (Chinchilla-optimal) × {format_count(arch.params_active())} {what} = "
            f"{format_count(tokens)} tokens ({tokens:.1e}), is above the "
            f"{format_count(MAX_TOKENS)} ({MAX_TOKENS:.0e}) tokens the model covers. To fix: "
            f"give `tokens`, at most {format_count(MAX_TOKENS)}, e.g. `tokens` 300T")


def build_cluster(catalog: Catalog, *, instance: str | None = None, nodes: int = 1,
                  cloud: str | None = None, gpu: str | None = None,
                  gpus: int | None = None) -> tuple[Cluster, float | None]:
    """A cluster and the per-GPU memory the cloud reports (None: use the datasheet)."""
    if bool(instance) == bool(gpu):
        raise HardwareError("give either `instance` TYPE [`nodes` N] or `gpu` NAME `gpus` N. "
                            "To fix: e.g. `instance` p5.48xlarge `nodes` 4, or `gpu` H100 "
                            "`gpus` 32")
    for name, value in (("nodes", nodes), ("gpus", gpus)):
        if (value is not None or name == "nodes") and (isinstance(value, bool)
                                  or not isinstance(value, numbers.Integral)):
            raise HardwareError(f"`{name}` must be a whole number, got {value!r}. To fix: pass "
                                f"e.g. `{name}` {4 if name == 'nodes' else 32}", field=name,
                                value=value)
    if instance:
        if gpus is not None:
            raise HardwareError("`gpus` applies to `gpu`; an instance type has its own GPUs. "
                                "To fix: give the count as `nodes` N", field="gpus", value=gpus)
        it = catalog.instance_type(instance, cloud)
        if not 1 <= nodes * it.gpu_count <= MAX_CLUSTER_GPUS:
            raise HardwareError(f"`nodes` must be between 1 and "
                                f"{MAX_CLUSTER_GPUS // it.gpu_count:,} ({MAX_CLUSTER_GPUS:,} "
                                f"GPUs of {it.name}), got {nodes}. To fix: pass e.g. `nodes` 4",
                                field="nodes", value=nodes)
        return cluster_for_instance(catalog, it, nodes), it.gpu_memory_gib
    if nodes != 1:
        raise HardwareError("`nodes` applies to `instance`. To fix: with `gpu`, give the total "
                            "count as `gpus` N")
    if cloud is not None:  # it only picks between instance types of one name: else ignored
        raise HardwareError("`cloud` tells apart instance types of the same name; a `gpu` "
                            "reference node has no cloud. To fix: leave out `cloud`, or give "
                            "`instance` TYPE with it", field="cloud", value=cloud)
    if len(several := [g.strip() for g in str(gpu).split(",") if g.strip()]) > 1:  # plan's
        raise HardwareError(f"an estimate times one accelerator, got {gpu!r}. To fix: give one "
                            f"(e.g. `gpu` {several[0]}), or compare them with `gpuplan plan "
                            f"--gpu {','.join(several)}`", field="gpu", value=gpu)
    return reference_cluster(catalog, gpu, 8 if gpus is None else gpus), None
