"""Loads the recorded-shape payloads in fixtures/ (each JSON file's "_source", and
fixtures/SOURCES.md for every file, say where its shape comes from)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def load_fixture(name: str):
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))
