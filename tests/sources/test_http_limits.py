"""What a download may cost, whatever the server sends (hostile sweep, 2026-12): a line of 3 GB
with no newline grew the process to 6 GB before any check; a server trickling a byte every 5 s
held a refresh for hours, one that never answered for 484 s; and the GCP API key was printed
in an error. Limits are parameters here, shrunk so that every test runs in well under a
second; each server gives up after a few seconds, so the old code fails rather than hangs."""

from __future__ import annotations

import gzip
import time

import pytest
from sources_fixtures import one_connection

from catalog.sources._common import RefreshError, SourceUnavailable
from catalog.sources._http import get_json, iter_lines, redact

GIVE_UP_S = 3.0  # how long a hostile test server keeps going before it closes


def _serve(answer) -> str:
    """One connection handled by ``answer(conn)``; the URL carries a key the messages must not
    show."""
    return one_connection(answer, query="key=s3cret&x=1")


def _head(length: int | None = None, *, gzipped: bool = False) -> bytes:
    return ("HTTP/1.1 200 OK\r\n"
            + (f"Content-Length: {length}\r\n" if length is not None else "")
            + ("Content-Encoding: gzip\r\n" if gzipped else "")
            + "Connection: close\r\n\r\n").encode()


def _whole(body: bytes, *, gzipped: bool = False):
    def answer(conn):
        conn.sendall(_head(len(body), gzipped=gzipped) + body)
    return answer


# -- a line without end ---------------------------------------------------------------------
@pytest.mark.parametrize("gzipped", [False, True])
def test_a_line_longer_than_the_limit_is_refused_before_it_is_read_whole(gzipped):
    # 1 MiB with no newline, then the server waits: reading the whole line first (the old
    # TextIOWrapper did) waits too, and never gets to say what is wrong
    blob = b"x" * 2**20

    def answer(conn):
        data = gzip.compress(blob) if gzipped else blob
        conn.sendall(_head(gzipped=gzipped) + data)
        time.sleep(GIVE_UP_S)

    started = time.monotonic()
    with pytest.raises(RefreshError, match=r"has a line longer than 1,000 bytes.*To fix: retry"):
        list(iter_lines(_serve(answer), cloud="aws", attempts=1, timeout_s=10,
                        max_line_bytes=1000))
    assert time.monotonic() - started < GIVE_UP_S / 2


def test_lines_up_to_the_limit_pass():
    body = b"a" * 999 + b"\n" + b"b" * 10 + b"\r\n" + b"last"
    assert list(iter_lines(_serve(_whole(body)), cloud="aws", attempts=1,
                           max_line_bytes=1000)) == ["a" * 999 + "\n", "b" * 10 + "\r\n", "last"]


def test_a_json_document_over_its_caller_s_cap_is_refused():
    body = b'{"skus": [' + b"1, " * 500 + b"1]}"
    with pytest.raises(RefreshError, match=r"larger than 100 bytes"):
        get_json(_serve(_whole(body)), cloud="gcp", attempts=1, max_bytes=100)
    assert get_json(_serve(_whole(body)), cloud="gcp", attempts=1,
                    max_bytes=len(body))["skus"][0] == 1


def test_a_gzipped_json_document_cut_short_is_one_refresh_error():
    # EOFError from gzip escaped get_json as it was (iter_lines already caught it)
    data = gzip.compress(b'{"a": [' + b"1, " * 1000 + b"1]}")
    url = _serve(_whole(data[: len(data) // 2], gzipped=True))
    with pytest.raises(RefreshError, match=r"reading .* failed .*To fix: retry later"):
        get_json(url, cloud="aws", attempts=1)


# -- time ------------------------------------------------------------------------------------
def _trickle(conn):
    """Promises 1,000 bytes and sends one every 20 ms: never a read timeout, never done."""
    conn.sendall(_head(1000))
    ends = time.monotonic() + GIVE_UP_S
    while time.monotonic() < ends:
        conn.sendall(b"x")
        time.sleep(0.02)


@pytest.mark.parametrize("fetch", ["lines", "json"])
def test_a_trickling_server_is_given_up_on_at_the_deadline(fetch):
    url = _serve(_trickle)
    started = time.monotonic()
    with pytest.raises(RefreshError) as info:
        if fetch == "lines":
            list(iter_lines(url, cloud="aws", attempts=1, timeout_s=10, deadline_s=0.3))
        else:
            get_json(url, cloud="aws", attempts=1, timeout_s=10, deadline_s=0.3)
    assert time.monotonic() - started < GIVE_UP_S / 2
    message = str(info.value)
    assert "did not finish within 0.3 s" in message
    assert message.endswith("To fix: check your network or retry, or leave aws out with --cloud")
    assert "s3cret" not in message and "\n" not in message


def test_a_server_that_never_answers_is_given_up_on_at_the_deadline():
    # accepted, never answered: each of 4 attempts waited its whole timeout (484 s for GCP)
    url = _serve(lambda conn: time.sleep(GIVE_UP_S))
    started = time.monotonic()
    with pytest.raises(RefreshError, match=r"did not finish within 0.5 s.*check your network"):
        get_json(url, cloud="gcp", timeout_s=30, attempts=4, deadline_s=0.5)
    assert time.monotonic() - started < GIVE_UP_S / 2


def test_a_retry_that_would_end_after_the_deadline_is_not_waited_for(monkeypatch):
    from catalog.sources import _http

    slept = []
    monkeypatch.setattr(_http, "_sleep", slept.append)

    def busy(conn):
        conn.sendall(b"HTTP/1.1 503 Busy\r\nRetry-After: 30\r\nContent-Length: 0\r\n\r\n")

    with pytest.raises(RefreshError, match=r"did not finish within 5 s"):
        get_json(_serve(busy), cloud="azure", attempts=4, deadline_s=5)
    assert slept == []


# -- secrets in messages ---------------------------------------------------------------------
@pytest.mark.parametrize("url,shown", [
    ("https://h/v1/skus?key=s3cret&pageSize=5000", "https://h/v1/skus?key=***&pageSize=5000"),
    ("https://h/a?API_KEY=s3cret&Token=s3cret&access_token=s3cret&signature=s3cret&b=2",
     "https://h/a?API_KEY=***&Token=***&access_token=***&signature=***&b=2"),
    ("https://h/a?X-Amz-Signature=s3cret&api%5Fkey=s3cret",
     "https://h/a?X-Amz-Signature=***&api%5Fkey=***"),
    ("https://me:s3cret@h:8443/a?x=1", "https://***@h:8443/a?x=1"),
    ("https://h/a/b.json", "https://h/a/b.json"),
])
def test_redact_hides_keys_tokens_signatures_and_passwords(url, shown):
    assert redact(url) == shown


@pytest.mark.parametrize("code", [401, 403])
def test_a_refused_key_says_what_to_check_and_never_shows_the_key(code):
    def refuse(conn):
        conn.sendall(f"HTTP/1.1 {code} No\r\nContent-Length: 2\r\n\r\n{{}}".encode())

    with pytest.raises(RefreshError) as info:
        get_json(_serve(refuse), cloud="gcp", attempts=1, denied_fix="check the key")
    message = str(info.value)
    assert f"failed with HTTP {code}. To fix: check the key" in message
    assert "s3cret" not in message and "key=***" in message


def test_other_failures_still_say_retry_later_and_never_show_the_key():
    def missing(conn):
        conn.sendall(b"HTTP/1.1 404 No\r\nContent-Length: 0\r\n\r\n")

    with pytest.raises(RefreshError) as info:
        get_json(_serve(missing), cloud="gcp", attempts=1, denied_fix="check the key")
    assert "HTTP 404. To fix: retry later" in str(info.value)
    assert "s3cret" not in str(info.value)


@pytest.mark.parametrize("case", ["cut", "not json", "unreachable", "unreachable first"])
def test_no_message_shows_a_secret(case, closed_port):
    if case == "cut":
        url = _serve(lambda conn: conn.sendall(_head(20) + b'{"a": 1}'))
    elif case == "not json":
        url = _serve(_whole(b"<html>"))
    else:
        url = f"http://me:pw-s3cret@127.0.0.1:{closed_port}/a?key=s3cret"
    first = case == "unreachable first"
    with pytest.raises(SourceUnavailable if first else RefreshError) as info:
        get_json(url, cloud="gcp", attempts=1, first=first)
    assert "s3cret" not in str(info.value) and "To fix:" in str(info.value)
