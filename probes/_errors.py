"""The probes' errors; every message is one line ending "To fix: ..."::

    ProbesError(Exception)
     +-- ReportError(ProbesError, ValueError)         a report file is unreadable, corrupt,
     |                                                incomplete or of an unknown schema_version
     +-- ProbeSetupError(ProbesError, RuntimeError)   the probes cannot start as asked (no CUDA
     |                                                for --device cuda, no process group)
     +-- ReportWriteError(ProbesError, OSError)       the report cannot be written where asked (a
                                                      directory, a device, a FIFO, /proc, a full
                                                      disk); an OSError, as a failed write always
                                                      was, so existing handlers keep working
"""

from __future__ import annotations

TORCH_MISSING = ("torch is not installed. To fix: pip install 'torch>=2.3' (a CUDA build on a "
                 "GPU host), or in a gpuplan checkout pip install -e '.[probes]'")


class ProbesError(Exception):
    """Base of the errors a user can cause; the CLI prints the message and exits 2."""


class ReportError(ProbesError, ValueError):
    """A probe report cannot be read; the message says why and how to fix it."""


class ProbeSetupError(ProbesError, RuntimeError):
    """The probes cannot start as asked; the message says how to fix it."""


class ReportWriteError(ProbesError, OSError):
    """The report cannot be written to the path asked for; the message says how to fix it."""


def require_torch() -> None:
    """Import torch, or raise ProbesError(TORCH_MISSING). A Ctrl-C during the import is held
    until the import ends, then raised: torch's own import code catches broad exceptions in
    places, and a KeyboardInterrupt raised inside one of them was swallowed — the run went
    on as if never interrupted (2 of 30 Ctrl-Cs during a bare `import torch`, 5 of 20 of
    `gpuplan probe run` interrupted ~0.3 s in)."""
    import signal
    import threading

    held: list[int] = []
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum)) \
        if main else None
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ProbesError(TORCH_MISSING) from None
    finally:
        if main:  # a handler set outside Python reads as None: back to Python's default
            signal.signal(signal.SIGINT,
                          signal.default_int_handler if previous is None else previous)
    if held:
        raise KeyboardInterrupt
