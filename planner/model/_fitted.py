"""Fitted constants of the time model, with their provenance. GENERATED — do not edit.

Software layer: `python benchmarks/fit_software.py --write` on
benchmarks/data/throughput.csv (296 rows: fms-fsdp 8, korthikanti-2022 8, llm-foundry 216, megatron-lm-readme 9, narayanan-2021 10, nemo 34, nemo-automodel 1, torchtitan 8, trainy 2).
In-sample median |error| 6.7%, max 24.0%; leave-one-source-out median |error| 6.1%, max 30.4%.
Profiles without calibration rows (deepspeed, hf) use the mean of the calibrated ones
and the worst calibrated σ widened by the spread between profiles (0.023).
MoE stage (dense constants fixed) on benchmarks/data/throughput_moe_rows.csv (49 rows):
in-sample median |error| 18.0%; leave-one-source-out 48.8%, leave-one-model-out 21.7% (max 169.0%).
Operations layer: `python benchmarks/fit_operations.py --write` (see its docstring).
Software layer written 2026-12-05.
"""

GEMM_EFFICIENCY = {"megatron": 0.945463, "fsdp": 0.844748, "deepspeed": 0.895105, "hf": 0.895105}
ELEMENTWISE_FACTOR = {"megatron": 2.02342, "fsdp": 1.62308, "deepspeed": 1.82325, "hf": 1.82325}
COMM_OVERLAP = {"megatron": 0.9, "fsdp": 0.9, "deepspeed": 0.9, "hf": 0.9}  # not identified: fixed
TP_COMM_OVERLAP = {"megatron": 0, "fsdp": 0, "deepspeed": 0, "hf": 0}  # not identified: fixed
HOST_OVERHEAD_S_PER_LAYER = {"megatron": 0, "fsdp": 0, "deepspeed": 0, "hf": 0}  # not identified: fixed
ATTENTION_EFFICIENCY = 0.858378
FP8_RELATIVE_FRACTION = 0.798669
EP_COMM_OVERLAP = 0.51136
MOE_OVERHEAD_S_PER_LAYER = 0.00406503
MOE_THROUGHPUT_LOG_SIGMA = 0.561128
THROUGHPUT_LOG_SIGMA = {"megatron": 0.117826, "fsdp": 0.082141, "deepspeed": 0.120141, "hf": 0.120141}
LOSO_MEDIAN_ABS_ERROR = 0.0605824
FAILURE_RATE_PER_GPU_HOUR = 5.298023426017251e-05
RESTART_MINUTES = 18.75
EVALUATION_FRACTION = 0.0075
OPERATIONAL_LOSS_FRACTION = 0.0
OPERATIONS_LOG_SIGMA = 0.23671428936438677
