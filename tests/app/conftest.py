"""Fixtures for the app's tests: the app's path, fresh Streamlit caches, and a probe report.

The probe report is built from the probe schema's own records and serialised with
``probes.report_to_json``, so it has exactly the shape `python -m probes` writes on a GPU
instance (one p5.48xlarge node; bf16/fp16 matmul, a device copy, an intra-node all-reduce
over three message sizes). The numbers are plausible for an H100 SXM, not measured.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"


@pytest.fixture(autouse=True)
def _app_environment(monkeypatch):
    """Pages import ``app_pages`` from the checkout (streamlit run puts it on sys.path), and
    every test starts with empty st.cache_data caches."""
    import streamlit as st

    monkeypatch.syspath_prepend(str(ROOT))
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def probe_report_json(*, bf16_tflops: float = 700.0, device_type: str = "cuda") -> bytes:
    from probe_reports import h100_report

    from probes import report_to_json

    report = h100_report(bf16_tflops=bf16_tflops, fp16_tflops=bf16_tflops * 1.01,
                         device_type=device_type,
                         busbw_by_size=((2**20, 95.0), (2**26, 402.0), (2**30, 481.8)))
    return report_to_json(report).encode("utf-8")


@pytest.fixture
def probe_report() -> bytes:
    return probe_report_json()

