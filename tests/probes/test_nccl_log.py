"""Reading NCCL's INFO log for the transport of each communicator, and routing it to a file.

The fixtures are trimmed NCCL 2.21/2.23 INFO logs in the layout NCCL prints (host:pid:tid
[dev] NCCL INFO ...), modelled on logs quoted in NVIDIA/nccl issues #707 and #1412 (IB,
P2P, "Init COMPLETE" lines), #1597 and aws/aws-ofi-nccl #24 (EFA through "AWS Libfabric"),
and #229 (the fall-back to sockets when the IB/OFI transports do not load).
"""

from __future__ import annotations

from pathlib import Path

from probes import _nccl_log

FIXTURES = Path(__file__).parent / "fixtures"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_infiniband_across_nodes_and_nvlink_within():
    comms = _nccl_log.parse(read("nccl_info_2node_ib.log"))
    assert set(comms) == {16, 8}
    world, intra = comms[16], comms[8]
    assert world.nets == ("IB",) and world.plugins == ("internal",)
    assert world.transports == ("NET/IB/GDRDMA", "NVLS", "P2P/CUMEM")
    assert intra.nets == () and intra.transports == ("NVLS", "P2P/CUMEM")
    assert all(_nccl_log.is_rdma(n) for n in world.nets)


def test_a_silent_fall_back_to_tcp_sockets_is_visible():
    (world,) = _nccl_log.parse(read("nccl_info_2node_socket.log")).values()
    assert world.nets == ("Socket",) and "NET/Socket" in world.transports
    assert not _nccl_log.is_rdma("Socket")


def test_efa_through_libfabric_counts_as_rdma():
    (world,) = _nccl_log.parse(read("nccl_info_efa.log")).values()
    assert world.nets == ("AWS Libfabric",) and world.plugins == ("aws-ofi-nccl 1.13.2",)
    assert world.transports == ("NET/AWS Libfabric/GDRDMA", "P2P/CUMEM")
    assert _nccl_log.is_rdma("AWS Libfabric") and _nccl_log.is_rdma("IBext_v8")
    assert not _nccl_log.is_rdma("GPUDirectTCPX") and _nccl_log.is_tcpx("GPUDirectTCPX")


def test_ranks_merge_into_one_view_per_communicator():
    a = _nccl_log.parse(read("nccl_info_2node_ib.log"))
    b = _nccl_log.parse(read("nccl_info_efa.log"))
    merged = _nccl_log.merge([a, b])
    assert merged[16].nets == ("AWS Libfabric", "IB") and merged[8] == a[8]


def test_lines_that_are_not_nccl_info_are_ignored():
    assert _nccl_log.parse("random text\nvia NET/IB/0\n") == {}


def test_capture_routes_the_log_to_a_private_file_and_cleans_up(tmp_path):
    env: dict[str, str] = {}
    capture = _nccl_log.start_capture(env)
    assert env["NCCL_DEBUG"] == "INFO" and env["NCCL_DEBUG_FILE"].endswith("nccl.%h.%p.log")
    assert capture.reason is None and capture.read_own() is None  # nothing written yet
    Path(capture.owned_dir, "nccl.host.123.log").write_text(read("nccl_info_efa.log"))
    assert "AWS Libfabric" in capture.read_own()
    capture.cleanup()
    assert capture.owned_dir is None


def test_a_users_own_log_file_is_read_not_replaced(tmp_path):
    import os
    import socket

    pattern = str(tmp_path / "mine.%h.%p.txt")
    env = {"NCCL_DEBUG_FILE": pattern, "NCCL_DEBUG": "WARN"}
    capture = _nccl_log.start_capture(env)
    assert env["NCCL_DEBUG_FILE"] == pattern and env["NCCL_DEBUG"] == "INFO"
    host = socket.gethostname().split(".")[0]
    (tmp_path / f"mine.{host}.{os.getpid()}.txt").write_text(read("nccl_info_efa.log"))
    assert "Libfabric" in capture.read_own()
    capture.cleanup()  # not ours: left alone
    assert (tmp_path / f"mine.{host}.{os.getpid()}.txt").exists()


def test_a_subsystem_filter_without_init_is_reported():
    capture = _nccl_log.start_capture({"NCCL_DEBUG_SUBSYS": "COLL,NET"})
    assert capture.pattern is None and "INIT" in capture.reason
