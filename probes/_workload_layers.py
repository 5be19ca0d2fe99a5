"""The user's transformer layers in plain PyTorch (torch-only; imported lazily).

One layer, Llama-style (pre-norm, no biases)::

    x = x + O(attention(rope(Q), rope(K), V))   Q, K, V from one fused projection of RMSNorm(x)
    x = x + down(act(up(RMSNorm(x))))             gated: silu(gate) * up from one fused GEMM;
                                                  not gated: gelu; MoE: top-k of E experts

- Attention: ``torch.nn.functional.scaled_dot_product_attention`` (causal) under one SDPA
  backend (``sdpa_kernel``); grouped-query attention repeats each K/V head over its group of
  query heads before the kernel, as torchtitan and Hugging Face's Llama do.
- MoE: a router (h -> E), softmax, top-k, weights renormalised over the k (Mixtral); every
  expert runs on the tokens routed to it (a per-expert gather, FFN and weighted scatter-add,
  as Hugging Face's Mixtral); all experts live on this GPU (no expert parallelism, no
  all-to-all); shared experts are one dense FFN of their combined width (Megatron-Core).
- Tensor parallelism (Megatron-LM, Shoeybi et al. 2019): the fused QKV and up projections are
  split by output columns, O and down by input rows; the row-parallel outputs are all-reduced
  forward, the column-parallel inputs' gradients backward (the f/g operators). No sequence
  parallelism.
- Recomputation (torch.utils.checkpoint, non-reentrant): ``full`` keeps each layer's input and
  recomputes the layer in backward; ``selective`` recomputes the attention core and the
  activation function (what the planner's memory model drops for it).
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from probes._workload_config import WorkloadConfig

ATTENTION_RANGE = "gpuplan::attention"  # the profiler range around the attention core
ROPE_THETA = 500000.0  # Llama 3


class SavedBytes:
    """Counts the storages kept for backward: autograd's saved tensors (via
    saved_tensors_hooks) and the inputs activation checkpoints keep, each storage once, the
    parameters and buffers in ``exclude`` left out."""

    def __init__(self, exclude: set[int]) -> None:
        self.exclude, self.seen = exclude, {}

    def add(self, t: torch.Tensor) -> None:
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr not in self.exclude and ptr not in self.seen:
            self.seen[ptr] = storage.nbytes()

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        self.add(t)
        return t

    @property
    def total(self) -> int:
        return sum(self.seen.values())


SAVED_COUNTERS: list[SavedBytes] = []  # the active counter, when a memory step is running


def _checkpoint(fn, *args):
    if SAVED_COUNTERS:  # a checkpoint keeps its inputs until the recomputation
        for a in args:
            if isinstance(a, torch.Tensor):
                SAVED_COUNTERS[-1].add(a)
    return checkpoint(fn, *args, use_reentrant=False)


class _CopyToTP(torch.autograd.Function):
    """f: identity forward, all-reduce of the gradient backward (column-parallel input)."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


class _ReduceFromTP(torch.autograd.Function):
    """g: all-reduce forward (row-parallel output), identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.contiguous()
        dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _to_tp(x, group):
    return x if group is None else _CopyToTP.apply(x, group)


def _from_tp(x, group):
    return x if group is None else _ReduceFromTP.apply(x, group)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    if hasattr(F, "rms_norm"):  # torch >= 2.4
        return F.rms_norm(x, (x.shape[-1],), weight, eps)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotary_tables(seq_len: int, head_dim: int, *, device, dtype) -> tuple[torch.Tensor, ...]:
    inv = 1.0 / ROPE_THETA ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim)
    freqs = torch.outer(torch.arange(seq_len, device=device).float(), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype)[None, :, None, :], emb.sin().to(dtype)[None, :, None, :]


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


class Attention(nn.Module):
    def __init__(self, cfg: WorkloadConfig, group, backend) -> None:
        super().__init__()
        tp = cfg.tp
        self.a, self.kv, self.d = cfg.heads // tp, cfg.kv_heads // tp, cfg.d_head
        self.group, self.backend, self.selective = group, backend, cfg.recompute == "selective"
        self.qkv = nn.Linear(cfg.hidden, (self.a + 2 * self.kv) * self.d, bias=False)
        self.o = nn.Linear(self.a * self.d, cfg.hidden, bias=False)

    def _core(self, q, k, v):
        from torch.nn.attention import sdpa_kernel

        with torch.profiler.record_function(ATTENTION_RANGE), sdpa_kernel([self.backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        x = _to_tp(x, self.group)
        qkv = self.qkv(x).view(b, s, self.a + 2 * self.kv, self.d)
        q, k, v = qkv.split((self.a, self.kv, self.kv), dim=2)
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        if self.kv != self.a:
            group = self.a // self.kv
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        out = _checkpoint(self._core, q, k, v) if self.selective else self._core(q, k, v)
        out = out.transpose(1, 2).reshape(b, s, self.a * self.d)
        return _from_tp(self.o(out), self.group)


class Mlp(nn.Module):
    """One FFN of ``width`` (already this shard's); TP operators only when ``group`` is set."""

    def __init__(self, hidden: int, width: int, *, gated: bool, selective: bool,
                 group=None) -> None:
        super().__init__()
        self.gated, self.selective, self.group = gated, selective, group
        self.up = nn.Linear(hidden, (2 if gated else 1) * width, bias=False)
        self.down = nn.Linear(width, hidden, bias=False)

    def _act(self, u):
        if self.gated:
            gate, up = u.chunk(2, dim=-1)
            return F.silu(gate) * up
        return F.gelu(u, approximate="tanh")

    def forward(self, x):
        x = _to_tp(x, self.group)
        u = self.up(x)
        h = _checkpoint(self._act, u) if self.selective else self._act(u)
        return _from_tp(self.down(h), self.group)


class Moe(nn.Module):
    def __init__(self, cfg: WorkloadConfig, group) -> None:
        super().__init__()
        tp, selective = cfg.tp, cfg.recompute == "selective"
        self.k, self.group = cfg.experts_per_token, group
        self.router = nn.Linear(cfg.hidden, cfg.experts, bias=False)
        self.experts = nn.ModuleList(
            Mlp(cfg.hidden, cfg.ffn_hidden // tp, gated=cfg.gated, selective=selective)
            for _ in range(cfg.experts))
        self.shared = Mlp(cfg.hidden, cfg.shared_experts * cfg.ffn_hidden // tp,
                          gated=cfg.gated, selective=selective) if cfg.shared_experts else None

    def forward(self, x):
        shape = x.shape
        x = _to_tp(x, self.group)
        flat = x.reshape(-1, shape[-1])
        probs = self.router(flat).softmax(dim=-1, dtype=torch.float32)
        weights, chosen = torch.topk(probs, self.k, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            token, slot = torch.where(chosen == e)
            if token.numel():
                y = expert(flat[token]) * weights[token, slot, None]
                out.index_add_(0, token, y)
        if self.shared is not None:
            out = out + self.shared(flat)
        return _from_tp(out.view(shape), self.group)


class Layer(nn.Module):
    def __init__(self, cfg: WorkloadConfig, group, backend) -> None:
        super().__init__()
        self.norm1 = nn.Parameter(torch.ones(cfg.hidden))
        self.norm2 = nn.Parameter(torch.ones(cfg.hidden))
        self.attn = Attention(cfg, group, backend)
        self.mlp = Moe(cfg, group) if cfg.experts else Mlp(
            cfg.hidden, cfg.ffn_hidden // cfg.tp, gated=cfg.gated,
            selective=cfg.recompute == "selective", group=group)

    def forward(self, x, cos, sin):
        x = x + self.attn(rms_norm(x, self.norm1), cos, sin)
        return x + self.mlp(rms_norm(x, self.norm2))


class Stack(nn.Module):
    """``layers`` layers; ``full`` recomputation checkpoints each one."""

    def __init__(self, cfg: WorkloadConfig, layers: int, group, backend, *, device,
                 dtype) -> None:
        super().__init__()
        self.full = cfg.recompute == "full"
        self.layers = nn.ModuleList(Layer(cfg, group, backend) for _ in range(layers))
        cos, sin = rotary_tables(cfg.seq_len, cfg.d_head, device=device, dtype=dtype)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        for module in self.modules():  # Llama-style initialisation, std 0.02
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, std=0.02 / math.sqrt(2 * max(layers, 1)))
        self.to(device=device, dtype=dtype)

    def forward(self, x):
        for layer in self.layers:
            x = _checkpoint(layer, x, self.cos, self.sin) if self.full else layer(
                x, self.cos, self.sin)
        return x


def build(cfg: WorkloadConfig, layers: int, *, group, backend, device, dtype) -> Stack:
    return Stack(cfg, layers, group, backend, device=device, dtype=dtype)


def exclude_storages(model: nn.Module) -> set[int]:
    return {t.untyped_storage().data_ptr()
            for t in (*model.parameters(), *model.buffers())}


def sdpa_backend(name: str) -> Any:
    """The SDPBackend member; RuntimeError when this torch has no such backend."""
    from torch.nn.attention import SDPBackend

    member = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
              "cudnn": "CUDNN_ATTENTION", "math": "MATH"}[name]
    if not hasattr(SDPBackend, member):  # cuDNN attention arrived in torch 2.5
        raise RuntimeError(f"torch {torch.__version__} has no SDPBackend.{member}")
    return getattr(SDPBackend, member)
