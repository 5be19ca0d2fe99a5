"""Which transport each NCCL communicator used, read from NCCL's own INFO log (torch-free).

NCCL says how it connected every channel when a communicator is created, with NCCL_DEBUG=INFO
(lines from NCCL's init.cc, transport/p2p.cc, transport/net.cc; trimmed examples in
tests/probes/fixtures/nccl_info_*.log)::

    host:1:2 [0] NCCL INFO comm 0x55d8 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 ...
    host:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
    host:1:2 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/IB/0/GDRDMA
    host:1:2 [0] NCCL INFO Channel 01/0 : 7[7] -> 8[0] [send] via NET/AWS Libfabric/1/GDRDMA
    host:1:2 [0] NCCL INFO Using network IB
    host:1:2 [0] NCCL INFO ncclCommInitRank comm 0x55d8 rank 0 nranks 16 ... Init COMPLETE

A cross-node collective that silently fell back to TCP shows ``via NET/Socket/0`` and
``Using network Socket``: that is what the planner must never take for the fabric's speed.

Capture: unless the user already routes the log (NCCL_DEBUG_FILE), the probes set
NCCL_DEBUG=INFO and NCCL_DEBUG_FILE=<temp dir>/nccl.%h.%p.log before the process group starts
(NCCL expands %h to the host name and %p to the process id), so the log goes to a file per
process instead of the console; each rank parses its own file and rank 0 merges them.
Communicators are told apart by their size (``nRanks``): the intra-node group has the ranks
of one node, the world group all of them.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

# Networks the planner takes as RDMA: InfiniBand verbs (NCCL's "IB" transport, which also
# carries RoCE; "IBext_v8" etc. are external IB plugins) and libfabric (aws-ofi-nccl: EFA's
# SRD protocol bypasses the kernel and writes GPU memory directly with GPUDirect RDMA).
_RDMA = re.compile(r"^(IB|IBext.*|.*Libfabric.*|OFI.*)$", re.IGNORECASE)
# GCP A3's GPUDirect-TCPX / TCPXO plugins: not RDMA, but the fabric the catalog rates for
# those machines (fabric "gpudirect_tcpx"); the planner accepts them on such instances only.
_TCPX = re.compile(r"GPUDirectTCPX|TCPXO|FasTrak", re.IGNORECASE)

_COMM = re.compile(r"\bcomm 0x[0-9a-f]+ rank \d+ nranks (\d+)", re.IGNORECASE)
_VIA = re.compile(r"\bvia (NET/(.+?)/\d+(?:\(\d+\))?(/GDRDMA)?(?:/\w+)*|P2P/[\w/ ]+?|"
                  r"SHM[\w/]*|COLLNET[\w/]*)\s*$")
_NVLS = re.compile(r"\bNVLS\b.*\b(comm|Connected|nvlsRanks)\b")
_USING = re.compile(r"\bUsing network (.+?)\s*$")
# NCCL <= 2.22: "NET/Plugin : No plugin found (libnccl-net.so), using internal implementation";
# 2.23+: "NET/Plugin: Loaded net plugin <name> (v8)" / "NET/Plugin: Using internal network
# plugin."; aws-ofi-nccl also says "NET/OFI Initializing aws-ofi-nccl 1.13.2".
_PLUGIN = re.compile(r"NET/Plugin\s*:\s*(?:Loaded net plugin (.+?)\s*(?:\(v\d+\))?\s*$|"
                     r"(No plugin found|Using internal))")
_OFI = re.compile(r"NET/OFI Initializing (aws-ofi-nccl \S+)")


@dataclass(frozen=True, slots=True, kw_only=True)
class CommTransport:
    """What one communicator of ``nranks`` ranks used, as far as this process saw."""

    nranks: int
    transports: tuple[str, ...]  # sorted, e.g. ("NET/IB/GDRDMA", "P2P/CUMEM")
    nets: tuple[str, ...]  # sorted network names, e.g. ("IB",)
    plugins: tuple[str, ...] = ()  # the net plugin(s): "internal", "aws-ofi-nccl 1.13.2"...


def is_rdma(net: str) -> bool:
    return bool(_RDMA.match(net.strip()))


def is_tcpx(net: str) -> bool:
    return bool(_TCPX.search(net))


def parse(text: str) -> dict[int, CommTransport]:
    """Communicator size -> transports and networks seen in one process's NCCL INFO log."""
    found: dict[int, tuple[set[str], set[str]]] = {}
    current: int | None = None
    network: str | None = None
    plugins: set[str] = set()
    for line in text.splitlines():
        if "NCCL INFO" not in line:
            continue
        m = _PLUGIN.search(line) or _OFI.search(line)
        if m:
            plugins.add("internal" if (m.re is _PLUGIN and m.group(2)) else m.group(1))
            continue
        m = _COMM.search(line)
        if m:
            current = int(m.group(1))
            found.setdefault(current, (set(), set()))
            continue
        m = _USING.search(line)
        if m:
            network = m.group(1)
            continue
        if current is None:
            continue
        kinds, nets = found[current]
        m = _VIA.search(line)
        if m:
            if m.group(2):  # NET/<name>/<dev>[/GDRDMA]
                nets.add(m.group(2))
                kinds.add(f"NET/{m.group(2)}" + ("/GDRDMA" if m.group(3) else ""))
            else:  # "P2P/CUMEM/read" -> "P2P/CUMEM": the mechanism, not its mode
                kinds.add("/".join(m.group(1).strip().split("/")[:2]))
        elif _NVLS.search(line):
            kinds.add("NVLS")
    out = {}
    for nranks, (kinds, nets) in found.items():
        if any(k.startswith("NET/") for k in kinds) and not nets and network:
            nets.add(network)
        out[nranks] = CommTransport(nranks=nranks, transports=tuple(sorted(kinds)),
                                    nets=tuple(sorted(nets)),
                                    plugins=tuple(sorted(plugins)) if nets else ())
    return out


def merge(parts: list[dict[int, CommTransport]]) -> dict[int, CommTransport]:
    """Union over processes (each rank sees only its own channels)."""
    kinds: dict[int, set[str]] = {}
    nets: dict[int, set[str]] = {}
    plugins: dict[int, set[str]] = {}
    for part in parts:
        for n, ct in part.items():
            kinds.setdefault(n, set()).update(ct.transports)
            nets.setdefault(n, set()).update(ct.nets)
            plugins.setdefault(n, set()).update(ct.plugins)
    return {n: CommTransport(nranks=n, transports=tuple(sorted(kinds[n])),
                             nets=tuple(sorted(nets[n])), plugins=tuple(sorted(plugins[n])))
            for n in kinds}


@dataclass(slots=True, kw_only=True)
class LogCapture:
    """Where this process's NCCL log goes; ``reason`` says why it cannot be read, if so."""

    pattern: str | None  # NCCL_DEBUG_FILE as NCCL sees it (with %h/%p)
    reason: str | None = None
    owned_dir: str | None = None  # a temp dir this module made (removed by cleanup)
    set_vars: dict[str, str] = field(default_factory=dict)

    def read_own(self) -> str | None:
        """This process's log text, or None when it cannot be read."""
        if self.owned_dir is not None:  # only this process writes there
            paths = sorted(Path(self.owned_dir).glob("nccl.*.log"))
        elif self.pattern is not None:
            # NCCL's %h is the host name up to its first dot (getHostName in utils.cc)
            host = socket.gethostname()
            paths = [Path(self.pattern.replace("%h", h).replace("%p", str(os.getpid())))
                     for h in dict.fromkeys((host.split(".")[0], host))]
        else:
            return None
        texts = []
        for path in paths:
            try:
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
        return "\n".join(texts) if texts else None

    def cleanup(self) -> None:
        if self.owned_dir is None:
            return
        for child in Path(self.owned_dir).glob("*"):
            child.unlink(missing_ok=True)
        Path(self.owned_dir).rmdir()
        self.owned_dir = None


def start_capture(environ: dict[str, str] | None = None) -> LogCapture:
    """Route this process's NCCL INFO log to a file (see the module docstring)."""
    env = os.environ if environ is None else environ
    level = env.get("NCCL_DEBUG", "").upper()
    subsys = env.get("NCCL_DEBUG_SUBSYS", "")
    if subsys and not {"INIT", "ALL"} & {s.strip().lstrip("^").upper()
                                         for s in subsys.split(",")}:
        return LogCapture(pattern=None, reason=f"NCCL_DEBUG_SUBSYS={subsys} leaves out INIT, "
                          "where NCCL names its transports")
    if env.get("NCCL_DEBUG_FILE"):
        if level not in ("INFO", "TRACE"):
            env["NCCL_DEBUG"] = "INFO"
        return LogCapture(pattern=env["NCCL_DEBUG_FILE"],
                          set_vars={"NCCL_DEBUG": env["NCCL_DEBUG"]})
    directory = tempfile.mkdtemp(prefix="gpuplan-nccl-")
    pattern = os.path.join(directory, "nccl.%h.%p.log")
    env["NCCL_DEBUG_FILE"] = pattern
    if level not in ("INFO", "TRACE"):
        env["NCCL_DEBUG"] = "INFO"
    return LogCapture(pattern=pattern, owned_dir=directory,
                      set_vars={"NCCL_DEBUG": env["NCCL_DEBUG"], "NCCL_DEBUG_FILE": pattern})
