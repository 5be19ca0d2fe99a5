"""Fixtures for the cloud sources: the packaged catalog as reference, fixture files, and a
closed local port for the no-network cases. The parent conftest sets GPUPLAN_HOME to a
temporary folder for every test."""

from __future__ import annotations

import socket

import pytest


@pytest.fixture(autouse=True)
def _sources_home(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "gpuplan-home"))


@pytest.fixture(scope="session")
def packaged():
    from catalog import load_catalog

    return load_catalog("packaged")


@pytest.fixture
def closed_port() -> int:
    """A local TCP port with nothing listening: connecting to it is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """Fake static credentials and no shared config, so moto (or nothing) answers."""
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def server():
    """A threaded local HTTP server: SDK clients keep connections alive, so a one-thread
    server would block the second client behind the first one's idle connection."""
    from pytest_httpserver import HTTPServer

    srv = HTTPServer(threaded=True)
    srv.start()
    yield srv
    srv.clear()
    if srv.is_running():
        srv.stop()
