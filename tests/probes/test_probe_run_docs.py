"""docs/probes.md says what `gpuplan probe run` and `python -m probes` do (fix sweep, 2026-12):
it said that missing `--out` folders are created and that `gpuplan probe run` is "the same",
while gpuplan refuses a missing folder as every gpuplan `--out` does; and that a repeated
`--sizes` value writes a duplicate entry, which the probe no longer writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner.cli import main as gpuplan

DOC = Path(__file__).resolve().parents[2] / "docs" / "probes.md"
RUN = "import sys\nfrom probes.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def _option_row(doc: str, option: str) -> str:
    return next(line for line in doc.splitlines() if line.startswith(f"| `{option}"))


def test_the_out_folder_rule_of_each_command_is_the_documented_one(tmp_path, capsys):
    pytest.importorskip("torch")
    from probes.cli import main as probes_main

    doc = DOC.read_text(encoding="utf-8")
    row = _option_row(doc, "--out PATH")
    assert "`python -m probes` creates missing folders" in row, row
    assert "`gpuplan probe run` refuses them" in row, row
    assert "missing folders are created" not in doc
    missing = tmp_path / "new" / "sub" / "r.json"
    quick = ["--device", "cpu", "--quick", "--probes", "environment"]
    assert gpuplan(["probe", "run", *quick, "--out", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "mkdir -p" in err, err
    assert probes_main([*quick, "--out", str(missing)]) == 0 and missing.is_file()


def test_a_repeated_size_is_in_the_report_once_as_documented(tmp_path, capsys):
    pytest.importorskip("torch")
    doc = DOC.read_text(encoding="utf-8")
    assert "writes one too: name each size once" not in doc
    assert "is in the report once" in _option_row(doc, "--sizes")
    script, out = tmp_path / "run.py", tmp_path / "r.json"
    script.write_text(RUN)
    env = dict(os.environ, GPUPLAN_NO_METADATA="1", OMP_NUM_THREADS="1")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                 "MASTER_PORT"):
        env.pop(name, None)
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         str(script), "--quick", "--device", "cpu", "--probes", "collectives", "--sizes",
         "1K,1K,4K", "--out", str(out)], capture_output=True, text=True, timeout=180, env=env,
        cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(out.read_text())
    measured = [s for s in data["collectives"]["series"] if s["points"]]
    assert measured and all([p["size_bytes"] for p in s["points"]] == [1024, 4096]
                            for s in measured), measured
    # the environment came too, though --probes named only the collectives
    assert data["environment"]["world_size"] == 2
    assert gpuplan(["probe", "ingest", str(out)]) == 0
    assert "cpu (no GPU), 2 processes" in capsys.readouterr().out
