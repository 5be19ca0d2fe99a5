"""`gpuplan app`: runs `streamlit run app.py --server.headless true` with the arguments it
was given; without Streamlit or app.py, one line saying what to install, exit 2."""

from __future__ import annotations

import sys

import pytest

import planner.cli._app_cmd as app_cmd  # registers the command (as _register_commands does)
from planner.cli import main

from .conftest import APP


@pytest.fixture
def calls(monkeypatch):
    seen = []
    monkeypatch.setattr(app_cmd.subprocess, "call", lambda cmd: seen.append(cmd) or 0)
    return seen


def test_it_runs_streamlit_on_the_checkouts_app_with_passthrough_arguments(calls):
    assert main(["app", "--server.port", "8502", "--theme.base", "dark"]) == 0
    assert calls == [[sys.executable, "-m", "streamlit", "run", str(APP),
                      "--server.headless", "true", "--browser.gatherUsageStats", "false",
                      "--client.toolbarMode", "viewer", "--server.port", "8502",
                      "--theme.base", "dark"]]


def test_streamlits_exit_code_is_the_commands(monkeypatch):
    monkeypatch.setattr(app_cmd.subprocess, "call", lambda cmd: 3)
    assert main(["app"]) == 3


def test_without_streamlit_it_says_which_extra_to_install(monkeypatch, calls, capsys):
    monkeypatch.setattr(app_cmd, "streamlit_installed", lambda: False)
    assert main(["app"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.endswith("To fix: pip install 'gpuplan[app]'")
    assert calls == []


def test_without_app_py_next_to_the_package_it_says_how_to_get_it(monkeypatch, calls,
                                                                   capsys, tmp_path):
    monkeypatch.setattr(app_cmd, "app_script", lambda: tmp_path / "app.py")
    assert main(["app"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "To fix: pip install 'gpuplan[app]'" in err
    assert calls == []
