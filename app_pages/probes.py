"""Probes: look at a probe report (measured vs datasheet, bus bandwidth over message sizes)
and ingest it, so that plans on that GPU use its measurements. A CPU run is stored for
reference and calibrates nothing."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.express as px
import streamlit as st

import catalog
import probes
from app_pages import _charts as C
from app_pages import _format as F
from app_pages import _inputs as I
from app_pages import _shared as S
from planner import store
from planner.model import reasons_by_figure

REPORT_COLUMNS = {
    # the accelerator it was stored for; "Figures used" says whether it calibrates anything
    # (a rejected report read "Calibrates H100")
    "id": ("Report", "int"), "file": ("File", "text"), "accelerator": ("Accelerator", "text"),
    "used": ("Figures used", "int"),
    "gpu_model": ("GPU model", "text"), "device_type": ("Device", "text"),
    "instance_type": ("Instance type", "text"), "gpu_count": ("GPUs", "int"),
    "node_count": ("Nodes", "int"), "cloud": ("Cloud", "text"), "region": ("Region", "text"),
    "created_utc": ("Measured (UTC)", "text"), "ingested_utc": ("Ingested (UTC)", "text"),
    "measurements": ("Measurements", "text"),
}
MEMORY_COLUMNS = {"copy": ("Copy", "text"), "status": ("Status", "text"),
                  "gb_per_s": ("GB/s", "num1"), "bytes": ("Size", "text"),
                  "note": ("Note", "text")}


@st.cache_data(max_entries=8, show_spinner=False)
def parse(name: str, data: bytes) -> dict:
    """The uploaded report, validated; ``{"error": line}`` when it is not a probe report."""
    try:  # the reader `probe ingest` stores through: the same checks, the same messages
        report = probes.report_from_bytes(data, source=name)
    except probes.ReportError as exc:
        return {"error": str(exc)}
    return {"report": report}


@st.cache_data(max_entries=8, show_spinner="Checking the report…")
def judged(name: str, data: bytes, accelerator: str, catalog_id: tuple) -> dict:
    """What ingesting the report would calibrate, before it is stored: ``{"used": [figure
    lines], "refused": [reasons]}``, or ``{"error": line}`` when ingesting would refuse it.

    The store's own ingest and calibration rules decide (the datasheet bounds, the report's
    own consistency: what `ingest` reports after storing it), run on a scratch database that
    is deleted at once; ``planner.store`` has no dry run. ``catalog_id`` is the cache key of
    the catalog whose datasheets bound the figures.
    """
    import tempfile

    del catalog_id
    try:
        cat = catalog.load_catalog(overrides=S.overrides_path())
        with tempfile.TemporaryDirectory(prefix="gpuplan-probe-check-") as scratch:
            db = Path(scratch) / "probes.db"
            stored = store.ingest_bytes(data, cat, source=Path(name).name or "report.json",
                                        accelerator=accelerator, db=db)
            cal = store.load_calibration(cat, db=db)
    except catalog.GpuplanError as exc:
        return S.error_out(exc)
    used = [n for n in cal.used() if stored.id in n.report_ids]
    # the workload layer as `probe ingest` says it: measured vs modelled, the planner's numbers
    layers = [m for m in cal.workload_layers.values() if stored.id in m.report_ids]
    return {"used": [n.line() for n in used], "kinds": sorted({n.kind for n in used}),
            "workload": [{"modelled_ms": m.modelled_layer_seconds * 1e3,
                          "modelled_mib": m.modelled_layer_memory_bytes / 2**20,
                          "summary": m.summary()} for m in layers],
            "refused": reasons_by_figure(n for n in cal.rejected() if stored.id in n.report_ids)}


def calibrates_nothing(refused) -> str:
    """Why a report calibrates nothing, as ingesting says it (markdown)."""
    return code_md("; ".join(S.app_words(r) for r in refused)
                   or "no figure passed the calibration rules")


def code_md(text: str) -> str:
    """``text`` as markdown, shown literally but for its `backticked` spans (a command to run,
    "`python -m probes --out PATH`"), shown as code: escaped whole, they read as raw
    backticks."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0 or any(not p.strip() or "\n" in p for p in parts[1::2]):
        return F.md(text)  # an unpaired or empty span: nothing to show as code

    def spaced(p: str) -> str:  # ``F.md`` strips the spaces around a span
        return " " * p[:1].isspace() + F.md(p) + " " * (p[-1:].isspace() and bool(p.strip()))

    return "".join(spaced(p) if i % 2 == 0 else f"`{p}`" for i, p in enumerate(parts))


def show_error(out: dict) -> None:
    """``S.show_error`` with the message's commands shown as code."""
    st.error(code_md(out["error"]), icon=":material/error:")


def resolved_accelerator(cat: catalog.Catalog, env) -> str | None:
    if env is None:
        return None
    if env.gpu_model:
        try:
            return cat.resolve_accelerator(env.gpu_model, strict=True)
        except catalog.GpuplanError:
            pass
    if env.instance_type:
        try:
            return cat.instance_type(env.instance_type, env.cloud).accelerator
        except catalog.GpuplanError:
            return None
    return None


def is_gpu_run(report) -> bool:
    return report.environment is not None and report.environment.device_type == "cuda"


def not_gpu_words(report) -> str:
    """What a report that calibrates no GPU ran on, as `probe show` says it: "a CPU run", or
    "a report of an unknown machine" where it has no environment section (it was called "a
    CPU run": a fact the report does not hold)."""
    return "a report of an unknown machine" if report.environment is None else "a CPU run"


def environment(report) -> None:
    env = report.environment
    if env is None:
        st.caption("The report has no environment section.")
        return
    # each metric as wide as its value, wrapping onto another row where the page is narrow
    # (four fixed columns cut "NVIDIA H100 80G…" and "p5.48x…" at 800 px); st.metric renders
    # its value as markdown: the report's text is shown literally
    with st.container(horizontal=True):
        st.metric("Device", F.md(env.gpu_model or env.device_type), width="content")
        st.metric("Devices × nodes", f"{env.gpu_count} × {env.node_count}" if env.gpu_count
                  else f"{env.device_type} × {env.node_count}", width="content")  # not "0 × 1"
        st.metric("Instance", F.md(env.instance_type or "unknown"), width="content")
        st.metric("Measured", report.created_utc[:10], width="content")
    # the device named whole too: a metric cannot wrap, and a phone cut it ("NVIDIA H100 80GB H…")
    st.caption(F.md(f"Device: {env.gpu_model or env.device_type} · "
                    f"torch {env.torch_version or '—'} · CUDA {env.cuda_version or '—'} · "
                    f"NCCL {env.nccl_version or '—'} · driver {env.driver_version or '—'} · "
                    f"{env.cloud or 'unknown cloud'} {env.region or ''}"))


def bar_label(v: float) -> str:
    """701, 42.5, 0.42: three significant digits, never a "0" for a small measurement."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def matmul_chart(report, acc: catalog.Accelerator | None):
    rows = []
    for d in report.matmul.dtypes if report.matmul else ():
        if d.status != "measured" or d.best_tflops is None:
            continue
        # the catalog's fp8 is e4m3, whatever the accumulation: fp8_e4m3_fast had no bar
        dtype = "fp8" if d.dtype.startswith("fp8_e4m3") else d.dtype
        label = F.plot_text(d.dtype)  # the report's text: a tick label renders HTML
        rows.append({"dtype": label, "what": "measured", "tflops": d.best_tflops})
        peak = acc.peak_tflops(dtype) if acc and dtype in catalog.DTYPES else None
        if peak:
            rows.append({"dtype": label, "what": "datasheet (dense)", "tflops": peak})
    if not rows:
        return None
    df = pd.DataFrame(rows)
    df["label"] = df["tflops"].map(bar_label)
    fig = px.bar(df, x="dtype", y="tflops", color="what", barmode="group", text="label",
                 color_discrete_map={"measured": "#1f77b4", "datasheet (dense)": "#9aa5b1"},
                 labels={"tflops": "TFLOP/s", "dtype": "", "what": ""})
    fig.update_traces(textposition="outside", cliponaxis=False)
    # the accelerator under the title (beside it, the title ran off a phone's screen), the
    # legend under the plot (beside it, it took 40% of a phone's width)
    fig.update_layout(margin={"t": 70}, height=480, legend=C.LEGEND_BELOW, title=C.titled(
        "Matmul: measured vs datasheet", F.plot_text(acc.name) if acc else None))
    return fig


def busbw_chart(report):
    rows = [{"series": F.plot_text(f"{s.op} ({s.scope}, {s.group_size} ranks)"),
             "size_bytes": p.size_bytes, "busbw_gb_per_s": p.busbw_gb_per_s}
            for s in (report.collectives.series if report.collectives else ())
            if s.status == "measured" for p in s.points]
    if not rows:
        return None
    fig = px.line(pd.DataFrame(rows), x="size_bytes", y="busbw_gb_per_s", color="series",
                  markers=True,
                  labels={"busbw_gb_per_s": "bus bandwidth (GB/s)", "series": ""},
                  title="Collectives: bus bandwidth vs message size")
    C.bytes_axis(fig, [r["size_bytes"] for r in rows], title="message size")
    fig.update_layout(legend={"orientation": "h", "y": -0.25})
    return fig


def ingest(cat: catalog.Catalog, name: str, data: bytes, accelerator: str | None,
           gpu_run: bool, *, ran_on: str = "a CPU run", said: str | None = None) -> None:
    """Store the report; ``ran_on``: what a report that is not a GPU run ran on, in words
    (``not_gpu_words``); ``said``: why ingesting would refuse it, said above already."""
    try:
        stored = store.ingest_bytes(data, cat, source=Path(name).name or "report.json",
                                    accelerator=accelerator)
    except catalog.GpuplanError as exc:
        out = S.error_out(exc)
        if out["error"] == said:  # the warning above said this sentence: not twice
            st.error("Not stored: ingesting refuses this report, for the reason above.",
                     icon=":material/error:")
        else:
            show_error(out)
        return
    if stored.ingest_outcome != "stored":
        # a copy of a stored run (same file or measurements) adds nothing, as the CLI says
        st.info(F.md(F.sentence(stored.ingest_status) + "."),
                icon=":material/info:")
        return
    # what the calibration rules take from it (as `gpuplan probe show`), not what it holds
    cal = store.load_calibration(cat)
    used = [n for n in cal.used() if stored.id in n.report_ids]
    refused = reasons_by_figure(n for n in cal.rejected() if stored.id in n.report_ids)
    if stored.accelerator and gpu_run and used:
        kinds = ", ".join(dict.fromkeys(f"{n.kind} {n.key}" for n in used))
        st.success(F.md(f"Stored as probe report {stored.id}. Plans on {stored.accelerator} "
                        f"now use its measurements ({kinds})."), icon=":material/check:")
    elif stored.accelerator and gpu_run:
        st.warning(F.md(f"Stored as probe report {stored.id}, but it calibrates nothing:")
                   + " " + calibrates_nothing(refused) + ".", icon=":material/warning:")
    else:
        st.success(F.md(f"Stored as probe report {stored.id}, for reference only: "
                        f"{ran_on} calibrates no GPU, "
                        "so plans are unchanged."), icon=":material/check:")


def stored_reports() -> None:
    st.subheader("Ingested reports")
    removed = st.session_state.pop("probe_removed", None)  # said after the rerun below
    if removed:
        st.success(F.md(removed), icon=":material/check:")
    try:
        reports = store.list_reports()
    except catalog.GpuplanError as exc:
        show_error(S.error_out(exc))
        return
    if not reports:
        st.caption("None yet: plans use datasheet peaks × published achievable fractions.")
        return
    try:
        used = [n.report_ids for n in store.load_calibration().used()]
    except catalog.GpuplanError:
        used = []
    rows = []
    for r in reports:
        d = r.as_dict()
        d["used"] = sum(r.id in ids for ids in used)
        d["file"] = Path(d.pop("source_path") or "").name or None  # never the server's path
        d["measurements"] = "; ".join(
            f"{k}: " + ", ".join(f"{kk} {vv:,.1f}" for kk, vv in v.items())
            for k, v in d["measurements"].items()) or None
        rows.append(d)
    F.show_table(pd.DataFrame(rows), REPORT_COLUMNS, key="reports_table",
                 wide=("measurements",))
    remove_reports(reports, {i for ids in used for i in ids})


def removed_words(gone, calibrating: set[int]) -> str:
    """What removing ``gone`` changes: plans no longer use the reports that calibrated
    something; one that calibrated nothing (a CPU run, refused figures) changes no plan."""

    def reports(ids: list[str]) -> str:
        return f"report{'s' if len(ids) > 1 else ''} {', '.join(ids)}"

    used = [str(r.id) for r in gone if r.id in calibrating]
    idle = [str(r.id) for r in gone if r.id not in calibrating]
    said = f"Removed probe {reports([str(r.id) for r in gone])}: "
    if not used:
        return said + f"{'it' if len(idle) == 1 else 'they'} calibrated nothing, so plans " \
            "are unchanged."
    if not idle:
        return said + f"plans no longer use {'it' if len(used) == 1 else 'them'}."
    return said + f"plans no longer use {reports(used)}; {reports(idle)} calibrated nothing."


def remove_reports(reports, calibrating: set[int]) -> None:
    """Take reports out of the calibration (as `gpuplan probe remove`): a run on a throttled
    node or of the wrong machine. Cached plans are keyed by the stored reports, so the next
    plan uses what is left."""
    with st.expander("Remove reports"):
        label = {r.id: f"{r.id}: {r.accelerator or r.device_type}, {r.created_utc[:19]}"
                 for r in reports}
        ids = st.multiselect("Reports to remove", list(label), format_func=label.get,
                             key="probe_remove_ids")
        if st.button("Remove", key="probe_remove", disabled=not ids):
            try:
                gone = store.remove_reports(ids)
            except catalog.GpuplanError as exc:
                show_error(S.error_out(exc))
                return
            st.session_state["probe_removed"] = removed_words(gone, calibrating)
            del st.session_state["probe_remove_ids"]
            st.rerun()


WORKLOAD_COLUMNS = {"figure": ("Per layer (fwd+bwd)", "text"),
                    "measured": ("Measured", "num2"), "modelled": ("Modelled", "num2")}
# what plans take from each kind of figure ingesting accepts (`CalibrationNote.kind`)
KIND_WORDS = {"matmul": "matmul rates", "hbm": "memory bandwidth",
              "intra": "collective bandwidth", "inter": "collective bandwidth",
              "workload": "layer time and activation memory"}


def workload(report, modelled: list[dict]) -> None:
    """The workload probe's layer: measured (``store.workload_figures``, what ingesting
    stores) vs modelled (the calibration's, as `probe ingest` says it); a workload-only report
    showed just "No matmul measurements" and nothing it measured."""
    got = store.workload_figures(report)
    if got is None:
        return
    model = modelled[0] if modelled else {}
    mib = got["memory_bytes"] / 2**20 if got["memory_bytes"] else None
    # the bold outside F.md, which escapes what it is given ("\\*\\*Workload layer\\*\\*")
    st.markdown(f"**Workload layer** ({F.md(got['framework'])}, {F.md(got['shape'].label)})")
    F.show_table(pd.DataFrame([
        {"figure": "time (ms)", "measured": got["seconds"] * 1e3,
         "modelled": model.get("modelled_ms")},
        {"figure": "activation memory (MiB)", "measured": mib,
         "modelled": model.get("modelled_mib") if mib is not None else None}]),
        WORKLOAD_COLUMNS, key="workload_table")
    if model:
        st.caption(F.md(F.sentence(model["summary"]) + "."))


def measurements(report, acc: catalog.Accelerator | None, modelled: list[dict] = ()) -> None:
    """The report's charts (matmul vs the datasheet, bus bandwidth), memory table and
    workload layer (``modelled``: ``judged``'s, empty where it was not judged)."""
    left, right = st.columns(2)
    fig = matmul_chart(report, acc)
    if fig is not None:
        left.plotly_chart(fig, key="matmul_chart")
    else:
        left.caption("No matmul measurements in this report.")
    fig = busbw_chart(report)
    if fig is not None:
        right.plotly_chart(fig, key="busbw_chart")
    else:
        right.caption("No collective measurements in this report.")
    if report.memory:
        F.show_table(pd.DataFrame(
            [{"copy": p.name, "status": p.status, "gb_per_s": p.gb_per_s,
              "bytes": C.bytes_tick(p.size_bytes) if p.size_bytes else None,
              "note": p.reason} for p in report.memory.points]),
            MEMORY_COLUMNS, key="memory_table")
    workload(report, list(modelled))


def show_report(cat: catalog.Catalog, name: str, data: bytes, report) -> None:
    environment(report)
    gpu_run = is_gpu_run(report)
    names = [a.name for a in cat.accelerators]
    found = resolved_accelerator(cat, report.environment)
    acc_name = st.selectbox("Catalog accelerator (for the datasheet comparison and "
                            "calibration)", names,
                            index=names.index(found) if found in names else None,
                            key=I.for_upload("probe_accelerator", data), disabled=not gpu_run,
                            help=None if gpu_run else
                            f"{F.sentence(not_gpu_words(report))} has no GPU to compare")
    acc = cat.accelerator(acc_name) if acc_name and gpu_run else None
    # judged before it is charted: a figure the rules refuse (a hand edit, an impossible
    # number) is not drawn as a measurement beside the datasheet; the refusal is said instead
    # and the charts are folded away (a CPU run calibrates nothing by design: charted as is)
    verdict = judged(name, data, acc_name, S.catalog_key(cat)) if acc_name and gpu_run else {}
    # a report ingesting would refuse whole (an accelerator box that contradicts the report's
    # GPU, a GPU name that contradicts its instance) is said now and refused on ingesting
    whole = "error" in verdict
    if whole:
        st.warning(F.md("Ingesting would refuse this report:") + " "
                   + code_md(verdict["error"]), icon=":material/warning:")
    refused = "used" in verdict and not verdict["used"]
    if refused:
        st.warning(F.md("Ingesting would calibrate nothing:") + " "
                   + calibrates_nothing(verdict["refused"]) + F.md(". Its charts are folded "
                   "away below: not measurements to go by."), icon=":material/warning:")
    # a report refused whole is charted against a datasheet one of its facts contradicts
    # ("measured 650 vs datasheet 312 (A100)" of an H100 run): folded away as well
    folded = "Charts of the refused report" if whole else "Charts of the refused figures"
    with (st.expander(folded) if whole or refused else st.container()):
        measurements(report, acc, verdict.get("workload", []))
    for err in report.errors:
        st.warning(F.md(f"probe {err.probe} failed: {err.error_type}:") + " "
                   + code_md(err.message))
    if whole:  # it said "Ingesting stores the report; plans … then use its measured …"
        st.caption("Ingesting refuses this report (above): nothing is stored, and plans do "
                   "not change.")
    elif refused:
        st.caption("Ingesting stores the report, but plans do not change: the calibration "
                   "rules refuse its figures (above).")
    elif gpu_run and not acc_name:  # "plans on this accelerator then use …" with none chosen
        gpu = report.environment.gpu_model
        st.caption(F.md(f"Choose the report's GPU in “{S.FIELD_LABELS['accelerator']}” above "
                        "first: " + (f"the catalog does not know “{gpu}” by name" if gpu else
                                     "the report does not name its GPU")
                        + ", and ingesting needs to know which accelerator's plans it "
                        "calibrates."))
    elif gpu_run and verdict.get("kinds"):
        # what the rules take from this report ("matmul, memory and collective rates" of a
        # report that measured only a workload layer)
        words = list(dict.fromkeys(KIND_WORDS[k] for k in KIND_WORDS if k in verdict["kinds"]))
        used = ", ".join(words[:-1]) + " and " * (len(words) > 1) + words[-1]
        st.caption(F.md(f"Ingesting stores the report; plans on this accelerator then use its "
                        f"measured {used} instead of the model's datasheet-based figures."))
    elif gpu_run:
        st.caption("Ingesting stores the report; plans on this accelerator then use what the "
                   "calibration rules accept of its measurements.")
    elif report.environment is None:
        st.caption("It is unknown what this report ran on: ingesting stores it for reference, "
                   "but it cannot calibrate a GPU, so plans do not change.")
    else:
        st.caption("This is a CPU run: ingesting stores it for reference, but a CPU run "
                   "never calibrates a GPU, so plans do not change.")
    if st.button("Ingest for planning" if gpu_run else "Store for reference",
                 key="probe_ingest", type="primary"):
        ingest(cat, name, data, acc_name if gpu_run else None, gpu_run,
               ran_on=not_gpu_words(report), said=verdict.get("error"))


def main() -> None:
    st.title("Probe results")
    # no setting here is in the URL: a link's parameters are named, not dropped silently
    I.UrlInputs("probes").warn()
    cat = S.load_catalog_or_stop()
    st.markdown("Upload the JSON report that `gpuplan probe run` wrote on a rented instance.")
    # kept: a report not yet ingested survives a visit to another page, as the other pages'
    # uploads do (it was dropped, its ingest button with it, without a word)
    up = I.kept_upload("Probe report", key="probe_file", what="probe report", types=["json"])
    if up is not None:
        name, data = up
        out = parse(name, data)
        if "error" in out:
            show_error(S.error_out(RuntimeError(out["error"])))
        else:
            show_report(cat, name, data, out["report"])
    stored_reports()


main()
