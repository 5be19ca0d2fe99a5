"""The complete team file shown in docs/team.md is a valid team plan: loaded, checked against
the packaged catalog and its price overrides applied (its reserved_1y price once lacked the
offering class and upfront option the catalog sells p5.48xlarge under, so a user copying the
example got an error)."""

from __future__ import annotations

import re
from pathlib import Path

from planner.team import load_team_plan, priced_catalog

DOC = Path(__file__).resolve().parents[2] / "docs" / "team.md"


def test_the_documented_team_file_loads_and_its_overrides_apply(catalog):
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    complete = [b for b in blocks if re.search(r"^jobs:", b, flags=re.M)
                and re.search(r"^overrides:", b, flags=re.M)]
    assert complete, "docs/team.md no longer shows a complete team file"
    for text in complete:
        plan = load_team_plan(text, catalog=catalog)
        assert plan.jobs and plan.overrides is not None
        priced = priced_catalog(plan, catalog)
        # the explicit price is kept as written (the percentage discounts the others)
        assert [o.usd_per_hour for o in priced.offers
                if (o.instance_type, o.region, o.pricing, o.offering_class, o.upfront)
                == ("p5.48xlarge", "us-east-1", "reserved_1y", "convertible", "none")] == [55.0]


README = DOC.parents[1] / "README.md"
TIGHT = DOC.parents[1] / "examples" / "team-tight.yaml"


def test_the_readmes_relaxation_example_is_what_team_tight_says(capsys, monkeypatch):
    """README quotes the relaxations `gpuplan report examples/team-tight.yaml` gives; they had
    drifted $1,726 from what the command said (nothing ran the example), and the later-starts
    relaxation it now offers was missing."""
    from planner.cli import main

    monkeypatch.setenv("GPUPLAN_TODAY", "2026-12-01")
    said = " ".join(README.read_text(encoding="utf-8").split())
    quoted = re.search(r'cheapest relaxations \("(.*?)" for `examples/team-tight\.yaml`', said)
    assert quoted, "README no longer quotes examples/team-tight.yaml's relaxations"
    assert main(["report", str(TIGHT)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"Cheapest relaxations: {quoted.group(1)}. To fix:" in err
