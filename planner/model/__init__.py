"""The performance model: what is trained (workload), on what (cluster), how fast and how sure.

Pure: data in, data out. Nothing here reads files or databases, prints, or mutates its inputs;
numpy loads on first use, so importing the package stays cheap. The three layers (physics,
software, operations), the range and the calibration are described in docs/design.md.

    Workload, Architecture, PlanPins, WorkloadSpec, build_workload   what is trained
    preset, preset_names, architecture_from_config, infer_architecture
    Cluster, build_cluster, reference_cluster, cluster_for_instance  what it runs on
    Assumptions, describe_assumptions                               every constant, sourced
    estimate, Estimate, ParallelPlan, TimeRange                     the answer for one cluster
    Calibration, Measurement, NO_CALIBRATION                        probe measurements
    WorkloadShape, shape_of, model_layer, hardware_for              one layer, as probed
    parse_count, parse_usd, parse_deadline                          quantities people type
    format_usd, format_chance, format_count, format_requirement     … and read
    PlannerError and its kinds                                      errors with field and fix

The vectorised pieces the optimizer and the benchmarks build on (``ModelScalars``,
``evaluate``, ``plan_grid``, ``prune``, ``run_model``, ``cluster_inputs`` …) are public too.
"""

from ._arch_overrides import ARCH_FIELDS
from ._arrays import distinct
from ._assumptions import (
    ATTENTION_FRACTION,
    INTER_NODE_EFFICIENCY,
    INTRA_NODE_EFFICIENCY,
    MAMF_FRACTION,
    Assumptions,
    SoftwareConstants,
    assumption_names,
    attention_key,
    describe_assumptions,
    gpu_family,
    overrides_note,
)
from ._calibration import (
    FAR_FROM_DEFAULT,
    KINDS,
    NO_CALIBRATION,
    NOTE_CAUTION,
    Calibration,
    CalibrationNote,
    Measurement,
    WorkloadMeasurement,
    reasons_by_figure,
)
from ._errors import (
    CalibrationError,
    HardwareError,
    NoFitError,
    PlannerError,
    WorkloadError,
    refer_to_fields,
)
from ._estimate import (
    checkpoint_bytes,
    estimate,
    range_sigma,
    reserve_message,
    summarise,
    workload_memory_ratios,
    workload_scales,
)
from ._frozen import freeze, thaw
from ._goodput import Goodput, goodput, goodput_arrays, goodput_fixed, goodput_over, outside_range
from ._grid import (
    CP_CHOICES,
    MB_CHOICES,
    PP_CHOICES,
    TP_CHOICES,
    best_index,
    least_memory,
    plan_grid,
    prune,
    run_model,
    seconds_per_sequence,
)
from ._hardware import (
    MAX_CLUSTER_GPUS,
    MAX_PLAN_GPUS,
    Cluster,
    cluster_for_instance,
    intra_link_for,
    reference_cluster,
)
from ._hfconfig import (
    MAX_CONFIG_BYTES,
    MAX_CONFIG_DEPTH,
    SIZE_LIMITS,
    architecture_from_config,
    config_file_error,
    family_note,
    read_model_config,
)
from ._inference import infer_architecture
from ._inputs import (
    MAX_GPU_MEMORY_GIB,
    ClusterInputs,
    can_time,
    cluster_inputs,
    inference_only_message,
    matmul_dtype,
    nic_by_nodes,
    nvlink_domain,
)
from ._layer_model import (
    LayerHardware,
    LayerModel,
    hardware_for,
    layer_flops,
    model_attention,
    model_layer,
    probe_options,
)
from ._memory import memory_terms, virtual_stages
from ._perf import CHECKPOINT_BYTES, RECOMPUTE_CODES, RECOMPUTE_NAMES, evaluate
from ._pin_checks import check_pins_fit_cluster, check_pins_fit_model
from ._presets import preset, preset_names
from ._probability import normal_quantile, probability_within, quantile
from ._records import Estimate, ParallelPlan, TimeRange, workload_dict
from ._scalars import ModelScalars
from ._shape import MAX_WORKLOAD_DISTANCE, WorkloadShape, comparable, shape_distance, shape_of
from ._shown import (
    below_shown,
    duration_unit,
    format_amount,
    format_chance,
    format_count,
    format_expected,
    format_figure,
    format_hours,
    format_hours_range,
    format_params,
    format_requirement,
    format_usd,
    format_usd_at_least,
)
from ._software import PROBE_LAYERS, PROFILES, FrameworkProfile, check_pins
from ._spec import MAX_SEQ_LEN, WorkloadSpec, build_cluster, build_workload
from ._units import (
    COUNT_LIMITS,
    MAX_DEADLINE_HOURS,
    MIN_DEADLINE_HOURS,
    parse_count,
    parse_deadline,
    parse_usd,
)
from ._workload import (
    ARCH_LIMITS,
    ATTENTION,
    FINETUNE,
    FRAMEWORKS,
    OPTIMIZERS,
    PRECISIONS,
    RECOMPUTE,
    ZERO_STAGES,
    Architecture,
    PlanPins,
    Workload,
    default_batch_sequences,
)

__all__ = [
    "ARCH_FIELDS", "ARCH_LIMITS", "ATTENTION", "ATTENTION_FRACTION", "CHECKPOINT_BYTES",
    "COUNT_LIMITS", "CP_CHOICES", "FAR_FROM_DEFAULT", "FINETUNE", "FRAMEWORKS",
    "INTER_NODE_EFFICIENCY",
    "INTRA_NODE_EFFICIENCY", "KINDS", "MAMF_FRACTION", "MAX_CLUSTER_GPUS", "MAX_CONFIG_BYTES",
    "MAX_PLAN_GPUS",
    "MAX_CONFIG_DEPTH", "MAX_DEADLINE_HOURS", "MAX_GPU_MEMORY_GIB", "MAX_SEQ_LEN",
    "MAX_WORKLOAD_DISTANCE", "MB_CHOICES", "MIN_DEADLINE_HOURS", "NOTE_CAUTION",
    "NO_CALIBRATION", "OPTIMIZERS",
    "PP_CHOICES", "PRECISIONS", "PROBE_LAYERS", "PROFILES", "RECOMPUTE", "RECOMPUTE_CODES",
    "RECOMPUTE_NAMES",
    "SIZE_LIMITS", "TP_CHOICES", "ZERO_STAGES", "Architecture", "Assumptions", "Calibration",
    "CalibrationError", "CalibrationNote", "Cluster", "ClusterInputs", "Estimate",
    "FrameworkProfile", "Goodput", "HardwareError", "LayerHardware", "LayerModel", "Measurement",
    "ModelScalars", "NoFitError", "ParallelPlan", "PlanPins", "PlannerError", "SoftwareConstants",
    "TimeRange", "Workload", "WorkloadError", "WorkloadMeasurement", "WorkloadShape",
    "WorkloadSpec", "architecture_from_config", "assumption_names", "attention_key",
    "below_shown", "best_index", "build_cluster", "build_workload", "can_time",
    "config_file_error", "check_pins",
    "check_pins_fit_cluster", "check_pins_fit_model", "checkpoint_bytes", "cluster_for_instance",
    "cluster_inputs", "comparable", "default_batch_sequences", "describe_assumptions", "distinct",
    "duration_unit", "estimate",
    "evaluate", "family_note", "format_amount", "format_chance", "format_count", "format_expected",
    "format_hours", "format_figure", "format_hours_range", "format_params", "format_requirement",
    "format_usd", "format_usd_at_least",
    "freeze", "goodput", "goodput_arrays", "goodput_fixed", "goodput_over", "gpu_family",
    "hardware_for", "infer_architecture",
    "inference_only_message",
    "intra_link_for", "layer_flops", "least_memory", "matmul_dtype", "memory_terms",
    "model_attention", "model_layer", "nic_by_nodes", "normal_quantile", "nvlink_domain",
    "outside_range",
    "overrides_note",
    "parse_count", "parse_deadline", "parse_usd", "plan_grid", "preset", "preset_names",
    "probability_within",
    "probe_options", "prune", "quantile", "range_sigma", "read_model_config",
    "reasons_by_figure", "refer_to_fields",
    "reference_cluster",
    "reserve_message",
    "run_model", "seconds_per_sequence", "shape_distance", "shape_of", "summarise", "thaw",
    "virtual_stages", "workload_dict", "workload_memory_ratios", "workload_scales",
]
