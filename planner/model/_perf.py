"""The vectorised performance model: step time and memory for many (cluster, plan) pairs.

Every input is a numpy array of one length K (one entry per cluster × parallel plan), so
``estimate`` (one cluster, ~1,000 plans) and ``plan`` (thousands of clusters) share one code
path with no Python loop per candidate. Notation: L layers, h hidden, a/a_kv heads, d head dim,
F FFN width, V vocab, s sequence, b micro-batch, c context-parallel degree, T = b·s/c tokens
per GPU per micro-batch, t/p/D tensor/pipeline/data parallel degrees, n = D·c the gradient
(and ZeRO sharding) group, m micro-batches per step. The software constants of the framework
profile (``SoftwareConstants``): e_g GEMM efficiency, f_e elementwise factor, o overlap of
data/context-parallel communication, o_t overlap of tensor-parallel communication, h_0 host
time per layer and micro-batch.

Time per micro-batch on one pipeline stage (L/p layers):
    matmul:     Σ_GEMM 3·max(2·T·K·N / (P_ach·e_g·η_K·η_wave), 2(TK+KN+TN)/B_hbm)  (fwd+2 bwd)
                η_K = (K/64)/(K/64 + 3) normalised at K=4096 (tile pipeline fill)
    attention:  flash: 3 · causal · w_s · 4·T·s·a·d/t / P_attn (achieved, per kernel)  (+1 fwd
                if selective/full recompute; w_s the sliding-window/chunk share of causal
                attention, 1 without); unfused: the same GEMMs without the causal skip
                at the GEMM rate, plus 3 · 8·a·T·s/t bytes of score/softmax traffic
    elementwise: 3 · f_e · 2·(14h + 3F)·T/t bytes / (B_hbm·η_mem)           (norms,
                residuals, rotary, activation function; bf16)
    TP:         (1 − o_t) · 4 all-reduce-equivalents of 2·T·h bytes: 2(t-1)/t·bytes/busbw + α
    CP:         ring attention: 3·(c−1) exchanges of K,V (4·T·a_kv·d/t bytes), hidden under
                the attention kernels up to o
    EP (MoE):   4 all-to-alls (6 with full recompute) of the GPU's T/t tokens to the ranks
                of their k experts: max(local·2hT/t / B_nvlink, remote·2hT/t / B_nic) + hop,
                remote = (N−1)(1−(1−1/N)^k) crossings for N = ep/g NVLink domains (one per
                remote domain, forwarded inside it), local = k(g−1)/ep + forwarded; hidden
                under at most o_e × the layer's compute (ep_comm_overlap), which it slows;
                + moe_overhead_s_per_layer; permutation 2(2k+2)·T·h/t bytes per pass
    host:       max(kernels_per_layer · launch latency − GPU time, 0) + h_0
Step:  m·t_mb + (p − 1)·t_mb/v (interleaved 1F1B, v virtual stages) + exposed DP + optimizer
       step, then + cv·√(2 ln N) for the slowest of N GPUs (t_mb: the last stage's ⌈L/p⌉
       layers and the output head, the slowest stage); overlapped communication slows
       compute by its SM share; collectives pay NCCL ring/tree hop latency per bucket.
       Gradient reduction over n (hierarchical: 2(k−1)/k·S/busbw_intra + 2(n'−1)/n'·(S/k)/B_nic
       for k group members per node and n' nodes), by ZeRO stage:
    0: all-reduce after the last micro-batch, hidden under its backward up to o
    1: reduce-scatter under the last backward + all-gather of updated weights under the next
       step's first forward (distributed optimizer)
    2: reduce-scatter after every micro-batch's backward, all-gather once per step
    3: per micro-batch all-gather (forward), all-gather + reduce-scatter (backward), each
       hidden under that pass up to o (FSDP FULL_SHARD / ZeRO-3)
Memory per GPU: ``_memory`` (Korthikanti et al. 2022, arXiv:2205.05198, Table 2, adapted
to gated FFNs, GQA and FlashAttention).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._assumptions import GEMM_TILE_M, GEMM_TILE_N, Assumptions, SoftwareConstants
from ._memory import (
    expert_layout,
    expert_parallel,
    memory_terms,
    params_per_gpu,
    virtual_stages,
)
from ._scalars import ModelScalars

if TYPE_CHECKING:
    import numpy as np

RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2}
RECOMPUTE_NAMES = {v: k for k, v in RECOMPUTE_CODES.items()}
OPTIMIZER_STEP_BYTES = {"adamw": 30, "sgd": 20, "adafactor": 16}  # bytes touched / param
CHECKPOINT_BYTES = {"adamw": 14, "sgd": 10, "adafactor": 6}  # bf16 weights + fp32 state


def _eta_k(k: np.ndarray, A: Assumptions) -> np.ndarray:
    import numpy as np

    steps = k / A.gemm_tile_k
    ref = (4096 / A.gemm_tile_k) / (4096 / A.gemm_tile_k + A.gemm_tile_overhead_steps)
    return np.minimum(1.0, steps / (steps + A.gemm_tile_overhead_steps) / ref)


def _gemm_time(T, K, N, flops_rate, bw, sm=None):
    """Roofline time of one (T×K)·(K×N) bf16 GEMM with wave quantization; arrays broadcast.

    Output tiles (128×256) run in waves over the SMs; a partial last wave leaves SMs idle:
    efficiency = waves / ceil(waves)."""
    import numpy as np

    flops = 2.0 * T * K * N
    bytes_ = 2.0 * (T * K + K * N + T * N)
    if sm is not None:
        waves = np.ceil(T / GEMM_TILE_M) * np.ceil(N / GEMM_TILE_N) / sm
        flops_rate = flops_rate * waves / np.ceil(waves)
    return np.maximum(flops / flops_rate, bytes_ / bw)


def evaluate(ms: ModelScalars, A: Assumptions, *, tp, pp, dp, zero, mb, rc, gpus_per_node,
             matmul_tflops, attention_tflops, hbm_gb_per_s, memory_gib, intra_busbw_gb_per_s,
             nic_gb_per_s_per_gpu, cp=None, vp=None, gbs=None, sm_count=None,
             hop_latency_s=None, sw: SoftwareConstants | None = None,
             layer_scale=None, ep=None, nvlink_domain_gpus=None,
             measured_memory: dict | None = None) -> dict[str, np.ndarray]:
    """Step time, its breakdown and memory per GPU for each entry. All arrays length K.

    ``cp`` (default 1), ``ep`` (expert parallel degree, default gcd(dp, experts)),
    ``nvlink_domain_gpus`` (default the node), ``vp`` (default: the largest of 4, 2, 1 dividing
    a stage's layers, or 1 when the framework does not interleave) and ``gbs`` (sequences per
    step, default the workload's) may vary per entry. ``sm_count`` (None: unknown) enables wave
    quantization of GEMMs. ``sw`` defaults to the workload's framework profile in ``A``.
    ``layer_scale`` (per entry, default 1) multiplies each layer's GPU and host work per
    micro-batch (GEMMs, attention, elementwise kernels, launch floor): a workload probe's
    measured / modelled per-layer time for that shape (``_layer_model``); communication and the
    head stay modelled. ``measured_memory`` scales the activations the same probe measured
    (``_memory.memory_by_recompute``).
    """
    import numpy as np

    f = np.float64
    sw = sw or A.software(ms.framework)
    sm = None if sm_count is None else np.asarray(sm_count, dtype=f)
    if hop_latency_s is None:
        hop_latency_s = A.inter_node_latency_s

    def gemm(T, K, N, flops_rate, bw):
        return _gemm_time(T, K, N, flops_rate, bw, sm)

    tp, pp, dp, mb, zero, rc = (np.asarray(x, dtype=f) for x in (tp, pp, dp, mb, zero, rc))
    cp = np.ones_like(tp) if cp is None else np.asarray(cp, dtype=f)
    gbs = np.full_like(tp, ms.gbs_seqs) if gbs is None else np.asarray(gbs, dtype=f)
    G = np.asarray(gpus_per_node, dtype=f)
    P = np.asarray(matmul_tflops, dtype=f) * 1e12
    P_attn = np.asarray(attention_tflops, dtype=f) * 1e12
    B_hbm = np.asarray(hbm_gb_per_s, dtype=f) * 1e9
    B_mem = B_hbm * A.memory_bandwidth_efficiency
    B_intra = np.asarray(intra_busbw_gb_per_s, dtype=f) * 1e9
    B_nic = np.maximum(np.asarray(nic_gb_per_s_per_gpu, dtype=f) * 1e9, 1.0)
    h, s, V, d, a, a_kv = ms.h, ms.s, ms.V, ms.d, ms.a, ms.a_kv
    T = mb * s / cp  # tokens per GPU per micro-batch: context parallelism splits sequences
    m = np.ceil(gbs / (dp * mb))
    layers_stage = np.ceil(ms.L / pp)
    ep = expert_parallel(ms, dp) if ep is None else np.asarray(ep, dtype=f)
    D = G if nvlink_domain_gpus is None else np.maximum(G, np.asarray(nvlink_domain_gpus,
                                                                      dtype=f))
    vpp = virtual_stages(ms.L, pp) if vp is None else np.where(
        pp > 1, np.asarray(vp, dtype=f), 1.0)
    if ms.E:  # routed experts split over `shards` GPUs, held by `replicas` (``expert_layout``)
        shards, replicas, fold = expert_layout(tp, dp, cp, ep)

    # ---- matmul time per layer per micro-batch (forward), roofline per GEMM ----------
    eff = P * sw.gemm_efficiency
    eta_h = _eta_k(np.full_like(tp, h), A)
    if ms.attn_custom:
        # Attention given by its parameter count (MLA's low-rank projections): one GEMM
        # with the same FLOPs and weights, hidden → attn_params/hidden.
        t_qkv = gemm(T, h, ms.attn_params / h / tp, eff * eta_h, B_hbm)
        t_o = np.zeros_like(tp)
    else:
        t_qkv = gemm(T, h, (a + 2 * a_kv) * d / tp, eff * eta_h, B_hbm)
        t_o = gemm(T, a * d / tp, h, eff * _eta_k(a * d / tp, A), B_hbm)
    if ms.E == 0:
        dense_F = ms.F_act
        t_up = gemm(T, h, (ms.m_mat - 1) * dense_F / tp, eff * eta_h, B_hbm)
        t_down = gemm(T, dense_F / tp, h, eff * _eta_k(dense_F / tp, A), B_hbm)
        t_mlp = t_up + t_down
    else:
        # Routed experts: E/ep local experts, each sees T·k·ep/E tokens (small GEMMs whose
        # weight reads can dominate: the roofline captures it). Shared experts are dense.
        T_e = T * ms.k * ep / ms.E
        n_local = ms.E / ep
        Fe = ms.F_e / tp
        t_exp = n_local * (gemm(T_e, h, (ms.m_mat - 1) * Fe, eff * eta_h, B_hbm)
                           + gemm(T_e, Fe, h, eff * _eta_k(Fe, A), B_hbm))
        t_mlp = ms.moe_fraction * t_exp
        if ms.S:
            shared_F = ms.S * ms.F_e / tp
            t_mlp = t_mlp + ms.moe_fraction * (
                gemm(T, h, (ms.m_mat - 1) * shared_F, eff * eta_h, B_hbm)
                + gemm(T, shared_F, h, eff * _eta_k(shared_F, A), B_hbm))
        if ms.moe_fraction < 1:
            Fd = ms.F_dense / tp
            t_mlp = t_mlp + (1 - ms.moe_fraction) * (
                gemm(T, h, (ms.m_mat - 1) * Fd, eff * eta_h, B_hbm)
                + gemm(T, Fd, h, eff * _eta_k(Fd, A), B_hbm))
    t_fwd_mm = t_qkv + t_o + t_mlp
    bwd_factor = 1.0 if ms.lora else 2.0  # LoRA: data-grad GEMMs only for frozen weights
    recompute_mm = np.where(rc == 2, 1.0, 0.0)
    t_matmul_layer = t_fwd_mm * (1.0 + bwd_factor + recompute_mm)
    if ms.adapter_fraction:  # LoRA adapters: 2 FLOPs per parameter and token forward, data-
        # and weight-grads backward (4), split as the layer's GEMMs over tp (skinny GEMMs:
        # counted at the layer's GEMM rate, a floor on their time)
        adapter_fwd = 2.0 * ms.adapter_params / ms.L * T / tp / eff
        t_matmul_layer = t_matmul_layer + adapter_fwd * (3.0 + recompute_mm)

    # ---- attention core ----------------------------------------------------------------
    # Each GPU's T query tokens attend to the whole sequence (context parallelism gathers
    # K and V around a ring); 4·T·s·a·d/t FLOPs forward, backward twice that. A flash kernel
    # skips the blocks a causal mask hides (causal_fraction) and those outside a sliding window
    # or chunk: attn_share_timed, the mean keys per query over full causal's (s + 1)/2 —
    # w − w(w − 1)/(2s) for a w-token window (``_workload.window_keys_per_query``), 1 without.
    # Unfused attention masks a window on the full score matrix: no FLOPs or memory saved.
    attn_passes = 3.0 + np.where(rc >= 1, 1.0, 0.0)
    if ms.flash:
        attn_flops_fwd = A.causal_fraction * ms.attn_share_timed * 4.0 * T * s * a * d / tp
        t_attn_layer = attn_passes * attn_flops_fwd / P_attn
        t_scores_layer = np.zeros_like(tp)
    else:
        # Unfused: batched GEMMs over the full score matrix (no causal skip), and the scores
        # go through HBM: write QKᵀ, softmax read+write, read for ·V (2 bytes each) forward.
        attn_flops_fwd = 4.0 * T * s * a * d / tp
        t_attn_layer = attn_passes * attn_flops_fwd / eff
        t_scores_layer = attn_passes * 8.0 * a * T * s / tp / B_mem

    # ---- elementwise (memory-bound) --------------------------------------------------
    elem_bytes_fwd = 2.0 * (14 * h + 3 * ms.F_act) * T / tp * sw.elementwise_factor
    elem_passes = 3.0 + np.where(rc == 2, 1.0, np.where(
        rc == 1, A.selective_recompute_elementwise_share, 0.0))
    t_elem_layer = elem_passes * elem_bytes_fwd / B_mem + t_scores_layer
    if ms.E:
        # Token permutation around the experts (gather into expert order before dispatch,
        # scatter back after combine): T/t tokens read and k copies written, then k read and
        # one written, in bf16, forward and again backward (the adjoint scatter/gather).
        perm_bytes = 2.0 * (2.0 * ms.k + 2.0) * T * h / tp * sw.elementwise_factor
        perm_passes = 2.0 + np.where(rc == 2, 1.0, 0.0)
        t_elem_layer = t_elem_layer + ms.moe_fraction * perm_passes * perm_bytes / B_mem

    # ---- communication per layer per micro-batch -------------------------------------
    tp_bytes = 2.0 * T * h
    n_tp_collectives = 4.0 + np.where(rc == 2, 2.0, 0.0)
    t_tp_raw = np.where(tp > 1, n_tp_collectives * (2 * (tp - 1) / tp * tp_bytes / B_intra
                                                     + A.intra_node_latency_s), 0.0)
    t_tp_layer = (1.0 - sw.tp_comm_overlap) * t_tp_raw
    if ms.E:
        # Each GPU dispatches its T/t tokens (bf16, h each) to the k experts' ranks and
        # combines them back: 4 all-to-alls per layer (6 with full recomputation). Of the ep
        # ranks, g share this GPU's NVLink domain; the rest sit in ep/g other domains. A
        # token crosses the network once per remote domain holding one of its k experts and
        # is forwarded inside it over NVLink (DeepEP / HybridEP, DeepSeek-V3 §3.2.2): with
        # uniform routing (forced balance) (N−1)·(1 − (1 − 1/N)^k) domains of N = ep/g.
        # NVLink and network run at once: the slower of the two.
        stride = tp * cp / fold  # GPUs between consecutive ranks of an expert group
        g_in = np.clip(np.floor(D / stride), 1.0, ep)
        n_dom = ep / g_in
        remote = np.where(n_dom > 1, (n_dom - 1) * (1 - (1 - 1 / n_dom) ** ms.k), 0.0)
        forwarded = ms.k * (ep - g_in) / ep * (g_in - 1) / g_in
        local = ms.k * (g_in - 1) / ep + forwarded
        token_bytes = 2.0 * h * T / tp
        t_a2a = np.maximum(local * token_bytes / B_intra, remote * token_bytes / B_nic) \
            + np.where(n_dom > 1, hop_latency_s, A.intra_node_latency_s)
        n_a2a = 4.0 + np.where(rc == 2, 2.0, 0.0)
        t_ep_raw = ms.moe_fraction * n_a2a * np.where(ep > 1, t_a2a, 0.0)
    else:
        t_ep_raw = np.zeros_like(tp)
    # Context parallel ring (Megatron/TE, torchtitan): c−1 exchanges of this GPU's K and V
    # forward, twice that backward (K, V and their gradients); inside the node when t·c fits.
    cp_bw = np.where(tp * cp <= D, B_intra, B_nic)
    t_cp_raw = np.where(cp > 1, 3.0 * (cp - 1) * 4.0 * T * a_kv * d / tp / cp_bw
                        + 3.0 * (cp - 1) * A.intra_node_latency_s, 0.0)
    t_cp_layer = np.maximum(0.0, t_cp_raw - sw.comm_overlap * t_attn_layer)

    compute_layer = t_matmul_layer + t_attn_layer
    launch_floor = A.kernels_per_layer * A.kernel_launch_s
    gpu_layer = compute_layer + t_elem_layer
    launch_excess = np.maximum(0.0, launch_floor - gpu_layer) + sw.host_overhead_s_per_layer
    if ms.E:
        launch_excess = launch_excess + ms.moe_fraction * A.moe_overhead_s_per_layer
    if layer_scale is not None:
        k = np.asarray(layer_scale, dtype=f)
        compute_layer, t_elem_layer, launch_excess = (compute_layer * k, t_elem_layer * k,
                                                      launch_excess * k)

    # Expert-parallel all-to-all hidden under the layer's compute (another micro-batch's,
    # as Megatron's a2a overlap, DeepEP and DualPipe schedule it): at most that share of the
    # compute; what is hidden still slows compute while it runs (overlap_compute_slowdown).
    ep_hidden = np.minimum(t_ep_raw, A.ep_comm_overlap * compute_layer)
    t_ep_layer = t_ep_raw - ep_hidden * (1.0 - A.overlap_compute_slowdown)

    # Output head on the pipeline's last stage (Megatron's default split: L/p layers on
    # every stage, the head with the last): that stage is the slowest, and 1F1B runs at the
    # pace of its slowest stage, so the head counts whole in the per-micro-batch time.
    head_fwd = gemm(T, h, V / tp, eff * eta_h, B_hbm)
    head = head_fwd * (1.0 + bwd_factor)

    compute_mb = layers_stage * compute_layer + head
    other_mb = layers_stage * (t_elem_layer + launch_excess)
    tp_mb = layers_stage * (t_tp_layer + t_cp_layer)
    ep_mb = layers_stage * t_ep_layer
    # Pipeline point-to-point: activations forward, gradients back, per stage boundary.
    pp_inside = tp * cp * pp <= D
    bw_pp = np.where(pp_inside, B_intra, B_nic)
    # Interleaved 1F1B (Megatron virtual pipeline stages, Narayanan et al. 2021 §2.2.2): each
    # GPU holds v chunks of L/(p·v) layers, cutting the bubble v-fold for v× the
    # point-to-point messages.
    pp_mb = np.where(pp > 1, vpp * 2.0 * 2.0 * T * h / tp / bw_pp, 0.0)
    t_mb = compute_mb + other_mb + tp_mb + ep_mb + pp_mb

    # ---- data parallel gradients / ZeRO gathers ------------------------------------------
    n = dp * cp  # context-parallel ranks hold the same weights: gradients reduce over both
    # Rank order tp → cp → dp → pp: an NVLink domain (a node, or an NVL72 rack) holds D/tp
    # members of each gradient group.
    k_in = np.minimum(n, np.maximum(1.0, D / tp))
    n_nodes_dp = np.maximum(1.0, n / k_in)

    def hierarchical(size, members, k, nodes):  # bandwidth term of a hierarchical all-reduce
        intra = np.where(k > 1, 2 * (k - 1) / k * size / B_intra, 0.0)
        inter = np.where(nodes > 1, 2 * (nodes - 1) / nodes * (size / k) / B_nic, 0.0)
        return np.where(members > 1, intra + inter, 0.0)

    if ms.E:
        # Dense parameters reduce over the n data/context-parallel copies; routed experts
        # over their replicas (expert data parallelism), whose members sit `shards` apart.
        dense_gpu, expert_gpu = params_per_gpu(ms, tp, pp, shards)
        params_gpu = dense_gpu + expert_gpu
        k_e = np.minimum(replicas, np.maximum(1.0, D / shards))
        nodes_e = np.maximum(1.0, replicas / k_e)

        def all_reduce(size):  # size: bytes per parameter × parameters, split by group
            share = expert_gpu / params_gpu
            return (hierarchical(size * (1 - share), n, k_in, n_nodes_dp)
                    + hierarchical(size * share, replicas, k_e, nodes_e))

        opt_params = dense_gpu / np.where(zero >= 1, n, 1.0) + expert_gpu / np.where(
            zero >= 1, replicas, 1.0)
    else:
        params_gpu, _ = params_per_gpu(ms, tp, pp)

        def all_reduce(size):
            return hierarchical(size, n, k_in, n_nodes_dp)

        opt_params = params_gpu / np.where(zero >= 1, n, 1.0)  # the local optimizer shard
    grad_bytes = params_gpu * ms.trainable_fraction * A.grad_reduce_bytes
    weight_bytes = params_gpu * 2.0  # ZeRO-3 gathers every weight before using it
    # ZeRO-1/2 gather what the optimizer updated: the trainable share (a LoRA run's adapters,
    # not its frozen base, which every rank holds whole)
    updated_bytes = weight_bytes * ms.trainable_fraction

    # Latency: NCCL runs reduce-scatter/all-gather as rings (one network hop per node in the
    # ring) and large all-reduces as rings or trees (2·log2 hops); gradients travel in
    # buckets, each paying its own latency. This is what makes small models at large scale
    # inefficient.
    hop = np.asarray(hop_latency_s, dtype=f)
    ring_hops = np.maximum(n_nodes_dp - 1, 0.0) * hop
    tree_hops = 2 * np.ceil(np.log2(np.maximum(n_nodes_dp, 1.0))) * hop
    # Plain/ZeRO-1 data parallelism reduces gradients in fixed-size buckets; ZeRO-2/3 (FSDP)
    # issue one collective per wrapped unit — a transformer block under the usual wrapping
    # policy (torchtitan, llm-foundry, DeepSpeed stage-3 per-module hooks).
    buckets = np.where(zero >= 2, layers_stage, np.ceil(grad_bytes / A.grad_bucket_bytes))
    intra_lat = np.where(k_in > 1, A.intra_node_latency_s, 0.0)
    lat_ar = np.where(n > 1, buckets * (intra_lat + np.minimum(tree_hops, 2 * ring_hops)), 0.0)
    lat_half = np.where(n > 1, buckets * (intra_lat + ring_hops), 0.0)  # one RS or one AG
    t_ar = all_reduce(grad_bytes) + lat_ar  # gradients, one all-reduce
    # A ring all-reduce is a reduce-scatter then an all-gather, each moving half its bytes.
    t_rs = all_reduce(grad_bytes) / 2 + lat_half  # gradients, one reduce-scatter
    t_ag = all_reduce(weight_bytes) / 2 + lat_half  # weights, one all-gather
    t_ag_upd = all_reduce(updated_bytes) / 2 + lat_half  # the updated weights (ZeRO-1/2)
    # The passes communication hides under: their wall time (compute, elementwise work and
    # launch or host time the GPU waits for; NCCL runs on its own stream meanwhile). Counting
    # the GPU's work alone made faster HBM slower where kernel launches bound a layer (GPT-2
    # on 4,096 H200 0.3% slower than on H100: less elementwise time, less window, no less wall).
    work_mb = compute_mb + other_mb
    fwd_share = 1.0 / (1.0 + bwd_factor + recompute_mm)
    fwd_mb = work_mb * fwd_share
    bwd_mb = work_mb - fwd_mb
    o = sw.comm_overlap

    def hidden(comm, window):
        return np.minimum(comm, o * window)

    stage = zero.astype(np.intp)  # each row takes its ZeRO stage's expression
    if stage.size and ((stage != zero).any() or stage.min() < 0 or stage.max() > 3):
        raise ValueError("zero must be 0, 1, 2 or 3 in every entry")
    # Communication per step (bandwidth + latency) and the part of it hidden under compute.
    comm = np.choose(stage, [t_ar, t_rs + t_ag_upd, m * t_rs + t_ag_upd,
                             m * (2 * t_ag + t_rs)])
    hid = np.choose(stage, [
        hidden(t_ar, bwd_mb),
        hidden(t_rs, bwd_mb) + hidden(t_ag_upd, fwd_mb),
        m * hidden(t_rs, bwd_mb) + hidden(t_ag_upd, fwd_mb),
        m * (hidden(t_ag, fwd_mb) + hidden(t_ag + t_rs, bwd_mb))])
    dp_exposed = comm - hid

    # ---- optimizer step (memory-bound over the local shard) --------------------------
    t_opt = opt_params * ms.trainable_fraction * OPTIMIZER_STEP_BYTES[ms.optimizer] / B_mem

    # Overlapped communication still costs compute throughput while it runs.
    interference = A.overlap_compute_slowdown * hid

    compute_s = m * compute_mb
    tp_s = m * tp_mb
    ep_s = m * ep_mb
    bubble_s = (pp - 1) * t_mb / vpp
    dp_s = dp_exposed + interference
    base = compute_s + tp_s + ep_s + bubble_s + dp_s + m * (other_mb + pp_mb) + t_opt
    n_gpus = tp * pp * dp * cp
    straggle = base * A.gpu_speed_cv * np.sqrt(2 * np.log(np.maximum(n_gpus, 1.0)))
    other_s = m * (other_mb + pp_mb) + t_opt + straggle
    step = compute_s + tp_s + ep_s + bubble_s + dp_s + other_s

    mem = memory_terms(ms, A, tp=tp, pp=pp, dp=dp, zero=zero, mb=mb, rc=rc, cp=cp, vp=vpp,
                       gbs=gbs, memory_gib=memory_gib, ep=ep, measured=measured_memory)
    # the share of the step a per-layer measurement covers (the layers' own work)
    layer_s = m * layers_stage * (compute_layer + t_elem_layer + launch_excess)
    return {
        "step_s": step, "layer_s": layer_s, "compute_s": compute_s, "tp_comm_s": tp_s,
        "ep_comm_s": ep_s,
        "pp_bubble_s": bubble_s, "dp_comm_s": dp_s, "other_s": other_s, "micro_batches": m,
        "ep": ep, "layers_per_stage": layers_stage, "virtual_stages": vpp, **mem,
    }
