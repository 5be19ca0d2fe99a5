"""The helpers the CLI's layout tests share: ``run`` (in process, captured) and
``in_terminal`` (a real pseudo-terminal of a given width)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios

from rich.cells import cell_len

from planner.cli import main

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")

def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def in_terminal(argv: list[str], columns: int = 100, term: str | None = None) -> str:
    """What `gpuplan ARGV` shows in a pseudo-terminal ``columns`` wide (COLUMNS unset, so the
    width is the terminal's own, as for a person); ``term``: its TERM."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if term is not None:
        env["TERM"] = term
    proc = subprocess.Popen([sys.executable, "-m", "planner", *argv], stdin=follower,
                            stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(leader)
        proc.wait(timeout=60)
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return ANSI.sub("", text)


def widest(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)
