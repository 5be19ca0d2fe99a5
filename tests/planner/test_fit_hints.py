"""What `estimate` says when no plan fits: the larger setup it names is one `--gpus` accepts and
that fits, the search limit it states is the one it used, and "use more GPUs" is offered only
where more GPUs were found to help."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import HardwareError, NoFitError, PlanPins, Workload, build_cluster, estimate, preset
from planner.cli import main
from planner.model._hardware import smallest_fitting


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(["estimate", *argv])
    out, err = capsys.readouterr()
    return code, err


def suggested_gpus(err: str) -> int:
    found = re.search(r"The smallest setup that fits is .* pass --gpus (\d+)\.", err)
    assert found, err
    return int(found[1])


@pytest.mark.parametrize(("workload", "gpu", "gpus", "node"), [
    # a part of a node was grown in nodes of that part: 3 "nodes" of 7 = --gpus 21, refused
    (("--params", "70B"), "H100", "7", 8),
    (("--model", "llama3-70b"), "H100", "1", 8),
    (("--model", "mixtral-8x7b"), "H100", "4", 8),
    # no reference_gpus_per_node: the node is the catalog's largest instance (8 L4, 4 GB200)
    (("--model", "llama3-8b"), "L4", "1", 8),
    (("--model", "llama3-70b"), "GB200-186GB", "1", 4),
    # within the node: any count up to it is accepted
    (("--model", "llama3-8b"), "H100", "1", 8),
])
def test_the_smallest_setup_named_is_accepted_by_gpus_fits_and_is_the_smallest(
        capsys, workload, gpu, gpus, node):
    code, err = run(capsys, *workload, "--gpu", gpu, "--gpus", gpus)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    n = suggested_gpus(err)
    assert n <= node or n % node == 0, err  # what reference_cluster takes
    code, err = run(capsys, *workload, "--gpu", gpu, "--gpus", str(n), "--json")
    assert code == 0, err
    below = n - 1 if n <= node else n - node  # the next smaller count --gpus accepts
    if below > int(gpus):
        code, err = run(capsys, *workload, "--gpu", gpu, "--gpus", str(below))
        assert code == 2 and "do not fit" in err, err


@pytest.mark.parametrize(("workload", "gpu", "advised"), [
    # cp16 tp2 needs 32 to divide the count: 65,552 GPUs was advised (counts 8·(2^k + 1) only)
    (("--model", "llama3-8b", "--seq-len", "1048576"), "H100", 32),
    (("--model", "llama3-70b", "--seq-len", "262144"), "H100", 32),  # 640 was advised
    (("--model", "llama3-405b", "--seq-len", "262144"), "B200", 64),  # 1,920 was advised
])
def test_a_long_sequence_is_advised_the_few_gpus_that_fit_not_thousands(
        capsys, workload, gpu, advised):
    code, err = run(capsys, *workload, "--gpu", gpu, "--gpus", "8")
    assert code == 2 and suggested_gpus(err) == advised, err
    code, err = run(capsys, *workload, "--gpu", gpu, "--gpus", str(advised), "--json")
    assert code == 0, err
    code, err = run(capsys, *workload, "--gpu", gpu, "--gpus", str(advised // 2))
    assert code == 2 and "do not fit" in err, err


@settings(max_examples=200, deadline=None)
@given(width=st.sampled_from([8, 16, 32, 64, 128, 256]), least=st.integers(1, 70_000))
def test_the_smallest_count_is_found_where_a_split_must_divide_it(width, least):
    """Fitting as a split of ``width`` GPUs makes it: from ``least`` GPUs, on multiples of
    ``width`` alone — every count the doubling skips is found by the halving after it."""
    counts = list(range(16, 65_537, 8))
    tried = []

    def fitting(c):
        tried.append(c)
        return width if c >= least and c % width == 0 else None

    got = smallest_fitting(counts, fitting, lambda found: found)
    fit = [c for c in counts if c >= least and c % width == 0]
    assert got == ((fit[0], width) if fit else None)
    assert len(tried) <= 60  # doubling, then two halvings: not a scan of 8,190 counts


def test_the_search_limit_said_is_the_one_searched(capsys):
    # 131,072 GPUs is all the model covers: "No setup of up to 512 nodes" was said, though
    # nothing larger was tried
    argv = ("--params", "1e14", "--tokens", "1e12", "--gpu", "H100")
    code, err = run(capsys, *argv, "--gpus", "131072")
    assert code == 2 and "512 nodes" not in err, err
    assert "No larger setup was tried: the model covers up to 131,072 GPUs." in err, err
    assert "more GPUs" not in err, err
    code, err = run(capsys, *argv, "--gpus", "65536")
    assert code == 2, err
    assert ("No setup of up to 16,384 nodes of 8 GPUs (131,072 GPUs, the most the model "
            "covers) fits.") in err, err


def _workload(name: str, **kw) -> Workload:
    arch, seq = preset(name)
    return Workload(arch=arch, tokens=1e12, seq_len=seq, global_batch_tokens=4 * 1024 * 1024,
                    **kw)


def test_more_gpus_is_offered_only_where_more_gpus_fit(catalog):
    # tp1 pp1 zero0: every GPU holds all the weights and optimizer state, at any count
    pinned = _workload("llama3-8b", recompute="full", pins=PlanPins(tp=1, pp=1, zero=0))
    with pytest.raises(NoFitError) as info:
        estimate(pinned, build_cluster(catalog, gpu="H100", gpus=64)[0])
    with pytest.raises(NoFitError):  # (as the search found: 8x the GPUs fit no better)
        estimate(pinned, build_cluster(catalog, gpu="H100", gpus=512)[0])
    message = str(info.value)
    assert "more GPUs" not in message, message
    assert message.endswith("To fix: use a GPU with more memory or fewer pins"), message
    # with ZeRO free, more GPUs do help: it is offered, with the count that fits
    free = _workload("llama3-8b", recompute="full", pins=PlanPins(tp=1, pp=1))
    with pytest.raises(NoFitError) as info:
        estimate(free, build_cluster(catalog, gpu="L4", gpus=1)[0])
    assert "To fix: use more GPUs" in str(info.value), str(info.value)


def test_a_single_node_gpu_names_gpus_not_nodes(capsys, catalog):
    # A10's reference node is 2 GPUs with no inter-node network; with --gpu, --nodes is refused
    with pytest.raises(HardwareError) as info:
        build_cluster(catalog, gpu="A10", gpus=4)
    assert info.value.field == "gpus"
    assert "use at most 2 GPUs (`gpus` 2, one node)" in str(info.value), str(info.value)
    assert "`nodes`" not in str(info.value)
    code, err = run(capsys, "--params", "1B", "--gpu", "A10", "--gpus", "4")
    assert code == 2 and "--nodes" not in err and "--gpus 2" in err, err
    code, err = run(capsys, "--params", "1B", "--gpu", "A10", "--gpus", "2", "--json")
    assert code == 0, err
    # and a model that needs more than its one node is not told to add GPUs
    code, err = run(capsys, "--model", "llama3-8b", "--gpu", "A10", "--gpus", "1")
    assert code == 2 and "more GPUs" not in err, err
    assert "No setup of up to one node (2 GPUs) fits, and A10 has no known inter-node " \
        "network to span nodes." in err, err
