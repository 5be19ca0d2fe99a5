"""Inference-only accelerators (``Accelerator.inference_only``: AWS Inferentia, Qualcomm Cloud
AI 100) get no training estimate or plan: Inferentia2 has Trainium1's peaks and was planned as
if it trained (sweep 2026-12-04), though AWS Neuron trains on Trainium only."""

from __future__ import annotations

import pytest

from planner import (
    Constraints,
    WorkloadSpec,
    build_workload,
    can_time,
    estimate,
    plan,
    reference_cluster,
)
from planner.model import HardwareError, PlannerError

INFERENCE_ONLY = {"Inferentia1", "Inferentia2", "Qualcomm-AI100"}


@pytest.fixture(scope="module")
def catalog():
    from catalog import load_catalog

    return load_catalog("packaged")


@pytest.fixture(scope="module")
def gpt2():
    return build_workload(WorkloadSpec(model="gpt2", tokens="10B"))


def test_the_catalog_marks_the_inference_chips_and_says_why(catalog):
    marked = {a.name for a in catalog.accelerators if a.inference_only}
    assert marked == INFERENCE_ONLY
    for name in marked:
        assert "inference only: AWS Neuron docs" in catalog.accelerator(name).planning_source
    # Inferentia2 has the datasheet peaks of Trainium1: only the flag tells them apart
    inf2, trn1 = catalog.accelerator("Inferentia2"), catalog.accelerator("Trainium1")
    assert inf2.tflops_bf16 == trn1.tflops_bf16 and not trn1.inference_only


def test_no_estimate_on_an_inference_chip(catalog, gpt2):
    assert not can_time(catalog.accelerator("Inferentia2"), "bf16")
    assert can_time(catalog.accelerator("Trainium1"), "bf16")
    with pytest.raises(HardwareError, match="Inferentia2: an inference accelerator: .*To fix: "
                       "choose a training accelerator with `gpu`, e.g. Trainium1"):
        estimate(gpt2, reference_cluster(catalog, "Inferentia2", 12))


def test_a_plan_asked_for_inference_chips_only_says_why(catalog, gpt2):
    with pytest.raises(PlannerError, match=r"^Inferentia1, Inferentia2: inference "
                       r"accelerators: .* To fix: choose a training accelerator"):
        plan(gpt2, catalog, Constraints(deadline_hours=720,
                                        gpus=("Inferentia2", "Inferentia1")))


def test_a_plan_over_both_keeps_the_training_chip(catalog, gpt2):
    result = plan(gpt2, catalog, Constraints(deadline_hours=720,
                                             gpus=("Inferentia2", "Trainium1")))
    assert result.candidates
    assert {c.accelerator for c in result.candidates} == {"Trainium1"}


def test_the_cli_answers_in_one_line_exit_2(capsys):
    from planner.cli import main

    code = main(["estimate", "--model", "gpt2", "--gpu", "Inferentia2", "--gpus", "12"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "To fix: choose a training accelerator with --gpu" in err


def test_a_plan_over_an_inference_chip_and_an_untimed_one_names_both(catalog, gpt2):
    """The precision message named only the untimed GPU and dropped Inferentia2 (review
    2026-12-04)."""
    untimed = next(a.name for a in catalog.accelerators
                   if not a.inference_only and not a.tflops_bf16 and not a.tflops_fp16
                   and not a.peak_stand_in_tflops and any(
                       t.accelerator == a.name for t in catalog.instance_types))
    with pytest.raises(PlannerError, match=rf"\({untimed}: no bf16 .*; Inferentia2: "
                       r"inference only\)"):
        plan(gpt2, catalog, Constraints(deadline_hours=720, gpus=("Inferentia2", untimed)))


def test_a_catalog_stored_before_the_column_still_marks_them(tmp_path, monkeypatch):
    """A catalog refreshed before `inference_only` existed reads the missing column as False;
    it takes the flag from the packaged snapshot (review 2026-12-04: it planned 5 x
    inf2.48xlarge)."""
    import csv
    import io

    from catalog import load_catalog
    from catalog._install import install

    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    packaged = load_catalog("packaged")
    _, path = install(packaged.accelerators, packaged.instance_types, packaged.offers,
                      dict(packaged.meta), name="refreshed-before")
    table = path / "accelerators.csv"
    rows = list(csv.reader(io.StringIO(table.read_text())))
    i = rows[0].index("inference_only")
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(r[:i] + r[i + 1:] for r in rows)
    table.write_text(out.getvalue())
    old = load_catalog("refreshed-before")
    assert {a.name for a in old.accelerators if a.inference_only} == INFERENCE_ONLY
