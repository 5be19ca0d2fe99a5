"""Launch files: SkyPilot and dstack task YAML and torchrun scripts, for the probes and for a
recommended training plan, and what a probe run costs before it is launched.

    spec_for_instance, spec_for_recommendation, LaunchSpec    what to provision
    probes_launch, training_launch -> LaunchBundle            the files and the commands
    probe_run_cost -> ProbeRunCost                            the price, from the catalog
    TARGETS, EMIT_TARGETS, default_path, choose               the targets and file names
    GENERATED_MARK, generated_state                           a file's generated-by line

Pure: the functions return file texts and commands and write nothing (the CLI writes the files,
atomically); no orchestrator is imported.
"""

from ._bundles import TRAIN_SETUP, probe_run_cost, probes_launch, training_launch
from ._dstack import fleet_path
from ._probes import (
    EXPECTED_MINUTES,
    TORCH_SPEC,
    Bucket,
    ProbeRunCost,
    parse_bucket,
    probes_source_dir,
)
from ._spec import (
    EMIT_TARGETS,
    GENERATED_MARK,
    MAX_NODES,
    TARGETS,
    TRAIN_SCRIPT,
    LaunchBundle,
    LaunchError,
    LaunchFile,
    LaunchSpec,
    NoLaunchFile,
    choose,
    default_path,
    dump_yaml,
    generated_state,
    plan_args,
    plan_env,
    run_name,
    spec_for_instance,
    spec_for_recommendation,
)
from ._torchrun import MASTER_PORT, torchrun_command

__all__ = [
    "EMIT_TARGETS", "EXPECTED_MINUTES", "GENERATED_MARK", "MASTER_PORT", "MAX_NODES",
    "TARGETS", "TORCH_SPEC", "TRAIN_SCRIPT", "TRAIN_SETUP", "Bucket", "LaunchBundle",
    "LaunchError", "LaunchFile", "LaunchSpec", "NoLaunchFile", "ProbeRunCost", "choose",
    "default_path",
    "dump_yaml", "fleet_path", "generated_state", "parse_bucket", "plan_args", "plan_env",
    "probe_run_cost", "probes_launch", "probes_source_dir", "run_name", "spec_for_instance",
    "spec_for_recommendation", "torchrun_command", "training_launch",
]
