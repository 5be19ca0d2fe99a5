"""`launch probes --install` names the package the nodes install instead of copying this
machine's probes: a named requirement of another project (`requests==2.0`) was taken, and the
task's `python3 -m probes` failed on the nodes after they were paid for. A bare URL is taken
(only pip on the node can tell its project)."""

from __future__ import annotations

import pytest
from launch_helpers import one_error, run

LAUNCH = ("launch", "probes", "--instance", "p5.48xlarge", "--target", "skypilot", "--out", "-")


@pytest.mark.parametrize("spec, name", [("requests==2.0", "requests"),
                                        ("foo @ git+https://example.invalid/foo.git", "foo"),
                                        ("gpu_plan==1", "gpu-plan"),
                                        ("gpuplan-extra", "gpuplan-extra")])
def test_another_project_is_refused(capsys, spec, name):
    code, out, err = run(capsys, *LAUNCH, "--install", spec)
    one_error(code, err, f"installs {name}, not gpuplan", "python3 -m probes")
    assert out == ""


@pytest.mark.parametrize("spec", ["gpuplan==0.1.0", "GpuPlan[probes]>=0.1",
                                  "gpuplan @ git+https://example.invalid/gpuplan.git",
                                  "git+https://example.invalid/fork.git",
                                  "gpuplan ; python_version >= '3.11'"])
def test_gpuplan_or_a_bare_url_is_taken(capsys, spec):
    code, out, err = run(capsys, *LAUNCH, "--install", spec)
    assert code == 0, err
    assert "pip install" in out
