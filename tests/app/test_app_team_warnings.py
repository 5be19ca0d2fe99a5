"""The Team page shows the warnings of the jobs' chosen plans, as `gpuplan report` prints them
and the downloaded report lists them (``Allocation.warning_lines``): a reserved job's $44,298
stood on the page with no word that a whole 1-year term was paid for a two-week run."""

from __future__ import annotations

from ._apptest import assert_clean, plain, upload_team, warnings

PLAIN = """\
jobs:
  - name: small
    workload: {model: gpt2, tokens: 1B}
    earliest_start: 2027-01-04
    deadline: 2027-01-30
"""


def reserved(name: str, tokens: str = "20B") -> str:
    return f"""\
  - name: {name}
    workload: {{model: gpt2-xl, tokens: {tokens}}}
    earliest_start: 2027-01-04
    deadline: 2027-01-30
    pricing: [reserved_1y]
"""


def folded(at) -> list:
    return [e for e in at.expander if e.label.endswith("warnings")]


def test_a_reserved_job_says_its_term_is_paid():
    at = upload_team(PLAIN + reserved("reserved-job"))
    assert_clean(at)
    said = [w for w in warnings(at) if "commitment" in w]
    assert len(said) == 1, warnings(at)
    assert said[0].startswith("jobs[2] 'reserved-job': commitment: pays 1 × 8,760 h per "
                              "instance"), said
    assert "commitment_use" in said[0]
    assert not folded(at)


def test_one_warning_of_two_jobs_is_said_once_naming_both():
    at = upload_team("jobs:\n" + reserved("a") + reserved("b"))
    assert_clean(at)
    said = [w for w in warnings(at) if "commitment" in w]
    assert len(said) == 1 and said[0].startswith("all 2 jobs: commitment: "), warnings(at)


def test_many_warnings_are_folded_under_their_count():
    at = upload_team("jobs:\n" + reserved("a", "5B") + reserved("b", "10B")
                     + reserved("c", "20B"))
    assert_clean(at)
    assert not [w for w in warnings(at) if "commitment" in w]
    [box] = folded(at)
    assert box.label == "3 warnings"
    text = plain("\n".join(m.value for m in box.markdown))
    for name in ("a", "b", "c"):
        assert f"- jobs[{' abc'.index(name)}] '{name}': commitment: pays" in text, text


def test_a_plan_without_warnings_shows_none():
    at = upload_team(PLAIN)
    assert_clean(at)
    assert not warnings(at)
    assert not folded(at)
