"""`report --out` never writes into gpuplan's own store (the active catalog's files, the probe
database), and a PDF report with a matplotlibrc that is not UTF-8 is one error, exit 2
(hostile sweep: the first exited 0 and broke every later command, the second was a
traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from planner.cli import main

ROOT = Path(__file__).resolve().parents[2]
TEAM = {
    "name": "store team",
    "jobs": [{"name": "small", "team": "research", "clouds": ["aws"], "accelerators": ["H100"],
              "max_gpus": 64, "workload": {"params": "1B", "tokens": "20B", "seq_len": 2048},
              "earliest_start": "2027-03-01", "deadline": "2027-03-20"}],
}


@pytest.fixture
def team_file(tmp_path):
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(TEAM))
    return path


@pytest.fixture
def stored_active(capsys):
    """A small refreshed catalog in the store, made active; its folder."""
    from catalog import _install, load_catalog

    cat = load_catalog("packaged")
    kept = {t.name for t in cat.instance_types[:3]}
    _, path = _install.install(cat.accelerators, cat.instance_types[:3],
                               tuple(o for o in cat.offers if o.instance_type in kept),
                               {"name": "refreshed", "clouds": {}}, name="refreshed-store")
    assert main(["catalog", "use", "refreshed-store"]) == 0
    capsys.readouterr()
    return path


def test_out_never_writes_into_the_active_catalog(team_file, stored_active, tmp_path, capsys):
    before = {f.name: f.read_bytes() for f in stored_active.iterdir()}
    link = tmp_path / "link.csv"
    link.symlink_to(stored_active / "meta.json")
    for target in (stored_active / "offers.csv", stored_active / "new.csv", link,
                   stored_active.parent / "active"):
        assert main(["report", str(team_file), "--format", "csv", "--out", str(target)]) == 2
        err = capsys.readouterr().err
        assert "the report would replace or add to gpuplan's own files. To fix: choose " \
               "another --out" in err, err
    assert {f.name: f.read_bytes() for f in stored_active.iterdir()} == before
    assert main(["catalog", "info", "--json"]) == 0  # the store still reads


def test_out_never_writes_into_the_packaged_catalog(team_file, capsys):
    from catalog import load_catalog

    # a new file, removed whatever happens: a failure must not leave the checkout's own
    # catalog replaced (the old code wrote over offers.csv there)
    target = Path(load_catalog().path) / "gpuplan-test-report.csv"
    try:
        assert main(["report", str(team_file), "--format", "csv", "--out", str(target)]) == 2
        assert "is in the folder of the catalog this command read" in \
            capsys.readouterr().err
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


@pytest.mark.parametrize("name", ["probes.db", "probes.db-wal"])
def test_out_never_replaces_the_probe_database(team_file, capsys, name):
    from planner.store import db_path

    target = db_path().parent / name
    assert main(["report", str(team_file), "--format", "csv", "--out", str(target)]) == 2
    said = "is gpuplan's probe database" if name == "probes.db" else \
        "is a file SQLite keeps beside gpuplan's probe database"
    assert (f"--out {target} {said}: the report would replace or add to gpuplan's own files. "
            "To fix: choose another --out") in capsys.readouterr().err
    assert not target.exists()


def test_a_matplotlibrc_that_is_not_utf8_is_one_error_before_planning(team_file, tmp_path):
    pytest.importorskip("matplotlib")
    rc = tmp_path / "matplotlibrc"
    rc.write_bytes(b"backend: agg\n\xd8\xff\xfe garbage \x80\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for cwd, extra in ((tmp_path, {}), (ROOT, {"MATPLOTLIBRC": str(rc)})):
        run = subprocess.run([sys.executable, "-m", "planner", "report", str(team_file),
                              "--out", str(tmp_path / "x.pdf")], cwd=cwd, env={**env, **extra},
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 2, run.stderr
        assert run.stderr == (f"error: matplotlib's configuration file {rc} is not UTF-8 text "
                              "(byte 0xd8 at offset 13), so the PDF report's charts cannot be "
                              "drawn. To fix: correct or remove that file (or point "
                              "MATPLOTLIBRC at a good one), or use --format html, md or "
                              "csv\n"), run.stderr
        assert not (tmp_path / "x.pdf").exists()


@pytest.mark.parametrize("args,option", [
    (["launch", "probes", "--target", "skypilot", "--instance", "p5.48xlarge", "--out"], "--out"),
    (["plan", "--model", "gpt2", "--tokens", "1B", "--emit", "torchrun", "--emit-out"],
     "--emit-out"),
])
def test_task_files_never_go_into_gpuplans_own_store(args, option, capsys):
    """A new file there was written (only an existing file not of gpuplan's was kept): a
    task file named probes.db made every later command fail on a "damaged" database."""
    from catalog import load_catalog
    from planner.store import db_path

    db = db_path()
    db.parent.mkdir(parents=True, exist_ok=True)
    packaged = Path(load_catalog("packaged").path) / "gpuplan-test-task.yaml"
    try:
        for target, said in ((db, "is gpuplan's probe database"),
                             (packaged, "is in the packaged catalog's folder")):
            assert main([*args, str(target)]) == 2
            err = " ".join(capsys.readouterr().err.split())
            assert f"{said}" in err and f"To fix: choose another {option}" in err, err
            assert not target.exists()
    finally:
        packaged.unlink(missing_ok=True)
