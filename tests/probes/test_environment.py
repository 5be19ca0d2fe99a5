"""Environment facts, and cloud metadata parsing against a local stand-in server.

The payloads are trimmed from the providers' documentation: AWS "Use IMDSv2" (token PUT, then
plain-text meta-data paths), GCP "About VM metadata" (resource paths for machine-type and zone,
Metadata-Flavor: Google required), Azure "Azure Instance Metadata Service" (JSON with compute.*,
Metadata: true required)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from probes import _environment

AZURE_BODY = {"compute": {"vmSize": "Standard_ND96isr_H100_v5", "location": "eastus",
                          "zone": "1", "name": "vm0", "osType": "Linux"},
              "network": {"interface": []}}


class FakeMetadata(BaseHTTPRequestHandler):
    cloud = "aws"

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _send(self, code: int, body: str, content_type: str = "text/plain") -> None:
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        if self.cloud == "aws" and self.path == "/latest/api/token" and \
                self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            return self._send(200, "TOKEN123")
        return self._send(404, "not found")

    def do_GET(self):
        if self.cloud == "aws":
            if self.headers.get("X-aws-ec2-metadata-token") != "TOKEN123":
                return self._send(401, "")
            pages = {"/latest/meta-data/instance-type": "p5.48xlarge",
                     "/latest/meta-data/placement/region": "us-east-2",
                     "/latest/meta-data/placement/availability-zone": "us-east-2b"}
        elif self.cloud == "gcp":
            if self.headers.get("Metadata-Flavor") != "Google":
                return self._send(403, "Missing Metadata-Flavor:Google header.")
            pages = {"/computeMetadata/v1/instance/machine-type":
                     "projects/123456789/machineTypes/a3-megagpu-8g",
                     "/computeMetadata/v1/instance/zone": "projects/123456789/zones/us-east5-a"}
        else:
            if self.headers.get("Metadata") != "true":
                return self._send(400, '{"error": "Bad request"}')
            pages = {"/metadata/instance?api-version=2021-02-01": json.dumps(AZURE_BODY)}
        if self.path in pages:
            return self._send(200, pages[self.path])
        return self._send(404, "not found")


@pytest.fixture(params=["aws", "gcp", "azure"])
def metadata_server(request):
    handler = type("Handler", (FakeMetadata,), {"cloud": request.param})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield request.param, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


EXPECTED = {"aws": ("p5.48xlarge", "us-east-2", "us-east-2b"),
            "gcp": ("a3-megagpu-8g", "us-east5", "us-east5-a"),
            "azure": ("Standard_ND96isr_H100_v5", "eastus", "1")}


def _closed_port() -> str:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeMetadata)
    port = server.server_address[1]
    server.server_close()
    return f"http://127.0.0.1:{port}"


def test_each_cloud_is_recognised(metadata_server, monkeypatch):
    cloud, url = metadata_server
    monkeypatch.delenv("GPUPLAN_NO_METADATA")
    dead = _closed_port()
    for name in ("AWS", "GCP", "AZURE"):
        monkeypatch.setenv(f"GPUPLAN_{name}_METADATA_URL", url if name.lower() == cloud else dead)
    found = _environment.cloud_instance()
    assert found is not None and found.cloud == cloud
    assert (found.instance_type, found.region, found.zone) == EXPECTED[cloud]


def test_other_clouds_do_not_answer_to_the_wrong_protocol(metadata_server):
    cloud, url = metadata_server
    others = {"aws": _environment.aws_instance, "gcp": _environment.gcp_instance,
              "azure": _environment.azure_instance}
    for name, probe in others.items():
        assert (probe(url) is not None) == (name == cloud)


def test_disabled_by_env_even_when_a_server_answers(metadata_server, monkeypatch):
    _, url = metadata_server
    for name in ("AWS", "GCP", "AZURE"):
        monkeypatch.setenv(f"GPUPLAN_{name}_METADATA_URL", url)
    monkeypatch.setenv("GPUPLAN_NO_METADATA", "1")
    assert _environment.cloud_instance() is None


def test_no_service_means_none_quickly(monkeypatch):
    monkeypatch.delenv("GPUPLAN_NO_METADATA")
    dead = _closed_port()
    for name in ("AWS", "GCP", "AZURE"):
        monkeypatch.setenv(f"GPUPLAN_{name}_METADATA_URL", dead)
    t0 = time.perf_counter()
    assert _environment.cloud_instance() is None
    assert time.perf_counter() - t0 < 2.0


def test_cpu_environment_without_nvidia_smi(monkeypatch):
    monkeypatch.setattr(_environment.shutil, "which", lambda name: None)
    env = _environment.collect_environment(device_type="cpu", world_size=4,
                                           local_world_size=2)
    assert env.device_type == "cpu" and env.gpu_count == 0 and env.gpu_model is None
    assert env.node_count == 2 and env.cpu_count >= 1 and env.hostname
    assert env.cloud is None  # GPUPLAN_NO_METADATA=1 from conftest
    pytest.importorskip("torch")
    import torch

    assert env.torch_version == torch.__version__


def test_nvidia_smi_output_is_parsed(monkeypatch, tmp_path):
    # Format of `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` on an H100 node.
    fake = tmp_path / "nvidia-smi"
    row = "NVIDIA H100 80GB HBM3, 550.54.15, 81559, 1980, 1980, 2619, 2619"
    fake.write_text("#!/bin/sh\n" + "".join(f"echo '{row}'\n" for _ in range(8)))
    fake.chmod(0o755)
    monkeypatch.setattr(_environment.shutil, "which", lambda name: str(fake))
    smi = _environment.nvidia_smi()
    assert smi == {"name": "NVIDIA H100 80GB HBM3", "driver_version": "550.54.15",
                   "memory_bytes": 81559 * 2**20, "sm_clock_mhz": 1980,
                   "sm_clock_max_mhz": 1980, "memory_clock_mhz": 2619,
                   "memory_clock_max_mhz": 2619, "count": 8}


FAKE_SMI = r"""#!/bin/sh
# Answers like `nvidia-smi --query-gpu=... --format=csv,noheader,nounits -i GPU-...` on an
# H100 under load; a driver older than 535 does not know clocks_event_reasons.active.
query="$(printf '%s\n' "$@" | sed -n 's/^--query-gpu=//p')"
case "$query" in
  *clocks_event_reasons*)
    echo 'Field "clocks_event_reasons.active" is not a valid field to query.'; exit 2;;
  *,*) echo '1755, 2619, 687.41, 700.00, 700.00, 71, 0x0000000000000004, Disabled, Enabled';;
  clocks.sm) echo 1755;; clocks.mem) echo 2619;; power.draw) echo 687.41;;
  enforced.power.limit) echo 700.00;; power.default_limit) echo 700.00;;
  temperature.gpu) echo 71;; clocks_throttle_reasons.active) echo 0x0000000000000004;;
  mig.mode.current) echo '[N/A]';; ecc.mode.current) echo Enabled;;
  *) exit 2;;
esac
"""


@pytest.fixture
def fake_smi(tmp_path, monkeypatch):
    from probes import _smi

    fake = tmp_path / "nvidia-smi"
    fake.write_text(FAKE_SMI)
    fake.chmod(0o755)
    monkeypatch.setattr(_smi.shutil, "which", lambda name: str(fake))
    return _smi


def test_telemetry_falls_back_to_one_field_at_a_time_on_older_drivers(fake_smi):
    t = fake_smi.gpu_telemetry("GPU-1234", sampled="under_load")
    assert (t.sampled, t.sm_clock_mhz, t.memory_clock_mhz) == ("under_load", 1755, 2619)
    assert (t.power_draw_w, t.power_limit_w, t.temperature_c) == (687.41, 700.0, 71.0)
    assert t.clock_event_reasons == "0x0000000000000004"  # power cap, under the old name
    assert (t.mig_mode, t.ecc_mode) == (None, "Enabled")  # "[N/A]" is not a value


def test_no_nvidia_smi_means_no_telemetry(monkeypatch):
    from probes import _smi

    monkeypatch.setattr(_smi.shutil, "which", lambda name: None)
    assert _smi.gpu_telemetry(None, sampled="idle") is None


def test_nccl_and_libfabric_variables_are_recorded():
    env = {"NCCL_IB_HCA": "mlx5", "FI_PROVIDER": "efa", "PATH": "/bin", "NCCL_DEBUG": "INFO"}
    assert _environment.recorded_env(env) == (("FI_PROVIDER", "efa"), ("NCCL_DEBUG", "INFO"),
                                              ("NCCL_IB_HCA", "mlx5"))


def test_clock_event_masks_read_as_words():
    from probes._smi import clock_event_words

    assert clock_event_words("0x0000000000000004") == "software power cap"
    assert clock_event_words("0x0000000000000000") == "none"
    assert clock_event_words("0x44") == "software power cap, hardware thermal slowdown"
    assert clock_event_words("0x1000") == "other 0x1000"
    assert clock_event_words("[N/A]") == "" and clock_event_words(None) == ""


def test_the_summary_of_a_power_capped_h200_says_so():
    """The H200 of benchmarks/data/gpu_check_h200_2026-12-04 ran its matmuls at its 700 W
    cap (1,380 of 1,980 MHz): the probe's summary names the cap instead of a bare hex mask."""
    from pathlib import Path

    from probes import load_report
    from probes.cli import format_summary

    run = Path(__file__).resolve().parents[2] / "benchmarks/data/gpu_check_h200_2026-12-04"
    text = format_summary(load_report(run / "probe-report.json"))
    (line,) = [x for x in text.splitlines() if "under load:" in x]
    assert "SM 1380 MHz" in line and "693 W" in line and "limit 700 W" in line
    assert "clock events 0x0000000000000004 (software power cap)" in line
    (idle,) = [x for x in text.splitlines() if "idle:" in x]
    assert "clock events 0x0000000000000000 (none)" in idle


def test_a_signed_clock_mask_is_not_decoded():
    from probes._smi import clock_event_words

    assert clock_event_words("-0x4") == ""
