"""What the workload probe says while it runs, and how a signal stops it (torch-free).

A CPU check of llama3-8b (`--device cpu --quick --build-layers 1`) ran 7 minutes on a 2-core
machine saying nothing, and ignored SIGTERM for more than 3: Python runs a signal handler only
between bytecodes, and one `loss.backward()` is one call into torch's engine, minutes long
when the CPU emulates bf16. So:

- ``Progress`` says each phase and step on stderr (probes._fit.progress: rank 0, a terminal),
  with the first step's time and what the rest will take;
- ``prompt_stop`` watches for SIGINT/SIGTERM from a thread (torch releases the GIL inside its
  operators, and the signal's wake-up byte reaches the thread at once): the main thread gets
  ``GRACE_S`` to unwind as it always did (its handler runs between operators), and if it is
  still inside one, the process exits there (130 / 143), no report written;
- ``cpu_half_note`` warns before anything is built when bf16 or fp16 runs on a CPU that
  emulates it (10-60x slower than fp32 on an AVX2 machine).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

from probes._fit import progress

GRACE_S = 2.0  # the main thread's time to unwind itself before the watcher ends the process
STEP_LINE_EVERY_S = 5.0  # a step line at most this often (a GPU step takes milliseconds)
LONG_STEP_S = 60.0  # an expected step time said in logs and pipes too


class Progress:
    """Progress lines of one rank's measurement ("probes: [41 s] step 2 of 5 (38 s a step)")."""

    def __init__(self, *, rank: int = 0, started: float | None = None) -> None:
        self.rank, self.started = rank, time.perf_counter() if started is None else started
        self._last = -STEP_LINE_EVERY_S

    def say(self, text: str) -> None:
        self._last = time.perf_counter()
        progress(text, rank=self.rank, started=self.started)

    def warn(self, text: str) -> None:
        """A warning from rank 0, said in logs and pipes as well (not progress)."""
        if self.rank == 0:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                print(text, file=sys.stderr, flush=True)

    def expect(self, step_flop: float, flop_per_s: float | None) -> None:
        """Before the first step on CPU: what a step will take, said once. On a terminal a
        progress line (a warning when over LONG_STEP_S: a run that looks hung otherwise); in
        logs and pipes always one "note:" line, where no progress line comes (the emulated-bf16
        warning had stood there with no time at all)."""
        text = expected_step_note(step_flop, flop_per_s)
        if (flop_per_s and step_flop / flop_per_s > LONG_STEP_S) or not _stderr_is_terminal():
            self.warn(f"note: {text}")
        else:
            self.say(text)

    def step(self, what: str, i: int, n: int, seconds: float) -> None:
        """After step ``i`` (1-based) of ``n``: the first always (it tells the step's time and
        the rest's), then at most every STEP_LINE_EVERY_S."""
        if i == 1 or time.perf_counter() - self._last >= STEP_LINE_EVERY_S or i == n:
            left = f"; about {_duration(seconds * (n - i))} for the rest" if i < n else ""
            self.say(f"{what} {i} of {n} done ({_duration(seconds)} a step{left})")


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, OSError, ValueError):  # a closed or replaced stderr
        return False


def quiet_profiler() -> None:
    """Kineto's own log lines silenced before the first torch.profiler starts: it wrote
    "USDT:… SyncActivityProfilerHandler.cpp:52] profiler_start" (and profiler_stop) on
    stderr at each profile, into the logs and pipes that get the summary alone.
    KINETO_LOG_LEVEL is read when the profiler first starts (set after `import torch` it
    still works); 6 is above its every level (ERROR is 4, these marks 5: no lower level
    keeps errors and drops them). One the user set is kept (KINETO_LOG_LEVEL=0 shows all)."""
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1e3:.0f} ms"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def expected_step_note(step_flop: float, flop_per_s: float | None) -> str:
    """The line said before the first step on CPU, where a step can take minutes."""
    if not flop_per_s:
        return f"one step is ~{step_flop / 1e9:,.3g} GFLOP of forward + backward"
    return (f"one step is ~{step_flop / 1e9:,.3g} GFLOP of forward + backward; at this CPU's "
            f"~{flop_per_s / 1e9:,.1f} GFLOP/s, about {_duration(step_flop / flop_per_s)} a "
            "step (Ctrl-C stops it)")


# What runs a half precision natively on an x86 CPU, as torch.cpu's feature checks name it.
# fp16: AMX-FP16 (Granite Rapids); AVX512-FP16 (Sapphire Rapids) has no torch check, so an
# AVX-512 CPU without AMX-FP16 is "cannot say", and only one without AVX-512 is "emulated".
_NATIVE = {"bf16": ("_is_avx512_bf16_supported", "_is_amx_tile_supported"),
           "fp16": ("_is_amx_fp16_supported",)}
_HARDWARE = {"bf16": "AVX512-BF16 or AMX", "fp16": "AMX-FP16 or AVX512-FP16"}


def cpu_half_note(precision: str, native: bool | None) -> str | None:
    """A warning for bf16 or fp16 on a CPU that emulates it, or None. Warned, not switched to
    fp32: the report says that precision and the planner reads its figures as its; a CPU run
    is a check of the command and the shapes, which a smaller one makes as well. Emulated,
    a 512x512 matmul took 13x (bf16) and 16x (fp16) fp32's time on this AVX2 machine."""
    if precision not in _NATIVE or native is not False:
        return None
    return (f"warning: this CPU has no native {precision} ({_HARDWARE[precision]}): torch "
            f"emulates it, 10-60x slower than fp32, and a large model's step takes minutes. "
            "To fix: check the command with a shorter --seq-len or a smaller model, and time "
            "the real one on a GPU (--device cuda)")


def cpu_has_native(precision: str) -> bool | None:
    """True/False on x86 (torch's own CPU feature checks) for bf16 or fp16, None where torch
    cannot say (another CPU, another precision, a check that fails)."""
    import torch

    checks = [getattr(torch.cpu, name, None) for name in _NATIVE.get(precision, ())]
    if not any(checks) or not torch.backends.cpu.get_cpu_capability().startswith("AVX"):
        return None
    try:
        if any(check() for check in checks if check is not None):
            return True
        if precision == "fp16":  # AVX512-FP16 has no check: only no AVX-512 at all is sure
            avx512 = getattr(torch.cpu, "_is_avx512_supported", None)
            return False if avx512 is not None and not avx512() else None
        return False
    except Exception:  # noqa: BLE001 - a feature query that fails says nothing either way
        return None


@contextlib.contextmanager
def prompt_stop(*, rank: int = 0, grace_s: float = GRACE_S) -> Iterator[None]:
    """While the body runs, a SIGINT or SIGTERM ends the process within ``grace_s`` even
    inside one long torch operator. Only in the main thread (the wake-up fd is its own)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read, write = os.pipe()
    os.set_blocking(write, False)
    try:
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except (ValueError, OSError):  # no wake-up fd here: the handlers act as before
        os.close(read)
        os.close(write)
        yield
        return
    done = threading.Event()
    stops = {int(signal.SIGINT), int(signal.SIGTERM)}

    def watch() -> None:
        while not done.is_set():
            try:
                data = os.read(read, 64)
            except OSError:
                return
            signums = [b for b in data if b in stops]
            if not signums or done.is_set():
                continue
            if done.wait(grace_s):  # the main thread unwound by itself
                return
            name = "Ctrl-C" if signums[-1] == signal.SIGINT else "SIGTERM"
            if rank == 0:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    sys.stderr.write(f"error: stopped ({name}) inside a step of the workload "
                                     "probe; no report written\n")
                    sys.stderr.flush()
            os._exit(128 + signums[-1])

    watcher = threading.Thread(target=watch, name="probes-stop", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        signal.set_wakeup_fd(previous)
        with contextlib.suppress(OSError):
            os.write(write, b"\0")  # wakes the watcher to see ``done``
        watcher.join(1.0)
        os.close(write)
        if not watcher.is_alive():
            os.close(read)
