"""A kill -9 while `launch probes --target dstack --nodes 2` wrote its fleet and task: the
kept earlier files (.a-fleet.dstack.yml.HEX.old, .a.dstack.yml.HEX.old) stayed for ever, and
1 of 20 kills left a new fleet beside an old task (fault sweep). Now both new files are
written whole before either target is replaced, the renames come back to back, and the next
write removes a killed write's names (by the temp files' age rule) and says what it replaced."""

from __future__ import annotations

import os

from launch_helpers import load, run

import catalog

ARGV = ("launch", "probes", "--instance", "p5.48xlarge", "--target", "dstack", "--nodes", "2")
HEX = "0123456789ab"


def _pair(capsys, tmp_path, *more: str):
    task = tmp_path / "a.dstack.yml"
    code, out, err = run(capsys, *ARGV, "--out", str(task), *more)
    assert code == 0, err
    return task, tmp_path / "a-fleet.dstack.yml", out + err


def _killed_between_the_renames(task, fleet):
    """What a kill between the fleet's rename and the task's left: the earlier fleet kept,
    the new task written whole but not in place, and its write's temp file."""
    (fleet.parent / f".{fleet.name}.{HEX}.old").write_text(fleet.read_text())
    (task.parent / f".{task.name}.{HEX}.new").write_text("half of the pair\n")
    (task.parent / f"..{task.name}.{HEX}.new.{HEX}.tmp").write_text("")


def test_a_killed_writes_leftovers_are_removed_and_the_pair_replaced(capsys, tmp_path,
                                                                     monkeypatch):
    task, fleet, _ = _pair(capsys, tmp_path)
    _killed_between_the_renames(task, fleet)
    monkeypatch.setattr(catalog, "STALE_TEMP_SECONDS", -1)  # as if an hour had passed
    _, _, said = _pair(capsys, tmp_path, "--spot")
    assert sorted(os.listdir(tmp_path)) == ["a-fleet.dstack.yml", "a.dstack.yml"]
    assert f"replaced {task}: an earlier write of it was killed part-way" in said
    assert f"replaced {fleet}: an earlier write of it was killed part-way" in said
    assert load(fleet.read_text())["spot_policy"] == load(task.read_text())["spot_policy"] \
        == "spot"


def test_a_young_leftover_may_be_a_concurrent_writes_and_stays(capsys, tmp_path):
    task, fleet, _ = _pair(capsys, tmp_path)
    _killed_between_the_renames(task, fleet)
    _, _, said = _pair(capsys, tmp_path, "--spot")
    assert len(os.listdir(tmp_path)) == 5  # nothing taken from under a live writer
    assert "killed part-way" in said
    _, _, said = _pair(capsys, tmp_path)  # and nothing said of the write's own names
    assert len(os.listdir(tmp_path)) == 5


def test_the_renames_come_after_both_files_are_written(capsys, tmp_path, monkeypatch):
    # a kill during the task's write (the longest step: write, fsync) left a new fleet
    # beside the old task; now only the instant between two renames can
    task, fleet, _ = _pair(capsys, tmp_path)
    events = []
    write, replace = catalog.write_text_atomic, os.replace

    def writing(path, text, **kw):
        events.append("write")
        return write(path, text, **kw)

    def replacing(src, dst, *a, **kw):
        if os.path.basename(dst) in (task.name, fleet.name):
            events.append(os.path.basename(dst))
        return replace(src, dst, *a, **kw)

    monkeypatch.setattr(catalog, "write_text_atomic", writing)
    monkeypatch.setattr(os, "replace", replacing)
    _pair(capsys, tmp_path, "--spot")
    assert events == ["write", "write", fleet.name, task.name]
    assert sorted(os.listdir(tmp_path)) == ["a-fleet.dstack.yml", "a.dstack.yml"]


def test_a_replaced_task_file_keeps_its_mode(capsys, tmp_path):
    task, fleet, _ = _pair(capsys, tmp_path)
    os.chmod(task, 0o600)
    _pair(capsys, tmp_path, "--spot")
    assert (os.stat(task).st_mode & 0o777, load(task.read_text())["spot_policy"]) == \
        (0o600, "spot")
