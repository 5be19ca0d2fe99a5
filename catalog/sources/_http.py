"""Plain HTTPS GETs for the public price files, with the standard library only.

The AWS bulk Price List files and the Spot Instance Advisor data need no SDK and no
credentials, so they are fetched with ``urllib``: no extra dependency for a refresh anyone can
run. ``get_json`` reads a small document whole (bounded by ``max_bytes``); ``iter_lines``
streams a large one (the us-east-1 EC2 price file is ~300 MB of CSV) line by line, each line at
most ``max_line_bytes``, decompressing gzip on the fly. Transient failures (connection reset,
429, 5xx) are retried with exponential backoff; a host that cannot be reached at all raises
``SourceUnavailable`` on the first request, anything after that ``RefreshError`` (a refresh
half done is a failed refresh). Every download has ``deadline_s`` in all, retries included.
Messages name a URL without its secrets (``redact``): the GCP API key travels in the query.
"""

from __future__ import annotations

import gzip
import http.client
import io
import json
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Iterator
from typing import Any

from ._common import RefreshError, SourceUnavailable

USER_AGENT = "gpuplan-catalog-refresh (+https://github.com/; public price files)"
RETRY_STATUS = (429, 500, 502, 503, 504)
MAX_JSON_BYTES = 256 * 2**20  # the Spot Instance Advisor file is ~1.2 MB; region indexes KBs
# An EC2 price line is ~1 KB: a longer one is no price file, and a file with no newline at all
# (one 3 GB "line") grew the process to 6 GB before any check could see it.
MAX_LINE_BYTES = 2**20
# A download's whole time, retries included. Generous: the big price files stream ~300 MB on
# 8 threads sharing one link, and a deadline that cuts a slow but working download fails the
# whole refresh. What it stops is a server that trickles a byte every few seconds (never
# tripping the per-read timeout: a 300 MB file would take years) or never answers.
LINES_DEADLINE_S = 30 * 60.0
JSON_DEADLINE_S = 5 * 60.0  # a page of JSON is MBs at most
FIRST_CONTACT_TIMEOUT_S = 20.0
MAX_RETRY_AFTER_S = 60.0  # a Retry-After longer than this is a service to come back to later
# Query parameters whose values are secrets (API keys, OAuth tokens, signed-URL signatures):
# never printed. Compared in lower case.
SECRET_PARAMS = frozenset({
    "key", "api_key", "apikey", "access_token", "token", "signature", "sig", "client_secret",
    "password", "x-amz-signature", "x-amz-security-token", "x-amz-credential",
    "x-goog-signature", "x-goog-credential"})
_sleep = time.sleep  # the backoff between retries (tests replace it)


def redact(url: str) -> str:
    """``url`` fit for a message: user:password before the host and the values of
    ``SECRET_PARAMS`` replaced with ``***`` (an error once printed ``?key=<the API key>``)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # not parsable: say where it goes, not what it carries
        return url.split("?", 1)[0].rpartition("@")[2] + "?***"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    pieces = []
    for piece in parts.query.split("&") if parts.query else ():
        name = piece.partition("=")[0]
        secret = urllib.parse.unquote_plus(name).strip().lower() in SECRET_PARAMS
        pieces.append(f"{name}=***" if secret else piece)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query="&".join(pieces)))


def _host(url: str) -> str:
    try:
        return urllib.parse.urlsplit(url).netloc.rpartition("@")[2] or redact(url)
    except ValueError:
        return redact(url)


class _Deadline:
    """The time one download has left, retries and backoff included. Checked before every
    wait and between reads; a read itself waits at most the per-read timeout, which is never
    set above the time left when the request is sent."""

    def __init__(self, seconds: float, url: str, cloud: str) -> None:
        self.seconds, self.url, self.cloud = seconds, url, cloud
        self.at = time.monotonic() + seconds

    def left(self, cap: float) -> float:
        """Seconds the next wait may take, at most ``cap``; RefreshError when none are left."""
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise self.error()
        return min(cap, remaining)

    def check(self) -> None:
        if time.monotonic() >= self.at:
            raise self.error()

    def error(self) -> RefreshError:
        return RefreshError(f"{self.cloud}: GET {redact(self.url)} did not finish within "
                            f"{self.seconds:g} s (the server answers too slowly or not at "
                            "all). To fix: check your network or retry, or leave "
                            f"{self.cloud} out with --cloud")


def _pause(seconds: float, deadline: _Deadline) -> None:
    """The backoff before a retry, unless it would end after the deadline: then fail now."""
    if time.monotonic() + seconds >= deadline.at:
        raise deadline.error()
    _sleep(seconds)


def _open(url: str, *, timeout_s: float, attempts: int, cloud: str, first: bool,
          deadline: _Deadline, denied_fix: str | None = None):
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT,
                                                   "Accept-Encoding": "gzip"})
    delay = 0.5
    for attempt in range(1, attempts + 1):
        try:
            return urllib.request.urlopen(request,  # noqa: S310 (https)
                                          timeout=deadline.left(timeout_s))
        except urllib.error.HTTPError as exc:
            if exc.code in RETRY_STATUS and attempt < attempts:
                wait = _retry_after(exc)  # a busy service says how long to wait
                _pause(delay if wait is None else wait, deadline)
                delay *= 2
                continue
            # a refused key or login is not cured by waiting: the caller says what to check;
            # a public file refused is a proxy or firewall more often than the service
            denied = exc.code in (401, 403)
            public = denied and not denied_fix
            fix = (denied_fix if denied else f"retry later, or leave {cloud} out with --cloud")
            if public:
                fix = (f"check that your proxy or firewall lets {_host(url)} through, or retry "
                       f"later, or leave {cloud} out with --cloud")
            raise RefreshError(f"{cloud}: GET {redact(url)} failed with HTTP {exc.code}"
                               f"{' (the server refused access)' if public else ''}. "
                               f"To fix: {fix}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            if attempt < attempts and not first:
                _pause(delay, deadline)
                delay *= 2
                continue
            reason = getattr(exc, "reason", exc)
            if first:
                raise SourceUnavailable(cloud, f"cannot reach {_host(url)} ({reason}). "
                                        "To fix: check your network or proxy and retry") from None
            deadline.check()  # a wait cut short by the deadline says so
            raise RefreshError(f"{cloud}: GET {redact(url)} failed ({reason}). To fix: retry "
                               f"later, or leave {cloud} out with --cloud") from None
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


# What reading a body can raise: the socket (OSError, a timeout among them), gzip (EOFError
# for a stream cut short, zlib.error for a corrupt one), http.client (a chunk cut short).
_READ_ERRORS = (OSError, EOFError, zlib.error, http.client.HTTPException)


class _Counted(io.RawIOBase):
    """The response's bytes, counted: http.client ends a body cut short by the server
    quietly (readline returns what came), so a truncated price file read as a short one —
    a refresh that "succeeded" with 5 of us-east-1's 872 offers, and pruned the rest."""

    def __init__(self, response, deadline: _Deadline) -> None:
        self.response, self.count, self.deadline = response, 0, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        self.deadline.check()
        # read1 makes one recv at most: readinto waits until the buffer is full, so a server
        # sending a byte every 5 s held one 8 KB read for 11 hours, deadline unchecked
        data = self.response.read1(len(buffer))
        buffer[:len(data)] = data
        self.count += len(data)
        return len(data)

    def check_complete(self, url: str, cloud: str) -> None:
        """RefreshError when fewer bytes came than the response's Content-Length."""
        expected = self.response.headers.get("Content-Length")
        if expected and expected.strip().isdigit() and self.count < int(expected):
            raise RefreshError(f"{cloud}: {redact(url)} ended after {self.count:,} of "
                               f"{int(expected):,} bytes (the connection was cut). To fix: "
                               f"retry later, or leave {cloud} out with --cloud")


def _body(raw: _Counted, response) -> io.BufferedIOBase:
    if response.headers.get("Content-Encoding", "").lower() == "gzip":
        # gzip reads its input with read(8192): from the raw stream that is one recv, from a
        # buffered one a wait for all 8 KB (a line past the limit went unnoticed meanwhile)
        return gzip.GzipFile(fileobj=raw)
    return io.BufferedReader(raw, buffer_size=2**16)


def _read_failed(url: str, cloud: str, exc: BaseException) -> RefreshError:
    return RefreshError(f"{cloud}: reading {redact(url)} failed ({str(exc) or type(exc).__name__})."
                        f" To fix: retry later, or leave {cloud} out with --cloud")


def get_json(url: str, *, cloud: str, timeout_s: float = 60.0, attempts: int = 4,
             first: bool = False, max_bytes: int = MAX_JSON_BYTES,
             deadline_s: float = JSON_DEADLINE_S, denied_fix: str | None = None) -> Any:
    """The JSON document at ``url``: at most ``max_bytes`` (after gzip), within
    ``deadline_s`` in all. ``denied_fix`` is the "To fix" of a 401/403 (what to check),
    for a caller whose URL carries a key."""
    # the first request only asks whether the endpoint answers: a public price service does
    # within seconds, and a dead proxy should not hold the refresh for a minute
    timeout_s = min(timeout_s, FIRST_CONTACT_TIMEOUT_S) if first else timeout_s
    deadline = _Deadline(deadline_s, url, cloud)
    with _open(url, timeout_s=timeout_s, attempts=attempts, cloud=cloud, first=first,
               deadline=deadline, denied_fix=denied_fix) as resp:
        raw = _Counted(resp, deadline)
        try:
            data = read_bounded(_body(raw, resp), max_bytes)
        except _READ_ERRORS as exc:
            raise _read_failed(url, cloud, exc) from None
        if len(data) <= max_bytes:
            raw.check_complete(url, cloud)
    if len(data) > max_bytes:
        raise RefreshError(f"{cloud}: {redact(url)} is larger than {max_bytes:,} bytes, more "
                           f"than such a document ever is. To fix: retry later, or leave "
                           f"{cloud} out with --cloud")
    if not data.strip():  # "Expecting value: line 1 column 1 (char 0)" said nothing useful
        raise RefreshError(f"{cloud}: {redact(url)} came back as an empty answer. To fix: "
                           f"retry later, or leave {cloud} out with --cloud")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RefreshError(f"{cloud}: {redact(url)} is not valid JSON ({exc}). To fix: retry "
                           f"later, or leave {cloud} out with --cloud") from None


def iter_lines(url: str, *, cloud: str, timeout_s: float = 60.0, attempts: int = 4,
               deadline_s: float = LINES_DEADLINE_S,
               max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[str]:
    """The lines of a (possibly gzip-compressed) UTF-8 text file, streamed: each ends with
    its "\\n" (the last may have none: the caller's parser judges a cut row by its fields),
    none longer than ``max_line_bytes``, all of them within ``deadline_s``."""
    deadline = _Deadline(deadline_s, url, cloud)
    with _open(url, timeout_s=timeout_s, attempts=attempts, cloud=cloud, first=False,
               deadline=deadline) as resp:
        raw = _Counted(resp, deadline)
        body = _body(raw, resp)
        try:
            # readline(n) stops after n bytes: a line without end is refused at the limit,
            # not read whole first (a TextIOWrapper's lines are)
            while line := body.readline(max_line_bytes + 1):
                if len(line) > max_line_bytes:
                    raise RefreshError(f"{cloud}: {redact(url)} has a line longer than "
                                       f"{max_line_bytes:,} bytes, which no price file has. "
                                       f"To fix: retry later, or leave {cloud} out with --cloud")
                yield line.decode("utf-8")
        except (*_READ_ERRORS, UnicodeDecodeError) as exc:
            raise _read_failed(url, cloud, exc) from None
        raw.check_complete(url, cloud)  # after the last line: a cut body ends like a short one
