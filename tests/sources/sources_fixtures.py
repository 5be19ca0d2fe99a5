"""Loads the recorded-shape payloads in fixtures/ (each file's "_source" says where its
shape comes from)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def load_fixture(name: str):
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))
