"""`gpuplan launch probes` regressions from a tester's sweep, each test named after its bug: a
failed --install that set up nothing and exited 0, `--out .` as a traceback, a dstack `files`
entry dstack cannot parse, a failed rewrite that deleted the working fleet file, bucket names
S3/GCS refuse, a circular "To fix" for GCP P4, a cost without the user's overrides, a gs://
bucket on nodes without Google credentials, `--cloud AWS` and a `report.md` suggestion."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from launch_helpers import load, one_error, run

from planner.launch import LaunchError, fleet_path, parse_bucket, probes_launch, spec_for_instance

LAUNCH = ("launch", "probes", "--instance", "p5.48xlarge")


# -- a failed --install ----------------------------------------------------------------------
def _python3_stub(tmp_path: Path) -> dict[str, str]:
    """A node whose `python3 -m pip install gpuplan==9.9` fails (no such version) and whose
    image has no torch; every call is logged to calls.log."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    stub = bindir / "python3"
    stub.write_text('#!/usr/bin/env bash\necho "$*" >> "$LOG"\n'
                    'case "$*" in *gpuplan==9.9*|*"import torch"*) exit 1;; esac\nexit 0\n')
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bindir}:{os.environ['PATH']}", "LOG": str(tmp_path / "calls.log")}


@pytest.mark.parametrize("target", ["skypilot", "dstack"])
def test_a_failed_install_fails_the_setup(cat, tmp_path, target):
    """`pip install SPEC && python3 -c 'import torch' || pip install torch`: `A && B || C` ran
    C after a failed A, so the setup exited 0 with nothing installed."""
    spec = spec_for_instance(cat, "p5.48xlarge", 1)
    task = load(probes_launch(spec, target, task_path="t.yaml",
                              install="gpuplan==9.9").files[-1].text)
    setup = task["setup"] if target == "skypilot" else task["commands"][0]
    env = _python3_stub(tmp_path)
    proc = subprocess.run(["bash", "-c", setup], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode != 0, setup
    calls = Path(env["LOG"]).read_text()
    assert "torch>=2.3" not in calls and "import torch" not in calls, calls  # stopped at once


def test_a_working_install_still_installs_torch_where_missing(cat, tmp_path):
    spec = spec_for_instance(cat, "p5.48xlarge", 1)
    task = load(probes_launch(spec, "dstack", task_path="t.yml",
                              install="gpuplan==1.0").files[-1].text)
    env = _python3_stub(tmp_path)
    proc = subprocess.run(["bash", "-c", task["commands"][0]], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "-m pip install torch>=2.3" in Path(env["LOG"]).read_text()


# -- --out naming a directory ------------------------------------------------------------------
@pytest.mark.parametrize("out", [".", "/", "./", ".."])
def test_out_naming_a_directory_is_one_error_for_a_dstack_pair(capsys, tmp_path, monkeypatch,
                                                               out):
    """`--nodes 2 --target dstack --out .`: ValueError "PurePosixPath('.') has an empty name"
    from fleet_path, a traceback and exit 1."""
    monkeypatch.chdir(tmp_path)
    code, out_text, err = run(capsys, *LAUNCH, "--nodes", "2", "--target", "dstack",
                              "--out", out)
    one_error(code, err, "names a directory")
    assert out_text == "" and os.listdir(tmp_path) == []


def test_fleet_path_of_a_directory_is_a_launch_error():
    with pytest.raises(LaunchError, match=r"names a directory\. To fix"):
        fleet_path(".")


@pytest.mark.parametrize(("target", "name"), [("skypilot", "../gpuplan-probes.sky.yaml"),
                                              ("dstack", "../gpuplan-probes.dstack.yml")])
def test_out_dot_dot_suggests_a_task_file_name(capsys, target, name):
    """`--out ..` suggested "e.g. ../report.md" for a task file."""
    code, _, err = run(capsys, *LAUNCH, "--target", target, "--out", "..")
    one_error(code, err, f"e.g. {name}")
    assert "report.md" not in err


def test_plan_emit_out_dot_dot_suggests_a_script_name(capsys):
    code, out, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline",
                         "2d", "--emit", "torchrun", "--emit-out", "..")
    one_error(code, err, "e.g. ../gpuplan-train.sh")
    assert out == ""


# -- dstack `files` with a ':' in the path -----------------------------------------------------
def _dstack_parse(value):
    """dstack's FilePathMapping.parse (core/models/files.py, 0.19-0.22) for a string; the
    mapping form is taken as it is."""
    if isinstance(value, dict):
        return value["local_path"], value["path"]
    parts = value.split(":")
    if len(parts) == 1:
        return parts[0], parts[0]
    if len(parts) != 2:
        raise ValueError(f"invalid file path mapping: {value}")
    return parts[0], parts[1]


def test_a_probes_path_with_a_colon_uses_dstack_s_mapping_form(cat, tmp_path):
    """`- '/tmp/…/we ird:dir #x/src/probes:gpuplan-src/probes'`: dstack split it at both ':'
    and refused the task (invalid file path mapping)."""
    src = tmp_path / "we ird:dir #x" / "src" / "probes"
    spec = spec_for_instance(cat, "p5.48xlarge", 2)
    bundle = probes_launch(spec, "dstack", task_path="t.dstack.yml", source_dir=src)
    ((entry,),) = (load(bundle.files[-1].text)["files"],)
    assert entry == {"local_path": str(src), "path": "gpuplan-src/probes"}
    assert _dstack_parse(entry) == (str(src), "gpuplan-src/probes")
    plain = probes_launch(spec, "dstack", task_path="t.dstack.yml", source_dir=tmp_path / "p")
    ((entry,),) = (load(plain.files[-1].text)["files"],)
    assert _dstack_parse(entry) == (str(tmp_path / "p"), "gpuplan-src/probes")


# -- a failed rewrite of a dstack pair ---------------------------------------------------------
def _second_write_fails(monkeypatch, fail_at: int = 2) -> None:
    import catalog

    real, calls = catalog.write_text_atomic, []

    def failing(path, text, **kw):
        calls.append(path)
        if len(calls) == fail_at:
            raise catalog.GpuplanError("task file: cannot write it (the file is larger than "
                                       "this process's file-size limit, ulimit -f). To fix: "
                                       "raise the file-size limit")
        return real(path, text, **kw)

    monkeypatch.setattr(catalog, "write_text_atomic", failing)


@pytest.mark.parametrize("fail_at", [1, 2])
def test_a_failed_rewrite_keeps_the_earlier_fleet_and_task(capsys, tmp_path, monkeypatch,
                                                           fail_at):
    """Rewriting x.yml with --spot under `ulimit -f 1`: the fleet was rewritten, the task
    failed, and the rollback unlinked x-fleet.yml while x.yml still named the fleet."""
    task, fleet = tmp_path / "x.yml", tmp_path / "x-fleet.yml"
    argv = (*LAUNCH, "--nodes", "2", "--target", "dstack", "--out", str(task))
    assert run(capsys, *argv)[0] == 0
    before = {p: p.read_bytes() for p in (task, fleet)}
    _second_write_fails(monkeypatch, fail_at)
    code, out, err = run(capsys, *argv, "--spot")
    one_error(code, err, "ulimit -f")
    assert "wrote" not in out + err
    assert {p: p.read_bytes() for p in (task, fleet)} == before  # both as they were
    assert sorted(os.listdir(tmp_path)) == ["x-fleet.yml", "x.yml"]  # no kept copy left
    monkeypatch.undo()  # (and the re-run with room writes both)
    assert run(capsys, *argv, "--spot")[0] == 0
    assert load(fleet.read_text())["spot_policy"] == load(task.read_text())["spot_policy"] == \
        "spot"


def test_a_failed_rewrite_where_no_second_name_can_be_made_removes_nothing(capsys, tmp_path,
                                                                           monkeypatch):
    task, fleet = tmp_path / "x.yml", tmp_path / "x-fleet.yml"
    argv = (*LAUNCH, "--nodes", "2", "--target", "dstack", "--out", str(task))
    assert run(capsys, *argv)[0] == 0

    def no_links(*_args, **_kw):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    _second_write_fails(monkeypatch)
    code, _, err = run(capsys, *argv, "--spot")
    assert code == 2 and fleet.exists() and task.exists(), err  # never unlinked


# -- bucket names ------------------------------------------------------------------------------
BAD_BUCKETS = {
    "s3://my..bucket": "has two adjacent periods (S3)",
    "s3://bucket-": "must begin and end with a letter or digit (S3)",
    "s3://-bucket": "must begin and end with a letter or digit (S3)",
    "s3://my_bucket": "holds '_': S3 takes lowercase letters, digits, dots and hyphens",
    "s3://MyBucket": "holds 'BM'",
    "s3://192.168.1.1": "is an IP address",
    "s3://" + "a" * 70: "has 70 characters; S3 takes 3 to 63",
    "s3://ab": "has 2 characters",
    "s3://xn--bucket": "begins with a prefix S3 reserves",
    "s3://sthree-bucket": "begins with a prefix S3 reserves",
    "s3://bucket-s3alias": "ends with a suffix S3 reserves",
    "s3://bucket--ol-s3": "ends with a suffix S3 reserves",
    "gs://my..bucket": "has two adjacent periods (GCS)",
    "gs://192.168.1.1": "is an IP address",
    "gs://goog-reports": "begins with 'goog'",
    "gs://my-google-bucket": "contains 'google'",
    "gs://" + "a" * 64: "has 64 characters; GCS takes 3 to 63",
    "gs://" + ".".join(["a" * 60] * 4): "has 243 characters",
    "gs://" + "a" * 64 + ".b": "more than 63 characters between two dots",
    "gs://bucket_": "must begin and end with a letter or digit (GCS)",
}


@pytest.mark.parametrize("uri", sorted(BAD_BUCKETS))
def test_a_bucket_name_its_provider_refuses_is_refused(capsys, uri):
    """`s3://my..bucket`, `s3://my_bucket`, `s3://192.168.1.1` … exited 0: the copy failed on
    the nodes, after they were paid for."""
    code, out, err = run(capsys, *LAUNCH, "--target", "skypilot", "--out", "-", "--bucket", uri)
    one_error(code, err, f"bad bucket URI {uri!r}: the bucket name", BAD_BUCKETS[uri],
              "the naming rules: https://")
    assert out == ""


@pytest.mark.parametrize("uri", ["s3://abc", "s3://my.bucket-1", "gs://my_bucket",
                                 "gs://" + ".".join(["a" * 60] * 3), "s3://" + "a" * 63])
def test_a_bucket_name_within_the_rules_is_taken(uri):
    assert parse_bucket(uri + "/runs").prefix == "runs"


# -- GCP P4: no name in either orchestrator ---------------------------------------------------
@pytest.mark.parametrize("target", ["skypilot", "dstack"])
def test_a_gpu_neither_orchestrator_names_says_so_once(capsys, target):
    """n1+p4x1: --target skypilot said "use --target dstack", and dstack "use --target
    skypilot"."""
    code, _, err = run(capsys, "launch", "probes", "--instance", "n1+p4x1", "--target", target)
    one_error(code, err, "neither SkyPilot nor dstack can run n1+p4x1",
              "SkyPilot has no accelerator name for P4", "dstack has no GPU name for P4",
              "To fix: choose an instance with another GPU")
    assert "use --target" not in err


# -- GPUPLAN_OVERRIDES in the cost --------------------------------------------------------------
def test_the_cost_uses_the_overrides_offers_uses(capsys, tmp_path, monkeypatch):
    """`offers` showed the overridden $1.50/h, `launch probes` the catalog's $55.04/h."""
    rates = tmp_path / "rates.yaml"
    rates.write_text("prices:\n  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1, "
                     "pricing: on_demand, usd_per_hour: 1.5}\n")
    monkeypatch.setenv("GPUPLAN_OVERRIDES", str(rates))
    code, _, err = run(capsys, *LAUNCH, "--region", "us-east-1", "--target", "skypilot",
                       "--out", "-")
    assert code == 0, err
    assert "1 x p5.48xlarge at $1.50/h" in err
    # the price's source: the file, not the catalog (the table wraps at the terminal's width)
    assert "on-demand, overrides: " in " ".join(err.split())
    monkeypatch.setenv("GPUPLAN_OVERRIDES", str(tmp_path / "missing.yaml"))
    code, _, err = run(capsys, *LAUNCH, "--target", "skypilot", "--out", "-")
    one_error(code, err, "GPUPLAN_OVERRIDES=")


# -- a bucket the nodes have no credentials for -----------------------------------------------
@pytest.mark.parametrize("instance", ["p5.48xlarge", "Standard_ND96isr_H100_v5"])
def test_dstack_refuses_a_gcs_bucket_off_gcp(capsys, instance):
    """gs:// on AWS or Azure nodes: gsutil there has no service account, so the copy failed
    after the run."""
    code, out, err = run(capsys, "launch", "probes", "--instance", instance, "--target",
                         "dstack", "--out", "-", "--bucket", "gs://my-bucket")
    one_error(code, err, "--bucket gs://my-bucket: a dstack task copies to GCS with the VM's "
                         "service account", "To fix: use an s3:// bucket")
    assert out == ""


def test_dstack_takes_a_gcs_bucket_on_gcp_and_notes_s3_off_aws(capsys):
    argv = ("launch", "probes", "--instance", "a3-highgpu-8g", "--target", "dstack", "--out",
            "-", "--bucket")
    code, out, err = run(capsys, *argv, "gs://my-bucket")
    assert code == 0 and "gsutil cp" in out and "note:" not in err, err
    code, out, err = run(capsys, *argv, "s3://my-bucket")
    assert code == 0 and "AWS_ACCESS_KEY_ID" in out, err
    assert "note: the gcp nodes copy the report to S3 with the AWS keys" in err
    code, _, err = run(capsys, *LAUNCH, "--target", "dstack", "--out", "-", "--bucket",
                       "s3://my-bucket")
    assert code == 0 and "note:" not in err, err


# -- --cloud spelled as `offers` takes it -------------------------------------------------------
def test_cloud_is_spelled_as_offers_takes_it(capsys):
    """`launch probes --cloud AWS` said "Did you mean 'aws'"; `offers --cloud AWS` took it."""
    code, out, err = run(capsys, *LAUNCH, "--target", "skypilot", "--out", "-", "--cloud", "AWS")
    assert code == 0, err
    assert load(out)["resources"]["infra"] == "aws"
    code, _, err = run(capsys, *LAUNCH, "--target", "skypilot", "--cloud", "awz")
    one_error(code, err, "unknown cloud 'awz'", "Did you mean 'aws'")
