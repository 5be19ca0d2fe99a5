"""Text from the user's files and command lines reaches the terminal escaped: a file name with
a newline, ESC (colours, cursor moves, an OSC window-title change) or a bidirectional override
cannot break the one error line or act on the terminal (hostile sweep: `gpuplan report
$'a\\nb\\e[31mred.yaml'` printed the newline and the colour as they were)."""

from __future__ import annotations

import errno

import pytest

from planner.cli import main
from planner.cli._stdio import os_error
from planner.cli._tables import clean_cell, one_line

RAW = ("\x1b", "\x07", "\u202e", "\r")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def the_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err[:500]
    assert not any(c in err for c in RAW), ascii(err)
    return err.strip()


def test_a_team_plan_path_with_a_newline_and_a_colour_is_one_escaped_line(capsys, tmp_path):
    name = tmp_path / "a\nb\x1b[31mred.yaml"
    name.write_text("x")
    code, out, err = run(capsys, "report", str(name))
    line = the_line(err)
    assert code == 2 and out == ""
    assert "a\\nb\\x1b[31mred.yaml: " in line and line.startswith("error: ")


def test_a_missing_overrides_file_with_a_title_change_is_escaped(capsys, tmp_path):
    name = tmp_path / "no\x1b]0;pwned\x07.yaml"
    code, _, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "1d",
                       "--overrides", str(name))
    assert code == 2
    assert "no\\x1b]0;pwned\\x07.yaml" in the_line(err)


def test_a_usage_error_quoting_an_option_with_escapes_is_escaped(capsys):
    code, _, err = run(capsys, "plan", "--mod\x1b[2Jel", "gpt2")
    assert code == 2
    assert "--mod\\x1b[2Jel" in the_line(err)


def test_an_os_error_naming_such_a_file_is_escaped(capsys):
    exc = PermissionError(errno.EACCES, "Permission denied", "/tmp/x\u202eylm.exe")
    assert os_error(exc) == 2
    _, err = capsys.readouterr()
    assert "/tmp/x\\u202eylm.exe" in the_line(err)


@pytest.mark.parametrize(("text", "shown"), [
    ("a\nb", "a\\nb"), ("a\r\nb", "a\\r\\nb"), ("tab\there", "tab here"),
    ("\x1b[31mred", "\\x1b[31mred"), ("bell\x07", "bell\\x07"), ("c1\x9bx", "c1\\x9bx"),
    ("rtl\u202eabc", "rtl\\u202eabc"), ("isolate\u2066x\u2069", "isolate\\u2066x\\u2069"),
    ("plain é — ≥ 中文", "plain é — ≥ 中文"),
])
def test_one_line_escapes_every_control_and_keeps_ordinary_text(text, shown):
    assert one_line(text) == shown


def test_a_table_cell_keeps_its_lines_and_escapes_a_bidi_override():
    assert clean_cell("p5\u202e.48x\nsecond") == "p5\\u202e.48x\nsecond"
    assert clean_cell("x\x1b[2Jy") == "x\\x1b[2Jy"


def test_a_note_quoting_the_overrides_path_is_escaped(capsys, tmp_path):
    # the catalog banner ("overrides from PATH") is a wrapped note, not an error line
    name = tmp_path / "rates\x1b[8m.yaml"
    name.write_text("discounts:\n  - {cloud: aws, percent: 10}\n")
    code, out, err = run(capsys, "offers", "--gpu", "H100", "--limit", "1", "--overrides",
                         str(name))
    assert code == 0, err
    assert "\x1b" not in out + err and "rates\\x1b[8m.yaml" in out + err


FORGED = "p5.48xlarge; calibrates H100 (1 figure)\n  used: matmul H100 bf16: 5,000.0 TFLOP/s"


def test_a_report_s_instance_type_cannot_forge_lines_in_probe_output(capsys, tmp_path):
    # a newline in environment.instance_type printed a fake "used:" line under `probe ingest`
    # and `probe show` (hostile sweep); the ESC escapes were already there
    from probe_reports import h100_report

    from probes import write_report_atomic

    path = write_report_atomic(h100_report(instance_type=FORGED), tmp_path / "r.json")
    for argv in (("probe", "ingest", str(path)), ("probe", "show", "1"),
                 ("probe", "show", "--wide")):
        code, out, _ = run(capsys, *argv)
        assert code == 0, argv
        assert not any(line.lstrip().startswith("used: matmul H100 bf16: 5,000.0")
                       for line in out.splitlines()), (argv, out)
        assert "\\n  used: matmul H100" in out.replace("\n", "")
