"""A report's facts against the catalog: the GPU its name says beside the GPU of the instance
type it names, and the memory it reports beside the catalog accelerator's. `ingest` refuses
such a report before storing it, and the calibration refuses one stored before these rules
(``_calibrate._candidates``), with the same words."""

from __future__ import annotations

from catalog import quoted


def instance_contradiction(gpu_model: str | None, instance_type: str | None,
                           gpu_accelerator: str | None, instance_accelerator: str) -> str:
    """The refusal of a report whose GPU name is not the GPU its catalog instance type has:
    one of the two facts is wrong, so neither can key its figures. The GPU's name is the
    report's text: ``quoted``, cut to 40 characters."""
    return (f"the report names the GPU {quoted(gpu_model)} ({gpu_accelerator}) on a "
            f"{instance_type}, "
            f"whose GPUs are {instance_accelerator}: one of the two is wrong, so its figures "
            "calibrate neither. To fix: re-run the probes on the instance (they record both "
            "as measured)")


# The memory a GPU reports (torch's total_memory) is its datasheet figure less what ECC and
# the driver keep: 0.92-1.0 of the catalog's on real parts (T4 with ECC 14.75 of 16 GiB, L40S
# 45.0 of 48, H100 79.6 of 80, H200 140.4 of 141). Outside this band it is another GPU.
MEMORY_BAND = (0.85, 1.05)
# Packages whose dies torch shows as separate devices, each with its share of the memory:
# an MI250X's two GCDs are two 64 GiB devices of the catalog's 128 GiB part
DEVICES_PER_PACKAGE = {"MI250X": 2, "MI250": 2}


# The compute capability of each catalog accelerator family (the name before its first "-"),
# from NVIDIA's CUDA GPU list: a report's capability that is not its accelerator's measured
# another GPU (an A100, 8.0, relabelled H100, 9.0). Families not listed are not checked.
COMPUTE_CAPABILITY = {
    **dict.fromkeys(("H100", "H200", "H800", "GH200"), (9, 0)),  # Hopper
    "A100": (8, 0), "A10": (8, 6), "A10G": (8, 6),  # Ampere GA100, GA102
    "L4": (8, 9), "L40S": (8, 9),  # Ada
    "B200": (10, 0), "GB200": (10, 0),  # Blackwell
    "T4": (7, 5), "T4g": (7, 5), "V100": (7, 0), "P100": (6, 0), "P4": (6, 1), "M60": (5, 2),
    "K80": (3, 7), "GRID": (3, 0)}


def memory_contradiction(env, acc) -> str | None:
    """The refusal of a report whose GPU memory, or compute capability (`_capability`), is not
    catalog accelerator ``acc``'s. A MIG slice has a slice's memory: such a report is stored,
    and calibrates nothing (its rule)."""
    if env is None or env.device_type != "cuda" or acc is None or _mig(env):
        return None
    if why := _capability(env, acc):
        return why
    if not env.gpu_memory_bytes or not acc.memory_gib:
        return None
    gib = env.gpu_memory_bytes / 2**30
    low, high = MEMORY_BAND
    if any(low * acc.memory_gib / k <= gib <= high * acc.memory_gib / k
           for k in {1, DEVICES_PER_PACKAGE.get(acc.name, 1)}):
        return None
    if " MIG " in f" {env.gpu_model or ''} ":  # a slice whose mode nvidia-smi did not record
        return (f"the report's GPU is a MIG slice ({gib:,.1f} GiB of {acc.name}'s "
                f"{acc.memory_gib:g} GiB): a slice is not the whole GPU, so it calibrates "
                "nothing. To fix: re-run the probes on whole GPUs (MIG disabled)")
    return (f"the report gives its GPU {gib:,.1f} GiB of memory, and {acc.name} has "
            f"{acc.memory_gib:g} GiB: it measured another GPU, or was edited. To fix: re-run "
            "the probes on the instance, or name the GPU it ran on with `accelerator`")


def _mig(env) -> bool:
    """MIG as nvidia-smi recorded it, which the MIG rule refuses; " MIG " in a GPU's name
    alone (mig_mode Disabled, or no nvidia-smi) would have let a slice calibrate whole GPUs."""
    mode = (env.idle.mig_mode or "") if env.idle is not None else ""
    return mode.lower() == "enabled"


def _capability(env, acc) -> str | None:
    """The report's compute capability against ``acc``'s family's (COMPUTE_CAPABILITY); a
    capability that is not "major.minor" is probes._gpu_state's to refuse."""
    want = COMPUTE_CAPABILITY.get(acc.name.split("-")[0])
    try:
        got = tuple(int(part) for part in (env.compute_capability or "").split("."))
    except ValueError:
        return None
    if want is None or len(got) != 2 or got == want:
        return None
    return (f"the report gives its GPU compute capability {got[0]}.{got[1]}, and {acc.name} "
            f"has {want[0]}.{want[1]}: it measured another GPU, or was edited. To fix: re-run "
            "the probes on the instance, or name the GPU it ran on with `accelerator`")
