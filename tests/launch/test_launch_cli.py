"""`gpuplan launch probes` and `gpuplan plan --emit` through the CLI entry point."""

from __future__ import annotations

import os

import yaml

from planner.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_launch_probes_writes_the_file_and_prints_the_commands(capsys, tmp_path):
    out_file = tmp_path / "tmp" / "x.yaml"
    out_file.parent.mkdir()
    code, out, err = run(capsys, "launch", "probes", "--instance", "p5.48xlarge", "--nodes",
                         "2", "--target", "skypilot", "--out", str(out_file))
    assert code == 0, err
    assert yaml.safe_load(out_file.read_text())["num_nodes"] == 2
    assert os.listdir(out_file.parent) == ["x.yaml"]  # written atomically: no temp file left
    assert f"sky launch -c gpuplan-probes-p5-48xlarge-2n -i 30 --down {out_file}" in out
    assert "gpuplan probe ingest report.json" in out
    cost = next(line for line in out.splitlines() if line.startswith("Cost before launch:"))
    assert "2 x p5.48xlarge at $" in cost and "min" in cost  # before the commands
    assert out.index("Cost before launch") < out.index("1. sky launch")


def test_launch_probes_dstack_to_stdout(capsys):
    code, out, err = run(capsys, "launch", "probes", "--instance", "p5.48xlarge", "--nodes",
                         "2", "--target", "dstack", "--out", "-", "--spot")
    assert code == 0, err
    assert "placement: cluster" in out and "spot_policy: spot" in out
    # stdout is the task files only, one YAML stream (fleet, task); the rest is on stderr
    docs = list(yaml.safe_load_all(out))
    assert [d["type"] for d in docs] == ["fleet", "task"]
    # the user saves each document under a name of their own: the commands name no default
    # file they may not have (docs/launch.md: `--out - > probes.sky.yaml`)
    assert "dstack apply -f FILE1\n" in err and "dstack apply -f FILE2\n" in err
    assert "dstack apply" not in out and ".dstack.yml\n" not in err
    assert ("FILE1 is document 1 (headed # ---- gpuplan-probes-fleet.dstack.yml ----) and "
            "FILE2 document 2 (headed # ---- gpuplan-probes.dstack.yml ----)") in err
    assert "Cost before launch" in err


def test_launch_probes_to_stdout_names_the_file_the_user_saved(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "launch", "probes", "--instance", "p5.48xlarge", "--target",
                         "skypilot", "--out", "-")
    assert code == 0, err
    assert yaml.safe_load(out)["run"] and "sky launch" not in out
    assert "Save the YAML printed on stdout to a file; FILE below is that file. Then run:" in err
    assert "1. sky launch -c gpuplan-probes-p5-48xlarge-1n -i 30 --down FILE\n" in err
    assert "gpuplan-probes.sky.yaml" not in err and os.listdir(tmp_path) == []


def test_launch_probes_user_errors_exit_2_with_one_line(capsys):
    for argv, needle in (
        (["--instance", "p5.48xlarg", "--target", "skypilot"], "Did you mean 'p5.48xlarge'"),
        (["--instance", "p5.48xlarge", "--target", "slurm"], "unknown launch target"),
        (["--instance", "p5.48xlarge", "--target", "dstack", "--nodes", "0"], "between 1 and"),
        (["--instance", "p5.48xlarge", "--target", "dstack", "--bucket", "ftp://x"], "bucket"),
        # a real region without the instance read "unknown region … Did you mean 'us-west-1'"
        (["--instance", "p5.48xlarge", "--target", "dstack", "--region", "eu-west-1"],
         "p5.48xlarge is not offered in eu-west-1 (aws) in the catalog. To fix: pin one of its "
         "regions ("),
        (["--instance", "p5.48xlarge", "--target", "dstack", "--region", "eu-west-9"],
         "unknown region for p5.48xlarge 'eu-west-9'"),
    ):
        code, out, err = run(capsys, "launch", "probes", *argv)
        assert code == 2
        assert err.count("\n") == 1 and needle in err and "To fix" in err


def test_plan_emit_torchrun(capsys):
    code, out, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline",
                         "2d", "--emit", "torchrun")
    assert code == 0, err
    assert "export GPUPLAN_TP=" in out and "export GPUPLAN_GRAD_ACCUM=" in out
    line = next(x for x in out.splitlines() if x.startswith("torchrun "))
    assert "--nproc-per-node" in line and "YOUR_TRAIN_SCRIPT.py --tp " in line
    assert line.endswith("# ← replace with your training script")


def test_plan_emit_skypilot_to_a_file(capsys, tmp_path):
    path = tmp_path / "train.sky.yaml"
    code, out, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline",
                         "2d", "--emit", "skypilot", "--emit-out", str(path))
    assert code == 0, err
    task = yaml.safe_load(path.read_text())
    assert set(task["envs"]) >= {"GPUPLAN_TP", "GPUPLAN_PP", "GPUPLAN_DP"}
    assert "sky " in out


def test_plan_emit_bad_target(capsys):
    code, out, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline",
                         "2d", "--emit", "slurm")
    assert code == 2 and "--emit target" in err


def test_printed_commands_quote_the_file_names(capsys, tmp_path, monkeypatch):
    """A file name is one shell word in the commands to paste: `--out '$(id).yaml'` printed
    `--down $(id).yaml` (the substitution ran when pasted), '-x.yaml' read as an option."""
    monkeypatch.chdir(tmp_path)
    for target, name, printed in (
            ("skypilot", "$(id).yaml", "--down '$(id).yaml'"),
            ("skypilot", "my file;ls.yaml", "--down 'my file;ls.yaml'"),
            ("skypilot", "-x.yaml", "--down ./-x.yaml"),
            ("dstack", "$(id).dstack.yml", "dstack apply -f '$(id)-fleet.dstack.yml'")):
        code, out, err = run(capsys, "launch", "probes", "--instance", "p5.48xlarge",
                             "--nodes", "2", "--target", target, "--out", name)
        assert code == 0, err
        assert printed in out, out
        assert (tmp_path / name).exists()
    code, out, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline",
                         "1d", "--emit", "torchrun", "--emit-out", "$(id).sh")
    assert code == 0, err
    assert "bash '$(id).sh'" in out + err


def test_an_output_never_replaces_a_file_the_command_reads(tmp_path, capsys):
    """`plan --config X.json --emit dstack --emit-out X.json` replaced the config with the
    task file (exit 0); so did --quota-file and --overrides, and `probe workload --config X
    --out X` (fuzz round 2026-12-04). `report` already refused its own inputs."""
    import shutil
    from pathlib import Path

    from planner.cli import main

    config = tmp_path / "c.json"
    shutil.copy(Path(__file__).parents[2] / "examples" / "llama-3.2-1b" / "config.json", config)
    quotas = tmp_path / "q.yaml"
    quotas.write_text("quotas: [{cloud: aws, gpus: 64}]\n")
    before = {p: p.read_bytes() for p in (config, quotas)}
    plan = ["plan", "--config", str(config), "--tokens", "1B", "--deadline", "14d",
            "--quota-file", str(quotas), "--emit", "dstack"]
    for target, option in ((config, "--config"), (quotas, "--quota-file")):
        assert main([*plan, "--emit-out", str(target)]) == 2
        err = capsys.readouterr().err
        assert f"is the file {option} names, which this plan reads" in err
        assert "To fix: choose another --emit-out" in err
    assert main(["probe", "workload", "--config", str(config), "--device", "cpu", "--quick",
                 "--out", str(config)]) == 2
    assert "is the file --config names, which the probe reads" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in before} == before


def test_the_global_batch_emitted_is_the_plans_not_the_request(capsys):
    """3M tokens asked, rounded up to whole micro-batches per data-parallel rank: the file said
    GPUPLAN_GLOBAL_BATCH_TOKENS=2998272 beside DP·MICRO_BATCH·GRAD_ACCUM·SEQ_LEN = 3,211,264."""
    code, out, err = run(capsys, "plan", "--model", "llama3-8b", "--tokens", "1T",
                         "--global-batch-tokens", "3M", "--deadline", "30d", "--emit",
                         "torchrun")
    assert code == 0, err
    env = dict(line.removeprefix("export ").split("=", 1) for line in out.splitlines()
               if line.startswith("export GPUPLAN_"))
    batch = 1
    for key in ("GPUPLAN_DP", "GPUPLAN_MICRO_BATCH", "GPUPLAN_GRAD_ACCUM", "GPUPLAN_SEQ_LEN"):
        batch *= int(env[key])
    assert int(env["GPUPLAN_GLOBAL_BATCH_TOKENS"]) == batch != 2_998_272


def test_an_interrupt_between_the_fleet_and_the_task_leaves_them_in_step(capsys, tmp_path,
                                                                        monkeypatch):
    """Ctrl-C after the fleet file's rename but before it was counted as written left a
    2-node fleet beside the 3-node task of the run before (fault sweep 2026-12-06): the two
    files are written with signals held, so both are new or the interrupt comes after."""
    import signal

    import catalog

    out = str(tmp_path / "probes.dstack.yml")
    fleet = tmp_path / "probes-fleet.dstack.yml"
    args = ("launch", "probes", "--instance", "p5.48xlarge", "--region", "us-east-1",
            "--target", "dstack", "--out", out)
    assert run(capsys, *args, "--nodes", "3")[0] == 0
    real, calls = catalog.write_text_atomic, []

    def then_ctrl_c(*a, **k):
        real(*a, **k)
        calls.append(a[0])
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(catalog, "write_text_atomic", then_ctrl_c)
    assert main(list(args) + ["--nodes", "2"]) == 130
    nodes = {yaml.safe_load(fleet.read_text())["nodes"]["target"],
             yaml.safe_load((tmp_path / "probes.dstack.yml").read_text())["nodes"]}
    assert len(calls) == 2 and nodes == {2}, nodes


def test_a_one_node_dstack_task_removes_the_fleet_an_earlier_run_left(capsys, tmp_path):
    """`--nodes 1` after `--nodes 2` with the same --out left the 2-node fleet file beside the
    1-node task (review 2026-12-06): `dstack apply -f` of it would start two idle nodes. An
    unedited fleet file of gpuplan's is removed and said; an edited one is kept, and said."""
    out = str(tmp_path / "probes.dstack.yml")
    fleet = tmp_path / "probes-fleet.dstack.yml"
    args = ("launch", "probes", "--instance", "p5.48xlarge", "--region", "us-east-1",
            "--target", "dstack", "--out", out)
    assert run(capsys, *args, "--nodes", "2")[0] == 0 and fleet.exists()
    code, said, err = run(capsys, *args, "--nodes", "1")
    assert code == 0 and not fleet.exists(), err
    assert f"removed {fleet} (the fleet of an earlier run: this task needs none)" in said
    assert run(capsys, *args, "--nodes", "2")[0] == 0
    fleet.write_text(fleet.read_text() + "# my edit\n")
    code, said, err = run(capsys, *args, "--nodes", "1")
    assert code == 0 and fleet.exists()
    assert f"kept {fleet}: edited since gpuplan wrote it" in said


def test_a_fifo_where_the_stale_fleet_would_be_is_left_alone(capsys, tmp_path):
    """Reading a FIFO at the fleet file's name, to see whether gpuplan wrote it, hung
    `launch` for ever (review 2026-12-06)."""
    import threading

    out = str(tmp_path / "c.dstack.yml")
    os.mkfifo(tmp_path / "c-fleet.dstack.yml")
    done = []
    worker = threading.Thread(target=lambda: done.append(run(
        capsys, "launch", "probes", "--instance", "p5.48xlarge", "--region", "us-east-1",
        "--target", "dstack", "--nodes", "1", "--out", out)[0]), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert done == [0]
    assert (tmp_path / "c-fleet.dstack.yml").exists()


def test_dstack_s3_task_passes_a_session_token_only_where_the_shell_has_one(capsys,
                                                                            monkeypatch):
    """Temporary AWS credentials (SSO, an assumed role) are three variables: the task passed
    two, and `aws s3 cp` on the node failed (InvalidAccessKeyId). dstack requires every
    variable a task lists without a value, so the token is listed only where the shell has
    one: long-lived keys need none."""
    argv = ("launch", "probes", "--instance", "p5.48xlarge", "--target", "dstack", "--out",
            "-", "--bucket", "s3://my-bucket/runs")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "FwoGZXIvYXdzE")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert yaml.safe_load(out)["env"] == ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                          "AWS_SESSION_TOKEN"]
    assert "FwoGZXIvYXdzE" not in out + err  # the name only: dstack reads the value itself
    monkeypatch.delenv("AWS_SESSION_TOKEN")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert yaml.safe_load(out)["env"] == ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
