"""Architecture sizes given beside `params` (hostile sweep): `--params 7B --layers 1` was
modelled at 0.44B parameters with no warning (20 × 0.44B default tokens, the only hint an
assumption "architecture overridden: layers=1"); `--params 1000 --vocab 1` was refused as too
small for a 32000-token vocabulary; `--model deepseek-v3 --layers 2` said to give at most 2
"dense layers", which no option sets; `--experts-per-token 0` was range-checked from 0 and then
refused as "between 1 and experts"."""

from __future__ import annotations

import pytest

from planner.cli import main
from planner.model import WorkloadError, WorkloadSpec, build_workload
from planner.model._spec import CHINCHILLA_TOKENS_PER_PARAM


def _error(capsys, *argv) -> str:
    assert main(["estimate", *argv, "--gpu", "H100", "--gpus", "64", "--tokens", "1B"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("overrides", "said", "modelled"), [
    ((("layers", 1),), "`layers` 1 changes", "0.44B"),
    ((("heads", 7),), "`heads` 7 changes", "5.87B"),
    ((("layers", 1), ("hidden", 64)), "`layers` 1 and `hidden` 64 change", "4.14M")])
def test_sizes_that_change_the_total_of_params_are_warned(overrides, said, modelled):
    w = build_workload(WorkloadSpec(params="7B", arch_overrides=overrides))
    # (7 heads × 128 is also an attention no model has: ``shape_warnings``, warned first)
    assert len(w.warnings) == 1 + (overrides == (("heads", 7),)), w.warnings
    assert w.warnings[-1].startswith(f"{said} the model from 7.00B parameters (`params`) to "
                                     f"{modelled}: the run is modelled at {modelled}. To fix: ")
    assert f"→ {modelled} parameters, not the 7.00B of `params`" in " ".join(w.inferred)
    # the default tokens are those of the model planned, and say so
    assert w.tokens == CHINCHILLA_TOKENS_PER_PARAM * w.arch.params_active()
    assert f"per active parameter of the {modelled} modelled, not `params`" in " ".join(
        w.inferred)


def test_a_mixture_whose_active_count_moves_says_both_counts():
    w = build_workload(WorkloadSpec(params="47B", active_params="13B", experts=8,
                                    arch_overrides=(("layers", 8),)))
    assert "from 47.00B (13.00B active) parameters (`params`, `active_params`)" in w.warnings[0]


@pytest.mark.parametrize("spec", [
    WorkloadSpec(params="7B", arch_overrides=(("layers", 42),)),  # 39 inferred: +7%
    WorkloadSpec(model="llama2-7b", arch_overrides=(("layers", 1),)),  # no `params` to keep
])
def test_sizes_within_the_tolerance_or_without_params_are_not_warned(spec):
    assert build_workload(spec).warnings == ()


def test_the_inference_sizes_the_shape_around_the_vocabulary_given():
    # inferred with 32000 and then given 256000, a 1B model became 1.6B
    w = build_workload(WorkloadSpec(params="1B", arch_overrides=(("vocab", 256_000),)))
    assert w.arch.vocab == 256_000 and abs(w.arch.params_total() / 1e9 - 1) < 0.1
    assert w.warnings == ()


def test_too_small_a_count_is_told_with_the_vocabulary_given(capsys):
    err = _error(capsys, "--params", "1000", "--vocab", "1")
    assert "--params 1000 is too small for a transformer with a 1-token vocabulary" in err
    assert "32,000" not in err and "32000" not in err
    # with the vocabulary given, a small count that fits is planned
    w = build_workload(WorkloadSpec(params="300000", tokens="1M",
                                    arch_overrides=(("vocab", 1),)))
    assert w.arch.vocab == 1 and w.warnings == ()


@pytest.mark.parametrize("layers", ["2", "3"])
def test_too_few_layers_for_the_leading_dense_ones_names_layers(capsys, layers):
    err = _error(capsys, "--model", "deepseek-v3", "--layers", layers)
    assert (f"--layers {layers} leaves no mixture-of-experts layer: deepseek-v3's first 3 "
            "layers are dense (the experts come after them). To fix: give --layers 4 or more"
            in err)
    assert "dense_layers" not in err


def test_zero_experts_per_token_is_refused_by_its_own_range(capsys):
    err = _error(capsys, "--params", "47B", "--active-params", "13B", "--experts", "8",
                 "--experts-per-token", "0")
    assert "--experts-per-token must be a whole number from 1 to 65,536, got 0." in err
    with pytest.raises(WorkloadError, match="from 1 to 65,536"):
        build_workload(WorkloadSpec(params="47B", active_params="13B", experts=8,
                                    experts_per_token=0))


def test_a_hidden_size_that_leaves_an_impossible_attention_is_warned():
    """`--model llama3-8b --hidden 7` kept 32 heads × 128, an attention 585 × the hidden size,
    and gave a 4.11M-parameter model with no warning, where a config.json of that shape is
    warned of (hostile-input review, 2026-12-07)."""
    w = build_workload(WorkloadSpec(model="llama3-8b", arch_overrides=(("hidden", 7),)))
    assert len(w.warnings) == 1, w.warnings
    assert w.warnings[0].startswith("`hidden` 7 makes the attention 32 heads × 128 = 4,096 wide, "
                                    "585 × the hidden size 7 (real models: about 0.8 to 3.5)")
    assert w.warnings[0].endswith("To fix: give `heads` such that `hidden` / `heads` is the head "
                                  "dimension meant (the model's: 128)")


@pytest.mark.parametrize("overrides", [(("hidden", 8192),), (("hidden", 2048), ("heads", 16)),
                                       (("layers", 4),)])
def test_sizes_that_keep_a_models_attention_are_not_warned(overrides):
    assert build_workload(WorkloadSpec(model="llama3-8b", arch_overrides=overrides)).warnings \
        == ()
