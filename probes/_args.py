"""The probes' command-line parsing, shared by `python -m probes` and `python -m probes
workload` (and, through them, `gpuplan probe run|workload`): every error one line ending
"To fix: …", exit 2, with close matches for a mistyped option or name."""

from __future__ import annotations

import argparse
import difflib
import math
import os
import sys
import time
from collections.abc import Callable, Sequence

from probes._schema import ProbesError
from probes._spread import shown

FIX = "To fix: see `python -m probes --help`."
MAX_TIMEOUT_S = 86_400  # --timeout-s: a process group that has not formed in a day never will
# Under torchrun every rank runs the same command, so a set-up error (a bad option, torch
# missing, a --tp the processes cannot hold, no CUDA) is usually every rank's, in one gathered
# log: rank 0 says it at once; another rank first waits this long, by when torchrun, seeing
# rank 0 exit, has stopped it. An error of that rank alone (a rank beyond the node's GPUs; rank
# 0 then waits in the process group) is still said, after the wait. Exiting at once instead, a
# rank could get rank 0 stopped before it had said anything.
PEER_GRACE_S = 5.0


def is_rank_zero() -> bool:
    """Rank 0 of a torchrun job, or a run without torchrun (RANK unset): the one that says
    what every rank would."""
    return os.environ.get("RANK", "0") == "0"


def wait_unless_rank_zero() -> None:
    """Before a rank but 0 says an error every rank meets: PEER_GRACE_S, above."""
    if not is_rank_zero():
        time.sleep(PEER_GRACE_S)
MAX_DIGITS = 20  # past this a number is not a count; int() of 5,000 digits raises, unworded


def check_timeout(seconds: float, fix: str = FIX) -> None:
    """--timeout-s of `python -m probes` and `python -m probes workload`: argparse's float()
    takes "nan" and "inf", which would make the process group wait forever or fail at once."""
    if not (math.isfinite(seconds) and 1 <= seconds <= MAX_TIMEOUT_S):
        raise ProbesError(f"--timeout-s must be a number from 1 to {MAX_TIMEOUT_S:,} (seconds),"
                          f" got {seconds}. {fix}")


def count(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``, refused up front with its
    bounds (a mistyped 10^20 would otherwise build or step until memory or patience ran
    out)."""
    def parse(text: str) -> int:
        # isdecimal, not isdigit: "²" is a digit that int() refuses with a bare ValueError
        digits = text.strip()
        if not (digits.isdecimal() and len(digits) <= MAX_DIGITS and
                low <= int(digits) <= high):
            raise argparse.ArgumentTypeError(f"{shown(text)} is not a whole number from {low} "
                                             f"to {high:,}")
        return int(digits)
    return parse


def close_names(name: str, known: Sequence[str]) -> list[str]:
    """Up to three of ``known`` close to ``name`` (difflib's default cutoff, as
    catalog.close_matches; not imported from there: the probes run on nodes without it)."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if not close:
        lowered = {k.lower(): k for k in known}
        close = [lowered[m] for m in difflib.get_close_matches(name.lower(), list(lowered),
                                                                n=3, cutoff=0.6)]
    return close


class OneLineParser(argparse.ArgumentParser):
    """argparse, with every error one line (no usage block) ending "To fix: …", exit 2, and
    ``checks`` (a function raising ProbesError) run on what it parsed. The close-match hints
    are made in ``parse_args``, not in ``error``: `gpuplan probe run` replaces ``error`` (to
    raise its own one-line error) and keeps them."""

    def __init__(self, *args, checks: Callable[[argparse.Namespace], None] | None = None,
                 fix: str = FIX, **kwargs) -> None:  # noqa: ANN002, ANN003 - argparse's
        super().__init__(*args, **kwargs)
        self.checks, self.fix = checks, fix

    def parse_args(self, args=None, namespace=None):  # noqa: ANN001, ANN201 - argparse's
        self._dash_values(sys.argv[1:] if args is None else list(args))
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            # Compared without the dashes every option shares, which would make "--bogus"
            # close to "--out".
            options = [a.split("=", 1)[0].lstrip("-") for a in extras if a.startswith("--")]
            known = {o.lstrip("-"): o for o in self._option_string_actions if o.startswith("--")}
            close = [known[c] for c in close_names(options[0], list(known))] if options else []
            hint = f" Did you mean {' or '.join(close)}?" if close else ""
            self.error(f"unrecognized arguments: {' '.join(extras)}.{hint} {self.fix}")
        try:
            if self.checks is not None:
                self.checks(parsed)
        except ProbesError as exc:
            self.error(str(exc))
        return parsed

    def _dash_values(self, argv: list[str]) -> None:
        """argparse reads a value that starts with "-" and is no plain negative number as the
        next option: `--shapes -16x16x16` said only "expected one argument"."""
        for option, value in zip(argv, argv[1:], strict=False):
            action = self._option_string_actions.get(option)
            if (action is not None and (action.nargs is None or isinstance(action.nargs, int)
                                        and action.nargs > 0)
                    and value.startswith("-") and value not in ("-", "--")  # argparse's own
                    and value.split("=", 1)[0] not in
                    self._option_string_actions
                    and not self._negative_number_matcher.match(value)):
                self.error(f"{option} {shown(value)}: a value that starts with '-' is read as "
                           f"an option. To fix: write {option}={shown(value)} if that is the "
                           "value meant")

    def error(self, message: str):  # noqa: ANN201 - argparse's; never returns
        message = " ".join(message.split())
        if "To fix" not in message:
            message = f"{message.rstrip('.')}{'' if message.endswith('?') else '.'} {self.fix}"
        wait_unless_rank_zero()  # every rank parses the same options: said once (8 lines)
        self.exit(2, f"{self.prog}: error: {message}\n")
