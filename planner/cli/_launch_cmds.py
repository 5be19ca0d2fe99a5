"""`gpuplan launch probes` and `plan --emit`: task files for SkyPilot or dstack, or a torchrun
script, written atomically, followed by the exact commands to run.

Output goes through plain ``sys.stdout`` (never rich markup: ``[...]`` in a pip spec is not a
style). `launch probes` prints what the run will cost, from the catalog, before the commands.
"""

# No `from __future__ import annotations` in a command module: see planner/cli/_main.py

import os
import re
import sys
from typing import Annotated

import typer

from ._task_files import (
    check_bundle_paths,
    check_replaceable,
    check_task_path,
    stale_fleet,
    write_together,
)

MAX_INSTALL_CHARS = 500  # --install: a pip spec or a git URL, not a script


def _unnamed(bundle) -> tuple[str, tuple[str, ...]]:
    """The heading and commands for files printed on stdout to be saved under a name of the
    user's choosing (`launch probes --out - > probes.sky.yaml`): the commands say FILE (FILE1,
    FILE2: one per YAML document) instead of the default names the user may not have used."""
    files = bundle.files
    names = ["FILE"] if len(files) == 1 else [f"FILE{i}" for i in range(1, len(files) + 1)]
    commands = []
    for cmd in bundle.commands:
        for f, name in zip(files, names, strict=True):
            cmd = re.sub(rf"(?<!\S){re.escape(f.path)}(?!\S)", name, cmd)
        commands.append(cmd)
    if len(files) == 1:
        kind = "script" if files[0].path.endswith(".sh") else "YAML"  # torchrun: bash
        head = f"Save the {kind} printed on stdout to a file; FILE below is that file. Then run:"
    else:
        which = " and ".join(f"{n} document {i} (headed # ---- {f.path} ----)"
                             for i, (n, f) in enumerate(zip(names, files, strict=True), 1))
        head = (f"Save each of the {len(files)} YAML documents printed on stdout to its own "
                f"file; below, {which.replace(' document', ' is document', 1)}. Then run:")
    return head, tuple(commands)


def _prose(out, text: str, rest: str = "") -> None:
    """A line of prose wrapped at the terminal's width (continuation lines start with
    ``rest``): "Cost before launch: …" ran to 84 columns at 80, and the heading of the
    YAML documents `--out -` prints to 250. Written to a file or a pipe (no terminal, no
    COLUMNS) it stays one line: a log keeps it whole, to read or grep."""
    from ._app import _is_terminal, hanging_text
    from ._tables import text_width

    if not _is_terminal(out) and not os.environ.get("COLUMNS", "").strip():
        out.write(f"{text}\n")
        return
    out.write(hanging_text(text, text_width(out), first="", rest=rest) + "\n")


def _emit(bundle, to_stdout: bool, after: tuple[str, ...] = (),
          before: tuple[str, ...] = (), *, notes_to_stderr: bool = False,
          unnamed: bool = False, option: str = "--out", banner: str = "") -> None:
    """The bundle's files (written, or printed), ``before`` (what it costs), then the commands,
    numbered and never wrapped (they are copied whole). ``notes_to_stderr``: stdout carries
    only the files (`launch probes --out -`: one YAML stream, documents separated by ---) or
    JSON (`plan --json --emit … --emit-out FILE`), so the notes go to stderr. ``unnamed``
    (with ``to_stdout``): the user saves stdout under a name of their own (``_unnamed``);
    ``option`` names the file (for ``check_replaceable``'s message); ``banner``: a comment
    line above the first file's name, after a script's shebang (which stays line 1)."""
    from ._stdio import signals_held

    out = sys.stderr if notes_to_stderr else sys.stdout
    if to_stdout:
        for i, f in enumerate(bundle.files):
            head, text = f"{'' if i else banner}# ---- {f.path} ----\n", f.text
            if text.startswith("#!"):  # a script's shebang stays its first line (./FILE)
                shebang, _, text = text.partition("\n")
                head = f"{shebang}\n{head}"
            sys.stdout.write(f"{'---' + chr(10) if i else ''}{head}{text}")
        sys.stdout.flush()
    else:
        check_bundle_paths(bundle, option=option)  # every path before any file is written
        with signals_held():  # a Ctrl-C comes after the whole set, not between two files
            repaired = write_together(bundle.files)
        for f in bundle.files:
            out.write(f"wrote {f.path}\n")
        for line in repaired:  # what a killed earlier write left, replaced now
            out.write(f"{line}\n")
        if said := stale_fleet(bundle):
            out.write(f"{said}\n")
    for note in getattr(bundle, "notes", ()):  # what to do before the commands (a
        # reservation to buy, a Local Zone written as its region): the file says it too
        _prose(out, f"note: {note}", "  ")
    for line in before:  # the cost: its first line is prose, the rest a table already fitted
        if line.startswith("Cost before launch:"):
            _prose(out, line, "  ")
        else:
            out.write(f"{line}\n")
    head, commands = _unnamed(bundle) if to_stdout and unnamed else (
        "Save the file(s) printed under the name(s) shown, then run:" if to_stdout
        else "Then run:", bundle.commands)
    _prose(out, head)
    for i, cmd in enumerate((*commands, *after), 1):  # whole, however long: copied as is
        out.write(f"  {i}. {cmd}\n")
    out.flush()


def cost_lines(cost, stream=None) -> tuple[str, ...]:
    """What a probe run costs: one short line, then its three parts in a two-column table at
    the width of the terminal ``stream`` (stdout by default) writes to (the figures were one
    250-character line; with `--out -` they go to stderr, the terminal, while stdout is a
    file)."""
    from ._tables import ESSENTIAL, Column, render_table, text_width

    most = f"at most ${cost.usd_max:,.2f}" if cost.usd_max is not None else \
        "more if left running"
    head = (f"Cost before launch: {cost.nodes} x {cost.instance_type} at "
            f"${cost.usd_per_hour:,.2f}/h x ~{cost.expected_minutes:.0f} min = "
            f"~${cost.usd_expected:,.2f}; {most}.")
    table = render_table(
        (Column("what", ESSENTIAL), Column("detail", wrap=True, min_width=30)),
        (("price", cost.price_source),
         (f"~{cost.expected_minutes:.0f} min", cost.expected_breakdown),
         ("at most", cost.max_reason)),
        width=text_width(stream), show_header=False)
    return (head, *(f"  {line}" for line in table.lines))


def _check_launch_args(*, nodes: int, instance: str, region: str | None, cloud: str | None,
                       out: str | None, bucket: str | None, install: str | None) -> None:
    """What the task file would carry, checked before the catalog is read."""
    from catalog import GpuplanError
    from planner.launch import MAX_NODES

    from ._values import not_empty

    for option, value in (("--instance", instance), ("--region", region), ("--cloud", cloud),
                          ("--out", out), ("--bucket", bucket), ("--install", install)):
        not_empty(option, value)
    if not 1 <= nodes <= MAX_NODES:
        raise GpuplanError(f"--nodes must be between 1 and {MAX_NODES:,}, got {nodes}. To fix: "
                           f"pass --nodes 1 to {MAX_NODES:,} (2 or more also measure the fabric)")
    if bucket is not None:
        from planner.launch import parse_bucket

        parse_bucket(bucket)  # the one rule for a bucket URI (planner/launch/_probes.py)
    if install is not None:
        if len(install) > MAX_INSTALL_CHARS:
            raise GpuplanError(f"--install has at most {MAX_INSTALL_CHARS} characters, got "
                               f"{len(install):,}. To fix: give one pip spec or git URL")
        if not install.isprintable():
            raise GpuplanError("--install must be one line of printable text (one pip spec or "
                               "git URL). To fix: e.g. --install 'gpuplan @ "
                               "git+https://example.com/gpuplan.git'")
        if not _one_requirement(install):
            raise GpuplanError(f"--install {install!r} is not one pip requirement (a name, a "
                               "name with versions or extras, 'NAME @ URL' or a URL, "
                               "optionally '; MARKER'). To fix: e.g. --install "
                               "'gpuplan @ git+https://example.com/gpuplan.git'")
        if _local_install(install):
            raise GpuplanError(f"--install {install!r} is a file on this machine, and a local "
                               "file is not copied to the nodes: pip would fail there after "
                               "the instances are paid for. To fix: give a URL pip can fetch "
                               "on the node (git+https://…, https://…/gpuplan-….whl), or leave "
                               "--install out to copy this machine's probes")
        if (name := _project_name(install)) is not None and name != "gpuplan":
            raise GpuplanError(f"--install {install!r} installs {name}, not gpuplan: the task "
                               "runs `python3 -m probes`, which only gpuplan provides, so the "
                               "nodes would fail after the instances are paid for. To fix: "
                               "e.g. --install 'gpuplan @ git+https://…' or 'gpuplan==VERSION', "
                               "or leave --install out to copy this machine's probes")


# One pip requirement (PEP 508 as pip takes one argument), written out because `packaging` is
# not a dependency: an option (--index-url …), a second word or a shell command after ';' would
# only fail on the node, after the instances are paid for.
_OP = r"(?:===|==|!=|<=|>=|~=|<|>)"
_VERSION = r"[A-Za-z0-9.*+!_-]+"
_NAMED = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"  # the project name
    r"(?:\s*\[[A-Za-z0-9._,\s-]*\])?"  # [extras]
    rf"(?:\s*@\s*\S+|\s*\(?\s*(?:{_OP}\s*{_VERSION}(?:\s*,\s*{_OP}\s*{_VERSION})*)?\s*\)?)")
_URL_OR_PATH = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+|\.{0,2}/\S+|\S+\.(?:whl|zip|tar\.gz)")
_MARKER = re.compile(r"[\sA-Za-z0-9_.'\"<>=!~(),-]+")


def _one_requirement(text: str) -> bool:
    requirement, semicolon, marker = (part.strip() for part in text.partition(";"))
    if semicolon and not (_MARKER.fullmatch(marker) and re.search(r"['\"]", marker)
                          and re.search(rf"{_OP}|\bin\b", marker)):
        return False
    return bool(requirement) and not requirement.startswith("-") and bool(
        _NAMED.fullmatch(requirement) or _URL_OR_PATH.fullmatch(requirement))


def _project_name(text: str) -> str | None:
    """The project a named requirement installs, normalised as PEP 503 compares names
    (``GpuPlan[probes]>=0.1`` is gpuplan); None for a bare URL or path, whose project only pip
    on the node can tell."""
    requirement = text.partition(";")[0].strip()
    if _SCHEME.match(requirement) or not _NAMED.fullmatch(requirement):
        return None
    name = re.match(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?", requirement)
    return re.sub(r"[-_.]+", "-", name.group(0)).lower() if name else None


# What pip reads as a file of the machine it runs on: a path, a file: URL, or a name ending in
# one of pip's archive suffixes (`pip install gpuplan-0.1-py3-none-any.whl` is a local file).
# The task copies no such file to the nodes (uploading it too would be a second copy path to
# keep right for both orchestrators, for what a URL already does), so pip would fail there.
_ARCHIVES = (".whl", ".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz",
             ".tar.lz", ".tlz", ".tar.lzma")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def _local_install(text: str) -> bool:
    requirement = text.partition(";")[0].strip()
    if _SCHEME.match(requirement):
        url = requirement  # a bare URL (git+ssh://git@host/… has an '@' of its own)
    elif "@" in requirement:
        url = requirement.partition("@")[2].strip()  # NAME @ URL
    else:
        return (requirement.startswith((".", "/", "~")) or "/" in requirement
                or "\\" in requirement or requirement.lower().endswith(_ARCHIVES))
    scheme = _SCHEME.match(url)
    return scheme is None or scheme.group(1).lower().rsplit("+", 1)[-1] == "file"


def probes_cmd(
    instance: Annotated[str, typer.Option("--instance", help="A catalog instance type, e.g. "
                        "p5.48xlarge.")],
    target: Annotated[str, typer.Option("--target", help="skypilot or dstack.")],
    nodes: Annotated[int, typer.Option("--nodes", help="Instances to measure together (1 to "
                     "1,024; 2 or more also measure the fabric).")] = 1,
    region: Annotated[str | None, typer.Option("--region", help="Pin the region.")] = None,
    cloud: Annotated[str | None, typer.Option("--cloud", help="Disambiguate --instance.")]
    = None,
    spot: Annotated[bool, typer.Option("--spot", help="Spot instead of on-demand.")] = False,
    out: Annotated[str | None, typer.Option("--out", help="Task file to write (default "
                   "gpuplan-probes.sky.yaml / gpuplan-probes.dstack.yml); an existing file is "
                   "replaced only if gpuplan wrote it and it is unedited. - prints the task "
                   "file(s) on stdout as one YAML stream (dstack's fleet and task as two "
                   "documents), with the cost and commands on stderr.")]
    = None,
    bucket: Annotated[str | None, typer.Option("--bucket", help="s3://BUCKET[/PREFIX] or "
                      "gs://BUCKET[/PREFIX] to copy the report to (default: fetch it with "
                      "scp); the PREFIX is names separated by single '/', no '.' or '..'.")]
    = None,
    install: Annotated[str | None, typer.Option("--install", help="Instead of copying this "
                       "machine's probes, pip install this on each node: a URL pip can fetch "
                       "there (git+https://…, https://…/gpuplan-….whl) or gpuplan==VERSION "
                       "from the package index (no other project: the nodes run gpuplan's "
                       "probes). A local file is refused: it is not copied to the "
                       "nodes.")] = None,
) -> None:
    """A task file that provisions NODES x INSTANCE, copies this machine's probes to them, runs
    the probe suite under torchrun on all of them, and brings report.json back for `gpuplan
    probe ingest`. Prints what the run costs (catalog price x nodes x expected minutes) first."""
    from planner.launch import (
        TARGETS,
        choose,
        default_path,
        probe_run_cost,
        probes_launch,
        spec_for_instance,
    )

    from ._app import load_priced_catalog

    _check_launch_args(nodes=nodes, instance=instance, region=region, cloud=cloud, out=out,
                       bucket=bucket, install=install)
    target = choose("launch target", target, TARGETS)
    to_stdout = out == "-"
    path = default_path(target, "probes") if out in (None, "-") else out
    if not to_stdout:  # before the fleet file's name is made from it (`--out .`: a traceback)
        check_task_path(path, example=default_path(target, "probes"))
    # the price the cost line shows: GPUPLAN_OVERRIDES's, as `offers` and `plan` show it
    cat = load_priced_catalog(None)
    # --cloud as `offers --cloud` takes it (AWS → aws): the catalog's one spelling rule
    spec = spec_for_instance(cat, instance, nodes, region=region, spot=spot, cloud=cloud)
    # temporary AWS credentials (SSO, an assumed role) need their session token on the node
    bundle = probes_launch(spec, target, task_path=path, install=install, bucket=bucket,
                           aws_session_token=bool(os.environ.get("AWS_SESSION_TOKEN")))
    cost = probe_run_cost(cat, spec, target, bucket=bool(bucket))
    lines = cost_lines(cost, sys.stderr if to_stdout else sys.stdout) if cost else (
        f"Cost before launch: the catalog has no usable {'spot' if spot else 'on-demand'} "
        f"price for {spec.instance_type}; check your cloud's pricing.",)
    if target == "dstack" and (bucket or "").strip().startswith("s3:") and spec.cloud != "aws":
        sys.stderr.write(f"note: the {spec.cloud} nodes copy the report to S3 with the AWS keys "
                         "dstack passes from your shell (docs/launch.md)\n")  # works; say so
    _emit(bundle, to_stdout, before=lines, notes_to_stderr=to_stdout, unnamed=to_stdout,
          after=("gpuplan plan … (as before: it now uses the measurements)",))


def check_emit_options(target: str | None, out_path: str | None, *,
                       json_out: bool = False, inputs: dict | None = None) -> None:
    """`plan --emit/--emit-out` checked before the plan is searched and printed: a known
    target, --emit-out only with --emit, a path that can be written and is none of the
    ``inputs`` (option → path the plan reads), and not stdout beside --json (a script
    reading the JSON would get a launch file after it)."""
    from catalog import input_clash
    from planner.launch import EMIT_TARGETS, LaunchError, choose, default_path

    if target is None:
        raise LaunchError("--emit-out says where --emit writes, but no --emit was given. To "
                          f"fix: add --emit {'|'.join(EMIT_TARGETS)}, or drop --emit-out")
    choose("--emit target", target, EMIT_TARGETS)
    if json_out and out_path in (None, "-"):
        raise LaunchError("--json and the --emit launch file would both go to stdout. To fix: "
                          "add --emit-out FILE for the launch file")
    if out_path not in (None, "-"):
        check_task_path(out_path, what="task file (--emit-out)",
                         example=default_path(target, "train"))
        if (option := input_clash(out_path, inputs or {})) is not None:
            raise LaunchError(f"--emit-out {out_path} is the file {option} names, which this "
                              "plan reads: the task file would replace it. To fix: choose "
                              "another --emit-out")
        check_replaceable(out_path, option="--emit-out")


def plan_launch(recommendation: dict | None, target: str, out_path: str | None, catalog,
                workload=None, inputs: dict | None = None):
    """`plan --emit TARGET [--emit-out FILE]`: the recommendation's launch bundle, built
    before anything is printed (``emit_plan_launch`` writes it), so a plan no launch file
    covers (a TPU, a Trainium) is one error line, not a whole plan on stdout and then exit 2."""
    from catalog import without_fix
    from planner.launch import EMIT_TARGETS, NoLaunchFile, choose, default_path, training_launch

    target = choose("--emit target", target, EMIT_TARGETS)
    path = out_path if out_path not in (None, "-") else default_path(target, "train")
    try:
        bundle = training_launch(recommendation, target, task_path=path, catalog=catalog,
                                 workload=workload)
    except NoLaunchFile as exc:  # "choose a GPU instance": plan chooses none, --gpu does
        raise NoLaunchFile(f"{without_fix(exc)}. To fix: leave out --emit, or plan on GPUs "
                           "with --gpu (e.g. --gpu H100)") from None
    if out_path not in (None, "-"):  # the fleet file too, known only now (several nodes):
        # it was refused after the whole plan had been printed
        check_bundle_paths(bundle, option="--emit-out", inputs=inputs)
    return bundle


def emit_plan_launch(bundle, out_path: str | None, *, json_out: bool = False) -> None:
    """Write (or print) the bundle ``plan_launch`` built. ``--emit-out -``: stdout carries the
    file(s) alone, as `launch probes --out -` (`> run.sky.yaml` saves a usable file; the plan
    went to stderr, ``plan_to_stderr``); without --emit-out the file follows the plan."""
    if out_path == "-":
        _emit(bundle, True, notes_to_stderr=True, unnamed=True, option="--emit-out")
        return
    banner = ""
    if out_path is None:  # after the plan, on stdout: the banner goes after the script's
        # shebang, as a comment, so the file copied from `#!` on runs (it came first, and a
        # file saved from it had no shebang on line 1); on stdout beside what it separates
        sys.stdout.write("\n")
        banner = f"# ---- launch file ({bundle.target}) ----\n"
    _emit(bundle, out_path is None, notes_to_stderr=json_out, option="--emit-out",
          banner=banner)
