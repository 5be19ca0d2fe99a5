"""A copy of a stored run whose facts differ from the stored report's: what ingest says of it.

One run counts once (``_fingerprint``), so the first-stored copy stays; where the copy being
ingested names another instance type or cloud, ingest says so and how to keep this one's
instead, since those facts decide what the run calibrates (the cross-node bandwidth only with
a catalog instance type; the intra-node one keyed by it).
"""

from __future__ import annotations

_FACT_CHARS = 60  # a report's own text, cut: an instance type is a short name


def _said(value: str | None) -> str:
    if not value:
        return "none"
    return value if len(value) <= _FACT_CHARS else f"{value[:_FACT_CHARS]}…"


def other_facts(stored, report, rid: int) -> str:
    """"" when ``report`` (a copy of stored report ``rid``'s run: ``stored`` is that report
    parsed, None for the very same bytes) says the same instance type and cloud as it; else
    the sentence that says which differ and how to keep this copy's. One run counts once, so
    the first-stored copy stays: one without an instance type (the metadata service did not
    answer) kept its cross-node bandwidth unused, and the copy that named p5.48xlarge was
    "already stored", without a word of what it would have added."""
    if stored is None or stored.environment is None or report.environment is None:
        return ""
    was, now = stored.environment, report.environment
    differ = [(what, _said(a), _said(b)) for what, a, b in (
        ("instance type", was.instance_type, now.instance_type),
        ("cloud", was.cloud, now.cloud)) if (a or None) != (b or None)]
    if not differ:
        return ""
    now_said = ", ".join(f"{what} {b}" for what, _, b in differ)
    was_said = ", ".join(f"{what} {a}" for what, a, _ in differ)
    return (f"; but this file says {now_said} where report {rid} says {was_said}, and report "
            f"{rid} is kept as stored (one run counts once). To use this file's facts: "
            f"`gpuplan probe remove {rid}`, then ingest this file again")
