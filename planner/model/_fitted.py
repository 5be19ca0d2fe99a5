"""Fitted constants of the time model, with their provenance. GENERATED — do not edit.

Software layer: `python benchmarks/fit_software.py --write` on
benchmarks/data/throughput.csv (296 rows: fms-fsdp 8, korthikanti-2022 8, llm-foundry 216, megatron-lm-readme 9, narayanan-2021 10, nemo 34, nemo-automodel 1, torchtitan 8, trainy 2).
In-sample median |error| 7.0%, max 34.4%; leave-one-source-out median |error| 5.9%, max 35.6%.
Profiles without calibration rows (deepspeed, hf) use the mean of the calibrated ones
and the worst calibrated σ widened by the spread between profiles (0.025).
MoE stage (dense constants fixed) on benchmarks/data/throughput_moe_rows.csv (49 rows):
in-sample median |error| 19.5%; leave-one-source-out 53.9%, leave-one-model-out 22.3% (max 161.0%).
Operations layer: `python benchmarks/fit_operations.py --write` (see its docstring).
Software layer written 2026-12-03.
"""

GEMM_EFFICIENCY = {"megatron": 0.927099, "fsdp": 0.820703, "deepspeed": 0.873901, "hf": 0.873901}
ELEMENTWISE_FACTOR = {"megatron": 2.0474, "fsdp": 1.56035, "deepspeed": 1.80387, "hf": 1.80387}
COMM_OVERLAP = {"megatron": 0.9, "fsdp": 0.9, "deepspeed": 0.9, "hf": 0.9}  # not identified: fixed
TP_COMM_OVERLAP = {"megatron": 0, "fsdp": 0, "deepspeed": 0, "hf": 0}  # not identified: fixed
HOST_OVERHEAD_S_PER_LAYER = {"megatron": 0, "fsdp": 0, "deepspeed": 0, "hf": 0}  # not identified: fixed
ATTENTION_EFFICIENCY = 0.872709
FP8_RELATIVE_FRACTION = 0.792959
EP_COMM_OVERLAP = 0.502633
MOE_OVERHEAD_S_PER_LAYER = 0.00427121
MOE_THROUGHPUT_LOG_SIGMA = 0.584305
THROUGHPUT_LOG_SIGMA = {"megatron": 0.115101, "fsdp": 0.0848609, "deepspeed": 0.11773, "hf": 0.11773}
LOSO_MEDIAN_ABS_ERROR = 0.0592852
FAILURE_RATE_PER_GPU_HOUR = 5.298023426017251e-05
RESTART_MINUTES = 18.75
EVALUATION_FRACTION = 0.0075
OPERATIONAL_LOSS_FRACTION = 0.0
OPERATIONS_LOG_SIGMA = 0.23671428936438677
