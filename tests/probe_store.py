"""Helpers shared by the tests of the probe store and calibration (tests/planner/
test_probe_ingest.py, test_workload_calibration.py, tests/cli/test_probe_store_damage.py): write
a report the way the probes do, ingest it, read why the rules refused it, and damage the
database file as a bad disk would."""

from __future__ import annotations

import sqlite3

from planner import build_cluster
from planner.model import Calibration
from planner.store import ingest
from probes import write_report_atomic

H100 = "H100-SXM5-80GB"


def p5(catalog, nodes: int = 1):
    """(cluster, memory GiB) of ``nodes`` p5.48xlarge."""
    return build_cluster(catalog, instance="p5.48xlarge", nodes=nodes)


def put(tmp_path, catalog, report, name="r.json", **kw):
    """``report`` written as `python -m probes` writes it, then ingested."""
    return ingest(write_report_atomic(report, tmp_path / name), catalog, **kw)


def refused(cal: Calibration, report_id: int) -> list[str]:
    """Why the calibration refused figures of report ``report_id``."""
    return [n.reason for n in cal.rejected() if report_id in n.report_ids]


# -- damage to the database file, as a bad disk or a stray write leaves it -------------------
# (SQLite's file format: https://www.sqlite.org/fileformat2.html; a page's b-tree header
# starts at byte 100 on page 1, at byte 0 on every other page)
TABLE_LEAF = 0x0D


def _page_size_and_count(path) -> tuple[int, int]:
    with sqlite3.connect(path) as conn:
        return (conn.execute("PRAGMA page_size").fetchone()[0],
                conn.execute("PRAGMA page_count").fetchone()[0])


def _root_page(path, table: str) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                            (table,)).fetchone()[0]


def drop_cells(path, table: str, keep: int = 1) -> None:
    """The root page of ``table`` (a leaf: a small store) says it holds ``keep`` cells: the
    rows past them are gone from every scan of the table, without an error from SQLite."""
    size, _ = _page_size_and_count(path)
    at = (_root_page(path, table) - 1) * size
    with open(path, "r+b") as f:
        f.seek(at)
        header = f.read(5)
        assert header[0] == TABLE_LEAF and int.from_bytes(header[3:5], "big") > keep
        f.seek(at + 3)
        f.write(keep.to_bytes(2, "big"))


def misdirect_overflow(path) -> None:
    """The first overflow page that continues a chain (its first 4 bytes: the next page of the
    chain) points at the reports table's root page instead: the report that reads the chain
    gets that b-tree page's bytes as the end of its text."""
    size, count = _page_size_and_count(path)
    root = _root_page(path, "reports")
    with open(path, "r+b") as f:
        for page in range(2, count + 1):
            f.seek((page - 1) * size)
            head = f.read(4)
            # a b-tree page starts with its type (2, 5, 10, 13); an overflow page with 0
            if head[0] == 0 and 2 <= int.from_bytes(head, "big") <= count:
                f.seek((page - 1) * size)
                f.write(root.to_bytes(4, "big"))
                return
    raise AssertionError("no overflow chain of two pages: store bigger reports")


def garble_schema(path, table: str = "removed_reports") -> None:
    """Bytes that are not UTF-8 where ``table``'s CREATE statement (page 1) opens its column
    list: SQLite's error quotes them ("near ..."), and Python's sqlite3 cannot decode it."""
    data = bytearray(open(path, "rb").read())
    at = data.index(f"CREATE TABLE {table} (".encode()) + len(f"CREATE TABLE {table} ")
    data[at:at + 2] = b"\xff\xfe"
    with open(path, "r+b") as f:
        f.write(data)
