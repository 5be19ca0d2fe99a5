"""Framework profiles: what each training stack can do, which the plan search respects.

The *structure* of a framework (which ZeRO stages it has, whether it can split tensors,
pipelines or sequences, whether its pipeline interleaves) lives here. How *efficiently* it runs
— kernel fusion, how much communication it hides, how close its GEMMs get to the achievable
matmul rate — is a handful of fitted constants per profile in ``Assumptions`` (fitted by
``benchmarks/fit_software.py`` on published measured throughput, see ``_fitted``).

    megatron   Megatron-LM / NeMo / Megatron-Core: TP with sequence parallelism, interleaved
               1F1B pipelines, context parallelism (ring attention), distributed optimizer
               (ZeRO-1) or Megatron-FSDP (ZeRO-3, Megatron-Core ≥ 0.11), fused kernels
               (Transformer Engine).
               Shoeybi et al. 2019 (arXiv:1909.08053), Narayanan et al. 2021
               (arXiv:2104.04473), Korthikanti et al. 2022 (arXiv:2205.05198).
    fsdp       PyTorch FSDP / FSDP2 (torchtitan, llm-foundry/Composer): FULL_SHARD (ZeRO-3) or
               SHARD_GRAD_OP (ZeRO-2) data parallelism; torchtitan adds TP+SP, pipelines and
               context parallelism (arXiv:2410.06511).
    deepspeed  DeepSpeed ZeRO 1–3 (arXiv:1910.02054), Megatron-DeepSpeed TP, DeepSpeed's
               non-interleaved pipeline (ZeRO ≤ 1 with pipelines).
    hf         A plain Hugging Face Trainer: data parallel (DDP) or ZeRO/FSDP through
               Accelerate; no tensor, pipeline or context parallelism.
"""

from __future__ import annotations

from catalog import record

from ._errors import WorkloadError
from ._shown import either
from ._workload import FRAMEWORKS, PlanPins


@record
class FrameworkProfile:
    name: str
    zero_stages: tuple[int, ...]  # stages the framework offers
    tensor_parallel: bool
    pipeline_parallel: bool
    interleaved_pipeline: bool  # virtual stages (Megatron's interleaved 1F1B)
    context_parallel: bool
    zero_with_pipeline: tuple[int, ...]  # stages that combine with pp > 1
    label: str
    # experts spread over ranks (Megatron-Core MoE, torchtitan/AutoModel EP, DeepSpeed-MoE);
    # a plain Trainer keeps every expert on every GPU
    expert_parallel: bool = True
    # Layers written as eager PyTorch modules keep more for backward than Megatron's fused
    # ones: a gated FFN's activation output (``silu(gate) * up`` saves silu(gate); Megatron's
    # fused SwiGLU saves only its input; Megatron-DeepSpeed's swiglu is the eager one), and K/V
    # repeated over the query groups before the attention kernel (torchtitan's and Hugging
    # Face's Llama ``repeat_kv``; Megatron/TE pass the groups to the kernel). Measured: the
    # workload probe's eager layer on an H200 kept 769 MiB where this count gives 768
    # (benchmarks/data/gpu_check_h200_2026-12-04).
    eager_layers: bool = False
    # Gradients held in the reduction's dtype (``grad_reduce_bytes``): Megatron-Core's DDP
    # keeps one gradient buffer in fp32 when grad_reduce_in_fp32, else in the parameters'
    # bf16 (docs/source/api-guide/dist_optimizer.md: 6 + 12/d bytes per parameter with fp32
    # grads, 4 + 12/d with bf16). FSDP's and DeepSpeed's count stays bf16 gradients beside
    # the optimizer's fp32 master copy (FSDP2's sharded fp32 parameter and gradient: the same
    # 16/n bytes).
    grads_in_reduce_dtype: bool = False


PROFILES: dict[str, FrameworkProfile] = {
    "megatron": FrameworkProfile(
        name="megatron", zero_stages=(0, 1, 3), tensor_parallel=True, pipeline_parallel=True,
        interleaved_pipeline=True, context_parallel=True, zero_with_pipeline=(0, 1),
        label="Megatron-LM / NeMo", grads_in_reduce_dtype=True),
    "fsdp": FrameworkProfile(
        name="fsdp", zero_stages=(0, 2, 3), tensor_parallel=True, pipeline_parallel=True,
        interleaved_pipeline=True, context_parallel=True, zero_with_pipeline=(0, 2, 3),
        label="PyTorch FSDP (torchtitan, llm-foundry)", eager_layers=True),
    "deepspeed": FrameworkProfile(
        name="deepspeed", zero_stages=(0, 1, 2, 3), tensor_parallel=True,
        pipeline_parallel=True, interleaved_pipeline=False, context_parallel=False,
        zero_with_pipeline=(0, 1), label="DeepSpeed (ZeRO, Megatron-DeepSpeed)",
        eager_layers=True),
    "hf": FrameworkProfile(
        name="hf", zero_stages=(0, 2, 3), tensor_parallel=False, pipeline_parallel=False,
        expert_parallel=False, eager_layers=True,
        interleaved_pipeline=False, context_parallel=False, zero_with_pipeline=(0,),
        label="Hugging Face Trainer (DDP, or FSDP/ZeRO through Accelerate)"),
}
assert tuple(PROFILES) == FRAMEWORKS

# The workload probe builds eager PyTorch layers whatever --framework labels the run (the label
# names the profile whose time it calibrates): their activations are compared with the eager
# count of this profile, and the ratio then scales the labelled profile's own count.
PROBE_LAYERS = "fsdp"
assert PROFILES[PROBE_LAYERS].eager_layers


def profile(name: str) -> FrameworkProfile:
    return PROFILES[name]


def check_pins(pins: PlanPins, framework: str) -> None:
    """Reject pins the framework cannot run, saying which framework could."""
    p = PROFILES[framework]

    def no(what: str, field: str, value, who: list[str]) -> WorkloadError:
        return WorkloadError(f"{p.label} has no {what} ({field}={value}). To fix: leave "
                             f"{field} unpinned, or choose `framework` {either(who)}",
                             field=field,
                             value=value)

    def able(capability: str) -> list[str]:  # the profiles that have it, from PROFILES
        return [n for n, q in PROFILES.items() if getattr(q, capability)]

    for pinned, capability, what, field in (
            (pins.tp, "tensor_parallel", "tensor parallelism", "tp"),
            (pins.pp, "pipeline_parallel", "pipeline parallelism", "pp"),
            (pins.cp, "context_parallel", "context parallelism", "cp"),
            (pins.ep, "expert_parallel", "expert parallelism", "ep"),
            (pins.vp, "interleaved_pipeline", "interleaved pipeline", "vp")):
        if pinned and pinned > 1 and not getattr(p, capability):
            raise no(what, field, pinned, able(capability))
    if pins.zero is not None and pins.zero not in p.zero_stages:
        who = [n for n, q in PROFILES.items() if pins.zero in q.zero_stages]
        raise no(f"ZeRO stage {pins.zero}", "zero", pins.zero, who)
    if (pins.zero is not None and pins.pp and pins.pp > 1
            and pins.zero not in p.zero_with_pipeline):
        raise WorkloadError(f"{p.label} cannot combine ZeRO stage {pins.zero} with a pipeline "
                            f"(pp={pins.pp}). To fix: pin zero to one of "
                            f"{', '.join(map(str, p.zero_with_pipeline))}, or pp=1",
                            field="zero", value=pins.zero)
