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
