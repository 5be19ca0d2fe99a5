"""catalog._files: the one place that reads and writes the user's files. Each test pins one
promise of issue 16 (a regression test is named after the bug it pins)."""

from __future__ import annotations

import errno
import math
import os
import stat
from pathlib import Path

import pytest

from catalog import (
    CatalogFileError,
    check_output_path,
    load_json_text,
    load_yaml_text,
    read_user_text,
    write_bytes_atomic,
    write_text_atomic,
)

ROOT = os.geteuid() == 0  # root ignores permission bits: those tests cannot run as root


def _error(call, *args, **kwargs) -> str:
    with pytest.raises(CatalogFileError) as info:
        call(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message and "To fix: " in message, message
    return message


# ---- reading -------------------------------------------------------------------------------------

def test_reading_dev_zero_is_refused_before_reading_issue16():
    assert "/dev/zero: is a device, not a regular file" in _error(
        read_user_text, "/dev/zero", what="team plan")


def test_reading_a_fifo_is_refused_without_blocking(tmp_path, no_hang):
    os.mkfifo(tmp_path / "pipe")
    assert "is a named pipe (FIFO)" in _error(read_user_text, tmp_path / "pipe", what="f")


@pytest.mark.parametrize(("name", "fragment"), [
    ("", "the path is empty"), ("a\x00b", "contains a NUL character"),
    ("missing.yaml", "cannot read it (no such file)"),
])
def test_reading_a_bad_path_names_the_problem(tmp_path, name, fragment):
    path = str(tmp_path / name) if name.strip() and "\x00" not in name else name
    assert fragment in _error(read_user_text, path, what="quota file")


def test_reading_a_directory_is_refused(tmp_path):
    assert "is a directory" in _error(read_user_text, tmp_path, what="f")


def test_size_limit_is_exact(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_user_text(path, what="f", max_bytes=10) == "x" * 10
    assert "10 bytes, more than the 9 bytes allowed" in _error(
        read_user_text, path, what="f", max_bytes=9)


def test_non_utf8_names_the_byte_offset_and_line(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"ok: 1\nname: caf\xe9\n")
    assert "byte 0xe9 at byte offset 15, line 2" in _error(read_user_text, path, what="f")


def test_a_utf8_bom_is_dropped(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"\xef\xbb\xbfjobs: []\n")
    assert read_user_text(path, what="f") == "jobs: []\n"


# ---- YAML ----------------------------------------------------------------------------------------

def test_an_impossible_unquoted_date_stays_a_string_issue16():
    # PyYAML's own loader raises a bare ValueError here (a traceback before our validation).
    data = load_yaml_text("deadline: 2027-02-30\nstart: 2027-03-01\nat: !!timestamp 2027-03-01",
                          what="team plan")
    assert data == {"deadline": "2027-02-30", "start": "2027-03-01", "at": "2027-03-01"}


def test_numbers_are_read_as_yaml_1_2_reads_them():
    """YAML 1.1 read a budget of 0600000 as octal ($196,608), max_gpus 010 as 8 and priority
    1:30 as 90 (base 60), silently."""
    text = ("a: 010\nb: 0600000\nc: 1:30\nd: 0o17\ne: 0x1f\nf: 1_000\ng: 190:20:30.15\n"
            "h: 0b11\ni: -5\nj: 2.5e9\nk: 1e13\nl: .inf\nm: -.5\nn: '010'\no: 0x_\n")
    data = load_yaml_text(text, what="f")
    assert data == {"a": 10, "b": 600000, "c": "1:30", "d": 15, "e": 31, "f": 1000,
                    "g": "190:20:30.15", "h": "0b11", "i": -5, "j": 2.5e9, "k": 1e13,
                    "l": math.inf, "m": -0.5, "n": "010", "o": "0x_"}
    assert type(data["a"]) is int and type(data["j"]) is float
    # an explicit !!float still took YAML 1.1's base 60 (1:30 → 90.0)
    for tagged in ("a: !!float 1:30", "a: !!float 190:20:30.15"):
        with pytest.raises(CatalogFileError, match="base-60 number, which YAML 1.2 does not"):
            load_yaml_text(tagged, what="f")
    assert load_yaml_text("a: !!float 1_0.5", what="f") == {"a": 10.5}


def test_yaml_depth_limit_is_exact():
    assert load_yaml_text("[" * 32 + "]" * 32, what="f") is not None
    assert "nesting deeper than 32 levels" in _error(
        load_yaml_text, "[" * 33 + "]" * 33, what="f")
    assert load_yaml_text("[" * 4 + "]" * 4, what="f", max_depth=4) == [[[[]]]]


def test_billion_laughs_is_refused_quickly():
    from .cases_files import BILLION_LAUGHS

    assert "expands to more than 100,000 values through aliases" in _error(
        load_yaml_text, BILLION_LAUGHS, what="f")


def test_aliases_and_merge_keys_still_work():
    text = "base: &b {x: 1, y: 2}\njob:\n  <<: *b\n  y: 3\nlist: [*b, *b]\n"
    data = load_yaml_text(text, what="f")
    assert data["job"] == {"x": 1, "y": 3} and data["list"] == [{"x": 1, "y": 2}] * 2


@pytest.mark.parametrize(("text", "fragment"), [
    ("a: 1\na: 2\n", "line 2, column 1: duplicate key 'a'"),
    ("a: [1,\n", "invalid YAML at line 2"),
    ("x: &a [*a]\n", "refers to the value that contains it"),
    ("a: !!python/name:os.system\n", "could not determine a constructor"),
    ("a: " + "1" * 41 + "\n", "a 41-digit number (at most 40 digits)"),
    ("a: 1\x00\n", "character #x0000 is not allowed"),
])
def test_yaml_errors_name_line_and_problem(text, fragment):
    assert fragment in _error(load_yaml_text, text, what="team.yaml")


# ---- JSON ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "fragment"), [
    ('{"a": NaN}', "NaN is not a number JSON allows"),
    ('{"a": Infinity}', "Infinity is not a number JSON allows"),
    ('{"a": -Infinity}', "-Infinity is not a number JSON allows"),
    ('{"a": 1e400}', "1e400 is too large for a number"),
    ('{"a": ' + "9" * 41 + "}", "a 41-digit number"),
    ('{"a": 1, "a": 2}', "duplicate key 'a'"),
    ('{"a": 1,\n "b": }', "invalid JSON at line 2, column 7"),
])
def test_json_refuses_what_python_json_accepts(text, fragment):
    assert fragment in _error(load_json_text, text, what="config.json")


def test_json_depth_limit_ignores_brackets_inside_strings():
    assert load_json_text("[" * 64 + "]" * 64, what="f") is not None
    assert "nesting deeper than 64 levels" in _error(load_json_text, "[" * 65 + "]" * 65,
                                                     what="f")
    assert load_json_text('["' + "[" * 1000 + '"]', what="f") == ["[" * 1000]
    assert load_json_text('{"a": ' + "9" * 40 + "}", what="f") == {"a": int("9" * 40)}


# ---- output paths --------------------------------------------------------------------------------

def test_dev_null_as_output_is_refused_not_replaced_issue16():
    assert "/dev/null: is a device; refusing to replace it" in _error(
        check_output_path, "/dev/null", what="report")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_fifo_as_output_is_refused_and_kept(tmp_path, no_hang):
    os.mkfifo(tmp_path / "pipe")
    assert "is a named pipe (FIFO); refusing" in _error(
        write_text_atomic, tmp_path / "pipe", "x")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)


@pytest.mark.parametrize(("name", "fragment"), [
    ("", "the path is empty"),
    (".", "is a directory; refusing to replace it. To fix: give a file name inside"),
    ("no/such/dir/r.md", "the directory {tmp}/no/such/dir does not exist. To fix: create it"),
    ("file/r.md", "{tmp}/file is not a directory"),
])
def test_bad_output_paths_say_why(tmp_path, name, fragment):
    (tmp_path / "file").write_text("x")
    path = str(tmp_path / name) if name else ""
    assert fragment.format(tmp=tmp_path) in _error(check_output_path, path, what="report")


@pytest.mark.skipif(ROOT, reason="root may write anywhere")
def test_a_read_only_directory_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    assert "is read-only for you" in _error(check_output_path, locked / "r.md", what="report")


@pytest.mark.skipif(ROOT, reason="root may write anywhere")
def test_a_read_only_file_is_refused(tmp_path):
    path = tmp_path / "r.md"
    path.write_text("keep")
    path.chmod(0o444)
    assert "the file is read-only" in _error(check_output_path, path, what="report")


def test_a_symlink_is_followed_and_kept(tmp_path):
    (tmp_path / "real.md").write_text("old")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    write_text_atomic(tmp_path / "link.md", "new")
    assert (tmp_path / "link.md").is_symlink() and (tmp_path / "real.md").read_text() == "new"


# ---- atomic writes -------------------------------------------------------------------------------

def test_a_new_file_gets_the_umask_mode_not_0600_issue16(tmp_path):
    old = os.umask(0o027)
    try:
        write_bytes_atomic(tmp_path / "r.csv", b"a,b\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "r.csv").st_mode) == 0o640


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("old")
    path.chmod(0o604)
    write_text_atomic(path, "new")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o604 and path.read_text() == "new"


def test_a_full_disk_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "r.md"
    path.write_text("old report")

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    assert "cannot write it (disk full)" in _error(write_text_atomic, path, "new report")
    monkeypatch.undo()
    assert path.read_text() == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]


def test_the_written_path_is_returned(tmp_path):
    assert write_text_atomic(tmp_path / "a.txt", "é") == tmp_path / "a.txt"
    assert (tmp_path / "a.txt").read_bytes() == "é".encode()


class _Statvfs:
    def __init__(self, flag: int) -> None:
        self.f_flag = flag


@pytest.mark.parametrize(("mount_flag", "mode", "says", "not_says"), [
    # a read-only mount: chmod fails there (EROFS); it promised chmod would fix it
    (os.ST_RDONLY, 0o644, "on a read-only file system", "chmod"),
    # an immutable file (chattr +i): its mode already allows writing
    (0, 0o644, "immutable or append-only", "chmod"),
    (0, 0o444, "chmod u+w", "immutable"),  # the mode forbids it: chmod is the fix
])
def test_a_file_that_cannot_be_written_gets_the_fix_that_works(tmp_path, monkeypatch,
                                                                mount_flag, mode, says,
                                                                not_says):
    path = tmp_path / "r.md"
    path.write_text("keep")
    path.chmod(mode)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **kw: False if Path(p) == path
                        else real_access(p, m, **kw))
    monkeypatch.setattr(os, "statvfs", lambda p: _Statvfs(mount_flag))
    said = _error(check_output_path, path, what="report")
    assert says in said and not_says not in said and "To fix:" in said, said
    assert path.read_text() == "keep"


@pytest.mark.parametrize(("text", "fix"), [
    ("jobs: []\njobs: []\n", "keep one of the two keys"),
    ("jobs: !!python/object/apply:os.system [x]\n", "remove the tag: gpuplan reads plain YAML"),
    ("jobs: []\n---\njobs: []\n", "keep one document in the file"),
    ("a: b: c\n", "correct the file (quote values that contain ':' or '#')"),
    ("jobs:\n\t- a: 1\n", "indent with spaces"),
    ("a: *x\n", "define the anchor (&name) before its alias"),
    ("a: &x 1\nb: &x 2\n", "give each anchor (&name) a name of its own"),
    ("a: [1, 2\n", "close the list's '[' with ']'"),
    ("? [a, b]\n: 1\n", "make the key text or a number"),
])
def test_a_yaml_error_gets_the_fix_for_its_kind(text, fix):
    """A duplicate key, a Python tag and a second document were all told to "quote values
    that contain ':' or '#'"."""
    message = _error(load_yaml_text, text, what="team.yaml")
    assert f"To fix: {fix}" in message
    assert ": but found" not in message and ": second occurrence" not in message  # fragments
