"""`import planner, catalog` must stay light: no cloud SDK, no UI, no torch, no file reads."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("boto3", "botocore", "google.cloud", "azure", "streamlit", "torch", "plotly",
         "matplotlib")


def test_import_loads_no_sdk_or_torch():
    code = ("import sys, planner, catalog, probes, catalog.sources, planner.cli\n"
            f"bad = [m for m in sys.modules if m.startswith({HEAVY!r})]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


def test_import_does_no_file_io(tmp_path):
    # With the package data hidden behind an audit hook, importing must open no catalog file.
    code = (
        "import sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda e, a: opened.append(str(a[0])) if e == 'open' else None)\n"
        "import catalog, planner\n"
        "print([p for p in opened if p.endswith(('.csv', '.json', '.yaml', '.db'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
