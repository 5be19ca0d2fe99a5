"""A shape inferred from ``params`` is named by its size: plans and launch headers read
"gpuplan plan for inferred, 300B tokens", which named no model."""

from __future__ import annotations

from planner.model import infer_architecture


def test_a_dense_shape_is_named_by_its_size():
    arch, _ = infer_architecture(13e9)
    assert arch.name == "13B model (inferred shape)"


def test_a_moe_shape_names_its_active_size_too():
    arch, _ = infer_architecture(47e9, 13e9)
    assert arch.name == "47B model (13B active, inferred shape)"
