"""Turning user options into a Workload and a Cluster: shared by the CLI, the app and tests."""

from __future__ import annotations

from dataclasses import dataclass, replace

from catalog import Catalog

from ._errors import HardwareError, WorkloadError
from ._hardware import Cluster, cluster_for_instance, reference_cluster
from ._hfconfig import architecture_from_config
from ._presets import preset
from ._units import parse_count
from ._workload import DEFAULT_GLOBAL_BATCH_TOKENS, Architecture, Workload, infer_architecture

ARCH_FIELDS = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab")
CHINCHILLA_TOKENS_PER_PARAM = 20  # compute-optimal tokens per parameter (arXiv:2203.15556)


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadSpec:
    """What a user said about the workload, before it is resolved."""

    model: str | None = None
    config: str | None = None
    params: str | float | None = None
    active_params: str | float | None = None
    experts: int | None = None
    experts_per_token: int | None = None
    tokens: str | float | None = None  # None: 20 tokens per active parameter
    seq_len: int | None = None
    global_batch_tokens: str | float | None = None
    precision: str = "bf16"
    optimizer: str = "adamw"
    recompute: str = "auto"
    finetune: str = "full"
    lora_rank: int = 16
    arch_overrides: tuple[tuple[str, int], ...] = ()


def build_workload(spec: WorkloadSpec) -> Workload:
    sources = [x for x in (spec.model, spec.config, spec.params) if x not in (None, "")]
    if len(sources) != 1:
        raise WorkloadError("give exactly one of --model NAME, --config config.json or "
                            "--params N. To fix: e.g. --model llama3-8b or --params 7B")
    notes: list[str] = []
    default_seq = None
    if spec.model:
        arch, default_seq = preset(spec.model)
    elif spec.config:
        arch, default_seq = architecture_from_config(spec.config)
        default_seq = min(default_seq or 4096, 8192)
        notes.append(f"architecture from {spec.config}: {arch.layers} layers, hidden "
                     f"{arch.hidden}, {arch.heads} heads ({arch.kv_heads} KV), FFN "
                     f"{arch.ffn_hidden}, vocab {arch.vocab}"
                     + (f", {arch.experts} experts top-{arch.experts_per_token}"
                        if arch.experts else ""))
    else:
        total = parse_count(spec.params, "--params")
        active = parse_count(spec.active_params, "--active-params") \
            if spec.active_params not in (None, "") else None
        kwargs = {}
        if spec.experts:
            kwargs["experts"] = spec.experts
        if spec.experts_per_token:
            kwargs["experts_per_token"] = spec.experts_per_token
        arch, inferred = infer_architecture(total, active, **kwargs)
        notes.extend(inferred)
    if spec.arch_overrides:
        arch = _override(arch, dict(spec.arch_overrides))
        notes.append("architecture overridden: " + ", ".join(f"{k}={v}"
                                                              for k, v in spec.arch_overrides))
    if spec.seq_len is not None and spec.seq_len <= 0:
        raise WorkloadError(f"--seq-len must be positive, got {spec.seq_len}. To fix: pass e.g. "
                            "--seq-len 4096")
    seq = spec.seq_len if spec.seq_len is not None else (default_seq or 4096)
    if spec.seq_len is None:
        notes.append(f"sequence length {seq} (the model's pre-training context; --seq-len "
                     "to change)")
    if spec.global_batch_tokens in (None, ""):
        gbt = max(seq, DEFAULT_GLOBAL_BATCH_TOKENS // seq * seq)
        notes.append(f"global batch {gbt:,} tokens (default ≈ 4M, as Llama 2; "
                     "--global-batch-tokens to change)")
    else:
        gbt = int(parse_count(spec.global_batch_tokens, "--global-batch-tokens"))
    if spec.tokens in (None, ""):
        tokens = CHINCHILLA_TOKENS_PER_PARAM * arch.params_active()
        notes.append(f"tokens {tokens:.3g}: {CHINCHILLA_TOKENS_PER_PARAM} per active parameter, "
                     "compute-optimal per Hoffmann et al. 2022 (--tokens to change)")
    else:
        tokens = parse_count(spec.tokens)
    return Workload(arch=arch, tokens=tokens, seq_len=int(seq),
                    global_batch_tokens=gbt, precision=spec.precision,
                    optimizer=spec.optimizer, recompute=spec.recompute,
                    finetune=spec.finetune, lora_rank=spec.lora_rank, inferred=tuple(notes))


def _override(arch: Architecture, values: dict) -> Architecture:
    unknown = set(values) - set(ARCH_FIELDS)
    if unknown:
        raise WorkloadError(f"cannot override {sorted(unknown)}; allowed: {ARCH_FIELDS}")
    for k, v in values.items():
        if not isinstance(v, int) or v <= 0:
            raise WorkloadError(f"--{k.replace('_', '-')} must be a positive whole number, "
                                f"got {v!r}. To fix: pass e.g. --{k.replace('_', '-')} 32")
    return replace(arch, **values)


def build_cluster(catalog: Catalog, *, instance: str | None = None, nodes: int = 1,
                  cloud: str | None = None, gpu: str | None = None,
                  gpus: int | None = None) -> tuple[Cluster, float | None]:
    """A cluster and the per-GPU memory the cloud reports (None: use the datasheet)."""
    if bool(instance) == bool(gpu):
        raise HardwareError("give either --instance TYPE [--nodes N] or --gpu NAME --gpus N. "
                            "To fix: e.g. --instance p5.48xlarge --nodes 4, or --gpu H100 "
                            "--gpus 32")
    if instance:
        if nodes < 1:
            raise HardwareError("--nodes must be at least 1. To fix: pass --nodes 1")
        it = catalog.instance_type(instance, cloud)
        return cluster_for_instance(catalog, it, nodes), it.gpu_memory_gib
    if nodes != 1:
        raise HardwareError("--nodes applies to --instance. To fix: with --gpu, give the total "
                            "count as --gpus N")
    return reference_cluster(catalog, gpu, 8 if gpus is None else gpus), None
