"""`gpuplan app`: runs `streamlit run app.py --server.headless true` with the arguments it
was given, forwards SIGTERM/SIGINT to it and waits for it; without Streamlit or app.py, one line
saying what to install, exit 2."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

import planner.cli._app_cmd as app_cmd  # registers the command (as _register_commands does)
from planner.cli import main

from .conftest import APP


class FakeServer:
    """Stands in for the Streamlit process: records the command, exits with ``code``."""

    def __init__(self, seen: list, code: int = 0):
        self.seen, self.code = seen, code

    def __call__(self, cmd):
        self.seen.append(cmd)
        return self

    def wait(self, timeout=None):
        return self.code

    def poll(self):
        return self.code


@pytest.fixture
def calls(monkeypatch):
    seen: list = []
    monkeypatch.setattr(app_cmd.subprocess, "Popen", FakeServer(seen))
    return seen


def test_it_runs_streamlit_on_the_checkouts_app_with_passthrough_arguments(calls):
    assert main(["app", "--server.port", "8502", "--theme.base", "dark"]) == 0
    assert calls == [[sys.executable, "-m", "streamlit", "run", str(APP),
                      "--server.headless", "true", "--browser.gatherUsageStats", "false",
                      "--client.toolbarMode", "viewer", "--server.maxUploadSize", "4",
                      "--server.address", "127.0.0.1",
                      "--server.port", "8502", "--theme.base", "dark"]]


@pytest.mark.parametrize("given", [["--server.address", "0.0.0.0"],
                                   ["--server.address=0.0.0.0"]])
def test_it_serves_this_machine_only_unless_an_address_is_given(calls, given):
    """Streamlit listens on every interface by default, and the Probes page changes the
    calibration every later plan uses: `gpuplan app` binds to 127.0.0.1; the user's own
    address (to share it on purpose) replaces that, not follows it."""
    assert main(["app", *given]) == 0
    (cmd,) = calls
    assert [a for a in cmd if a.startswith("--server.address")] == [given[0]]
    assert "127.0.0.1" not in cmd


def test_streamlits_exit_code_is_the_commands(monkeypatch):
    monkeypatch.setattr(app_cmd.subprocess, "Popen", FakeServer([], code=3))
    assert main(["app"]) == 3


def test_without_streamlit_it_says_which_extra_to_install(monkeypatch, calls, capsys):
    monkeypatch.setattr(app_cmd, "streamlit_installed", lambda: False)
    assert main(["app"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.endswith("To fix: pip install -e '.[app]' in the gpuplan "
                                             "checkout")
    assert calls == []


def test_without_app_py_next_to_the_package_it_says_how_to_get_it(monkeypatch, calls,
                                                                   capsys, tmp_path):
    monkeypatch.setattr(app_cmd, "app_script", lambda: tmp_path / "app.py")
    assert main(["app"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "To fix: pip install -e '.[app]' in the gpuplan checkout" in err
    assert calls == []


# ---- signals: stopping `gpuplan app` stops the server ----------------------------------------

# A server stand-in: writes its pid, then on SIGTERM/SIGINT writes which signal and exits 0.
CHILD = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    out = Path(sys.argv[1])
    def stop(signum, frame):
        out.with_suffix(".signal").write_text(str(signum))
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    out.write_text(str(os.getpid()))
    while True:
        time.sleep(0.1)
""")
# `gpuplan app`'s server loop with the stand-in as the server.
DRIVER = textwrap.dedent("""
    import sys
    from planner.cli._app_cmd import run_server
    sys.exit(run_server([sys.executable, "-c", sys.argv[1], sys.argv[2]], grace_s=5))
""")


def wait_for(path: Path, timeout_s: float = 30) -> str:
    deadline = time.monotonic() + timeout_s
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return path.read_text()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_gpuplan_app_reaches_the_server_and_it_waits_for_it(tmp_path, signum):
    marker = tmp_path / "child.pid"
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, CHILD, str(marker)])
    try:
        child = int(wait_for(marker))
        driver.send_signal(signum)
        assert driver.wait(timeout=20) == 0  # the server's own exit status
        assert wait_for(marker.with_suffix(".signal")) == str(int(signum))
        assert not alive(child)
    finally:
        if driver.poll() is None:
            driver.kill()


def test_a_server_that_ignores_the_signal_is_killed_after_the_grace_period(tmp_path):
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" \
               "open(__import__('sys').argv[1], 'w').write('up')\nwhile True: time.sleep(1)"
    marker = tmp_path / "up"
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, stubborn, str(marker)])
    try:
        wait_for(marker)
        start = time.monotonic()
        driver.send_signal(signal.SIGTERM)
        assert driver.wait(timeout=30) == 128 + signal.SIGKILL
        assert 4 < time.monotonic() - start < 20
    finally:
        if driver.poll() is None:
            driver.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sigterm_to_gpuplan_app_stops_the_streamlit_server(tmp_path):
    """End to end: `gpuplan app` serves the app; after SIGTERM, nothing answers on its port."""
    port = free_port()
    env = {**os.environ, "GPUPLAN_HOME": str(tmp_path / "home")}
    cli = subprocess.Popen([sys.executable, "-m", "planner", "app", "--server.port", str(port),
                            "--server.address", "127.0.0.1", "--server.fileWatcherType",
                            "none"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    health = f"http://127.0.0.1:{port}/_stcore/health"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(health, timeout=2) as r:
                    assert r.read().strip() == b"ok"
                    break
            except OSError:
                assert cli.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.25)
        cli.send_signal(signal.SIGTERM)
        assert cli.wait(timeout=30) in (0, 128 + signal.SIGTERM)
        with pytest.raises(OSError):
            urllib.request.urlopen(health, timeout=2)
    finally:
        if cli.poll() is None:
            cli.kill()



# `gpuplan app ARGS` in a fresh process, the server stubbed out: its status, then whether it
# imported Streamlit (in the wrapper: the server imports it again)
WRAPPER = textwrap.dedent("""
    import sys
    import planner.cli._app_cmd as app_cmd
    from planner.cli import main

    class Done:
        def wait(self, timeout=None):
            return 0

        def poll(self):
            return 0

    app_cmd.subprocess.Popen = lambda cmd: Done()
    code = main(["app", *sys.argv[1:]])
    print(code, "streamlit" in sys.modules)
""")


def _wrapper(env: dict, *args: str) -> tuple[list[str], str]:
    out = subprocess.run([sys.executable, "-c", WRAPPER, *args], capture_output=True,
                         text=True, env=env, timeout=60, check=True)
    return out.stdout.split(), out.stderr


def test_a_bare_gpuplan_app_does_not_import_streamlit_before_the_server_does(tmp_path):
    """With no options to check, the wrapper imports no Streamlit (0.5 s of the time before
    the browser can connect, then imported again by the server)."""
    env = {**os.environ, "GPUPLAN_HOME": str(tmp_path / "home"),
           "GPUPLAN_CACHE_DIR": str(tmp_path / "cache")}
    assert _wrapper(env)[0] == ["0", "False"]


def test_streamlits_option_names_are_kept_for_later_runs(tmp_path):
    """Checking `gpuplan app --server.port …` lists Streamlit's options, which imports all of
    Streamlit: the first run keeps the list in the per-user cache, and a later run checks
    against it without importing Streamlit (a typo is still refused with close matches)."""
    env = {**os.environ, "GPUPLAN_HOME": str(tmp_path / "home"),
           "GPUPLAN_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GPUPLAN_NO_CACHE", None)
    assert _wrapper(env, "--server.port", "8502")[0] == ["0", "True"]  # listed, and kept
    assert _wrapper(env, "--server.port", "8502", "--theme.base", "dark")[0] == ["0", "False"]
    said, err = _wrapper(env, "--theme.bse", "dark")
    assert said == ["2", "False"] and "Did you mean 'theme.base'" in err
    for entry in (tmp_path / "cache").glob("streamlit-*.bin"):  # damaged: listed again
        entry.write_bytes(b"not a cache entry")
    assert _wrapper(env, "--server.port", "8502")[0] == ["0", "True"]
