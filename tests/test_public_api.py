"""Each package's public surface (``__all__``) is pinned, and the layering holds.

A change to a package's ``__all__`` is a change to its contract: update
tests/golden/public_api.json in the same commit (``GPUPLAN_UPDATE_GOLDEN=1`` rewrites it) and
say why in the message. The layering check is tools/check_imports.py, the one docs/design.md
describes: no import cycles, no import of another unit's private module, no unit above 30% of
the code and no module above ~450 lines.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "golden" / "public_api.json"
PINNED = json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("package", sorted(PINNED))
def test_public_names_are_pinned_and_exist(package):
    module = importlib.import_module(package)
    names = sorted(module.__all__)
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{package}.__all__ names what it does not define: {missing}"
    assert len(names) == len(set(names)), f"{package}.__all__ repeats a name"
    if os.environ.get("GPUPLAN_UPDATE_GOLDEN"):
        PINNED[package] = names
        GOLDEN.write_text(json.dumps(PINNED, indent=1) + "\n")
    assert names == PINNED[package], (
        f"{package}.__all__ changed: added {sorted(set(names) - set(PINNED[package]))}, "
        f"removed {sorted(set(PINNED[package]) - set(names))}")


def test_every_package_is_pinned():
    packages = {".".join(p.relative_to(ROOT).parent.parts)
                for top in ("catalog", "planner", "probes")
                for p in (ROOT / top).rglob("__init__.py")
                if not any(part.startswith("_") for part in p.relative_to(ROOT).parent.parts)}
    assert packages <= set(PINNED), f"packages without a pinned __all__: {packages - set(PINNED)}"


def test_layering_check_passes():
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "check_imports.py")],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "module cycles: 0" in out.stdout and "private imports across units: 0" in out.stdout
