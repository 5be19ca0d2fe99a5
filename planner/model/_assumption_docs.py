"""What each model constant means, in what unit and where its value comes from: the text
`gpuplan estimate --list-assumptions` prints beside each constant of ``Assumptions``."""

from __future__ import annotations

# What each constant means, in what unit, and where its value comes from (for
# `gpuplan estimate --list-assumptions`). "fitted" constants come from benchmarks/.
DOCS: dict[str, tuple[str, str]] = {
    "matmul_fraction": ("share of peak", "achievable dense matmul per GPU family: published "
                        "MAMF measurements (stas00/ml-engineering)"),
    "default_matmul_fraction": ("share of peak", "families without a published MAMF"),
    "fp8_relative_fraction": ("share", "fp8 GEMMs' fraction relative to bf16's (fitted)"),
    "gemm_tile_k": ("elements", "GEMM main-loop tile depth (CUTLASS/cuBLAS)"),
    "gemm_tile_overhead_steps": ("tiles", "GEMM pipeline prologue/epilogue steps"),
    "attention_fraction": ("share of peak", "attention kernels' fwd+bwd rate: FlashAttention-2/3"
                           " papers, per kernel class"),
    "attention_efficiency": ("factor", "attention rate in training vs the kernel benchmark "
                             "(fitted)"),
    "attention_ramp_tokens": ("tokens", "attention kernels' short-sequence slowdown "
                              "(FlashAttention-3 paper figures)"),
    "causal_fraction": ("share", "score blocks a causal flash kernel computes"),
    "memory_bandwidth_efficiency": ("share", "achievable HBM bandwidth (STREAM-like copies)"),
    "selective_recompute_elementwise_share": ("share", "forward elementwise bytes selective "
                                              "recomputation repeats (the activation "
                                              "function; assumption)"),
    "kernel_launch_s": ("s", "PyTorch eager op dispatch time"),
    "kernels_per_layer": ("kernels", "kernels per transformer block, fwd+bwd"),
    "gemm_efficiency": ("share", "training GEMMs vs the achievable matmul rate, per framework "
                        "(fitted)"),
    "elementwise_factor": ("factor", "non-matmul bytes vs a fully fused implementation, per "
                           "framework (fitted)"),
    "comm_overlap": ("share", "data/context-parallel communication hidden, per framework "
                     "(fitted)"),
    "tp_comm_overlap": ("share", "tensor-parallel communication hidden, per framework"),
    "ep_comm_overlap": ("share", "share of a MoE layer's compute that hides its expert-"
                        "parallel all-to-all (fitted on MoE rows)"),
    "moe_overhead_s_per_layer": ("s", "GPU time per MoE layer and micro-batch that does not "
                                 "scale with tokens: routing-count sync, router and "
                                 "permutation launches (fitted on MoE rows)"),
    "moe_throughput_log_sigma": ("log", "spread of measured/modelled MoE throughput: the MoE "
                                 "fit's held-out residuals"),
    "host_overhead_s_per_layer": ("s", "host time per layer and micro-batch not hidden, per "
                                  "framework (fitted)"),
    "throughput_log_sigma": ("log", "spread of measured/modelled throughput: leave-one-source-"
                             "out residuals, per framework"),
    "intra_node_efficiency": ("share", "all-reduce bus bandwidth vs link rate, per topology "
                              "(nccl-tests)"),
    "inter_node_efficiency": ("share", "bus bandwidth vs network line rate, per fabric"),
    "nvlink_domain_gpus": ("GPUs", "GPUs one NVLink domain joins across instances, per "
                           "accelerator (GB200 NVL72: 72); others: one node"),
    "intra_node_latency_s": ("s", "NCCL small-message latency on NVLink"),
    "inter_node_latency_s": ("s", "one RDMA hop of a NCCL ring/tree step"),
    "inter_node_latency_tcp_s": ("s", "one TCP hop of a NCCL ring/tree step"),
    "grad_bucket_bytes": ("bytes", "gradient bucket (PyTorch DDP bucket_cap_mb=25)"),
    "overlap_compute_slowdown": ("share", "compute slowdown while NCCL overlaps it"),
    "gpu_speed_cv": ("share", "GPU-to-GPU speed variation (Sinha et al., SC'22)"),
    "grad_reduce_bytes": ("bytes", "gradient reduction dtype size (bf16, as NeMo's "
                          "performance recipes; 4 = fp32, Megatron-LM's default, which on "
                          "megatron also holds gradients in fp32)"),
    "runtime_reserve_gib": ("GiB", "CUDA context + NCCL buffers per GPU"),
    "usable_memory_fraction": ("share", "memory usable after allocator fragmentation"),
    "logits_bytes": ("bytes", "fp32 logits buffer per vocabulary entry"),
    "failure_rate_per_gpu_hour": ("1/GPU-h", "hardware failures (published operations "
                                  "reports)"),
    "restart_minutes": ("min", "detect, reschedule and reload after a failure"),
    "checkpoint_write_gb_per_s_per_node": ("GB/s", "checkpoint write per node"),
    "checkpoint_read_gb_per_s_per_node": ("GB/s", "checkpoint read per node"),
    "evaluation_fraction": ("share", "calendar time spent on evaluation"),
    "operational_loss_fraction": ("share", "other calendar losses (published effective-"
                                  "training-time reports)"),
    "operations_log_sigma": ("log", "spread of calendar vs modelled time (operations data)"),
    "spot_interruptions_per_hour": ("1/instance-h", "spot interruptions when an offer has no "
                                    "rate of its own, per cloud (catalog.CLOUDS: its source)"),
    "spot_restart_minutes": ("min", "re-acquire spot capacity and reload"),
}
