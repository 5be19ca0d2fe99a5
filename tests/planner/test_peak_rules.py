"""The peaks the model times GEMMs and attention against (``planner.model._inputs``):

- a 16-bit stand-in peak (a chip with no datasheet peak: A10G) is never an fp8 peak — fp8 on
  an A10G was accepted and timed at "125 TFLOP/s fp8 peak", though the chip has no fp8 units;
- on a chip whose fp8 peak is its bf16 peak (TPU v5p, Trainium1) fp8 is timed as bf16, not
  20% slower by the fp8 fraction fitted where fp8 doubles the peak;
- no override makes the attention kernel outrun the peak (an MFU of 1.09 came back)."""

from __future__ import annotations

import pytest

from catalog import GpuplanError, load_catalog
from planner import Assumptions, Workload, estimate, plan, preset, reference_cluster
from planner.search import Constraints


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


def wl(name="llama3-8b", **kw) -> Workload:
    arch, _ = preset(name)
    return Workload(arch=arch, tokens=1e10, seq_len=kw.pop("seq_len", 4096), **kw)


def test_fp8_on_a_chip_without_fp8_units_is_refused(cat):
    with pytest.raises(GpuplanError) as info:
        estimate(wl(precision="fp8"), reference_cluster(cat, "A10G", 8))
    said = str(info.value)
    assert "A10G has no fp8 peak in the catalog" in said and "`precision` bf16" in said
    # its 16-bit stand-in still times bf16
    assert estimate(wl(), reference_cluster(cat, "A10G", 8)).wall_clock_hours > 0


def test_plan_leaves_chips_without_fp8_out_of_an_fp8_search(cat):
    with pytest.raises(GpuplanError) as info:  # 128 A10G spot for 493 h was recommended
        plan(wl(precision="fp8"), cat, Constraints(deadline_hours=24 * 60, max_gpus=64,
                                                   gpus=("A10G",)))
    assert "cannot run fp8 training (A10G" in str(info.value)


@pytest.mark.parametrize("gpu", ["TPU-v5p", "Trainium1"])
def test_fp8_where_it_gains_nothing_is_timed_as_bf16(cat, gpu):
    cluster = reference_cluster(cat, gpu, 64)
    bf16, fp8 = estimate(wl(), cluster), estimate(wl(precision="fp8"), cluster)
    assert fp8.step_time_s == pytest.approx(bf16.step_time_s, rel=1e-9)
    assert any("fp8 GEMMs gain nothing on it" in a for a in fp8.assumptions)
    moved = estimate(wl(precision="fp8"), cluster,
                     assumptions=Assumptions().with_overrides(fp8_relative_fraction=0.5))
    assert any("fp8_relative_fraction has no effect" in w for w in moved.warnings)


def test_fp8_still_gains_where_its_peak_doubles(cat):
    cluster = reference_cluster(cat, "H100", 8)
    assert (estimate(wl(precision="fp8"), cluster).step_time_s
            < 0.9 * estimate(wl(), cluster).step_time_s)


def test_no_override_makes_attention_outrun_the_peak(cat):
    over = Assumptions().with_overrides(**{
        "attention_efficiency": 2.0, "attention_fraction.fused/hopper": 1.0,
        "matmul_fraction.hopper": 1.0, "gemm_efficiency.megatron": 1.0})
    est = estimate(wl(seq_len=131072), reference_cluster(cat, "H100", 64), assumptions=over)
    assert 0 < est.mfu <= 1.0
    assert any("(capped at the peak)" in a for a in est.assumptions)
