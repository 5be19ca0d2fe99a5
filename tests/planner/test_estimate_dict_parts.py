"""An estimate's JSON builds its workload and pinned dicts once per workload (a plan describes
hundreds of candidates of one): alternating workloads must each get their own, and a caller
editing one candidate's dict must not change another's."""

from __future__ import annotations

from planner import PlanPins, WorkloadSpec, build_workload, estimate, reference_cluster


def test_each_workload_gets_its_own_dicts(catalog):
    cluster = reference_cluster(catalog, "H100", 64)
    a = estimate(build_workload(WorkloadSpec(model="llama3-8b", tokens="1T", pins=PlanPins(tp=2))),
                 cluster)
    b = estimate(build_workload(WorkloadSpec(model="llama2-7b", tokens="2T",
                                             recompute="full")), cluster)
    for _ in range(2):  # a, b, a, b: the kept pair is replaced each time
        da, db = a.as_dict(), b.as_dict()
        assert (da["workload"]["model"], da["pinned"]) == ("llama3-8b", {"tp": 2})
        assert (db["workload"]["model"], db["pinned"]) == ("llama2-7b", {"recompute": "full"})
        assert (da["workload"]["tokens"], db["workload"]["tokens"]) == (1e12, 2e12)
    first, second = a.as_dict(), a.as_dict()
    first["workload"]["tokens"] = 0
    first["pinned"]["tp"] = 99
    assert second["workload"]["tokens"] == 1e12 and second["pinned"] == {"tp": 2}
    assert a.as_dict()["workload"]["tokens"] == 1e12
