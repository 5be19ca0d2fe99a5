"""Plain HTTPS GETs for the public price files, with the standard library only.

The AWS bulk Price List files and the Spot Instance Advisor data need no SDK and no
credentials, so they are fetched with ``urllib``: no extra dependency for a refresh anyone can
run. ``get_json`` reads a small document whole (bounded); ``iter_lines`` streams a large one
(the us-east-1 EC2 price file is ~300 MB of CSV) line by line, decompressing gzip on the fly.
Transient failures (connection reset, 429, 5xx) are retried with exponential backoff; a host
that cannot be reached at all raises ``SourceUnavailable`` on the first request, anything
after that ``RefreshError`` (a refresh half done is a failed refresh).
"""

from __future__ import annotations

import gzip
import io
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

from ._common import RefreshError, SourceUnavailable

USER_AGENT = "gpuplan-catalog-refresh (+https://github.com/; public price files)"
RETRY_STATUS = (429, 500, 502, 503, 504)
MAX_JSON_BYTES = 256 * 2**20  # the Spot Instance Advisor file is ~1.2 MB; region indexes KBs
FIRST_CONTACT_TIMEOUT_S = 20.0
MAX_RETRY_AFTER_S = 60.0  # a Retry-After longer than this is a service to come back to later
_sleep = time.sleep  # the backoff between retries (tests replace it)


def _open(url: str, *, timeout_s: float, attempts: int, cloud: str, first: bool):
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT,
                                                   "Accept-Encoding": "gzip"})
    delay = 0.5
    for attempt in range(1, attempts + 1):
        try:
            return urllib.request.urlopen(request, timeout=timeout_s)  # noqa: S310 (https)
        except urllib.error.HTTPError as exc:
            if exc.code in RETRY_STATUS and attempt < attempts:
                wait = _retry_after(exc)  # a busy service says how long to wait
                _sleep(delay if wait is None else wait)
                delay *= 2
                continue
            raise RefreshError(f"{cloud}: GET {url} failed with HTTP {exc.code}. To fix: "
                               f"retry later, or leave {cloud} out with --cloud") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            if attempt < attempts and not first:
                _sleep(delay)
                delay *= 2
                continue
            reason = getattr(exc, "reason", exc)
            if first:
                raise SourceUnavailable(cloud, f"cannot reach {url.split('/')[2]} ({reason}). "
                                        "To fix: check your network or proxy and retry") from None
            raise RefreshError(f"{cloud}: GET {url} failed ({reason}). To fix: retry later, "
                               f"or leave {cloud} out with --cloud") from None
    raise AssertionError("unreachable")  # pragma: no cover


def _retry_after(exc: urllib.error.HTTPError) -> float | None:
    """The seconds a 429/503 asks the client to wait (Retry-After, up to MAX_RETRY_AFTER_S):
    delay-seconds or an HTTP-date (RFC 9110 §10.2.3 allows both; a date in the past is now)."""
    value = (exc.headers.get("Retry-After") or "").strip() if exc.headers else ""
    # ASCII digits only: "¹" passes str.isdigit and float() refuses it
    if value.isascii() and value.isdigit():
        return min(float(value), MAX_RETRY_AFTER_S)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):  # not a date either: backoff
        return None
    if when.tzinfo is None:  # "-0000": a date without a known zone is UTC (RFC 5322)
        from datetime import UTC

        when = when.replace(tzinfo=UTC)
    return min(max(when.timestamp() - time.time(), 0.0), MAX_RETRY_AFTER_S)


def read_bounded(stream, limit: int) -> bytes:
    """Up to ``limit`` + 1 bytes of ``stream``, read in 1 MiB pieces: read(limit + 1) sets
    the whole limit aside first (256 MiB per page, on 8 threads, failed a refresh under a
    memory limit the pages themselves fit in)."""
    parts, size = [], 0
    while size <= limit and (chunk := stream.read(min(2**20, limit + 1 - size))):
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


class _Counted(io.RawIOBase):
    """The response's bytes, counted: http.client ends a body cut short by the server
    quietly (readline returns what came), so a truncated price file read as a short one —
    a refresh that "succeeded" with 5 of us-east-1's 872 offers, and pruned the rest."""

    def __init__(self, response) -> None:
        self.response, self.count = response, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self.response.readinto(buffer)
        self.count += n or 0
        return n

    def check_complete(self, url: str, cloud: str) -> None:
        """RefreshError when fewer bytes came than the response's Content-Length."""
        expected = self.response.headers.get("Content-Length")
        if expected and expected.strip().isdigit() and self.count < int(expected):
            raise RefreshError(f"{cloud}: {url} ended after {self.count:,} of "
                               f"{int(expected):,} bytes (the connection was cut). To fix: "
                               f"retry later, or leave {cloud} out with --cloud")


def _body(raw: _Counted, response) -> io.BufferedIOBase:
    buffered = io.BufferedReader(raw)
    if response.headers.get("Content-Encoding", "").lower() == "gzip":
        return gzip.GzipFile(fileobj=buffered)
    return buffered


def get_json(url: str, *, cloud: str, timeout_s: float = 60.0, attempts: int = 4,
             first: bool = False) -> Any:
    # the first request only asks whether the endpoint answers: a public price service does
    # within seconds, and a dead proxy should not hold the refresh for a minute
    timeout_s = min(timeout_s, FIRST_CONTACT_TIMEOUT_S) if first else timeout_s
    with _open(url, timeout_s=timeout_s, attempts=attempts, cloud=cloud, first=first) as resp:
        raw = _Counted(resp)
        data = read_bounded(_body(raw, resp), MAX_JSON_BYTES)
        if len(data) <= MAX_JSON_BYTES:
            raw.check_complete(url, cloud)
    if len(data) > MAX_JSON_BYTES:
        raise RefreshError(f"{cloud}: {url} is larger than expected. To fix: retry later")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RefreshError(f"{cloud}: {url} is not valid JSON ({exc}). To fix: retry later, "
                           f"or leave {cloud} out with --cloud") from None


def iter_lines(url: str, *, cloud: str, timeout_s: float = 60.0,
               attempts: int = 4) -> Iterator[str]:
    """The lines of a (possibly gzip-compressed) UTF-8 text file, streamed."""
    with _open(url, timeout_s=timeout_s, attempts=attempts, cloud=cloud, first=False) as resp:
        raw = _Counted(resp)
        text = io.TextIOWrapper(_body(raw, resp), encoding="utf-8", newline="")
        try:
            yield from text
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise RefreshError(f"{cloud}: reading {url} failed ({exc}). To fix: retry later, "
                               f"or leave {cloud} out with --cloud") from None
        raw.check_complete(url, cloud)  # after the last line: a cut body ends like a short one
