"""Probes: look at a probe report (measured vs datasheet, bus bandwidth over message sizes)
and ingest it so the planner uses its measurements."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd
import plotly.express as px
import streamlit as st

import catalog
import planner
import probes
from app_pages import _shared as S


@st.cache_data(max_entries=8, show_spinner=False)
def parse(name: str, data: bytes) -> dict:
    """The uploaded report, validated; ``{"error": line}`` when it is not a probe report."""
    try:
        report = probes.parse_report(json.loads(data.decode("utf-8")), source=name)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return {"error": f"{name} is not a JSON probe report ({exc}). To fix: upload the file "
                         "`gpuplan probe run` (python -m probes) wrote"}
    except probes.ReportError as exc:
        return {"error": str(exc)}
    return {"report": report}


def resolved_accelerator(cat: catalog.Catalog, env) -> str | None:
    for name in (env.gpu_model,) if env else ():
        try:
            return cat.resolve_accelerator(name) if name else None
        except catalog.GpuplanError:
            pass
    if env and env.instance_type:
        try:
            return cat.instance_type(env.instance_type, env.cloud).accelerator
        except catalog.GpuplanError:
            return None
    return None


def environment(report) -> None:
    env = report.environment
    if env is None:
        st.caption("The report has no environment section.")
        return
    c = st.columns(4)
    c[0].metric("GPU", env.gpu_model or env.device_type)
    c[1].metric("GPUs × nodes", f"{env.gpu_count} × {env.node_count}")
    c[2].metric("Instance", env.instance_type or "unknown")
    c[3].metric("Measured", report.created_utc[:10])
    st.caption(f"torch {env.torch_version or '—'} · CUDA {env.cuda_version or '—'} · NCCL "
               f"{env.nccl_version or '—'} · driver {env.driver_version or '—'} · "
               f"{env.cloud or 'unknown cloud'} {env.region or ''}")


def matmul_chart(report, acc: catalog.Accelerator | None):
    rows = []
    for d in report.matmul.dtypes if report.matmul else ():
        if d.status != "measured":
            continue
        dtype = d.dtype.removesuffix("_e4m3")  # the catalog's name for fp8 e4m3 is fp8
        rows.append({"dtype": d.dtype, "what": "measured", "tflops": d.best_tflops})
        peak = acc.peak_tflops(dtype) if acc and dtype in catalog.DTYPES else None
        if peak:
            rows.append({"dtype": d.dtype, "what": "datasheet (dense)", "tflops": peak})
    if not rows:
        return None
    df = pd.DataFrame(rows)
    fig = px.bar(df, x="dtype", y="tflops", color="what", barmode="group", text_auto=".0f",
                 labels={"tflops": "TFLOP/s", "dtype": "", "what": ""},
                 title="Matmul: measured vs datasheet" + (f" ({acc.name})" if acc else ""))
    return fig


def busbw_chart(report):
    rows = [{"series": f"{s.op} ({s.scope}, {s.group_size} ranks)",
             "size_bytes": p.size_bytes, "busbw_gb_per_s": p.busbw_gb_per_s}
            for s in (report.collectives.series if report.collectives else ())
            if s.status == "measured" for p in s.points]
    if not rows:
        return None
    fig = px.line(pd.DataFrame(rows), x="size_bytes", y="busbw_gb_per_s", color="series",
                  markers=True, log_x=True,
                  labels={"size_bytes": "message size (bytes)",
                          "busbw_gb_per_s": "bus bandwidth (GB/s)", "series": ""},
                  title="Collectives: bus bandwidth vs message size")
    return fig


def ingest(cat: catalog.Catalog, name: str, data: bytes, accelerator: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="gpuplan-probe-") as tmp:
        path = Path(tmp) / Path(name).name
        path.write_bytes(data)
        try:
            stored = planner.ingest_probe_report(path, cat, accelerator=accelerator)
        except catalog.GpuplanError as exc:
            st.error(str(exc))
            return
    kinds = ", ".join(f"{k}: {v}" for k, v in stored.measurements.items())
    st.success(f"Stored as probe report {stored.id} ({stored.accelerator or 'no accelerator'})."
               f" Plans now use its measurements. {kinds}")


def stored_reports() -> None:
    st.subheader("Ingested reports")
    try:
        reports = planner.list_probe_reports()
    except catalog.GpuplanError as exc:
        st.error(str(exc))
        return
    if not reports:
        st.caption("None yet: plans use datasheet peaks × published achievable fractions.")
        return
    rows = []
    for r in reports:
        d = r.as_dict()
        d["measurements"] = "; ".join(f"{k}: " + ", ".join(f"{kk}={vv:g}" for kk, vv in v.items())
                                      for k, v in d["measurements"].items())
        rows.append(d)
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="reports_table")


def main() -> None:
    st.title("Probe results")
    cat = S.load_catalog_or_stop()
    st.markdown("Upload the JSON report that `gpuplan probe run` wrote on a rented instance.")
    up = st.file_uploader("Probe report", type=["json"], key="probe_file")
    if up is not None:
        out = parse(up.name, up.getvalue())
        if "error" in out:
            st.error(out["error"])
        else:
            report = out["report"]
            environment(report)
            names = [a.name for a in cat.accelerators]
            found = resolved_accelerator(cat, report.environment)
            acc_name = st.selectbox("Catalog accelerator (for the datasheet comparison and "
                                    "calibration)", names,
                                    index=names.index(found) if found in names else None,
                                    key="probe_accelerator")
            acc = cat.accelerator(acc_name) if acc_name else None
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
                st.dataframe(pd.DataFrame(
                    [{"copy": p.name, "status": p.status, "GB/s": p.gb_per_s,
                      "bytes": p.size_bytes, "note": p.reason} for p in report.memory.points]),
                    hide_index=True, key="memory_table")
            for err in report.errors:
                st.warning(f"probe {err.probe} failed: {err.error_type}: {err.message}")
            cuda = report.environment is not None and report.environment.device_type == "cuda"
            if not cuda:
                st.caption("A CPU run is stored but never calibrates a GPU.")
            if st.button("Ingest for planning", key="probe_ingest", type="primary"):
                ingest(cat, up.name, up.getvalue(), acc_name if cuda else None)
    stored_reports()


main()
