"""A team plan's jobs planned in forked worker processes (``job_candidates``, ``workers`` > 1;
on systems that fork, elsewhere one by one in this process).

A small pool of its own — each worker a forked process with one pipe, sent one key at a time
— because ``concurrent.futures``' failed under the faults of the hostile sweep (2026-12-05):

- one Ctrl-C left `gpuplan report --workers 4` hanging after its "interrupted" line about one
  run in ten: the pool's manager thread, which the interpreter joins at exit, waited on
  workers that never got their stop signal, or on half an answer from a worker ended while
  it wrote; ending the workers made that thread print an InvalidStateError traceback;
- a low open-file limit (`ulimit -n 16`) made starting the pool fail half-way with a
  traceback from ``os.pipe`` and then hang on the workers already forked.

Here there is no thread: on any exception (Ctrl-C included) the workers are terminated and
reaped at once; a pool that cannot start is ended and the jobs are planned in this process,
with a notice saying why.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Sequence
from typing import Any

# what starting processes runs out of: file descriptors (per process, system), processes
_CANNOT_START = (errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.ENOMEM)


def map_forked(work: Callable[[Any, Any], Any], keys: Sequence, state: Any, workers: int,
               done: Callable[[Any, Any], None]) -> None:
    """``done(key, work(key, state))`` for every key (in the order they finish): in up to
    ``workers`` forked processes, which receive ``state`` without pickling it, else in this
    process. An exception ``work`` raised in a worker is raised here."""
    import multiprocessing as mp

    keys = list(keys)
    if workers > 1 and len(keys) > 1 and "fork" in mp.get_all_start_methods():
        keys = _in_pool(work, keys, state, min(workers, len(keys)), done)
    for key in keys:  # every key when no pool ran; all of them when none could start
        done(key, work(key, state))


def _in_pool(work, keys: list, state, workers: int, done) -> list:
    """The keys left to plan here: none, unless the pool could not start."""
    import multiprocessing as mp
    import os
    import warnings
    from multiprocessing.connection import wait

    from catalog import CatalogNotice, GpuplanError

    ctx = mp.get_context("fork")
    pool: dict = {}  # our end of each worker's pipe → the worker
    try:
        try:
            for _ in range(workers):
                ours, theirs = ctx.Pipe()
                p = ctx.Process(target=_serve, args=(theirs, work, state, os.getpid()),
                                daemon=True)
                try:
                    p.start()
                except BaseException:
                    ours.close()
                    raise
                finally:
                    theirs.close()  # the worker's end: ours to close either way
                pool[ours] = p
        except OSError as exc:
            if exc.errno not in _CANNOT_START:
                raise
            warnings.warn(CatalogNotice(
                f"could start {len(pool)} of {workers} worker processes ({exc.strerror or exc};"
                " the open-file limit is `ulimit -n`): "
                + (f"the jobs are planned in those {len(pool)}" if len(pool) > 1 else
                   "the jobs are planned in this process, one by one")), stacklevel=3)
            if len(pool) < 2:
                return keys
        todo = keys[::-1]
        busy: dict = {}  # our end → the key its worker is planning

        def give(ours) -> None:
            if todo:
                busy[ours] = todo.pop()
                ours.send(busy[ours])

        for ours in pool:
            give(ours)
        while busy:
            for ours in wait(list(busy)):
                try:
                    kind, outcome = ours.recv()
                except EOFError:  # the worker ended without answering
                    pool[ours].join(timeout=1)
                    raise GpuplanError(
                        f"a planning worker process (pid {pool[ours].pid}) ended without an "
                        f"answer (exit code {pool[ours].exitcode}; killed, or out of memory?)."
                        " To fix: run again with fewer workers (`workers` 1 plans in this "
                        "process)") from None
                key = busy.pop(ours)
                if kind == "raised":
                    raise outcome
                done(key, outcome)
                give(ours)
        return []
    finally:
        _end(pool)


def _end(pool: dict) -> None:
    """Terminate and reap every worker of ``pool``, close our pipe ends (a worker that
    finished reads end-of-file and leaves; one still planning is killed: never waited for)."""
    for ours, p in pool.items():
        ours.close()
        if p.is_alive():
            p.terminate()
    for p in pool.values():
        p.join(timeout=10)


def _serve(conn, work, state, parent: int) -> None:
    """A worker: plan each key sent, answer ("ok", outcome) or ("raised", exception), until
    the pipe closes."""
    import signal

    # Ctrl-C reaches the whole process group: the parent stops the pool and says so once;
    # a worker printing its own KeyboardInterrupt traceback would bury that line
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the parent's SIGTERM handler (planner.cli._stdio) unwinds a command; a worker is ended
    # by `_end`'s terminate(), which must kill it where it stands, without a traceback
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with(parent)
    while True:
        try:
            key = conn.recv()
        except (EOFError, OSError):  # the parent closed the pipe: the work is over
            return
        try:
            answer = ("ok", work(key, state))
        except Exception as exc:  # noqa: BLE001 - raised again in the parent
            answer = ("raised", _picklable(exc))
        conn.send(answer)


def _picklable(exc: Exception) -> Exception:
    import pickle

    try:  # both ways: an exception with keyword-only arguments pickles but cannot be rebuilt
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any exception that cannot cross the pipe as itself
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _die_with(parent: int) -> None:
    """End this worker when ``parent``, the process that forked it, ends. Killed (SIGTERM,
    SIGKILL, the OOM killer), the parent never ends its pool, and a worker blocked on its
    pipe lived on under init, holding the caller's stdout open: `$(gpuplan report …)` waited
    for ever. Linux's prctl(PR_SET_PDEATHSIG) has the kernel kill it; elsewhere nothing is
    set (``_end`` covers Ctrl-C)."""
    import os
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no libc to ask: as elsewhere
        return
    if os.getppid() != parent:  # the parent died before the request: nothing would come
        os._exit(1)
