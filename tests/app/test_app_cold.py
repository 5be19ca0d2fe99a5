"""What the first visitor of a cold server waits for (issue 19): the Plan page's modules load
without the planner, pandas or plotly.express (the page draws its title first and imports
them when it needs them), and the global batch says what its default is."""

from __future__ import annotations

import re
import subprocess
import sys

from ._apptest import app, assert_clean, texts
from .conftest import ROOT

# What the Plan page imports before it has drawn anything (app.py's router and the page's
# modules); the planner comes with the sidebar, pandas and plotly.express after the answer.
FIRST_PAINT = ("app_pages._shared", "app_pages._format", "app_pages._inputs",
               "app_pages._charts", "app_pages._plan_cards", "app_pages._plan_charts")
LATER = ("planner", "pandas", "plotly.express", "scipy", "matplotlib")


def test_the_plan_pages_modules_load_without_the_planner_pandas_or_plotly_express():
    code = ("import importlib, sys\n"
            f"sys.path.insert(0, {str(ROOT)!r})\n"
            "import streamlit\n"
            f"for name in {FIRST_PAINT!r}:\n"
            "    importlib.import_module(name)\n"
            f"print(sorted({{m.split('.')[0] if m.split('.')[0] != 'plotly' else m\n"
            f"              for m in sys.modules}} & set({LATER!r})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_global_batch_says_what_its_default_is():
    from app_pages._format import count
    from planner.model import default_batch_sequences

    at = app()
    assert_clean(at)
    batch = at.text_input(key="global_batch_tokens")
    assert batch.placeholder == "by model size"
    assert "4M)" not in batch.help and "≈ 4M" not in batch.help  # issue 17's stale default
    m = re.search(r"at least one sequence per (\d+) GPUs", batch.help)
    assert m, batch.help
    per = int(m[1])  # the planner's floor: `per` GPUs need one sequence, one more need two

    def floor(gpus: int) -> int:
        return default_batch_sequences(params=1.0, seq_len=2**40, gpus=gpus, finetune=False)

    assert floor(per) == 1 and floor(per + 1) == 2
    seven_b = default_batch_sequences(params=7e9, seq_len=2048, gpus=1, finetune=False) * 2048
    assert f"{count(seven_b)} for 7B" in batch.help, batch.help  # the planner's own figure
    # left empty, the plan's line says which batch the default gave (gpt2-xl: by its size)
    line = texts(at)[0]
    m = re.search(r"global batch ([0-9.]+)M tokens \(the default for this model and "
                  r"cluster\)", line)
    assert m, line
    expected = default_batch_sequences(params=1.56e9, seq_len=1024, gpus=1, finetune=False)
    assert abs(float(m[1]) * 1e6 - expected * 1024) / (expected * 1024) < 0.01
