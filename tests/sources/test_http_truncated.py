"""A price file cut short by the server is a failed refresh, not a short file: http.client
returns what came when a body ends before its Content-Length, so a us-east-1 price file cut
halfway "refreshed" 5 of 872 offers, and `--prune` removed the rest (hostile sweep)."""

from __future__ import annotations

import gzip

import pytest
from sources_fixtures import one_connection

from catalog.sources._common import RefreshError
from catalog.sources._http import get_json, iter_lines

BODY = b"".join(b"line %d,price,%d\n" % (i, i) for i in range(2000))


def _serve(payload: bytes, length: int, *, gzipped: bool = False) -> str:
    """One response on a local socket: headers promising ``length`` bytes, then ``payload``
    and a closed connection."""
    def answer(conn):
        head = (f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\n"
                + ("Content-Encoding: gzip\r\n" if gzipped else "") + "\r\n").encode()
        conn.sendall(head + payload)

    return one_connection(answer)


def test_a_whole_file_streams_every_line():
    assert list(iter_lines(_serve(BODY, len(BODY)), cloud="aws", attempts=1)) == \
        BODY.decode().splitlines(keepends=True)


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_file_cut_short_is_a_refresh_error(gzipped):
    data = gzip.compress(BODY) if gzipped else BODY
    url = _serve(data[: len(data) // 2], len(data), gzipped=gzipped)
    # gzip notices its own end-of-stream marker missing; plain text needs the byte count
    said = (r"Compressed file ended before the end-of-stream marker" if gzipped else
            r"ended after [\d,]+ of [\d,]+ bytes \(the connection was cut\)")
    with pytest.raises(RefreshError, match=rf"aws: .*{said}.*To fix: retry later"):
        list(iter_lines(url, cloud="aws", attempts=1))


def test_a_json_document_cut_short_says_so():
    data = b'{"a": 1}'
    with pytest.raises(RefreshError, match="ended after 8 of 20 bytes"):
        get_json(_serve(data, 20), cloud="azure", attempts=1)
