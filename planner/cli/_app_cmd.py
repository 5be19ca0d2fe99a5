"""`gpuplan app`: launch the Streamlit app (app.py at the root of a source checkout).

Runs ``python -m streamlit run <checkout>/app.py --server.headless true`` with every further
argument passed through (``gpuplan app --server.port 8502``), forwards SIGTERM and SIGINT to it
and waits for it to exit. Without Streamlit, or without app.py next to the installed package (a
wheel install), it says which extra to install.
"""

# No `from __future__ import annotations` in a command module: see planner/cli/_main.py

import importlib.util
import signal
import subprocess
import sys
import time
from pathlib import Path

import typer

from ._app import CliExit

FORWARDED = (signal.SIGTERM, signal.SIGINT)  # what stops `gpuplan app` stops the server
GRACE_S = 10.0  # a server still running this long after the signal is killed
MAX_UPLOAD_MB = 4  # Streamlit's default is 200 MB; no file the app reads is near 4 MB
LOCAL_ADDRESS = "127.0.0.1"  # served to this machine unless --server.address says otherwise


def app_script() -> Path:
    """Where app.py lives: the folder above the installed ``planner`` package."""
    import planner

    return Path(planner.__file__).resolve().parent.parent / "app.py"


def streamlit_installed() -> bool:
    return importlib.util.find_spec("streamlit") is not None


def launch_command(script: Path, args: list[str]) -> list[str]:
    # The same settings as the repository's .streamlit/config.toml, which Streamlit only reads
    # from the working directory: no usage-statistics calls (the app works offline), no
    # developer "Deploy" menu, and uploads of at most a few MB (the pages' own limits are lower).
    # And this machine only: Streamlit listens on every interface by default, and the Probes
    # page adds and removes the calibration every later plan uses. `--server.address 0.0.0.0`
    # (the user's own, later on the line) still serves the network, where that is meant.
    return [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
            "--browser.gatherUsageStats", "false", "--client.toolbarMode", "viewer",
            "--server.maxUploadSize", str(MAX_UPLOAD_MB), *(
                () if any(a.split("=")[0] == "--server.address" for a in args)
                else ("--server.address", LOCAL_ADDRESS)), *args]


def app_cmd(ctx: typer.Context) -> None:
    """Open the Streamlit app: plan, explore the catalog, look at probe results, build a team
    budget. Extra arguments go to `streamlit run` (e.g. --server.port 8502)."""
    from catalog import GpuplanError, install_hint

    script = app_script()
    if not streamlit_installed():
        raise GpuplanError(f"the app needs Streamlit, which is not installed. To fix: "
                           f"{install_hint('app')}")
    if not script.is_file():
        raise GpuplanError(f"the app (app.py) is not next to the installed package at "
                           f"{script.parent}; it ships with a source checkout. To fix: "
                           f"{install_hint('app')}")
    args = list(ctx.args)
    check_streamlit_args(args)
    raise CliExit(run_server(launch_command(script, args)))


MAX_VALUE_CHARS = 1_000
BOUNDS = {  # option: (low, high, unit) for the numbers that matter to the app
    "server.port": (1, 65_535, ""),
    "server.maxUploadSize": (1, MAX_UPLOAD_MB, " MB (the app's cap on uploads)"),
}


def check_streamlit_args(args: list[str]) -> None:
    """Extra arguments are Streamlit config options, `--section.name VALUE` or
    `--section.name=VALUE`, each known to Streamlit, with a one-line value; the port and the
    upload size within their bounds. Checked here so that a typo is one line and exit 2,
    not a server that starts with the wrong settings (or a traceback from Streamlit)."""
    import re

    from catalog import GpuplanError, UnknownNameError

    if not args:  # nothing to check: `streamlit_options` imports all of Streamlit (0.5 s),
        return    # which the server then imports again
    known = streamlit_options()
    fix = "To fix: e.g. gpuplan app --server.port 8502 (see `streamlit run --help`)"
    i = 0
    while i < len(args):
        token = args[i]
        if not token.startswith("--") or token == "--":
            raise GpuplanError(f"unexpected argument {token!r}: `gpuplan app` takes Streamlit "
                               f"options only (--section.name VALUE). {fix}")
        name, eq, value = token[2:].partition("=")
        if not eq:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise GpuplanError(f"--{name} needs a value. {fix}")
            value = args[i + 1]
            i += 1
        i += 1
        if "." not in name:
            raise GpuplanError(f"--{name} is not a Streamlit option (they read "
                               f"--section.name, e.g. --server.port). {fix}")
        if known and name not in known:
            raise UnknownNameError("Streamlit option", name, known,
                                   hint=fix.removeprefix("To fix: "))
        if not value.strip():
            raise GpuplanError(f"--{name} needs a value. {fix}")
        if len(value) > MAX_VALUE_CHARS:
            raise GpuplanError(f"--{name}: a value has at most {MAX_VALUE_CHARS:,} characters, "
                               f"got {len(value):,}. {fix}")
        if not value.isprintable():
            raise GpuplanError(f"--{name}: the value must be one line of printable text. {fix}")
        if name in BOUNDS:
            low, high, unit = BOUNDS[name]
            whole = re.fullmatch(r"[+-]?[0-9]{1,12}", value.strip())
            if whole is None or not low <= int(value) <= high:
                raise GpuplanError(f"--{name} must be a whole number from {low:,} to {high:,}"
                                   f"{unit}, got {value!r}. {fix}")


def streamlit_options() -> frozenset[str]:
    """The names of Streamlit's config options ("server.port", …); empty if this Streamlit
    does not list them where we look (then only the form of a name is checked).

    Listing them imports all of Streamlit (0.5 s, before the server, which imports it again,
    can start), and a third of them (theme.*) are made at run time, so its source cannot be
    read instead: the list is kept in the per-user cache for this Streamlit (its version and
    where it is installed) and read from there by every later `gpuplan app`."""
    import hashlib

    from catalog import read_cached, write_cached

    where = importlib.util.find_spec("streamlit")
    try:
        from importlib.metadata import version

        tag = f"streamlit-options 1\n{version('streamlit')}\n{where.origin if where else ''}"
    except Exception:  # noqa: BLE001 - no metadata: not kept, listed each time
        tag = None
    key = hashlib.sha256(tag.encode()).digest() if tag else None
    name = key.hex()[:32] if key is not None else ""  # the cache file's
    if key is not None:
        kept = read_cached(OPTIONS_PREFIX, name, key)
        if type(kept) is tuple and kept and all(type(name) is str for name in kept):
            return frozenset(kept)
    try:
        from streamlit import config
    except ImportError:
        return frozenset()
    template = getattr(config, "_config_options_template", None)
    names = frozenset(template) if isinstance(template, dict) else frozenset()
    if key is not None and names:
        write_cached(OPTIONS_PREFIX, name, key, tuple(sorted(names)),
                     budget_bytes=OPTIONS_BUDGET_BYTES)
    return names


OPTIONS_PREFIX = "streamlit"  # cache files streamlit-<hex>.bin
OPTIONS_BUDGET_BYTES = 2**20  # a list is ~10 KB; a few Streamlit versions


def run_server(command: list[str], *, grace_s: float = GRACE_S) -> int:
    """Run the server until it exits, and return its exit status (128 + N if signal N ended it).

    SIGTERM and SIGINT sent to this process are passed on to the server, which then shuts
    down cleanly; if it is still running ``grace_s`` seconds after the first, it is killed. So
    stopping `gpuplan app` (a service manager's SIGTERM, Ctrl-C) never leaves a server behind.
    """
    proc = subprocess.Popen(command)
    signalled_at: list[float] = []

    def forward(signum, _frame) -> None:
        if not signalled_at:
            signalled_at.append(time.monotonic())
        if proc.poll() is None:
            proc.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in FORWARDED}
    try:
        while True:
            try:
                code = proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if signalled_at and time.monotonic() - signalled_at[0] > grace_s:
                    proc.kill()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 128 - code if code < 0 else code
