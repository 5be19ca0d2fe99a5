"""One GPU's clocks, power, temperature, MIG and ECC state from nvidia-smi (torch-free).

``nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits -i ID`` prints one line of
comma-separated values; a field this driver does not know makes the whole query fail
('Field "x" is not a valid field to query'), so on failure each field is asked for alone and
the unknown ones stay None. Field names are those of ``nvidia-smi --help-query-gpu``;
``clocks_event_reasons.active`` was called ``clocks_throttle_reasons.active`` before driver
535, so both are tried. Values such as "[N/A]" or "[Not Supported]" become None.

Nothing here raises: no nvidia-smi, a timeout or an odd output all give None.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable

from probes._schema import GpuTelemetry

TIMEOUT_SECONDS = 10.0

# GpuTelemetry field -> (nvidia-smi field names to try in order, parser)
_FIELDS: dict[str, tuple[tuple[str, ...], Callable[[str], object]]] = {}


def _int(text: str) -> int | None:
    try:
        return int(float(text))
    except ValueError:
        return None


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _text(text: str) -> str | None:
    return text or None


_FIELDS.update({
    "sm_clock_mhz": (("clocks.sm",), _int),
    "memory_clock_mhz": (("clocks.mem",), _int),
    "power_draw_w": (("power.draw",), _float),
    "power_limit_w": (("enforced.power.limit", "power.limit"), _float),
    "power_default_limit_w": (("power.default_limit",), _float),
    "temperature_c": (("temperature.gpu",), _float),
    "clock_event_reasons": (("clocks_event_reasons.active", "clocks_throttle_reasons.active"),
                            _text),
    "mig_mode": (("mig.mode.current",), _text),
    "ecc_mode": (("ecc.mode.current",), _text),
})


# nvml.h's nvmlClocksEventReasons bits (nvidia-smi prints the mask as hex), in words
_CLOCK_EVENTS = ((0x1, "idle"), (0x2, "applications clocks setting"),
                 (0x4, "software power cap"), (0x8, "hardware slowdown"), (0x10, "sync boost"),
                 (0x20, "software thermal slowdown"), (0x40, "hardware thermal slowdown"),
                 (0x80, "hardware power brake"), (0x100, "display clock setting"))


def clock_event_words(mask: str | None) -> str:
    """nvidia-smi's clock-event mask ("0x0000000000000004") in words ("software power cap");
    "none" for 0, "" when the mask is missing or not hex (printed as given then)."""
    try:
        bits = int(mask or "", 16)
    except ValueError:
        return ""
    if bits < 0:  # int() takes a sign; a mask has none
        return ""
    named = [word for bit, word in _CLOCK_EVENTS if bits & bit]
    unknown = bits & ~sum(bit for bit, _ in _CLOCK_EVENTS)
    return ", ".join(named + ([f"other {unknown:#x}"] if unknown else [])) or "none"


def _clean(value: str) -> str:
    """"" for nvidia-smi's placeholders ("[N/A]", "N/A", "[Not Supported]", ...)."""
    value = value.strip()
    return "" if value == "N/A" or (value.startswith("[") and value.endswith("]")) else value


class _Hung(Exception):
    """nvidia-smi did not answer in time: asking it field by field would only wait longer."""


def _query(exe: str, fields: list[str], gpu: str | None) -> list[str] | None:
    cmd = [exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]
    if gpu is not None:
        cmd += ["-i", gpu]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_SECONDS,
                             check=True).stdout
    except subprocess.TimeoutExpired as exc:
        raise _Hung from exc
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines:
        return None
    values = [v.strip() for v in lines[0].split(",")]
    return values if len(values) == len(fields) else None


def gpu_telemetry(gpu: str | None, *, sampled: str) -> GpuTelemetry | None:
    """State of GPU ``gpu`` (an index, a UUID "GPU-..." or a PCI bus id; None: the first)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    first = [names[0] for names, _ in _FIELDS.values()]
    try:
        return _telemetry(exe, first, gpu, sampled)
    except _Hung:
        return None


def _telemetry(exe: str, first: list[str], gpu: str | None, sampled: str) -> GpuTelemetry | None:
    values = _query(exe, first, gpu)
    found: dict[str, object] = {}
    if values is not None:
        for (field, (_, parse)), raw in zip(_FIELDS.items(), values, strict=True):
            text = _clean(raw)
            found[field] = parse(text) if text else None
    else:  # some field is unknown to this driver: ask for each on its own
        for field, (names, parse) in _FIELDS.items():
            for name in names:
                one = _query(exe, [name], gpu)
                if one is not None:
                    text = _clean(one[0])
                    found[field] = parse(text) if text else None
                    break
        if not found:
            return None
    return GpuTelemetry(sampled=sampled, **found)
