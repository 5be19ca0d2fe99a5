"""Inputs named as the flags that set them: the planner's errors and notes say `field`, the CLI
says ``--flag`` as the running command spells it (``flag_for``, ``say_fields``), and
``error_line`` is the one line ``main`` prints for a user error.
"""

from __future__ import annotations

import contextlib
import functools

# Inputs whose flag is not "--" + the field with "-" for "_" (the planner's field names are
# its records' and keyword arguments': Constraints.budget_usd is `plan --budget`).
FLAG_OF_FIELD = {"budget_usd": "--budget", "deadline_hours": "--deadline", "group_by": "--by",
                 "top_n": "--top", "quotas": "--quota-file", "zero_stage": "--zero",
                 "instance_types": "--instance"}


# The click command of the whole CLI, every command registered (set by ``_main``, which is
# the one module that knows them all; a list so that this module need not import it).
FULL_COMMAND: list = []


def long_options(command) -> frozenset[str]:
    """Every long option of the click ``command`` and its subcommands."""
    found = set()

    def walk(command) -> None:
        for param in getattr(command, "params", ()):
            found.update(o for o in getattr(param, "opts", ()) if o.startswith("--"))
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(command)
    return frozenset(found)


@functools.cache
def cli_options() -> frozenset[str]:
    """Every long option some gpuplan command takes (read from the registered commands)."""
    return long_options(FULL_COMMAND[0]())


@functools.lru_cache(maxsize=4)
def _options_of(command) -> frozenset[str]:
    return long_options(command)


def _current_context():
    """The click context of the gpuplan command line being run, None outside one."""
    ctx = None
    for module in ("typer._click.globals", "click.globals"):  # Typer's own click, or click
        try:
            ctx = __import__(module, fromlist=["x"]).get_current_context(silent=True)
        except ImportError:
            continue
        if ctx is not None:
            break
    root = ctx.find_root() if ctx is not None else None
    if root is None or root.info_name != "gpuplan":  # not a gpuplan command line
        return None
    return ctx


def _running_options() -> tuple[frozenset[str], frozenset[str]]:
    """The long options of the command being run, and those of its whole command line (`main`
    registers only the command it runs: a group's, all of the group's); both empty outside
    one. Its context is current while it runs; `main` writes an error's line after click has
    left it, inside ``failed_command``."""
    ctx = _current_context()
    if ctx is not None:
        return _options_of(ctx.command), _options_of(ctx.find_root().command)
    if _FAILED:
        command, line = _FAILED[-1]
        return _options_of(command), _options_of(line)
    return frozenset(), frozenset()


_FAILED: list = []  # (command, its command line) whose error line `main` is writing
_TYPED: list[frozenset[str]] = []  # the long options typed on the command line being run


@contextlib.contextmanager
def typed_line(args: list[str]):
    """While `main` runs ``args``, the long options typed (``typed_flags``, ``as_typed``)."""
    to_stdout = {i for i, a in enumerate(args)  # `--out -` names standard output, no file
                 if a == "--out=-" or a == "--out" and args[i + 1:i + 2] == ["-"]}
    _TYPED.append(frozenset(a.split("=", 1)[0] for i, a in enumerate(args)
                            if a.startswith("--") and i not in to_stdout))
    try:
        yield
    finally:
        _TYPED.pop()


def typed_flags() -> frozenset[str]:
    """The long options typed on the command line being run (none outside one)."""
    return _TYPED[-1] if _TYPED else frozenset()


def as_typed(option: str) -> str:
    """``option`` as the user spelt it, where the running command takes it in two spellings
    (`--cloud`/`--clouds`) and the other one was typed: `offers --clouds ''` said "--cloud is
    empty", and "--regions: … not in --clouds aws" answered `--region eastus --cloud aws`."""
    other = option.removesuffix("s") if option.endswith("s") else option + "s"
    typed = typed_flags()
    if option not in typed and other in typed and _one_option((option, other)):
        return other
    return option


def _one_option(spellings: tuple[str, str]) -> bool:
    """Both ``spellings`` are names of one option of the command being run."""
    ctx = _current_context()
    command = ctx.command if ctx is not None else (_FAILED[-1][0] if _FAILED else None)
    return any(set(spellings) <= set(getattr(p, "opts", ()))
               for p in getattr(command, "params", ()))


@contextlib.contextmanager
def failed_command(command, line):
    """While `main` writes the error line of the click ``command`` (of the command line
    ``line``), ``flag_for`` spells fields as that command does: click has left its context."""
    _FAILED.append((command, line))
    try:
        yield
    finally:
        _FAILED.pop()


def given_options(*, besides: tuple[str, ...] = ()) -> list[str]:
    """The options of the running command given on its command line (not left at their
    defaults), as flags, except the parameters named in ``besides``."""
    ctx = _current_context()
    if ctx is None:
        return []
    given = []
    for p in ctx.command.params:
        source = ctx.get_parameter_source(p.name)
        if p.name not in besides and getattr(source, "name", "") == "COMMANDLINE":
            given.append(max(p.opts, key=len))
    return given


def flag_for(field: str | None) -> str | None:
    """The option that sets the planner input ``field`` ("seq_len" → "--seq-len"), None when
    no command has one."""
    if not field:
        return None
    flag = FLAG_OF_FIELD.get(field) or "--" + field.replace("_", "-")
    # the running command's own spelling first: `offers --cloud` sets `clouds`, which is
    # `plan --clouds`. An option of the command line being run is an option of some command:
    # the whole CLI (every command module imported, every command built) is needed only for
    # the others.
    command, line = _running_options()
    for spelled in (flag, flag.removesuffix("s")):
        if spelled in command:
            return as_typed(spelled)
    if flag in line:
        return flag
    return flag if flag in cli_options() else None


def error_line(exc: BaseException) -> str:
    """A user error as the CLI says it: inputs named as flags, the flag of the input that was
    wrong first (``--seq-len: …``) unless the message already starts with it."""
    from planner.model import refer_to_fields

    from ._tables import one_line

    if getattr(exc, "names_file_keys", False):
        # a team plan's errors already name its YAML keys (``in_team_terms``); a backtick
        # left is the user's own text (a job named "exp `tokens`" read "exp --tokens")
        return one_line(str(exc))
    text = refer_to_fields(str(exc), flag_for)
    flag = flag_for(getattr(exc, "field", None))
    if flag and not text.startswith(flag):
        text = f"{flag}: {text}"
    return one_line(text)


def say_fields(text: str) -> str:
    """A planner note or warning with its input references written as flags."""
    from planner.model import refer_to_fields

    return refer_to_fields(text, flag_for)
