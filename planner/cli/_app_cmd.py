"""`gpuplan app`: launch the Streamlit app (app.py at the root of a source checkout).

Runs ``python -m streamlit run <checkout>/app.py --server.headless true`` with every further
argument passed through (``gpuplan app --server.port 8502``). Without Streamlit, or without
app.py next to the installed package (a wheel install), it says which extra to install.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import typer

from ._app import CliExit, app

FIX = "To fix: pip install 'gpuplan[app]'"


def app_script() -> Path:
    """Where app.py lives: the folder above the installed ``planner`` package."""
    import planner

    return Path(planner.__file__).resolve().parent.parent / "app.py"


def streamlit_installed() -> bool:
    return importlib.util.find_spec("streamlit") is not None


def launch_command(script: Path, args: list[str]) -> list[str]:
    # The same settings as the repository's .streamlit/config.toml, which Streamlit only reads
    # from the working directory: no usage-statistics calls (the app works offline) and no
    # developer "Deploy" menu.
    return [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
            "--browser.gatherUsageStats", "false", "--client.toolbarMode", "viewer", *args]


@app.command("app", context_settings={"allow_extra_args": True,
                                      "ignore_unknown_options": True})
def app_cmd(ctx: typer.Context) -> None:
    """Open the Streamlit app: plan, explore the catalog, look at probe results, build a team
    budget. Extra arguments go to `streamlit run` (e.g. --server.port 8502)."""
    from catalog import GpuplanError

    script = app_script()
    if not streamlit_installed():
        raise GpuplanError(f"the app needs Streamlit, which is not installed. {FIX}")
    if not script.is_file():
        raise GpuplanError(f"the app (app.py) is not next to the installed package at "
                           f"{script.parent}; it ships with a source checkout. {FIX} from "
                           "a checkout (pip install -e '.[app]')")
    try:
        code = subprocess.call(launch_command(script, list(ctx.args)))
    except KeyboardInterrupt:
        code = 130
    raise CliExit(code)
