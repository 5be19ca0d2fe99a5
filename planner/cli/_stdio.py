"""The command line's standard streams when things go wrong around them, so that a failure
is one line and a non-zero exit, never a traceback or a silent exit 0:

- Ctrl-C: "interrupted" and exit 130 (files are written atomically, so none is half-written),
  also when it lands in a finaliser, where Python would print it and carry on;
- an unbuffered stdout (``python -u``, PYTHONUNBUFFERED, common in containers and CI): Python
  drops the rest of a short write to a nearly full disk without an error, and the command
  would exit 0 with its output cut off. stdout gets a buffered layer, whose writes either
  complete or raise;
- stdout closed (``>&-``) or unwritable (a full disk, /dev/full): one line, exit 2;
- a locale whose encoding cannot spell the tables' characters (–, ─, ≥: ASCII, ISO-8859-1):
  they print in ASCII ("-", ">=", accents dropped, '?' only for what has no spelling there)
  instead of raising UnicodeEncodeError;
- a data directory or input the user may not read: the path, and how to get access.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import io
import os
import sys

from ._app import EXIT_USAGE

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
# errors of writing a standard stream (no file name: an output file's errors name their file)
_STREAM_ERRNOS = {errno.ENOSPC, errno.EIO, errno.EBADF, errno.EFBIG, errno.EDQUOT}


class _Closed(io.TextIOBase):
    """Stands in for a closed stdout: writing to it is an error (EBADF), as in a shell."""

    encoding = "utf-8"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            raise OSError(errno.EBADF, "standard output is closed")
        return 0

    def isatty(self) -> bool:
        return False


class _Discarded(io.TextIOBase):
    """Stands in for a closed stderr (``2>&-``): what goes there is dropped. ``print`` would
    put it on stdout (among the JSON a script reads) and ``sys.stderr.write`` would raise."""

    encoding = "utf-8"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


_PLAIN_ERRORS = "gpuplan-plain"
# What the planner's own text uses, spelled in ASCII: "P ≥ 90%" read "P ? 90%" and every
# range "P10?P90" in an ASCII or latin-1 locale. Box drawing and accents are found by name.
_PLAIN = {"≥": ">=", "≤": "<=", "≠": "!=", "≈": "~", "±": "+/-", "×": "x", "·": "|",
          "–": "-", "—": "--", "−": "-", "…": "...", "→": "->", "←": "<-", "•": "*",
          "“": '"', "”": '"', "‘": "'", "’": "'", "σ": "sigma", "µ": "u", "μ": "u",
          "∞": "inf", "✓": "ok", "✗": "x", "\u00a0": " ", "\u202f": " "}


def _plain(exc: UnicodeError) -> tuple[str, int]:
    """The codec error handler for a stream that cannot encode a character: an ASCII
    spelling of it (``_PLAIN``, box-drawing lines as - | +, a letter without its accent),
    else '?'."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    import unicodedata

    out = []
    for c in exc.object[exc.start:exc.end]:
        name = unicodedata.name(c, "")
        if c in _PLAIN:
            out.append(_PLAIN[c])
        elif name.startswith("BOX DRAWINGS"):
            out.append("-" if "HORIZONTAL" in name and "VERTICAL" not in name else
                       "|" if "VERTICAL" in name and "HORIZONTAL" not in name else "+")
        else:
            bare = "".join(x for x in unicodedata.normalize("NFKD", c)
                           if x.isascii() and x.isprintable())
            out.append(bare or "?")
    return "".join(out), exc.end


def make_safe() -> None:
    """Set up sys.stdout and sys.stderr for the command (see the module docstring)."""
    codecs.register_error(_PLAIN_ERRORS, _plain)
    if sys.stdout is None:
        sys.stdout = _Closed()
    if sys.stderr is None:
        sys.stderr = _Discarded()
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or not isinstance(stream, io.TextIOWrapper):
            continue
        try:
            utf8 = codecs.lookup(stream.encoding or "utf-8").name == "utf-8"
        except LookupError:
            utf8 = False
        errors = stream.errors if utf8 else _PLAIN_ERRORS
        try:
            if name == "stdout" and isinstance(stream.buffer, io.FileIO):
                # line by line, as unbuffered output was asked for: stderr lines keep their
                # place among stdout's in a `2>&1` log
                stream.flush()
                setattr(sys, name, io.TextIOWrapper(io.BufferedWriter(stream.buffer),
                                                    encoding=stream.encoding, errors=errors,
                                                    line_buffering=True))
            elif not utf8:
                stream.reconfigure(errors=_PLAIN_ERRORS)
        except (OSError, ValueError):  # its descriptor was closed after start-up
            if name == "stdout":
                sys.stdout = _Closed()


_LOST: list[bool] = []  # an interrupt Python reported as "Exception ignored" (keep_lost_…)


def keep_lost_interrupts() -> None:
    """A Ctrl-C that lands while Python runs a finaliser (a weakref callback, a ``__del__``:
    matplotlib's caches while a PDF report is drawn) is printed as "Exception ignored in …
    KeyboardInterrupt" and lost: the command went on and exited 0 (hostile sweep, 2 of 30
    interrupts). Such a report is not printed; the signal is raised once more, so the
    command stops where it can, and ``lost_interrupt`` says it happened."""
    import signal
    import threading

    _note_signals()
    default = sys.unraisablehook

    def hook(unraisable) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            default(unraisable)
            return
        _LOST.append(True)
        if signal.getsignal(signal.SIGINT) is _on_signal:
            # from another thread, 10 ms on: raised from here (signal.raise_signal,
            # _thread.interrupt_main) it is raised inside this hook and lost again
            threading.Thread(target=_interrupt_soon, daemon=True).start()

    sys.unraisablehook = hook


def _interrupt_soon() -> None:
    import _thread
    import signal
    import time

    time.sleep(0.01)
    # the signal that was lost, raised again: a SIGTERM read as Ctrl-C said "interrupted"
    _thread.interrupt_main(_SIGNALLED[-1] if _SIGNALLED else signal.SIGINT)


_SIGNALLED: list[int] = []  # the signals that stopped the command (``_on_signal``)


def _note_signals() -> None:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt and are remembered: a library that catches
    the interrupt and raises its own error (scipy's compiled modules, interrupted while they
    load: "ImportError: initialization failed") is still an interrupt (``signalled``), and
    SIGTERM, which had no handler and killed the process where it stood, now unwinds like
    Ctrl-C, so temp files are removed and the next run starts clean."""
    import signal

    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) in (signal.default_int_handler, signal.SIG_DFL):
            signal.signal(signum, _on_signal)


def _on_signal(signum, frame) -> None:
    _SIGNALLED.append(signum)
    raise KeyboardInterrupt


@contextlib.contextmanager
def signals_held():
    """Ctrl-C and SIGTERM wait until the block ends (then they are raised as usual): files
    that belong together (dstack's fleet and task) are all written, or none is, where an
    interrupt between one file's rename and the next left a new fleet beside an old task."""
    import signal

    held = {signal.SIGINT, signal.SIGTERM}
    try:
        before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (AttributeError, ValueError, OSError):  # no sigmask here, or not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def signalled() -> bool:
    return bool(_SIGNALLED)


def lost_interrupt() -> bool:
    return bool(_LOST)


_SAID: list[int] = []  # the exit statuses ``interrupted`` gave in this command


def new_command() -> None:
    """Forget what ``interrupted`` said (``main`` runs several commands in one test process)."""
    _SAID.clear()


def interrupted(*, once: bool = False) -> int:
    """One line and the exit status of a command a signal stopped: 130 after Ctrl-C, 143 after
    SIGTERM (128 + the signal, as shells report them). ``once``: nothing more is said if it
    was said already (the status it gave then is returned)."""
    import signal

    _stop_listening()
    if once and _SAID:
        return _SAID[-1]
    if _SIGNALLED and _SIGNALLED[-1] == signal.SIGTERM:
        code = 128 + signal.SIGTERM
        _SAID.append(code)
        _say("terminated (SIGTERM); files are written whole or not at all")
        return code
    _SAID.append(EXIT_INTERRUPTED)
    _say("interrupted (Ctrl-C); files are written whole or not at all")
    return EXIT_INTERRUPTED


def _stop_listening() -> None:
    """The command has stopped and its exit status is known: a further SIGINT or SIGTERM is
    ignored until the process ends (``exiting``). One arrived after the first was said —
    `timeout` sends SIGTERM to the process and again to its group, and an interrupt lost in a
    finaliser while the first unwound is raised again 10 ms on (``keep_lost_interrupts``) —
    and escaped as an uncaught KeyboardInterrupt, which Python turns into a death by SIGINT:
    "terminated (SIGTERM)", then 130 (hostile sweep, 3 of 24). Only the handlers of
    ``_note_signals`` (the command line run as a program) are replaced."""
    import signal

    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            if signal.getsignal(signum) is _on_signal:
                signal.signal(signum, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread
            pass


def exiting(code: int) -> int:
    """``code``, the command's exit status, is known (its work done, its output flushed):
    SIGINT and SIGTERM are ignored from here until the interpreter has exited, and ``code``
    is returned. A signal in that last stretch (the interpreter's own exit takes ~50 ms)
    raised KeyboardInterrupt outside every handler, or found the default action Python
    restores as it shuts down: the process died by the signal (shell: 130 or 143) with its
    output complete and no message, and `catalog refresh` so after the new catalog was
    active (fault sweep, 14 of 45 late signals). SIG_IGN outlives the interpreter's
    clean-up, which puts back only the handlers it set itself, and drops a signal already
    pending. Only the handlers of ``_note_signals`` are replaced (``_stop_listening`` has
    done so after a signal was said): a program embedding ``main`` keeps its own."""
    _stop_listening()
    return code


# The commands whose process ends at once once their output is flushed (``end_now``): they
# read, compute and print (files they write are written whole, by rename, before this).
ENDS_AT_ONCE = frozenset({"plan", "estimate", "offers", "gpus"})


def end_now(code: int, command: str | None) -> int:
    """End the process with ``code`` here, without the interpreter's own teardown, for the
    commands of ``ENDS_AT_ONCE``: freeing every module and array a plan built took 40-50 ms
    of a 0.5 s `plan` and of a 0.35 s `estimate` (benchmarks/plan_speed.py). What that exit
    does that matters is done first: the ``atexit`` functions run and both streams are
    flushed. Returns ``code`` (the interpreter then exits as usual) for any other command, when
    a thread besides the main one is running (a normal exit waits for it), or when a stream
    cannot be flushed (the error is then the normal exit's to report)."""
    import atexit
    import threading

    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)  # CPython's, since 2.x
    if (command not in ENDS_AT_ONCE or run_exit_functions is None
            or threading.active_count() != 1):
        return code
    if not _flushed():
        return code
    run_exit_functions()
    _flushed()  # what the exit functions wrote (lost when it cannot be, as Python loses it)
    os._exit(code)


def _flushed() -> bool:
    """Both streams flushed (False: one cannot be: closed, a full disk, a reader gone)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        return False
    return True


def os_error(exc: OSError) -> int | None:
    """The exit status for an OSError that reached the top, after one line saying it; None
    for one that is not the user's to fix (re-raised: a bug)."""
    if exc.errno == errno.ENOMEM:
        return exhausted(exc)
    if isinstance(exc, BrokenPipeError):  # the reader went away (`gpuplan offers | head`)
        _silence_stdout()
        return 1
    if isinstance(exc, PermissionError) and exc.filename:
        _say(f"permission denied: {exc.filename}. To fix: make it readable (and its folders "
             "enterable) for this user, or set GPUPLAN_HOME to a folder you own")
        return EXIT_USAGE
    if exc.errno == errno.EBADF and not exc.filename:
        _say("standard output is closed. To fix: redirect it instead (> FILE, or > /dev/null "
             "to discard it)")
        _silence_stdout()
        return EXIT_USAGE
    if exc.errno in _STREAM_ERRNOS and not exc.filename:
        from ._flags import typed_flags

        if "--out" in typed_flags():  # its file is whole: only the messages were lost
            _say(f"cannot write to standard output ({os.strerror(exc.errno)}); what --out "
                 "names was written. To fix: send standard output somewhere with room (> "
                 "FILE, or > /dev/null to discard it)")
        else:
            _say(f"cannot write to standard output ({os.strerror(exc.errno)}). To fix: write "
                 "it somewhere with room (or use --out where the command has it)")
        _silence_stdout()
        return EXIT_USAGE
    return None


# What Python and its thread pools raise when the process may not have more memory or threads
# (a ``ulimit -v`` or a container's limit): a traceback ending "Resource temporarily
# unavailable" said nothing of the cause (hostile sweep).
_EXHAUSTED = ("can't start new thread", "Resource temporarily unavailable",
              "Cannot allocate memory", "bad_alloc", "failed to map segment")


def exhausted(exc: BaseException) -> int | None:
    """The exit status for running out of memory or threads, after one line saying so; None
    for any other error."""
    if not (isinstance(exc, MemoryError) or isinstance(exc, (OSError, RuntimeError, ImportError))
            and any(s in str(exc) for s in _EXHAUSTED)):
        return None
    detail = str(exc).strip() or type(exc).__name__
    _say(f"out of memory ({detail}): the process may not have the memory or threads this "
         "command needs. To fix: raise the limit (ulimit -v, the container's memory) or ask "
         "for less at once (a lower --max-gpus; a report with fewer jobs or --workers 1)")
    return EXIT_USAGE


def _say(message: str) -> None:
    from ._tables import one_line

    try:
        print(f"error: {one_line(message)}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush at exit does not fail again
    (and print "Exception ignored …")."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        sys.stdout = io.StringIO()
