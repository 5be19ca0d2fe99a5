"""What the probes ran on: host, GPUs, software versions, clocks, and the cloud instance.

Nothing here raises for a missing tool or service: each value is None when unavailable.
The GPU's power limit, MIG and ECC state come from nvidia-smi (probes._smi); the NCCL_* and
FI_* (libfabric, EFA) variables are recorded because NCCL takes its settings from them.

Cloud metadata (each request times out after METADATA_TIMEOUT_SECONDS; set
GPUPLAN_NO_METADATA=1 to skip all of them):

- AWS IMDSv2: PUT {aws}/latest/api/token (header X-aws-ec2-metadata-token-ttl-seconds), then
  GET {aws}/latest/meta-data/instance-type, .../placement/region, .../placement/availability-zone
  with header X-aws-ec2-metadata-token.
- GCP: GET {gcp}/computeMetadata/v1/instance/machine-type and .../zone with header
  Metadata-Flavor: Google. The default base is the link-local 169.254.169.254, which GCP serves
  as metadata.google.internal does, so no DNS lookup can stall off GCP.
- Azure IMDS: GET {azure}/metadata/instance?api-version=2021-02-01 with header Metadata: true;
  compute.vmSize, compute.location, compute.zone.

Base URLs: the module constants below, overridden by GPUPLAN_AWS_METADATA_URL,
GPUPLAN_GCP_METADATA_URL and GPUPLAN_AZURE_METADATA_URL.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from probes._schema import Environment
from probes._smi import gpu_telemetry

AWS_METADATA_URL = "http://169.254.169.254"
GCP_METADATA_URL = "http://169.254.169.254"
AZURE_METADATA_URL = "http://169.254.169.254"
METADATA_TIMEOUT_SECONDS = 0.3
NO_METADATA_ENV = "GPUPLAN_NO_METADATA"
# Variables that change how NCCL moves data; recorded so a report says how it was measured.
RECORDED_ENV_PREFIXES = ("NCCL_", "FI_")

_SMI_FIELDS = ("name", "driver_version", "memory.total", "clocks.sm", "clocks.max.sm",
               "clocks.mem", "clocks.max.mem")


@dataclass(frozen=True, slots=True, kw_only=True)
class CloudInstance:
    cloud: str
    instance_type: str | None
    region: str | None
    zone: str | None


def _base(name: str, default: str) -> str:
    return os.environ.get(f"GPUPLAN_{name}_METADATA_URL", default).rstrip("/")


def _fetch(url: str, *, headers: dict[str, str], method: str = "GET",
           timeout: float = METADATA_TIMEOUT_SECONDS) -> str | None:
    request = urllib.request.Request(url, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.read().decode("utf-8", "replace").strip()
    except (OSError, ValueError):  # URLError, HTTPError, timeouts, refused, bad URL
        return None


def aws_instance(base: str | None = None) -> CloudInstance | None:
    base = base or _base("AWS", AWS_METADATA_URL)
    token = _fetch(f"{base}/latest/api/token", method="PUT",
                   headers={"X-aws-ec2-metadata-token-ttl-seconds": "60"})
    if not token:
        return None
    headers = {"X-aws-ec2-metadata-token": token}
    instance_type = _fetch(f"{base}/latest/meta-data/instance-type", headers=headers)
    if not instance_type:
        return None
    return CloudInstance(
        cloud="aws", instance_type=instance_type,
        region=_fetch(f"{base}/latest/meta-data/placement/region", headers=headers),
        zone=_fetch(f"{base}/latest/meta-data/placement/availability-zone", headers=headers))


def gcp_instance(base: str | None = None) -> CloudInstance | None:
    base = base or _base("GCP", GCP_METADATA_URL)
    headers = {"Metadata-Flavor": "Google"}
    machine = _fetch(f"{base}/computeMetadata/v1/instance/machine-type", headers=headers)
    if not machine:
        return None
    zone_path = _fetch(f"{base}/computeMetadata/v1/instance/zone", headers=headers)
    # Both come as resource paths: projects/123/machineTypes/a3-highgpu-8g, .../zones/us-east5-a
    zone = zone_path.rsplit("/", 1)[-1] if zone_path else None
    region = zone.rsplit("-", 1)[0] if zone and zone.count("-") >= 2 else None
    return CloudInstance(cloud="gcp", instance_type=machine.rsplit("/", 1)[-1],
                         region=region, zone=zone)


def azure_instance(base: str | None = None) -> CloudInstance | None:
    base = base or _base("AZURE", AZURE_METADATA_URL)
    text = _fetch(f"{base}/metadata/instance?api-version=2021-02-01",
                  headers={"Metadata": "true"})
    if not text:
        return None
    try:
        compute = json.loads(text).get("compute", {})
    except (json.JSONDecodeError, AttributeError):
        return None
    if not isinstance(compute, dict) or not compute.get("vmSize"):
        return None
    return CloudInstance(cloud="azure", instance_type=str(compute["vmSize"]),
                         region=compute.get("location") or None,
                         zone=str(compute["zone"]) if compute.get("zone") else None)


def cloud_instance() -> CloudInstance | None:
    """The first cloud whose metadata service answers, or None (also when disabled)."""
    if os.environ.get(NO_METADATA_ENV, "") not in ("", "0"):
        return None
    for probe in (aws_instance, gcp_instance, azure_instance):
        found = probe()
        if found is not None:
            return found
    return None


def _int_or_none(text: str) -> int | None:
    try:
        return int(float(text))
    except ValueError:
        return None


def nvidia_smi() -> dict[str, Any] | None:
    """First GPU's name, driver, memory (bytes) and clocks (MHz) from nvidia-smi, or None."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    cmd = [exe, f"--query-gpu={','.join(_SMI_FIELDS)}", "--format=csv,noheader,nounits"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines:
        return None
    values = [v.strip() for v in lines[0].split(",")]
    if len(values) != len(_SMI_FIELDS):
        return None
    row = dict(zip(_SMI_FIELDS, values, strict=True))
    mib = _int_or_none(row["memory.total"])
    return {"name": row["name"], "driver_version": row["driver_version"],
            "memory_bytes": mib * 2**20 if mib is not None else None,
            "sm_clock_mhz": _int_or_none(row["clocks.sm"]),
            "sm_clock_max_mhz": _int_or_none(row["clocks.max.sm"]),
            "memory_clock_mhz": _int_or_none(row["clocks.mem"]),
            "memory_clock_max_mhz": _int_or_none(row["clocks.max.mem"]),
            "count": len(lines)}


def _proc_driver_version() -> str | None:
    """The kernel module's version, e.g. 550.54.15, when nvidia-smi is absent."""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as handle:
            first = handle.readline()
    except OSError:
        return None
    words = first.split()
    for before, word in zip(words, words[1:], strict=False):
        if before == "Module" and word[:1].isdigit():
            return word
    return None


def _torch_info(device_type: str) -> dict[str, Any]:
    try:
        import torch
    except ImportError:
        return {}
    info: dict[str, Any] = {"torch_version": torch.__version__,
                            "cuda_version": torch.version.cuda}
    if device_type == "cuda" and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        info.update(gpu_model=props.name, gpu_count=torch.cuda.device_count(),
                    gpu_memory_bytes=int(props.total_memory),
                    compute_capability=f"{props.major}.{props.minor}")
        try:
            version = torch.cuda.nccl.version()
            info["nccl_version"] = (".".join(map(str, version)) if isinstance(version, tuple)
                                    else str(version))
        except (AttributeError, RuntimeError):
            pass
    return info


def recorded_env(environ: dict[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """The NCCL_* and FI_* variables, sorted by name."""
    env = os.environ if environ is None else environ
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith(RECORDED_ENV_PREFIXES)))


def collect_environment(*, device_type: str, world_size: int = 1, local_world_size: int = 1,
                        query_metadata: bool = True, gpu_id: str | None = None,
                        nccl_env: tuple[tuple[str, str], ...] | None = None) -> Environment:
    """Facts about this node; ``nccl_env`` is the NCCL_*/FI_* snapshot taken before the probes
    routed NCCL's log (default: the current environment)."""
    torch_info = _torch_info(device_type)
    smi = nvidia_smi() if device_type == "cuda" else None
    smi = smi or {}
    cloud = cloud_instance() if query_metadata else None
    return Environment(
        hostname=socket.gethostname(), cpu_count=os.cpu_count() or 1,
        platform=platform.platform(), python_version=sys.version.split()[0],
        torch_version=torch_info.get("torch_version"),
        cuda_version=torch_info.get("cuda_version"),
        nccl_version=torch_info.get("nccl_version"),
        driver_version=smi.get("driver_version") or (
            _proc_driver_version() if device_type == "cuda" else None),
        device_type=device_type,
        gpu_model=torch_info.get("gpu_model") or smi.get("name"),
        gpu_count=int(torch_info.get("gpu_count") or smi.get("count") or 0),
        gpu_memory_bytes=torch_info.get("gpu_memory_bytes") or smi.get("memory_bytes"),
        compute_capability=torch_info.get("compute_capability"),
        sm_clock_mhz=smi.get("sm_clock_mhz"), sm_clock_max_mhz=smi.get("sm_clock_max_mhz"),
        memory_clock_mhz=smi.get("memory_clock_mhz"),
        memory_clock_max_mhz=smi.get("memory_clock_max_mhz"),
        cloud=cloud.cloud if cloud else None,
        instance_type=cloud.instance_type if cloud else None,
        region=cloud.region if cloud else None, zone=cloud.zone if cloud else None,
        world_size=world_size, local_world_size=local_world_size,
        node_count=max(1, world_size // max(1, local_world_size)),
        idle=gpu_telemetry(gpu_id, sampled="idle") if device_type == "cuda" else None,
        gpu_count_smi=smi.get("count"),
        nccl_env=recorded_env() if nccl_env is None else nccl_env)
