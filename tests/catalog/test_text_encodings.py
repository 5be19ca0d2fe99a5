"""What a user's text file is when it is not UTF-8, said once with a fix that helps: UTF-32 was
called "UTF-16 text" (with a BOM) or read as UTF-8 with NULs (without one: "invalid JSON …
Expecting property name"), a binary file was told to "save the file as UTF-8", and an empty
config.json was told "invalid JSON at line 1, column 1"."""

from __future__ import annotations

import json

import pytest

from catalog import CatalogFileError, decode_user_bytes, load_json_text

TEXT = '{"model_type": "llama", "hidden_size": 512}\n'


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-le", "utf-32-be"])
def test_utf32_is_named_as_such(encoding):
    with pytest.raises(CatalogFileError, match=r"^f: is UTF-32 text, not UTF-8\. To fix: save "
                                               r"the file as UTF-8\.$"):
        decode_user_bytes(TEXT.encode(encoding), what="f")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_is_still_utf16(encoding):
    with pytest.raises(CatalogFileError, match="is UTF-16 text, not UTF-8"):
        decode_user_bytes(TEXT.encode(encoding), what="f")


def test_binary_data_is_not_told_to_be_saved_as_utf8():
    with pytest.raises(CatalogFileError) as caught:
        decode_user_bytes(bytes(range(256)) * 4, what="f")
    said = str(caught.value)
    assert said.startswith("f: is not UTF-8 text (byte 0x80 at byte offset 128, line 2)")
    assert said.endswith("To fix: give the file meant: this one holds binary data (NUL bytes).")


def test_latin1_text_is_told_to_be_saved_as_utf8():
    with pytest.raises(CatalogFileError, match=r"To fix: save the file as UTF-8\.$"):
        decode_user_bytes("café".encode("latin-1"), what="f")


def test_utf8_with_nuls_is_still_text_for_its_parser():  # "character #x0000 is not allowed"
    assert decode_user_bytes(b"a: 1\x00\n", what="f") == "a: 1\x00\n"


@pytest.mark.parametrize("text", ["", "  \n\t"])
def test_an_empty_json_file_is_said_to_be_empty(text):
    with pytest.raises(CatalogFileError, match=r"^f: is empty\. To fix: "):
        load_json_text(text, what="f")
    assert load_json_text(json.dumps({"a": 1}), what="f") == {"a": 1}


def test_the_probes_twin_names_every_encoding_as_catalog_does():
    # probes read reports without catalog (`gpuplan launch` copies that package alone)
    from catalog._text import utf_width
    from probes._report_io import _utf16_or_32

    samples = [TEXT.encode(e) for e in ("utf-8", "utf-8-sig", "utf-16", "utf-16-le",
                                        "utf-16-be", "utf-32", "utf-32-le", "utf-32-be")]
    samples += [bytes(range(256)) * 4, b"", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 3,
                b"\xff\xfe", b"\xff\xfe\x00\x00"]
    assert [utf_width(b) for b in samples] == [_utf16_or_32(b) for b in samples]
    assert [utf_width(b) for b in samples[:8]] == [None, None, 16, 16, 16, 32, 32, 32]
