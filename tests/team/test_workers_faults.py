"""Forked planning workers (``planner.team._workers.map_forked``) under faults (hostile
sweep 2026-12-05): one Ctrl-C left `gpuplan report --workers 4` hanging after its
"interrupted" line about one run in twenty, and a low open-file limit (`ulimit -n 16`) was a
traceback from ``os.pipe`` followed by a hang on the workers already forked. Each case runs
in its own Python process (signals, resource limits) with a hard timeout: a hang fails."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="fork, /proc and RLIMIT_NOFILE as on Linux")

PRELUDE = textwrap.dedent("""
    import os, sys, time, warnings
    sys.path.insert(0, {root!r})
    from planner.team._workers import map_forked

    def slow(key, state):
        open(os.path.join(state, f"started-{{key}}"), "w").close()
        time.sleep(60 if key else 0)  # key 0 returns at once; the others outlive the test
        return key

    def add(key, state):
        return key + state
""")


def _python(body: str, **kw) -> subprocess.Popen:
    code = PRELUDE.format(root=str(ROOT)) + textwrap.dedent(body)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def test_every_result_comes_back_from_the_workers():
    proc = _python("""
        got = []
        map_forked(add, list(range(12)), 100, 4, lambda k, v: got.append((k, v)))
        print(sorted(got), len(got))
    """)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip() == f"{[(k, k + 100) for k in range(12)]} 12"


def test_one_interrupt_ends_the_pool_promptly(tmp_path):
    proc = _python(f"""
        try:
            map_forked(slow, list(range(8)), {str(tmp_path)!r}, 4, lambda k, v: None)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
    """)
    deadline = time.monotonic() + 30
    while len(list(tmp_path.glob("started-*"))) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(list(tmp_path.glob("started-*"))) >= 4, "the workers never started"
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    out, err = proc.communicate(timeout=30)  # a graceful shutdown would wait ~60 s or more
    assert proc.returncode == 130 and out.strip() == "interrupted", (proc.returncode, err)
    assert time.monotonic() - started < 15
    assert "Traceback" not in err, err


def test_a_low_open_file_limit_plans_in_this_process_with_a_notice():
    proc = _python("""
        import resource
        resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))
        got = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            map_forked(add, list(range(12)), 100, 12, lambda k, v: got.append((k, v)))
        print(sorted(got))
        print("|".join(str(w.message) for w in caught))
    """)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    results, notices = out.strip().split("\n")
    assert results == str([(k, k + 100) for k in range(12)])
    assert "could start " in notices and " of 12 worker processes" in notices \
        and "ulimit -n" in notices, notices


def test_an_exception_in_a_worker_is_raised_here():
    proc = _python("""
        class Odd(Exception):
            def __init__(self, *, why):  # keyword-only: pickles, but cannot be rebuilt
                super().__init__(why)

        def fail(key, state):
            if key == 3:
                raise Odd(why="bad key 3")
            return key

        try:
            map_forked(fail, list(range(6)), None, 2, lambda k, v: None)
        except Exception as exc:
            print(type(exc).__name__, exc)
    """)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip() == "RuntimeError Odd: bad key 3", (out, err)
