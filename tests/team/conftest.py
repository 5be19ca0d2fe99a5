"""Fixtures for the team planner: the packaged catalog (only for resolving names and building
workloads), a synthetic team plan, and synthetic candidates shaped like plan()'s dicts (the
keys allocate_candidates and the reports read), so the MILP and the reports are tested
without running the performance model."""

from __future__ import annotations

import pytest

# gcp's date approximate, as a price file's publication date is (``catalog.price_dates``)
CATALOG_INFO = {"name": "packaged", "as_of": {"aws": "2025-03-01", "gcp": "2025-01-01"},
                "as_of_approximate": {"aws": False, "gcp": True},
                "source": "synthetic test catalog", "overrides": None}


@pytest.fixture(scope="session")
def catalog():
    from catalog import load_catalog

    return load_catalog()


def team_dict(**changes) -> dict:
    data = {
        "name": "golden team",
        "start_offsets_days": [0, 7],
        "jobs": [
            {"name": "pretrain-8b", "team": "research", "priority": 2,
             "workload": {"model": "llama3-8b", "tokens": "1T"},
             "earliest_start": "2027-03-01", "deadline": "2027-04-15"},
            {"name": "eval|sweep <b>", "team": "research",
             "workload": {"params": "1B", "tokens": "20B", "seq_len": 2048},
             "earliest_start": "2027-03-20", "deadline": "2027-04-10"},
            {"name": "sft-70b", "team": "product",
             "workload": {"model": "llama3-70b", "tokens": "20B", "seq_len": 4096},
             "earliest_start": "2027-04-01", "deadline": "2027-05-15"},
        ],
        "quotas": [{"cloud": "aws", "region": "us-east-1", "accelerator": "H100", "gpus": 96}],
        "budgets": {"2027-03": 50000, "2027Q2": 100000},
    }
    data.update(changes)
    return data


def cand(cloud: str, region: str, acc: str, gpus: int, wall_h: float, usd_per_h: float,
         pricing: str = "on_demand", gpus_per_node: int = 8) -> dict:
    """A candidate as plan() describes it (the fields the allocation and reports use)."""
    nodes = gpus // gpus_per_node
    return {"cloud": cloud, "region": region, "instance_type": f"{acc.split('-')[0].lower()}"
            f".{gpus_per_node}x", "accelerator": acc, "nodes": nodes, "gpus": gpus,
            "pricing": pricing, "usd_per_hour": usd_per_h,
            "usd_per_hour_cluster": usd_per_h * nodes, "wall_clock_hours": wall_h,
            "gpu_hours": wall_h * gpus, "total_cost_usd": usd_per_h * nodes * wall_h,
            "deadline_probability": 1.0 if pricing == "on_demand" else 0.97,
            "price_as_of": "2025-03-01", "price_source": "synthetic",
            "plan": {"tp": 8, "pp": 1, "cp": 1, "dp": gpus // 8, "zero_stage": 1,
                     "micro_batch": 1, "recompute": "selective", "grad_accumulation": 4}}


H100 = "H100-SXM5-80GB"
A100 = "A100-SXM4-80GB"


def golden_candidates() -> list[list[dict]]:
    return [
        [cand("aws", "us-east-1", H100, 64, 500, 24.0),
         cand("aws", "us-east-1", H100, 32, 900, 24.0),
         cand("gcp", "us-central1", A100, 64, 800, 10.0, pricing="spot")],
        [cand("aws", "us-east-1", H100, 64, 100, 24.0),
         cand("gcp", "us-central1", A100, 16, 300, 10.0)],
        [cand("aws", "us-east-1", H100, 64, 60, 24.0),
         cand("gcp", "us-central1", A100, 128, 70, 10.0)],
    ]


@pytest.fixture
def golden_allocation(catalog):
    from planner.team import allocate_candidates, parse_team_plan

    plan = parse_team_plan(team_dict(), catalog=catalog, source="golden.yaml")
    return allocate_candidates(plan, golden_candidates(), catalog_info=CATALOG_INFO)
