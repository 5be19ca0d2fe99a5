"""`python -m probes` checks every option before anything runs (issue 16): one line on stderr,
``python -m probes: error: … To fix: …``, exit 2, and no probe started — the same refusals as
`gpuplan probe run`, which parses its options with the same parser."""

from __future__ import annotations

import os

import pytest

import probes
import probes._runner as runner
from probes import ProbeConfig, ProbesError
from probes._errors import ReportWriteError
from probes.cli import build_parser, main


@pytest.fixture(autouse=True)
def nothing_runs(monkeypatch, tmp_path_factory):
    """A check that lets a bad option through fails the test instead of measuring, or
    creating a file outside pytest's temporary folders (/dev as root)."""
    def ran(*args, **kwargs):
        raise AssertionError("the probes ran")

    allowed = str(tmp_path_factory.getbasetemp().resolve()) + os.sep
    real_open = os.open

    def guarded_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and not os.path.realpath(path).startswith(allowed):
            raise AssertionError(f"test guard: creating {path!r} outside tmp")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(runner, "run_probes", ran)
    monkeypatch.setattr(os, "open", guarded_open)
    monkeypatch.delenv("RANK", raising=False)


def _refused(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err  # no usage block
    assert lines[0].startswith("python -m probes: error: ") and "To fix:" in lines[0], lines[0]
    assert captured.out == ""
    return lines[0]


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--timeout-s", "nan"], "--timeout-s must be a number from 1 to 86,400 (seconds), got nan"),
    (["--timeout-s", "inf"], "from 1 to 86,400"),
    (["--timeout-s", "0"], "from 1 to 86,400"),
    (["--timeout-s", "-5"], "from 1 to 86,400"),
    (["--timeout-s", "1e9"], "from 1 to 86,400"),
    (["--timeout-s", "soon"], "invalid float value: 'soon'"),
    (["--sizes", "0"], "bad size '0'"),
    (["--sizes=-1K"], "bad size '-1K'"),
    (["--sizes", "1T"], "bad size '1T'"),
    (["--sizes", "\u00b2"], "bad size '\u00b2'"),  # a digit int() refuses
    (["--sizes", ""], "--sizes is empty"),
    (["--sizes", "99999999G"], "at most 16 GiB"),
    (["--sizes", "9" * 400], "at most 16 GiB"),
    (["--sizes", ",".join(["1K"] * 33)], "at most 32 sizes"),
    (["--shapes", "0x1x1"], "bad shape '0x1x1'"),
    (["--shapes", "4096x4096"], "bad shape"),
    (["--shapes", "1000000"], "each dimension at most 65,536"),
    (["--shapes", "9" * 400], "is too large: each dimension at most 65,536"),
    (["--shapes", ",".join(["64"] * 33)], "at most 32 shapes"),
    (["--probes", "matmull"], "unknown name(s) 'matmull'. Did you mean 'matmul'? To fix: "
                              "choose from environment, matmul, memory, collectives"),
    (["--probes", "Memory"], "Did you mean 'memory'?"),
    (["--probes", ","], "unknown name(s) (none)"),
    (["--dtypes", "bf61"], "Did you mean 'bf16'?"),
    (["--device", "gpu"], "invalid choice: 'gpu'"),
    (["--sise", "1K"], "unrecognized arguments: --sise 1K. Did you mean --sizes?"),
    (["extra"], "unrecognized arguments: extra"),
    # argparse reads a value starting with "-" as the next option ("expected one argument")
    (["--shapes", "-16x16x16"], "--shapes '-16x16x16': a value that starts with '-' is read as "
                                "an option. To fix: write --shapes='-16x16x16'"),
    (["--out", "-report.json"], "write --out='-report.json' if that is the value meant"),
])
def test_bad_options_are_one_line_and_nothing_runs(argv, fragment, capsys, tmp_path):
    line = _refused([*argv, "--out", str(tmp_path / "r.json")], capsys)
    assert fragment in line


def test_a_long_bad_value_is_quoted_short(capsys, tmp_path):
    line = _refused(["--sizes", "x" * 10_000, "--out", str(tmp_path / "r.json")], capsys)
    assert len(line) < 300


@pytest.mark.parametrize(("out", "fragment"), [
    ("", "probe report (--out): the path is empty"),
    ("{tmp}", "is a directory; refusing to replace it. To fix: give a file name inside"),
    ("{tmp}/fifo", "is a named pipe (FIFO); refusing to replace it"),
    ("{tmp}/to-null", "is a device; refusing to replace it"),
    ("/dev/null", "/dev/null: is a device; refusing to replace it"),
    ("/dev/gpuplan-probe-report.json", "is under /dev (device nodes)"),
    ("/proc/gpuplan-probe-report.json", "is under /proc"),
    ("/sys/gpuplan-probe-report.json", "is under /sys"),
    ("{tmp}/file/r.json", "is not a directory"),
])
def test_a_report_path_that_cannot_be_written_is_refused_first(out, fragment, capsys, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "to-null").symlink_to("/dev/null")
    (tmp_path / "file").write_text("x")
    line = _refused(["--out", out.format(tmp=tmp_path)], capsys)
    assert fragment in line
    assert not os.path.lexists("/dev/gpuplan-probe-report.json")


def test_a_read_only_folder_is_found_by_trying_even_as_root(capsys, tmp_path,
                                                            read_only_filesystem):
    line = _refused(["--out", str(tmp_path / "r.json")], capsys)
    assert f"cannot create a file in {tmp_path} (read-only file system)" in line


def test_good_options_parse_and_leave_nothing_behind(tmp_path):
    args = build_parser().parse_args(["--out", str(tmp_path / "new" / "r.json"), "--sizes",
                                      "1K,16G", "--shapes", "65536,64x128x256", "--probes",
                                      "matmul,matmul,memory", "--timeout-s", "86400"])
    assert args.sizes == (1024, 16 * 2**30) and args.probes == ("matmul", "memory")
    assert list(tmp_path.iterdir()) == []  # the trial file is gone, no folder was made


def test_only_rank_0_checks_the_report_path(monkeypatch):
    monkeypatch.setenv("RANK", "3")  # the other ranks write nothing
    assert build_parser().parse_args(["--out", "/dev/null"]).out == "/dev/null"
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--out", "/dev/null"])


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--probes", "matmull"], "Did you mean 'matmul'?"),
    (["--dtypes", "fp61"], "Did you mean"),
    (["--sise", "1K"], "Did you mean --sizes?"),
    (["--sizes", "9" * 400], "at most 16 GiB"),
    (["--shapes", "-16x16x16"], "a value that starts with '-' is read as an option"),
    (["--out", "/dev/gpuplan-probe-report.json"], "is under /dev"),
])
def test_gpuplan_probe_run_refuses_the_same(argv, fragment):
    from catalog import GpuplanError
    from planner.cli._probe_cmds import check_run_args

    with pytest.raises(GpuplanError) as info:
        check_run_args(argv)
    message = str(info.value)
    assert message.startswith("probe run: ") and fragment in message and "\n" not in message


def test_a_report_that_cannot_be_written_at_the_end_is_one_line(capsys, tmp_path, monkeypatch):
    pytest.importorskip("torch")

    def full(config, out=None):
        raise ReportWriteError(f"probe report {out}: cannot write it (disk full). To fix: "
                               "free space, or choose another location with --out.")

    monkeypatch.setattr(runner, "run_probes", full)
    assert main(["--out", str(tmp_path / "r.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"error: probe report {tmp_path / 'r.json'}: cannot write "
                                   "it (disk full). To fix: free space")
    assert captured.err.endswith("choose another location with --out.\n")


# ---- the API: ProbeConfig and run_probes ---------------------------------------------------

@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"timeout_seconds": float("nan")}, "finite number > 0, got nan"),
    ({"timeout_seconds": float("inf")}, "finite number > 0"),
    ({"timeout_seconds": True}, "finite number > 0"),
    ({"probes": ("matmull",)}, "did you mean matmul?"),
    ({"probes": ()}, "unknown probe(s) (none)"),
    ({"collective_sizes_bytes": (0,)}, "whole numbers > 0"),
    ({"collective_sizes_bytes": (1.5,)}, "whole numbers > 0"),
    ({"matmul_shapes": ((64, 64, -1),)}, "whole numbers > 0"),
])
def test_probe_config_refuses_what_would_fail_mid_run(kwargs, fragment):
    with pytest.raises(ValueError) as info:
        ProbeConfig(**kwargs)
    assert fragment in str(info.value)


def test_run_probes_refuses_an_unwritable_report_before_measuring(tmp_path, monkeypatch):
    import probes._timing as timing

    def measured(*args, **kwargs):
        raise AssertionError("a device was set up")

    monkeypatch.setattr(timing, "resolve_device", measured)
    with pytest.raises(ProbesError, match="is a directory; refusing"):
        probes.run_probes(ProbeConfig(device="cpu", probes=("environment",)), out=tmp_path)


def _help(capsys, *argv: str) -> str:
    from planner.cli import main as gpuplan

    assert gpuplan([*argv, "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_probe_workload_help_states_what_it_times(capsys, monkeypatch):
    """`probe workload` times one setting: its help offers no --recompute auto (refused there)
    and says --tp defaults to 1 and --micro-batch to 1, not "searched"; `estimate` and `plan`,
    which search, keep saying so."""
    monkeypatch.setenv("COLUMNS", "200")
    text = _help(capsys, "probe", "workload")
    assert "auto (searched)" not in text and "searched" not in text
    assert "--recompute KIND none, selective or full" in text
    assert "--tp N Tensor-parallel degree the layers are split by (default: 1;" in text
    assert "--micro-batch N Sequences per micro-batch per data-parallel rank (default: 1)" \
        in text
    for command in ("estimate", "plan"):
        text = _help(capsys, command)
        assert "--recompute KIND auto (searched), none, selective, full." in text, command
        assert "Pin the tensor-parallel degree (default: searched)." in text, command


def test_out_dash_is_refused_not_written_as_a_file_named_dash(capsys):
    # a file named '-' was written (other commands print to stdout for '-')
    line = _refused(["--out", "-"], capsys)
    assert "--out -: the probes write their report to a file" in line
