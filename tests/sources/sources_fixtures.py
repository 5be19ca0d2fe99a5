"""Loads the recorded-shape payloads in fixtures/ (each JSON file's "_source", and
fixtures/SOURCES.md for every file, say where its shape comes from)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def load_fixture(name: str):
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def one_connection(answer, *, query: str = "") -> str:
    """A local socket that takes one connection, reads its request and hands it to
    ``answer(conn)`` (a hostile or broken server in a few lines); the URL of an index.csv
    there, with ``query``."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def run():
        conn, _ = listener.accept()
        conn.recv(65536)
        try:
            answer(conn)
        except OSError:  # the client hung up: what a refusing client does
            pass
        finally:
            conn.close()
            listener.close()

    threading.Thread(target=run, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/index.csv" + (
        f"?{query}" if query else "")


AWS_VERSION = "/offers/v1.0/aws/AmazonEC2/20260115182405"  # the fixtures' price-file version


def aws_fixture_source(server, packaged, files: dict[str, bytes]):
    """The real AWS source against ``server`` (pytest-httpserver) serving the region index cut
    to ``files``' regions, each region's price file (its bytes), and the spot advisor."""
    from catalog.sources import AwsSource
    from catalog.sources._aws_bulk import REGION_INDEX_PATH

    index = load_fixture("aws_region_index.json")
    index["regions"] = {k: v for k, v in index["regions"].items() if k in files}
    server.expect_request(REGION_INDEX_PATH).respond_with_json(index)
    for region, data in files.items():
        server.expect_request(f"{AWS_VERSION}/{region}/index.csv").respond_with_data(data)
    server.expect_request("/spot-advisor-data.json").respond_with_json(
        load_fixture("aws_spot_advisor.json"))
    return AwsSource(reference=packaged, base_url=server.url_for("/").rstrip("/"),
                     advisor_url=server.url_for("/spot-advisor-data.json"),
                     spot_from_ec2=False, timeout_s=10)
