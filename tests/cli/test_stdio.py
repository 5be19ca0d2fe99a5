"""The command line around its standard streams (found by a fault-injection sweep): Ctrl-C
exited 0 with nothing said, a full or closed stdout gave a traceback, an unbuffered stdout
(PYTHONUNBUFFERED, as in many containers) on a nearly full disk exited 0 with the output cut
at 12 KB, a latin-1 locale crashed every table, a data directory the user may not enter gave
a PermissionError traceback."""

from __future__ import annotations

import codecs
import os
import subprocess
import sys
from pathlib import Path

import pytest

import planner.cli._main as cli_main
from planner.cli import _stdio, main

ROOT = Path(__file__).resolve().parents[2]


def _gpuplan(*argv: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "planner", *argv], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=120,
                          **kwargs)


def test_a_full_stdout_is_one_line_and_exit_2():
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "planner", "offers", "--csv"],
                              stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                              timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: cannot write to standard output (No space left on device). To fix: write it "
        "somewhere with room (or use --out where the command has it)"]


def test_a_closed_stdout_is_one_line_and_exit_2():
    proc = subprocess.run([sys.executable, "-c", "import os, sys; os.close(1); "
                           "from planner.cli import main; sys.exit(main())", "gpus"],
                          stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    # (the interpreter itself sees fd 1 open at start here; sys.stdout fails on write)
    assert proc.returncode == 2, proc.stderr
    assert "standard output" in proc.stderr and "Traceback" not in proc.stderr


def test_an_unbuffered_stdout_gets_a_buffer_whose_writes_complete_or_raise():
    code = ("import sys; from planner.cli import _stdio; _stdio.make_safe(); "
            "print(type(sys.stdout.buffer).__name__)")
    out = subprocess.run([sys.executable, "-u", "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60).stdout
    assert out.strip() == "BufferedWriter"


def test_a_latin1_locale_prints_tables_instead_of_crashing():
    proc = _gpuplan("gpus", env={"PYTHONIOENCODING": "latin-1"})
    assert proc.returncode == 0, proc.stderr
    assert "A100" in proc.stdout and "Traceback" not in proc.stderr


def test_an_ascii_locale_spells_the_plan_in_ascii_not_question_marks():
    # "P ? 90%", "P10?P90 $18,128?$35,560" and "?????" rules under every table header
    proc = _gpuplan("plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "1d",
                    env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0, proc.stderr
    assert "P >= 90%" in proc.stdout and "P10-P90 $" in proc.stdout
    assert "?" not in proc.stdout and "\n----" in proc.stdout


def test_the_plain_spelling_of_what_an_encoding_lacks():
    codecs.register_error(_stdio._PLAIN_ERRORS, _stdio._plain)
    text = "≥ 1–2 × 3 ─│╭ café σ 中"
    assert text.encode("ascii", _stdio._PLAIN_ERRORS) == b">= 1-2 x 3 -|+ cafe sigma ?"
    assert text.encode("latin-1", _stdio._PLAIN_ERRORS) == \
        ">= 1-2 × 3 -|+ café sigma ?".encode("latin-1")  # latin-1 keeps × and é


def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    # Typer turns a KeyboardInterrupt into a *returned* 130 in non-standalone mode; main
    # used to drop it and exit 0
    monkeypatch.setattr(cli_main, "_command", lambda only: lambda **kw: 130)
    assert main(["gpus"]) == 130
    assert capsys.readouterr().err.startswith("error: interrupted (Ctrl-C)")

    def interrupted(only):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "_command", interrupted)
    assert main(["gpus"]) == 130


@pytest.mark.parametrize("error", [
    MemoryError(), RuntimeError("Resource temporarily unavailable"),
    RuntimeError("can't start new thread"), OSError(12, "Cannot allocate memory", "click")])
def test_running_out_of_memory_or_threads_is_one_line_not_a_traceback(monkeypatch, capsys,
                                                                      error):
    """Under `ulimit -v` a report ended in a traceback ("RuntimeError: Resource temporarily
    unavailable", hostile sweep)."""
    def exhausted(only):
        raise error

    monkeypatch.setattr(cli_main, "_command", exhausted)
    assert main(["gpus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: out of memory (") and err.count("\n") == 1
    assert "To fix: raise the limit" in err


def test_another_runtime_error_is_still_a_bug(monkeypatch):
    def broken(only):
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli_main, "_command", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["gpus"])


def test_a_permission_error_names_the_path_and_the_fix(capsys):
    code = _stdio.os_error(PermissionError(13, "Permission denied", "/data/catalogs/active"))
    assert code == 2
    err = capsys.readouterr().err
    assert "permission denied: /data/catalogs/active" in err and "GPUPLAN_HOME" in err


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists(),
                    reason="needs root to drop to another user")
def test_an_input_file_the_user_cannot_read_says_to_make_it_readable(tmp_path):
    from catalog import CatalogFileError, read_user_text

    path = tmp_path / "team.yaml"
    path.write_text("jobs: []\n")
    path.chmod(0)
    try:
        os.seteuid(65534)
        with pytest.raises(CatalogFileError, match=r"permission denied\).*chmod u\+r"):
            read_user_text(path, what="team plan")
    finally:
        os.seteuid(0)


def test_a_report_on_stdout_is_utf8_whatever_the_locale():
    # a latin-1 locale wrote the HTML (which says charset utf-8) as latin-1 with '?' in it
    proc = subprocess.run([sys.executable, "-m", "planner", "report", "examples/team.yaml",
                           "--format", "html"], capture_output=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "PYTHONIOENCODING": "latin-1"})
    assert proc.returncode == 0, proc.stderr[-500:]
    text = proc.stdout.decode("utf-8")  # raises if not UTF-8
    assert 'charset="utf-8"' in text.lower() or "charset=utf-8" in text.lower()


def test_a_terminal_of_zero_columns_is_taken_as_unknown(monkeypatch):
    from planner.cli import _tables

    class Tty:
        def isatty(self):
            return True

        def fileno(self):
            return 1

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(_tables.os, "get_terminal_size", lambda fd: os.terminal_size((0, 0)))
    assert _tables.text_width(Tty()) == _tables.PIPED_WIDTH


def test_ctrl_c_while_the_cli_imports_exits_130_with_one_line():
    # `gpuplan` spends ~0.1 s importing typer and numpy; a Ctrl-C there was a traceback from
    # an import. The import now happens inside planner.cli.main (an import hook stands in for
    # the key press, deterministically).
    code = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'planner.cli._main':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from planner.cli import main\n"
        "sys.exit(main(['gpus']))\n")
    _assert_interrupted(code)


def test_a_ctrl_c_that_lands_in_a_finaliser_still_stops_the_command():
    # Python prints an interrupt raised in a weakref callback or __del__ ("Exception ignored
    # in … KeyboardInterrupt") and carries on: a PDF report was written and the command exited
    # 0 (hostile sweep). A __del__ that raises it stands in for the key press landing there.
    code = (
        "import sys\n"
        "import planner.cli._main as m\n"
        "class Finaliser:\n"
        "    def __del__(self):\n"
        "        raise KeyboardInterrupt\n"
        "real = m._run\n"
        "def run(*args):\n"
        "    Finaliser()\n"
        "    return real(*args)\n"
        "m._run = run\n"
        "sys.argv = ['gpuplan', 'gpus', '--json']\n"
        "sys.exit(m.main())\n")
    _assert_interrupted(code)


def _assert_interrupted(code: str) -> None:
    """``python -c code`` exits 130 and says only that it was interrupted."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip() == ("error: interrupted (Ctrl-C); files are written whole or "
                                   "not at all")


def test_import_planner_loads_neither_numpy_nor_the_cli():
    # what makes the window above small, and `gpuplan offers` skip the model's imports
    code = ("import sys, planner, planner.cli\n"
            "print(sorted(m for m in ('numpy', 'typer', 'planner.model', 'planner.cli._main')"
            " if m in sys.modules))\n"
            "print(planner.model.estimate is planner.estimate)")  # subpackages as attributes
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=True).stdout
    assert out.split() == ["[]", "True"]


def test_plan_json_imports_no_rich(tmp_path):
    # its stderr catalog line once went through a rich console: ~15 ms of imports for one
    # line (benchmarks/import_budget.py forbids rich on this path)
    code = ("import sys\nfrom planner.cli import main\n"
            "code = main(['plan', '--model', 'gpt2', '--tokens', '1B', '--deadline', '1d', "
            "'--max-gpus', '8', '--json'])\n"
            "print(code, sorted(m for m in sys.modules if m.split('.')[0] == 'rich'),"
            " file=sys.stderr)")
    env = {**os.environ, "GPUPLAN_HOME": str(tmp_path), "GPUPLAN_CACHE_DIR": str(tmp_path)}
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, env=env).stderr
    assert err.strip().splitlines()[-1] == "0 []", err
    assert "Catalog: packaged (prices as of" in err


@pytest.mark.parametrize(("signum", "code", "said"), [
    ("SIGINT", 130, "error: interrupted (Ctrl-C); files are written whole or not at all"),
    ("SIGTERM", 143, "error: terminated (SIGTERM); files are written whole or not at all")])
def test_an_interrupt_that_a_library_turns_into_another_error_is_still_an_interrupt(
        signum, code, said):
    """Ctrl-C while scipy's compiled modules were imported came out as "ImportError:
    initialization failed" (or a TypeError) and a traceback, exit 1 (fault sweep 2026-12-06):
    the library caught the KeyboardInterrupt and raised its own error. SIGTERM had no handler:
    it killed the process where it stood, temp files left behind."""
    script = (
        "import signal, sys, time\n"
        "import catalog\n"
        "from planner.cli import main\n"
        "def load(*args, **kwargs):\n"
        "    try:\n"
        f"        signal.raise_signal(signal.{signum})\n"
        "        time.sleep(0.5)\n"
        "    except KeyboardInterrupt:\n"
        "        raise ImportError('initialization failed') from None\n"
        "    raise AssertionError('the signal did not interrupt')\n"
        "catalog.load_catalog = load\n"
        "sys.exit(main())\n")
    proc = subprocess.run([sys.executable, "-c", script, "offers"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.strip().splitlines() == [said]


def test_a_full_stdout_beside_a_written_out_file_does_not_send_the_user_to_out(tmp_path):
    """`launch probes --out p.sky.yaml >/dev/full` wrote the file, then said "To fix: … (or
    use --out where the command has it)": --out was given, and its file was whole."""
    out = tmp_path / "p.sky.yaml"
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "planner", "launch", "probes",
                               "--instance", "p5.48xlarge", "--region", "us-east-1",
                               "--target", "skypilot", "--out",
                               str(out)], stdout=full, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and out.exists()
    (line,) = proc.stderr.strip().splitlines()
    assert line == ("error: cannot write to standard output (No space left on device); what "
                    "--out names was written. To fix: send standard output somewhere with "
                    "room (> FILE, or > /dev/null to discard it)"), line

    # `--out -` is standard output itself: what was lost is the output
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "planner", "launch", "probes",
                               "--instance", "p5.48xlarge", "--region", "us-east-1",
                               "--target", "skypilot", "--out", "-"], stdout=full,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and "what --out names was written" not in proc.stderr


def test_a_lost_sigterm_is_raised_again_as_sigterm(monkeypatch):
    """An interrupt lost in a finaliser is raised again; a SIGTERM came back as SIGINT, and
    `report` said "interrupted (Ctrl-C)", exit 130 (review 2026-12-06)."""
    import _thread
    import signal
    import time

    raised = []
    monkeypatch.setattr(_thread, "interrupt_main", raised.append)
    monkeypatch.setattr(time, "sleep", lambda s: None)
    monkeypatch.setattr(_stdio, "_SIGNALLED", [signal.SIGTERM])
    _stdio._interrupt_soon()
    assert raised == [signal.SIGTERM]
