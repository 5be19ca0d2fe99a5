"""Probe tests run on CPU, offline: no torchrun variables leak in, metadata look-ups are off
(the metadata test turns them back on against its own 127.0.0.1 server)."""

from __future__ import annotations

import pytest

TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                 "MASTER_PORT", "GROUP_RANK")


@pytest.fixture(autouse=True)
def _plain_process(monkeypatch):
    monkeypatch.setenv("GPUPLAN_NO_METADATA", "1")
    for name in TORCHRUN_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def catalog():
    from catalog import load_catalog

    return load_catalog()


@pytest.fixture
def single_thread():
    """One torch thread for timing comparisons: the CI box has 2 cores shared with other
    jobs, and a two-thread GEMM stalls whenever one core is taken."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
