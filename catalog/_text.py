"""Bytes a user gave as text: UTF-8 (a BOM dropped), or one error that names what they are
instead — UTF-16 or UTF-32 text (save it as UTF-8), binary data (give the file meant), or the
first byte that is not UTF-8 and its line."""

from __future__ import annotations

from ._errors import CatalogFileError

_AS_UTF8 = "save the file as UTF-8"


def utf_width(data: bytes) -> int | None:
    """16 or 32 for text in that UTF — a byte-order mark, or ASCII with one or three NULs to
    each letter (which reads as UTF-8 with NULs between the letters: a CSV header then "lacks"
    the columns it shows) — else None; a binary file's scattered NULs are neither. probes'
    ``_report_io._utf16_or_32`` is its twin (probes run without catalog; a test pins both)."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return 32
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return 16
    head = data[:64]
    if len(head) >= 16 and any(all(head[k::4].count(0) == len(head[k::4]) for k in nuls)
                               and head[letter::4].count(0) == 0
                               for letter, nuls in ((0, (1, 2, 3)), (3, (0, 1, 2)))):
        return 32
    even, odd = head[0::2], head[1::2]
    return 16 if len(head) >= 8 and any(a.count(0) >= 0.8 * len(a) and b.count(0) == 0
                                        for a, b in ((even, odd), (odd, even))) else None


def decode_user_bytes(data: bytes, *, what: str) -> str:
    """``data`` as UTF-8 (BOM dropped), or an error naming the first bad byte and its line."""
    if width := utf_width(data):
        raise CatalogFileError(f"{what}: is UTF-{width} text, not UTF-8. To fix: {_AS_UTF8}.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        # NUL bytes and bytes no text encoding gives: no encoding to save it in would help
        fix = ("give the file meant: this one holds binary data (NUL bytes)" if b"\x00" in data
               else _AS_UTF8)
        raise CatalogFileError(f"{what}: is not UTF-8 text (byte 0x{data[exc.start]:02x} at byte "
                               f"offset {exc.start}, line {line}). To fix: {fix}.") from None
    return text.removeprefix("\ufeff")
