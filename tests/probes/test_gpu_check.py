"""benchmarks/gpu_check.py: the nccl-tests parser, and the clean skip without a GPU."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_check.py"

# Trimmed all_reduce_perf output in the layout of nccl-tests 2.x (README "Performance"):
# two header lines, then size, count, type, redop, root, time, algbw, busbw, #wrong, and the
# same time/algbw/busbw/#wrong for in-place.
NCCL_TESTS_OUTPUT = (Path(__file__).parent / "fixtures" / "nccl_tests_all_reduce_perf.txt"
                     ).read_text()


def _load():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parses_out_of_place_busbw_by_header_column():
    assert _load().parse_nccl_tests(NCCL_TESTS_OUTPUT) == {1024: 0.06, 1073741824: 409.55}


def test_older_layout_without_root_column():
    old = NCCL_TESTS_OUTPUT.replace("    root", "").replace("      -1", "")
    assert _load().parse_nccl_tests(old) == {1024: 0.06, 1073741824: 409.55}


def test_skips_cleanly_without_cuda():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                          timeout=60)
    assert (proc.returncode, proc.stdout.strip()) == (0, "no CUDA device: skipped")
