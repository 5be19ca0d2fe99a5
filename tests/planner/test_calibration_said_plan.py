"""A plan's candidates say what an estimate says of its probe calibration: a measured figure
far from its default is warned beside the plan it times (the plan took the 60 TFLOP/s figure
with no word, as `estimate` did before it warned)."""

from __future__ import annotations

from probe_store import H100, put

from planner import Constraints, Workload, plan, preset
from planner.store import load_calibration


def test_a_plan_built_on_a_poor_measurement_warns_of_it(tmp_path, catalog, make_report):
    put(tmp_path, catalog, make_report(bf16_tflops=60.0))
    arch, seq = preset("llama3-8b")
    workload = Workload(arch=arch, tokens=1e9, seq_len=seq)
    constraints = Constraints(deadline_hours=72, max_gpus=64, gpus=(H100,), clouds=("aws",))
    result = plan(workload, catalog, constraints, calibration=load_calibration(catalog))
    rec = result.recommendation
    said = [w for w in rec.warnings if w.startswith(f"matmul bf16 on {H100}: measured 60.0")]
    assert len(said) == 1, rec.warnings
    assert "`gpuplan probe remove 1`" in said[0]
    plain = plan(workload, catalog, constraints)
    assert not [w for w in plain.recommendation.warnings if "probe" in w]
