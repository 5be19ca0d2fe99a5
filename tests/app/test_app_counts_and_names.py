"""Words of the app sweep of 2026-12-07: the Probes page's device named whole (a phone cut
the metric to "NVIDIA H100 80GB H…"), counts with thousands separators ("1536× p6-b200…"),
and an uploaded bare config.json's plan named by its model type, not "config"."""

from __future__ import annotations

from pathlib import Path

from app_pages import _format as F

from ._apptest import app, plain, texts
from .conftest import ROOT


def test_the_probe_device_is_named_whole(probe_report):
    at = app("app_pages/probes.py")
    at.file_uploader(key="probe_file").set_value(
        ("r.json", probe_report, "application/json")).run()
    assert any("Device: NVIDIA H100 80GB HBM3 ·" in plain(c.value) for c in at.caption), \
        [c.value for c in at.caption]


def test_a_config_line_counts_with_thousands_separators():
    line = F.config_line({"nodes": 1536, "instance_type": "p6-b200.48xlarge", "gpus": 12288,
                          "accelerator": "B200-SXM-180GB", "cloud": "aws",
                          "regions": ["us-east-1"], "region": "us-east-1",
                          "pricing": "on_demand"})
    assert line.startswith("1,536× p6-b200.48xlarge (12,288× B200-SXM-180GB)"), line


def test_a_bare_config_json_plan_is_named_by_its_model_type():
    data = (Path(ROOT) / "examples/llama-3.2-1b/config.json").read_bytes()
    at = app()
    at.radio(key="source").set_value("config").run()
    at.file_uploader(key="config_file").set_value(("config.json", data,
                                                   "application/json")).run()
    heads = [t for t in texts(at) if " parameters, " in t and t.startswith("**")]
    assert heads and heads[0].startswith("**llama**: "), heads[:1]
