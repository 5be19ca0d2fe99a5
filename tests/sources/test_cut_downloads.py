"""A price file cut short where nothing could tell (fault-injection sweep, 2026-12): the us-east-1
CSV sent without Content-Length and the connection closed after 9,903 of its 14,855 bytes,
mid-row. The partial last row was parsed (its missing columns read as ""), the refresh
succeeded, and `--prune` removed the offers of every row cut off (864 removed where the whole
file removes 859). Now a row with another field count than the header's — the last line
included, whatever it prices — fails the price file, and the whole refresh fails with the
store unchanged, as for a download that ends before its Content-Length. Whether the file ends
with a line end is not asked (nothing published says AWS's files do: a whole file refused
would stop every refresh), so a cut in a row's last field or at a row's end still reads as a
whole file (docs/refresh.md). Also: an empty answer and a 403 say what they are."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sources_fixtures import AWS_VERSION, FIXTURES, load_fixture, one_connection

from catalog import _paths, active_catalog_name
from catalog._refresh import refresh_catalog
from catalog.sources import AwsSource
from catalog.sources._aws_bulk import REGION_INDEX_PATH, parse_price_file
from catalog.sources._common import RefreshError
from catalog.sources._http import get_json, iter_lines

CSV = (FIXTURES / "aws_ec2_us-east-1.csv").read_bytes()
CUT = 9903  # where the sweep's connection closed: mid-row, in a p5 line
BODY = b"".join(b"line %d,price,%d\n" % (i, i) for i in range(200))


def _answer(payload: bytes, *, length: int | None = None, status: str = "200 OK"):
    """One response: ``payload`` then a closed connection (no Content-Length unless given)."""
    def answer(conn):
        head = f"HTTP/1.1 {status}\r\nConnection: close\r\n" + (
            f"Content-Length: {length}\r\n" if length is not None else "") + "\r\n"
        conn.sendall(head.encode() + payload)
    return answer


# -- the download ----------------------------------------------------------------------------
def test_a_whole_body_without_content_length_streams_every_line():
    url = one_connection(_answer(BODY))
    assert list(iter_lines(url, cloud="aws", attempts=1)) == \
        BODY.decode().splitlines(keepends=True)


def test_a_whole_body_without_a_last_line_end_streams_every_line():
    # a file whose last line has no line end is whole: refusing it would refuse a real file
    url = one_connection(_answer(BODY.rstrip(b"\n")))
    assert list(iter_lines(url, cloud="aws", attempts=1)) == \
        BODY.decode().rstrip("\n").splitlines(keepends=True)


# -- the price file ----------------------------------------------------------------------------
def _fixture_lines(data: bytes = CSV) -> list[str]:
    return data.decode("utf-8").splitlines(keepends=True)


def test_a_price_file_cut_mid_row_is_refused():
    assert not CSV[:CUT].endswith(b"\n")
    with pytest.raises(ValueError, match=r"the us-east-1 price file's line [\d,]+ after the "
                                         r"header has \d+ fields where the header has \d+ "
                                         r"\(a cut or garbled file\)"):
        parse_price_file(iter(_fixture_lines(CSV[:CUT])), "us-east-1")


def test_a_whole_price_file_without_a_last_line_end_parses():
    lines = _fixture_lines()
    whole = parse_price_file(iter(lines), "us-east-1")
    assert parse_price_file(iter([*lines[:-1], lines[-1].rstrip("\n")]),
                            "us-east-1").prices == whole.prices


def test_a_price_row_with_fewer_fields_than_the_header_is_refused():
    lines = _fixture_lines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"SKU"'))
    width = len(lines[header].split('","'))
    at = next(i for i, line in enumerate(lines) if '"55.0400000000"' in line
              and '"Linux"' in line)
    lines[at] = lines[at].replace('","', '";"', 1)  # two fields run together
    with pytest.raises(ValueError, match=rf"the us-east-1 price file's line {at - header:,} "
                       rf"after the header has {width - 1} fields where the header has "
                       rf"{width} \(a cut or garbled file\)"):
        parse_price_file(iter(lines), "us-east-1")


def test_a_whole_price_file_still_parses():
    parsed = parse_price_file(iter(_fixture_lines()), "us-east-1")
    assert parsed.prices[("p5.48xlarge", "on_demand", "", "")] == 55.04


# -- the whole refresh, as `catalog refresh --cloud aws --region us-east-1 --prune` -------------
class _Files(BaseHTTPRequestHandler):
    """The region index, the us-east-1 price file (cut as the test says) and the advisor."""

    protocol_version = "HTTP/1.0"  # a body without Content-Length ends where the socket closes
    csv = CSV
    csv_length: int | None = None

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        index = load_fixture("aws_region_index.json")
        index["regions"] = {k: v for k, v in index["regions"].items() if k == "us-east-1"}
        files = {REGION_INDEX_PATH: (json.dumps(index).encode(), True),
                 f"{AWS_VERSION}/us-east-1/index.csv": (self.csv, False),
                 "/spot-advisor-data.json": (
                     (FIXTURES / "aws_spot_advisor.json").read_bytes(), True)}
        body, with_length = files.get(self.path.split("?")[0], (b"", True))
        self.send_response(200 if body else 404)
        if with_length or self.csv_length is not None:
            self.send_header("Content-Length", str(len(body) if with_length
                                                   else self.csv_length))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def files_server():
    """(server, handler class): set the handler's csv/csv_length before the refresh."""
    handler = type("Files", (_Files,), {})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", handler
    srv.shutdown()
    srv.server_close()


def _refresh(base: str, packaged):
    source = AwsSource(reference=packaged, base_url=base,
                       advisor_url=base + "/spot-advisor-data.json", spot_from_ec2=False,
                       timeout_s=10)
    return refresh_catalog(clouds=["aws"], regions=["us-east-1"], sources={"aws": source},
                           prune=True)


def _stored() -> list[str]:
    base = _paths.catalogs_dir()
    return sorted(p.name for p in base.iterdir()) if base.is_dir() else []


@pytest.mark.parametrize(("length", "said"), [
    (None, r"fields where the header has \d+ \(a cut or garbled file\)"),
    (CUT, r"fields where the header has \d+ \(a cut or garbled file\)"),  # says it is whole
])
def test_a_cut_price_file_fails_the_refresh_and_prune_removes_nothing(files_server, packaged,
                                                                      length, said):
    base, handler = files_server
    handler.csv, handler.csv_length = CSV[:CUT], length
    with pytest.raises(RefreshError, match=rf"^aws: price file for us-east-1 failed: .*{said}.*"
                                           r"To fix: retry later, or leave aws out with --cloud"):
        _refresh(base, packaged)
    assert active_catalog_name() == "packaged"
    assert not [n for n in _stored() if not n.startswith(".")]  # nothing installed


def test_the_whole_file_without_content_length_still_refreshes(files_server, packaged):
    base, handler = files_server
    result = _refresh(base, packaged)
    assert active_catalog_name() == result.name
    assert len(result.removed) == 859  # what the sweep's whole file removed (864 when cut)


# -- answers that say what they are ----------------------------------------------------------
def test_an_empty_json_answer_says_so():
    url = one_connection(_answer(b"", length=0))
    with pytest.raises(RefreshError, match=r"^aws: http://\S+ came back as an empty answer\. "
                                           "To fix: retry later"):
        get_json(url, cloud="aws", attempts=1)


def test_a_public_file_refused_with_403_points_at_a_proxy_or_firewall():
    url = one_connection(_answer(b"denied", length=6, status="403 Forbidden"))
    with pytest.raises(RefreshError, match=r"failed with HTTP 403 \(the server refused access\)"
                       r"\. To fix: check that your proxy or firewall lets 127\.0\.0\.1:\d+ "
                       r"through, or retry later, or leave aws out with --cloud"):
        list(iter_lines(url, cloud="aws", attempts=1))
