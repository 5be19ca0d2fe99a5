"""What every probe launch shares: the script each node runs under torchrun, how torch gets
there, where the report goes (a bucket, or back over scp), and what a run costs.

The probes reach the nodes from *this* machine, not from a package index (gpuplan is not
published): the task copies the local ``probes`` package (torch is its only dependency) with the
orchestrator's own file upload, installs torch only where the image lacks it, and runs
``python -m probes`` with that copy on PYTHONPATH.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from catalog import record

from ._spec import LaunchError, LaunchSpec
from ._torchrun import torchrun_command

# torch for nodes whose image has none: PyPI's Linux wheels are CUDA builds
TORCH_SPEC = "torch>=2.3"
REPORT_DIR = "$HOME/gpuplan-probes"  # where rank 0 writes report.json on the head node
INGEST = "gpuplan probe ingest report.json"
# Minutes billed for a probe run, per node (all nodes run at once). Provisioning: SkyPilot and
# dstack report 2-10 min for a GPU VM to boot and join; setup: copying ~100 KB of probes and,
# on an image without torch, a ~2.5 GB CUDA wheel (2-5 min); probes: a full run on one 8-GPU
# node is ~2-2.5 min (budget in probes/_runner.py); copy-back and tear-down ~2 min.
EXPECTED_MINUTES: tuple[tuple[str, float], ...] = (
    ("provisioning", 5.0), ("setup", 5.0), ("probes", 3.0), ("copy-back and tear-down", 2.0))


@record(kw_only=False)
class Bucket:
    scheme: str  # s3 or gs
    bucket: str
    prefix: str  # "" or "a/b"

    def object_uri(self, name: str) -> str:
        return f"{self.scheme}://{self.bucket}/" + (f"{self.prefix}/" if self.prefix else "") + name

    def copy_command(self, src: str, dst: str) -> str:
        # The task file runs this in a shell on the nodes: every argument is quoted, so a
        # prefix can never become a command.
        tool = "aws s3 cp" if self.scheme == "s3" else "gsutil cp"
        return f"{tool} {shlex.quote(src)} {shlex.quote(dst)}"


# Object keys: letters, digits and . _ / = + -: characters S3 and GCS allow in key names that
# no shell gives a meaning to (the prefix is part of a copy command on every node).
_PREFIX = re.compile(r"[A-Za-z0-9._/=+-]{0,512}")


# The providers' naming rules: a name the provider refuses (s3://my..bucket, s3://my_bucket)
# was written into the task and failed only on the nodes, after the instances were paid for.
# S3: docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html (general purpose
# buckets); GCS: cloud.google.com/storage/docs/buckets#naming.
_RULES_AT = {"s3": "docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html",
             "gs": "cloud.google.com/storage/docs/buckets#naming"}
_IPV4 = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
_S3_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_S3_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


def _bucket_name_problem(scheme: str, name: str) -> str | None:
    """The first naming rule of the bucket's provider that ``name`` breaks, or None."""
    s3 = scheme == "s3"
    who = "S3" if s3 else "GCS"
    most = 222 if not s3 and "." in name else 63  # GCS: 222 when dots separate parts
    if not 3 <= len(name) <= most:
        return (f"has {len(name)} characters; {who} takes 3 to 63"
                + ("" if s3 else " (222 with dots, at most 63 between two)"))
    bad = sorted(set(re.sub(r"[a-z0-9.-]" if s3 else r"[a-z0-9._-]", "", name)))
    if bad:
        return (f"holds {''.join(bad)!r}: {who} takes lowercase letters, digits, dots and "
                + ("hyphens" if s3 else "hyphens and underscores"))
    if not (name[0] + name[-1]).isalnum():
        return f"must begin and end with a letter or digit ({who})"
    if ".." in name:
        return f"has two adjacent periods ({who})"
    if not s3 and any(len(part) > 63 for part in name.split(".")):
        return "has more than 63 characters between two dots (GCS)"
    if _IPV4.fullmatch(name):
        return f"is an IP address ({who} refuses names formatted as one)"
    if s3 and name.startswith(_S3_RESERVED_PREFIXES):
        return f"begins with a prefix S3 reserves ({', '.join(_S3_RESERVED_PREFIXES)})"
    if s3 and name.endswith(_S3_RESERVED_SUFFIXES):
        return f"ends with a suffix S3 reserves ({', '.join(_S3_RESERVED_SUFFIXES)})"
    if not s3 and name.startswith("goog"):
        return "begins with 'goog', which GCS reserves"
    if not s3 and ("google" in name or "g00gle" in name):
        return "contains 'google' (or 'g00gle'), which GCS refuses"
    return None


def parse_bucket(uri: str) -> Bucket:
    m = re.fullmatch(r"(s3|gs)://([^/]*)(?:/(.*))?", uri.strip(), flags=re.DOTALL)
    if not m:
        raise LaunchError(f"bad bucket URI {uri!r}. To fix: pass s3://BUCKET[/PREFIX] or "
                          "gs://BUCKET[/PREFIX], e.g. s3://my-bucket/probes")
    if problem := _bucket_name_problem(m.group(1), m.group(2)):
        raise LaunchError(f"bad bucket URI {uri!r}: the bucket name {m.group(2)!r} {problem}. "
                          f"To fix: give the name of your bucket, e.g. {m.group(1)}://my-bucket"
                          f"/probes (the naming rules: https://{_RULES_AT[m.group(1)]})")
    raw = m.group(3) or ""
    if not _PREFIX.fullmatch(raw):
        raise LaunchError(f"bad bucket URI {uri!r}: the bucket prefix may hold only letters, "
                          "digits and . _ / = + - (it is used in a shell command on every "
                          "node). To fix: e.g. s3://my-bucket/probes")
    # SkyPilot mounts the bucket as a folder, where '..' climbs out of it (s3://b/../../x
    # wrote the report to /x on the node, exit 0) and '.' or '//' collapse, while `aws s3 cp`
    # and gsutil keep them in the key: the report would land where the printed fetch does not
    # look. One trailing '/' (s3://b/runs/) is the usual spelling of a folder and is kept.
    prefix = raw.removesuffix("/")
    for segment in prefix.split("/") if prefix else ():
        if segment in ("", ".", ".."):
            drops = ("which the bucket's folder on the node drops: the report would land "
                     "where the printed fetch does not look")
            what = ("a '..' segment, which climbs out of the bucket's folder on the node: the "
                    "report would land outside the bucket" if segment == ".." else
                    f"a '.' segment, {drops}" if segment else f"an empty segment (//), {drops}")
            raise LaunchError(f"bad bucket URI {uri!r}: the prefix has {what}. To fix: give "
                              "the prefix as names separated by single '/', e.g. "
                              "s3://my-bucket/probes")
    return Bucket(m.group(1), m.group(2), prefix)


@record
class ProbeRunCost:
    """What a probe run costs before it is launched: ``nodes`` instances at the catalog's
    price for ``expected_minutes`` (and at most for ``max_minutes``, the task's own limit)."""

    instance_type: str
    nodes: int
    usd_per_hour: float  # per instance
    price_source: str  # cloud, region, pricing and the catalog's date
    expected_minutes: float
    expected_breakdown: str
    max_minutes: float | None  # None: until you stop it
    max_reason: str

    @property
    def usd_expected(self) -> float:
        return self.usd_per_hour * self.nodes * self.expected_minutes / 60

    @property
    def usd_max(self) -> float | None:
        return None if self.max_minutes is None else \
            self.usd_per_hour * self.nodes * self.max_minutes / 60

    def line(self) -> str:
        most = (f"at most ${self.usd_max:,.2f} ({self.max_reason})" if self.usd_max is not None
                else f"more if left running ({self.max_reason})")
        return (f"Cost before launch: {self.nodes} x {self.instance_type} at "
                f"${self.usd_per_hour:,.2f}/h ({self.price_source}) x ~"
                f"{self.expected_minutes:.0f} min ({self.expected_breakdown}) = "
                f"~${self.usd_expected:,.2f}; {most}.")



def probes_source_dir() -> Path:
    """The local ``probes`` package this gpuplan runs: what the task copies to the nodes."""
    import probes

    return Path(probes.__file__).resolve().parent


REPORT_BEGIN = "----- BEGIN gpuplan report.json -----"
REPORT_END = "----- END gpuplan report.json -----"


def probe_script(spec: LaunchSpec, rank: str, addr: str, save: str, src: str, *,
                 copy_to: str | None = None) -> str:
    """The node's script: torchrun, then on rank 0 ``save`` (``copy_to``: the bucket object
    ``save`` copies the report to, which may fail)."""
    # GPUPLAN_PROBE_ARGS: extra `python -m probes` options (e.g. --quick) without editing;
    # given last, they win. --device cuda: on a GPU node a torch that sees no GPU (the CUDA
    # wheel on an AMD node without ROCm torch) fails the run instead of measuring the CPU
    # and reporting success (`auto` fell back quietly)
    torchrun = torchrun_command(
        nodes=spec.nodes, gpus_per_node=spec.gpus_per_node, node_rank=rank, master_addr=addr,
        program="-m probes --device cuda --out report.json ${GPUPLAN_PROBE_ARGS:-}")
    if copy_to:
        # A failed copy to the bucket (credentials, permissions, a full mount) exited with
        # the probes' status, 0: the job "succeeded" and `sky launch --down` deleted the
        # cluster with the only copy of a paid-for report. A non-zero exit alone does not keep
        # it (--down tears down after a failed job too), and holding the nodes for an scp
        # would bill every node for longer than a re-run. So the step fails, and the report
        # goes into the job's log, which `sky launch`/`dstack apply` stream to the user's
        # terminal (and `dstack logs` keeps): saved from there, it ingests as usual.
        where = copy_to  # parse_bucket's characters only: nothing a shell reads in "…"
        save_lines = [
            "  copied=0",
            f"  {{ {save}; }} || copied=$?",
            '  if [ "$copied" != 0 ]; then',
            f"    echo \"gpuplan: copying the report to {where} failed (exit $copied); the "
            "report follows, between the BEGIN and END lines below: save what is between "
            "them as report.json\"",
            f'    echo "{REPORT_BEGIN}"; cat report.json; echo; echo "{REPORT_END}"',
            '    if [ "$status" = 0 ]; then status=$copied; fi',
            "  fi",
        ]
    else:
        save_lines = [f"  {save}"]
    return "\n".join([
        f'export PYTHONPATH="{src}${{PYTHONPATH:+:$PYTHONPATH}}"',
        f'mkdir -p "{REPORT_DIR}" && cd "{REPORT_DIR}"',
        "status=0",
        f"{torchrun} || status=$?",  # exit 1: report written, a probe failed (docs/probes.md)
        f'if [ "{rank}" = "0" ] && [ -f report.json ]; then',
        *save_lines,
        "fi",
        'exit "$status"',
    ]) + "\n"


def setup(install: str | None) -> str:
    """The user's pip spec if any, then torch where the image still has none: gpuplan needs
    torch only in its `probes` extra, so `--install 'gpuplan @ git+…'` left the nodes
    without torchrun, found after they were paid for."""
    torch = (f"python3 -c 'import torch' 2>/dev/null || "
             f"python3 -m pip install {shlex.quote(TORCH_SPEC)}")
    if not install:
        return torch
    # braced: `A && B || C` ran C after a failed A, so a failed install (a version not on the
    # index) set up nothing and still exited 0; the probes then failed on the paid nodes
    return f"python3 -m pip install {shlex.quote(install)} && {{ {torch}; }}"
