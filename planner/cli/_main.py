"""``gpuplan``: every command registered on the Typer apps, in one table, and ``main``.

Commands are plain functions in their modules (one module per area); this module is the only
one that knows them all, so no command module imports another to register itself.

``main`` registers only the command it runs (`gpuplan plan …` imports the modules of `plan`,
not those of `probe` or `report`, and Typer builds one command, not thirty) and gives its
options a coercion without pydantic (``_coerce``); the full application — `gpuplan --help`,
an unknown command, ``planner.cli.app`` — has every command. No command module postpones
annotations: Typer evaluated them anew on each read of a signature (`plan`: 20.1 → 8.8 ms).
"""

from __future__ import annotations

import functools
import os
import sys

import typer

from . import _app, _coerce, _flags, _metavars, _stdio
from ._app import EXIT_USAGE, CliExit
from ._flags import error_line
from ._tables import one_line
from ._values import spaced_list_fix, without_separators

PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}

# (group, name, module, function, Typer options), in the order `gpuplan --help` lists them;
# group "" is the root. Each has a short_help that fits a list line at 60 columns (click cut
# the docstrings' first sentences with "..." even 140 columns wide).
COMMANDS = (
    ("", "app", "_app_cmd", "app_cmd", {"context_settings": PASS_THROUGH,
                                         "short_help": "Open the Streamlit app."}),
    ("", "gpus", "_catalog_cmds", "gpus_cmd",
     {"short_help": "Accelerators: specs and cheapest prices."}),
    ("", "offers", "_catalog_cmds", "offers_cmd",
     {"short_help": "Priced offers, filtered and sorted."}),
    ("catalog", "info", "_catalog_cmds", "info_cmd",
     {"short_help": "The active catalog and its price dates."}),
    ("catalog", "use", "_catalog_cmds", "use_cmd", {}),
    ("catalog", "refresh", "_refresh_cmd", "refresh_cmd",
     {"short_help": "Fetch current prices into a new catalog."}),
    ("launch", "probes", "_launch_cmds", "probes_cmd",
     {"short_help": "Task files that run the probes on instances."}),
    ("", "estimate", "_model_cmds", "estimate_cmd",
     {"short_help": "Time, GPU-hours and memory of one run."}),
    ("", "plan", "_plan_cmd", "plan_cmd",
     {"short_help": "The cheapest setup that meets the deadline."}),
    ("probe", "run", "_probe_cmds", "run_cmd", {"context_settings": PASS_THROUGH,
                                            "short_help": "Measure this machine."}),
    ("probe", "ingest", "_probe_cmds", "ingest_cmd",
     {"short_help": "Store probe reports for estimate and plan."}),
    ("probe", "show", "_probe_cmds", "show_cmd",
     {"short_help": "List stored reports, what they calibrate."}),
    ("probe", "remove", "_probe_cmds", "remove_cmd",
     {"short_help": "Remove stored reports from the calibration."}),
    ("probe", "workload", "_workload_cmd", "workload_cmd",
     {"context_settings": PASS_THROUGH, "short_help": "Time your model's layers here."}),
    ("", "report", "_report_cmds", "report_cmd",
     {"short_help": "One plan per job under shared budgets."}),
)
# Groups join the root in this order (catalog and probe before launch, as `--help` lists them).
GROUPS = ("catalog", "probe", "launch")
TOP_LEVEL = frozenset(group or name for group, name, *_ in COMMANDS)


def _command_module(name: str):
    """The command module ``name``, imported when a command of it is registered (each import
    written out, so that tools/check_imports.py sees it)."""
    if name == "_model_cmds":
        from . import _model_cmds as module
    elif name == "_plan_cmd":
        from . import _plan_cmd as module
    elif name == "_catalog_cmds":
        from . import _catalog_cmds as module
    elif name == "_refresh_cmd":
        from . import _refresh_cmd as module
    elif name == "_probe_cmds":
        from . import _probe_cmds as module
    elif name == "_workload_cmd":
        from . import _workload_cmd as module
    elif name == "_launch_cmds":
        from . import _launch_cmds as module
    elif name == "_report_cmds":
        from . import _report_cmds as module
    elif name == "_app_cmd":
        from . import _app_cmd as module
    else:
        raise KeyError(name)
    return module


def build_app(only: str | None = None) -> typer.Typer:
    """The Typer application with every command, or with only the top-level command or group
    ``only`` (and the root's own options)."""
    from ._examples import epilog  # each page's "Examples:" (strings only: nothing to build)

    apps = _app.new_apps()
    for group, sub in apps.items():
        sub.info.epilog = epilog(group)
    root = apps[""]
    for group in GROUPS[:2]:
        if only in (None, group):
            root.add_typer(apps[group], name=group)
    for group, name, module, function, options in COMMANDS:
        if only in (None, group or name):
            apps[group].command(name, epilog=epilog(f"{group} {name}".strip()), **options)(
                getattr(_command_module(module), function))
    if only in (None, GROUPS[2]):
        root.add_typer(apps[GROUPS[2]], name=GROUPS[2])  # after catalog and probe
    return root


@functools.cache
def full_app() -> typer.Typer:
    """The application with every command (``planner.cli.app``)."""
    return build_app()


@functools.cache
def full_command():
    """The click command of ``full_app``: what `gpuplan --help` shows, and where
    ``_flags.cli_options`` finds every option."""
    import typer.main

    command = typer.main.get_command(full_app())
    _coerce.install(command)
    _metavars.readable(command)
    return command


_flags.FULL_COMMAND[:] = [full_command]


def __getattr__(name: str):
    if name == "app":  # built on first use: `main` does not need it
        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Commands whose work should keep every core: the probes measure this machine (CPU kernels
# included) and `app` starts a server; neither is the planner's small arrays.
KEEP_BLAS_THREADS = ("probe", "app")
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def single_threaded_blas(command: str | None) -> None:
    """One BLAS thread for the planner's commands. The model's arrays are small (a few
    thousand entries per operation): OpenBLAS threads only add their start-up and
    synchronisation — about 25% more CPU for `plan`, no shorter wall time, identical answers.
    numpy reads these variables when it is imported, so this runs before any command imports
    it; a value the user set (either variable, or MKL's) is kept."""
    if command is None or command in KEEP_BLAS_THREADS or "numpy" in sys.modules:
        return
    if any(os.environ.get(v) for v in (*BLAS_THREAD_VARIABLES, "MKL_NUM_THREADS")):
        return
    for variable in BLAS_THREAD_VARIABLES:
        os.environ[variable] = "1"


# glibc's malloc hands freed memory at the top of the heap back to the system above 128 KiB
# (M_TRIM_THRESHOLD) and maps every block above 128 KiB afresh (M_MMAP_THRESHOLD; it adapts,
# but only after the first frees): a plan allocates and frees thousands of arrays of 10-500
# KiB, and each round trip costs page faults — a third of a cold `plan`'s model time. A short
# command keeps what it freed instead (at most MALLOC_KEEP_BYTES more resident memory).
MALLOC_KEEP_BYTES = 128 * 2**20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)


def keep_freed_memory(command: str | None) -> bool:
    """Tell glibc's malloc to keep freed memory for reuse in this process (see above); the
    commands that keep BLAS threads (a probe's own kernels, the app's long-lived server) keep
    its defaults too. False where the C library has no ``mallopt`` (not glibc) or a
    variable of the user's (MALLOC_*_) already sets it; never an error."""
    if command is None or command in KEEP_BLAS_THREADS or not sys.platform.startswith("linux"):
        return False
    if any(os.environ.get(v) for v in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, ImportError):
        return False
    # 32 MiB: the largest mmap threshold every glibc accepts (HEAP_MAX_SIZE / 2)
    mapped = mallopt(_M_MMAP_THRESHOLD, 32 * 2**20)
    return bool(mallopt(_M_TRIM_THRESHOLD, MALLOC_KEEP_BYTES)) and bool(mapped)


def process_settings(command: str | None) -> None:
    """What `gpuplan COMMAND` sets for its own process before any work: one BLAS thread
    (``single_threaded_blas``) and malloc keeping the memory it frees
    (``keep_freed_memory``). Public for benchmarks that time a command's work in process."""
    single_threaded_blas(command)
    keep_freed_memory(command)


def _is_click_exception(exc: Exception) -> bool:
    """Typer raises click's exceptions, or those of the click copy it bundles (typer._click)."""
    classes = []
    for module in ("click.exceptions", "typer._click.exceptions"):
        try:
            classes.append(__import__(module, fromlist=["ClickException"]).ClickException)
        except ImportError:
            continue
    return isinstance(exc, tuple(classes))


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default: the process's arguments); the exit status.

    Only the command being run is registered (``build_app``), unless the first argument is
    not a command (`--help`, `--version`, a typo): then every command is, so the help and
    "did you mean" are those of the whole CLI. Run as the program (``argv`` None), the
    planner's commands get their ``process_settings``."""
    args = sys.argv[1:] if argv is None else list(argv)
    _stdio.new_command()
    try:
        # errors spell a two-spelling option as it was typed, and know whether --out was given
        with _flags.typed_line(args):
            return _main(argv, args)
    except KeyboardInterrupt:  # a second signal, come while the first was being said: Python
        # turned it, uncaught, into exit 130 whatever the first was (SIGTERM: 143)
        return _stdio.interrupted(once=True)


def _main(argv: list[str] | None, args: list[str]) -> int:
    only = args[0] if args and args[0] in TOP_LEVEL else None
    try:
        if argv is None:  # inside the Ctrl-C handling too: an interrupt can come here
            process_settings(only)
            _stdio.make_safe()
            _stdio.keep_lost_interrupts()
        code = _run(argv, args, only)
        if argv is None:
            sys.stdout.flush()  # a full disk shows here, not as a silent short file
            if code != _stdio.EXIT_INTERRUPTED and _stdio.lost_interrupt():
                # the command finished before it could stop; or it did stop, and said so (143)
                return _stdio.interrupted(once=True)
        # its status known and its output flushed: a signal from here on changes nothing
        return _stdio.exiting(code) if argv is None else code
    except KeyboardInterrupt:  # Ctrl-C before the command ran, or while it printed
        return _stdio.interrupted()
    except OSError as exc:
        code = _stdio.os_error(exc)
        if code is None:
            if _stdio.signalled():
                return _stdio.interrupted()
            raise
        return code
    except Exception as exc:
        if _stdio.signalled():  # a library turned the interrupt into an error of its own
            return _stdio.interrupted()
        if (code := _stdio.exhausted(exc)) is None:
            raise
        return code


def _run(argv: list[str] | None, args: list[str], only: str | None) -> int:
    import warnings

    from catalog import CatalogNotice

    with warnings.catch_warnings():
        warnings.simplefilter("always", CatalogNotice)  # every time it happens, as the CLI runs
        shown, said = warnings.showwarning, set()

        def note(message, category, *rest, **kw):
            if issubclass(category, CatalogNotice):
                if str(message) not in said:  # a command that asks the store twice: once
                    said.add(str(message))
                    print(f"note: {one_line(str(message))}", file=sys.stderr)
            else:
                shown(message, category, *rest, **kw)

        warnings.showwarning = note
        return _run_command(argv, args, only)


def _run_command(argv: list[str] | None, args: list[str], only: str | None) -> int:
    from catalog import GpuplanError

    command = None
    try:
        command = full_command() if only is None else _command(only)
        _refuse_repeated(command, args)
        # non-standalone, Typer returns (not raises) an exit code: 130 after a Ctrl-C
        code = command(args=argv, prog_name="gpuplan", standalone_mode=False)
        if code == _stdio.EXIT_INTERRUPTED:
            return _stdio.interrupted()
        if isinstance(code, int) and not isinstance(code, bool) and code:
            return code
    except GpuplanError as exc:
        with _flags.failed_command(_leaf(command, args), command):  # flags as it spells them
            print(f"error: {error_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except CliExit as exc:
        return exc.code
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("aborted", file=sys.stderr)
        return 130
    except Exception as exc:  # usage errors arrive here in non-standalone mode
        if _is_click_exception(exc):
            return _show_click_error(exc, args)
        raise
    return 0


def _leaf(command, args: list[str]):
    """The (sub)command of ``command`` the command line ``args`` names (`catalog use` → use),
    as far as its first two words name one; None without ``command``."""
    for name in args[:2]:
        sub = getattr(command, "commands", {}).get(name)
        if sub is None:
            break
        command = sub
    return command


def _refuse_repeated(command, args: list[str]) -> None:
    """An option that takes one value, given twice (`--emit skypilot --emit dstack`): click
    keeps the last silently, so which one the user meant is a guess. Options declared
    `multiple` (`--gpu`, `--assume`) and flags may repeat. (Duck-typed: Typer brings its own
    copy of click's classes.)"""
    from catalog import GpuplanError, quoted

    while args and args[0] in (getattr(command, "commands", None) or {}):
        command, args = command.commands[args[0]], args[1:]
    single = {name: p for p in getattr(command, "params", ())
              if getattr(p, "param_type_name", "") == "option"
              and not (p.multiple or p.is_flag or p.count) for name in p.opts}
    seen: dict[str, list[str]] = {}
    i = 0
    while i < len(args) and args[i] != "--":
        name, eq, value = args[i].partition("=")
        p = single.get(name)
        if p is None:
            i += 1
            continue
        if not eq:
            value = args[i + 1] if i + 1 < len(args) else ""
        seen.setdefault(p.opts[0], []).append(value)
        i += 1 if eq else 2
    for opt, values in seen.items():
        if len(values) > 1:
            # the first two values, each cut to 40 characters (a 100 KB --model was echoed
            # whole, and so was every value of an option given a thousand times)
            given = ", ".join(map(quoted, values[:2]))
            more = ", …" if len(values) > 2 else ""
            raise GpuplanError(f"{opt} is given {len(values)} times ({given}{more}); it takes "
                               f"one value. To fix: give {opt} once")


def _command(only: str):
    """The click command of ``build_app(only)``, its plain options coerced without pydantic."""
    import typer.main

    command = typer.main.get_command(build_app(only))
    _coerce.install(command)
    _metavars.readable(command)
    return command


def _show_click_error(exc, args: list[str] = ()) -> int:
    """A usage error (unknown option, a value that is not a number, a missing argument) as one
    line, like every other error: what is wrong, then where the options are listed. The help
    that a bare group prints (`gpuplan catalog`) stays as it is."""
    if type(exc).__name__ == "NoArgsIsHelpError" or not hasattr(exc, "format_message"):
        exc.show()
        return exc.exit_code
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "gpuplan"
    message = " ".join(_click_message(exc).split()).rstrip(".")
    for typer_words, ours in _VALUE_WORDS.items():  # pydantic's words: what is taken, in ours
        message = message.replace(typer_words, ours)
    param = getattr(exc, "param", None)
    said = next((w for w in _VALUE_WORDS.values() if w in message), None)
    if said and (plain := without_separators(_typed_value(getattr(param, "opts", ()), args))):
        message = message.replace(said, plain)
    message = message.replace(_A_NUMBER, _number_words(param, args))
    end = "" if message.endswith(("?", "!")) else "."  # "Did you mean 'offers'?" ends itself
    fix = message.startswith("Got unexpected extra") and spaced_list_fix(ctx, list(args))
    print(one_line(f"error: {where}: {message}{end} {fix or f'To fix: see `{where} --help`'}"),
          file=sys.stderr)
    return exc.exit_code


# "--seq-len 8K" was "Input should be a valid integer, unable to parse string as an integer",
# which does not say what is taken (counts such as --tokens take 8K; these options do not)
_VALUE_WORDS = {
    "Input should be a valid integer, unable to parse string as an integer":
        "it takes a whole number in digits (e.g. 64; not 1.5, 8K or 1e4)",
    "Input should be a valid integer, got a number with a fractional part":
        "it takes a whole number in digits (e.g. 64; not 1.5)",
    "Input should be a valid number, unable to parse string as a number":
        "it takes a number in digits (e.g. 250000 or 0.5)",
}
_A_NUMBER = _VALUE_WORDS["Input should be a valid number, unable to parse string as a number"]
# the number options that take a share: their own example, as a fraction (`--min-probability
# 90%` was told "e.g. 250000 or 0.5"); amounts of USD are read by ``parse_usd`` ($30,000, 30k)
_FRACTION_EXAMPLES = {"min_probability": "0.9", "commitment_use": "0.5"}


def _number_words(param, args) -> str:
    """What a number option takes, with an example of its own; a percentage given to one that
    takes a fraction is shown as that fraction."""
    name = getattr(param, "name", None)
    if name not in _FRACTION_EXAMPLES:
        return _A_NUMBER
    value = _typed_value(getattr(param, "opts", ()), args).strip()
    try:
        fraction = float(value.removesuffix("%")) / 100 if value.endswith("%") else None
    except ValueError:
        fraction = None
    if fraction is not None:
        return f"it takes a fraction, not a percentage: write {value} as {fraction:g}"
    return f"it takes a fraction in digits (e.g. {_FRACTION_EXAMPLES[name]})"


def _typed_value(opts, args) -> str:
    """The value last given to the option spelt ``opts`` on the command line ``args``."""
    value = ""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        name, eq, rest = arg.partition("=")
        if name in opts:
            value = rest if eq else (args[i + 1] if i + 1 < len(args) else "")
    return value


def _click_message(exc) -> str:
    """click's message, with its "Possible options" for an unknown option cut to the close
    ones: it compared names with their dashes, so every "--" option looked half alike and
    `--deadlin` got "--deadline, --heads, --model"."""
    name = getattr(exc, "option_name", None)
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ != "NoSuchOption" or not name or ctx is None:
        return exc.format_message()
    from catalog import close_matches

    spelt = {opt.lstrip("-"): opt for p in getattr(ctx.command, "params", ())
             for opt in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))
             if opt.startswith("--") and not getattr(p, "hidden", False)}
    close = [spelt[m] for m in close_matches(name.lstrip("-"), spelt)]
    return exc.message + (f" (Possible options: {', '.join(close)})" if close else "")

