"""Time the user's layers on this GPU: forward + backward + AdamW, memory, and where time goes.

torch-only (imported lazily by probes._workload_run). One rank's measurement:

1. *Attention kernel*: ``auto`` tries the SDPA backends flash, cuDNN, memory-efficient, math
   in that order on the layer's head dimension and dtype, forward and backward, and keeps the
   first that runs (on CPU: PyTorch's flash kernel for CPU, else math).
2. *Layers*: ``--layers``, else on CPU CPU_LAYERS, else on a GPU as many as fill
   GPU_MEMORY_FILL of its free memory (one layer is built and stepped to measure what a layer
   needs), at most the model's layer count and MAX_GPU_LAYERS; under tensor parallelism every
   rank takes the smallest count any rank found.
3. *Mixed precision as the frameworks run it*: weights and gradients in bf16 (fp16), fp32
   master weights and AdamW moments (``foreach`` on CPU, ``fused`` on CUDA); each step copies
   the gradients to fp32, steps, and copies the weights back.
4. *Timing*: ``warmup`` steps, then ``steps`` steps each split into forward + backward, the
   data-parallel gradient all-reduce (one per parameter, asynchronous, when dp > 1) and the
   optimizer step; CUDA events on a GPU (one synchronisation per step, outside the timed
   spans), time.perf_counter on CPU. Medians and 10th/90th percentiles over steps.
5. *Memory* (one more step): the CUDA allocator before the forward, after it (the
   activations kept for backward) and its peak over the step; on every device the bytes
   autograd saved for backward (probes._workload_layers.SavedBytes).
6. *Split* (two more steps, forward + backward under torch.profiler): every operator's self
   time (on CUDA the device time of the kernels it launched, on CPU its CPU time) classed as
   matmul, attention, communication or other (classify); the shares are applied to the timed
   forward + backward.

Input: random hidden states (no embedding, no output head: those are not layers); loss: the
mean square of the output, so backward runs through every layer.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from probes._errors import ProbeSetupError
from probes._stats import median, percentile
from probes._workload_config import (
    ATTENTION_BACKENDS,
    CPU_LAYERS,
    GPU_MEMORY_FILL,
    MAX_GPU_LAYERS,
    WorkloadConfig,
)
from probes._workload_layers import (
    ATTENTION_RANGE,
    SAVED_COUNTERS,
    SavedBytes,
    build,
    exclude_storages,
    sdpa_backend,
)
from probes._workload_watch import (
    Progress,
    cpu_half_note,
    cpu_has_native,
    quiet_profiler,
)

PROFILED_STEPS = 2
_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
GEMM_OPS = frozenset({"aten::mm", "aten::addmm", "aten::_scaled_mm", "aten::addmv",
                      "aten::mv", "aten::_addmm_activation"})
# Only the attention core runs batched matmuls in these layers (the math backend's QK^T, PV).
BATCHED_OPS = frozenset({"aten::bmm", "aten::baddbmm"})
COMM_PREFIXES = ("c10d::", "nccl:", "gloo:", "record_param_comms")
COMM_NAMES = ("all_reduce", "allreduce", "_CopyToTP", "_ReduceFromTP")  # and their backward


def dtype_of(cfg: WorkloadConfig) -> torch.dtype:
    return _DTYPES[cfg.run_precision]


def choose_backend(cfg: WorkloadConfig, device: torch.device) -> tuple[str, str]:
    """(backend name, note): the first SDPA backend that runs this head size and dtype."""
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    names = ATTENTION_BACKENDS if cfg.attention == "auto" else (cfg.attention,)
    dtype, failures = dtype_of(cfg), []
    for name in names:
        q = torch.randn(1, 2, min(cfg.seq_len, 256), cfg.d_head, device=device, dtype=dtype,
                        requires_grad=True)
        try:
            with sdpa_kernel([sdpa_backend(name)]):  # RuntimeError when it cannot run this
                F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
        except RuntimeError as exc:
            failures.append(f"{name}: {_first_clause(str(exc))}")
            continue
        tried = f"; not available: {'; '.join(failures)}" if failures else ""
        return name, f"SDPA {name} backend{tried}"
    # the math backend runs every even head size in every precision, on every device: the
    # fix is another backend (another --precision changes nothing on a CPU)
    what = f"the SDPA {names[0]} backend is not" if len(names) == 1 else "no SDPA backend is"
    raise ProbeSetupError(
        f"{what} available on this {device.type} for head_dim {cfg.d_head} in "
        f"{cfg.run_precision} ({'; '.join(failures)}). To fix: choose --attention auto (the "
        "first backend that runs here) or --attention math")


def _first_clause(text: str, limit: int = 120) -> str:
    """torch's reason up to its first sentence end, or cut at a clause within ``limit``
    characters (not mid-word, as [:80] cut "This is likely due")."""
    line = text.strip().splitlines()[0] if text.strip() else "no reason given"
    sentence = line.split(". ", 1)[0].rstrip(".")
    if len(sentence) <= limit:
        return sentence
    cut = max(sentence.rfind(sep, 0, limit) for sep in (",", ";", ":"))
    return sentence[:cut] if cut > 0 else sentence[:limit].rsplit(" ", 1)[0] + " …"


class _Trainer:
    """The layers, their fp32 master weights and AdamW, and one step split in phases."""

    def __init__(self, cfg: WorkloadConfig, layers: int, *, device, tp_group, dp_group,
                 backend: str, input_seed: int) -> None:
        self.device, self.dp_group = device, dp_group
        dtype = dtype_of(cfg)
        torch.manual_seed(cfg.seed)
        self.model = build(cfg, layers, group=tp_group, backend=sdpa_backend(backend),
                           device=device, dtype=dtype)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.masters = [p.detach().float().clone() for p in self.params]
        fused = device.type == "cuda"
        self.optimizer_name = (f"AdamW ({'fused' if fused else 'foreach'}) on fp32 master "
                               f"weights; {cfg.run_precision} weights and gradients")
        self.opt = torch.optim.AdamW(self.masters, lr=1e-5, **(
            {"fused": True} if fused else {"foreach": True}))
        gen = torch.Generator(device=device).manual_seed(input_seed)
        self.x = torch.randn(cfg.micro_batch, cfg.seq_len, cfg.hidden, device=device,
                             dtype=dtype, generator=gen)

    def forward(self) -> torch.Tensor:
        return self.model(self.x)

    def fwd_bwd(self) -> None:
        self.forward().float().pow(2).mean().backward()

    def grad_reduce(self) -> None:
        if self.dp_group is None:
            return
        work = [dist.all_reduce(p.grad, group=self.dp_group, async_op=True)
                for p in self.params if p.grad is not None]
        for w in work:
            w.wait()

    def optimizer_step(self) -> None:
        for p, m in zip(self.params, self.masters, strict=True):
            m.grad = None if p.grad is None else p.grad.float()
        self.opt.step()
        with torch.no_grad():
            if hasattr(torch, "_foreach_copy_"):
                torch._foreach_copy_(self.params, self.masters)
            else:  # torch < 2.1
                for p, m in zip(self.params, self.masters, strict=True):
                    p.copy_(m)
        for p, m in zip(self.params, self.masters, strict=True):
            p.grad = m.grad = None

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def _phase_times(trainer: _Trainer, steps: int, *, said: Progress | None = None,
                 what: str = "step") -> list[tuple[float, float, float]]:
    """(fwd+bwd, gradient reduction, optimizer) seconds of each of ``steps`` steps."""
    phases: tuple[Callable[[], None], ...] = (trainer.fwd_bwd, trainer.grad_reduce,
                                              trainer.optimizer_step)
    out = []
    for i in range(steps):
        if trainer.device.type == "cuda":
            events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
            events[0].record()
            for phase, end in zip(phases, events[1:], strict=True):
                phase()
                end.record()
            trainer.sync()
            out.append(tuple(a.elapsed_time(b) / 1e3
                             for a, b in zip(events, events[1:], strict=False)))
        else:
            marks = [time.perf_counter()]
            for phase in phases:
                phase()
                marks.append(time.perf_counter())
            out.append(tuple(b - a for a, b in zip(marks, marks[1:], strict=False)))
        if said is not None:
            said.step(what, i + 1, steps, sum(out[-1]))
    return out


def _memory_step(trainer: _Trainer) -> dict[str, Any]:
    """One step with the allocator read around the forward and the saved bytes counted."""
    cuda = trainer.device.type == "cuda"
    counter = SavedBytes(exclude_storages(trainer.model))
    if cuda:
        trainer.sync()
        torch.cuda.reset_peak_memory_stats(trainer.device)
        before = torch.cuda.memory_allocated(trainer.device)
    SAVED_COUNTERS.append(counter)
    try:
        with torch.autograd.graph.saved_tensors_hooks(counter.pack, lambda t: t):
            out = trainer.forward()
    finally:
        SAVED_COUNTERS.pop()
    after = torch.cuda.memory_allocated(trainer.device) if cuda else None
    out.float().pow(2).mean().backward()
    del out
    trainer.grad_reduce()
    trainer.optimizer_step()
    if not cuda:
        return {"saved": counter.total}
    trainer.sync()
    return {"saved": counter.total, "before": before, "after": after,
            "peak": torch.cuda.max_memory_allocated(trainer.device)}


def classify(name: str, ancestors: tuple[str, ...]) -> str:
    """matmul, attention, communication or other for one profiled operator (its name and
    its parents')."""
    if any(n.startswith(COMM_PREFIXES) or any(k in n for k in COMM_NAMES)
           for n in (name, *ancestors)):
        return "communication"
    if any(n == ATTENTION_RANGE or "attention" in n.lower() for n in (name, *ancestors)):
        return "attention"
    if name in BATCHED_OPS:
        return "attention"
    if name in GEMM_OPS:
        return "matmul"
    return "other"


def _self_time(evt: Any, cuda: bool) -> float:
    if cuda:
        return float(getattr(evt, "self_device_time_total", None)
                     or getattr(evt, "self_cuda_time_total", 0.0) or 0.0)
    return float(evt.self_cpu_time_total or 0.0)


def profile_split(trainer: _Trainer) -> tuple[dict[str, float] | None, str]:
    """(shares of matmul/attention/communication/other in forward + backward, source) from
    torch.profiler."""
    try:
        from torch.profiler import ProfilerActivity, profile
    except ImportError as exc:  # a build without the profiler
        return None, f"not available: torch.profiler cannot be imported ({exc})"
    cuda = trainer.device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    quiet_profiler()
    try:
        with profile(activities=activities) as prof:
            for _ in range(PROFILED_STEPS):
                trainer.fwd_bwd()
                trainer.sync()
        for p in trainer.params:
            p.grad = None
        events = list(prof.events())
    except Exception as exc:  # noqa: BLE001 - a profiler that fails must not fail the probe
        for p in trainer.params:
            p.grad = None
        return None, f"not available: torch.profiler failed ({type(exc).__name__}: {exc})"
    totals = {"matmul": 0.0, "attention": 0.0, "communication": 0.0, "other": 0.0}
    cpu_type = torch.autograd.DeviceType.CPU
    for evt in events:
        if getattr(evt, "device_type", cpu_type) != cpu_type:
            continue  # a kernel's own event: its time is already its launching operator's
        t = _self_time(evt, cuda)
        if t <= 0:
            continue
        ancestors, parent = [], evt.cpu_parent
        while parent is not None:
            ancestors.append(parent.name)
            parent = parent.cpu_parent
        totals[classify(evt.name, tuple(ancestors))] += t
    total = sum(totals.values())
    if total <= 0:
        return None, ("not available: the profiler recorded no " +
                      ("device time (CUPTI unavailable?)" if cuda else "CPU time"))
    what = "device" if cuda else "CPU"
    return ({k: v / total for k, v in totals.items()},
            f"torch.profiler: shares of the operators' self {what} time over {PROFILED_STEPS} "
            "forward + backward steps, applied to the timed forward + backward")


def _layers_that_fit(cfg: WorkloadConfig, *, device, tp_group, dp_group, backend: str,
                     input_seed: int) -> tuple[int, str]:
    """How many layers fill GPU_MEMORY_FILL of the free memory (measured on one layer)."""
    limit = min(MAX_GPU_LAYERS, cfg.model_layers or MAX_GPU_LAYERS)
    one = _Trainer(cfg, 1, device=device, tp_group=tp_group, dp_group=dp_group,
                   backend=backend, input_seed=input_seed)
    torch.cuda.synchronize(device)
    base = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    for _ in range(2):
        one.fwd_bwd()
        one.grad_reduce()
        one.optimizer_step()
    torch.cuda.synchronize(device)
    per_layer = torch.cuda.max_memory_allocated(device)  # states + activations of one layer
    del one
    torch.cuda.empty_cache()
    free, total = torch.cuda.mem_get_info(device)
    fit = max(1, math.floor(GPU_MEMORY_FILL * free / max(per_layer, 1)))
    n = min(fit, limit)
    if tp_group is not None:  # every shard of a layer must exist: the smallest count wins
        t = torch.tensor([n], device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MIN, group=tp_group)
        n = int(t.item())
    return n, (f"{n} layer(s): one layer needs {per_layer / 2**30:.2f} GiB (weights, fp32 "
               f"master and AdamW state, activations; {base / 2**30:.2f} GiB before its first "
               f"step), {fit} fit in {GPU_MEMORY_FILL:.0%} of the {free / 2**30:.1f} GiB free; "
               f"at most {limit} (the model's layers, and {MAX_GPU_LAYERS}: per-layer time "
               "stops changing after a few)")


# bf16 weight and gradient, fp32 master weight, its gradient and two AdamW moments
STATE_BYTES_PER_PARAM = 20


def layer_params(cfg: WorkloadConfig) -> int:
    """Parameters of one layer shard (tp), every expert counted."""
    h, d, tp = cfg.hidden, cfg.d_head, cfg.tp
    attn = h * (cfg.heads + 2 * cfg.kv_heads) * d // tp + cfg.heads * d * h // tp
    m = 3 if cfg.gated else 2
    if cfg.experts:
        mlp = (cfg.experts + cfg.shared_experts) * m * h * cfg.ffn_hidden // tp + h * cfg.experts
    else:
        mlp = m * h * cfg.ffn_hidden // tp
    return attn + mlp + 2 * h


def step_flop(cfg: WorkloadConfig, layers: int) -> float:
    """Forward + backward FLOP of one step of ``layers`` layers (3x the forward's: 2 per
    weight per token, and causal attention's QK^T and PV)."""
    tokens = cfg.micro_batch * cfg.seq_len
    attention = 2 * cfg.micro_batch * cfg.seq_len ** 2 * cfg.heads * cfg.d_head // cfg.tp
    idle = max(0, cfg.experts - cfg.experts_per_token)  # experts a token is not routed to
    active = layer_params(cfg) - idle * (3 if cfg.gated else 2) * cfg.hidden * cfg.ffn_hidden \
        // cfg.tp
    return 3.0 * layers * (2 * active * tokens + attention)


def _cpu_flop_per_s(cfg: WorkloadConfig) -> float | None:
    """This CPU's matmul rate in the run's dtype, from one 256^3 product (a quarter second
    where bf16 is emulated)."""
    try:
        a = torch.randn(256, 256, dtype=dtype_of(cfg))
        a @ a
        start = time.perf_counter()
        a @ a
        return 2 * 256**3 / max(time.perf_counter() - start, 1e-9)
    except Exception:  # noqa: BLE001 - an estimate that fails leaves the note without it
        return None


def _check_layers_fit(cfg: WorkloadConfig, device: torch.device) -> None:
    """Refused before any layer is built: one layer's state above GPU_MEMORY_FILL of the GPU,
    or on CPU the layers to build above that share of the machine (``_check_cpu_memory``)."""
    if device.type != "cuda":
        _check_cpu_memory(cfg)
        return
    need = layer_params(cfg) * STATE_BYTES_PER_PARAM
    total = torch.cuda.get_device_properties(device).total_memory
    if need > GPU_MEMORY_FILL * total:
        raise RuntimeError(
            f"one layer needs {need / 2**30:,.0f} GiB of weights, gradients and AdamW state "
            f"({layer_params(cfg) / 1e9:.2f}B parameters x {STATE_BYTES_PER_PARAM} bytes), more "
            f"than {GPU_MEMORY_FILL:.0%} of this GPU's {total / 2**30:,.0f} GiB: every expert "
            "lives on each GPU here (no expert parallelism). To fix: --tp to shard the layer, "
            "or probe a GPU with more memory")


def _check_cpu_memory(cfg: WorkloadConfig) -> None:
    """On CPU the layers live in the machine's memory, beside every other rank's on it: a
    DeepSeek-V3 layer (every expert: 11B parameters) grew past 11 GB of a laptop's memory
    before anything said it could not fit. Refused before any layer is built."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no such figure here: nothing to compare
        return
    layers = cfg.layers or CPU_LAYERS
    ranks = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1") or 1))
    one = layer_params(cfg) * STATE_BYTES_PER_PARAM
    need = layers * ranks * one
    if total > 0 and need > GPU_MEMORY_FILL * total:
        # (--tp shards a layer over processes of this same machine: no less memory in all)
        fix = ("--build-layers 1" if layers > 1 and ranks * one <= GPU_MEMORY_FILL * total
               else "probe it on a GPU node, what the workload probe is for")
        raise RuntimeError(
            f"{layers} layer(s) on each of {ranks} process(es) need {need / 2**30:,.0f} GiB of "
            f"weights, gradients and AdamW state ({layer_params(cfg) / 1e9:.2f}B parameters a "
            f"layer x {STATE_BYTES_PER_PARAM} bytes), more than {GPU_MEMORY_FILL:.0%} of this "
            f"machine's {total / 2**30:,.0f} GiB of memory. To fix: {fix}")


def measure(cfg: WorkloadConfig, *, device: torch.device, tp_group, dp_group, input_seed: int,
            said: Progress | None = None) -> dict[str, Any]:
    """Everything this rank measured, as plain values for the section (probes._workload_run);
    ``said`` tells each phase and step (probes._workload_watch)."""
    said = said or Progress()
    _check_layers_fit(cfg, device)
    if device.type == "cpu" and (note := cpu_half_note(cfg.run_precision,
                                                       cpu_has_native(cfg.run_precision))):
        said.warn(note)
    said.say("choosing the attention kernel")
    backend, backend_note = choose_backend(cfg, device)
    if cfg.layers is not None:
        layers, rule = cfg.layers, f"{cfg.layers} layer(s), as asked (--build-layers)"
    elif device.type != "cuda":
        layers, rule = CPU_LAYERS, f"{CPU_LAYERS} layers: on CPU a couple show the per-layer time"
    else:
        layers, rule = _layers_that_fit(cfg, device=device, tp_group=tp_group,
                                        dp_group=dp_group, backend=backend,
                                        input_seed=input_seed)
    said.say(f"building {layers} layer(s)")
    trainer = _Trainer(cfg, layers, device=device, tp_group=tp_group, dp_group=dp_group,
                       backend=backend, input_seed=input_seed)
    if device.type == "cpu":  # where one step can take minutes: said before the first
        said.expect(step_flop(cfg, layers), _cpu_flop_per_s(cfg))
    _phase_times(trainer, cfg.warmup, said=said, what="warm-up step")
    times = _phase_times(trainer, cfg.timed_steps, said=said, what="timed step")
    said.say("one more step to measure memory")
    memory = _memory_step(trainer)
    if cfg.profile:
        said.say(f"profiling {PROFILED_STEPS} forward + backward steps")
    shares, split_source = profile_split(trainer) if cfg.profile else (
        None, "not available: profiling was turned off (--no-profile)")
    fwd_bwd = [t[0] for t in times]
    steps = [sum(t) for t in times]
    return {"layers": layers, "layers_rule": rule, "backend": backend,
            "backend_note": backend_note, "optimizer": trainer.optimizer_name,
            "fwd_bwd": median(fwd_bwd), "fwd_bwd_p10": percentile(fwd_bwd, 10),
            "fwd_bwd_p90": percentile(fwd_bwd, 90), "step": median(steps),
            "step_p10": percentile(steps, 10), "step_p90": percentile(steps, 90),
            "grad_reduce": median([t[1] for t in times]) if dp_group is not None else None,
            "optimizer_seconds": median([t[2] for t in times]), "memory": memory,
            "shares": shares, "split_source": split_source}
