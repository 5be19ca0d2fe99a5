"""Hostile inputs for the files and values of `gpuplan report` and the quantities people type:
team plans, actuals, quota files, report outputs, --tokens/--deadline (Hugging Face configs:
``cases_config``).

Each case runs the real CLI in process (``_runner``). Case ids start with the surface
(team-, actuals-, quota-, config-, out-, tokens-, count-, deadline-) so a failure reads as a
sentence. The good cases beside the bad ones pin that the limits do not refuse real input.
"""

from __future__ import annotations

import json

import yaml

from ._runner import (
    Case,
    Directory,
    Fifo,
    Symlink,
    file_contains,
    still_char_device,
    still_fifo,
)
from .cases_config import ESTIMATE

# ---- a tiny team plan that allocates in well under a second -------------------------------------

JOB = {"name": "a", "team": "research", "clouds": ["aws"], "accelerators": ["H100"],
       "pricing": ["on_demand"], "max_gpus": 16, "workload": {"model": "gpt2", "tokens": "2B"},
       "earliest_start": "2027-03-01", "deadline": "2027-03-10"}


def team_yaml(top: dict | None = None, **job_changes) -> str:
    job = {**JOB, **job_changes}
    job = {k: v for k, v in job.items() if v is not _DROP}
    data = {"name": "hostile", "start_offsets_days": [0], "jobs": [job], **(top or {})}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


_DROP = object()
GOOD_TEAM = team_yaml()
REPORT = ("report", "{team}", "--workers", "1")


def team(case_id: str, text: str | bytes, expect: int = 2, says: str = "", **kw) -> Case:
    return Case(f"team-{case_id}", REPORT, expect, {"team": text, **kw.pop("files", {})},
                says, **kw)


def workload(case_id: str, expect: int = 2, says: str = "", **fields) -> Case:
    spec = {"model": "gpt2", "tokens": "2B", **fields}
    spec = {k: v for k, v in spec.items() if v is not _DROP}
    return team(f"workload-{case_id}", team_yaml(workload=spec), expect, says)


BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]"
       for p, n in zip("abcdefgh", "bcdefghi", strict=True)]
    + ["jobs: *i"]) + "\n"

TEAM_CASES = [
    # The file itself.
    Case("team-missing-file", ("report", "{tmp}/nope.yaml"), 2, says="no such file"),
    Case("team-empty-path", ("report", ""), 2, says="empty"),
    Case("team-directory", REPORT, 2, {"team": Directory()}, "is a directory"),
    Case("team-dev-zero", ("report", "/dev/zero"), 2, says="is a device"),
    Case("team-fifo", REPORT, 2, {"team": Fifo()}, "named pipe"),
    Case("team-symlink-to-dev-zero", REPORT, 2, {"team": Symlink("/dev/zero")}, "is a device"),
    Case("team-symlink-to-good-file", REPORT, 0,
         {"real": GOOD_TEAM, "team": Symlink("{real}")}),
    team("empty-file", "", says="expected a mapping"),
    # a key YAML reads as None was named "unknown field 'None'"
    team("null-key", team_yaml(workload={None: 1, "model": "gpt2", "tokens": "2B"}),
         says="unknown field 'null'"),
    # the CLI refuses --lora-rank without --finetune lora; the team file ignored it
    team("lora-rank-without-lora", team_yaml(workload={"model": "gpt2", "tokens": "1B",
                                                       "lora_rank": 8}),
         says="lora_rank 8 sets a LoRA adapter, but finetune is 'none'"),
    team("name-read-as-a-number", team_yaml(name=1000.0).replace("name: 1000.0", "name: 1e3"),
         says="got 1000.0 (YAML read it as a number: write the name in quotes"),
    team("name-read-as-a-boolean", team_yaml(name=True),
         says="got true (YAML reads on, yes and true without quotes as true: write the name "
              "in quotes, e.g. \"on\" or \"yes\")"),
    team("only-a-comment", "# nothing\n", says="expected a mapping"),
    team("latin-1", GOOD_TEAM.replace("research", "recherch\xe9").encode("latin-1"),
         says="not UTF-8"),
    team("utf-16", GOOD_TEAM.encode("utf-16"), says="is UTF-16 text, not UTF-8"),
    # without a byte-order mark UTF-16 decodes as UTF-8 with NULs between the letters
    team("utf-16-without-bom", GOOD_TEAM.encode("utf-16-le"), says="is UTF-16 text, not UTF-8"),
    team("utf-8-bom-is-fine", b"\xef\xbb\xbf" + GOOD_TEAM.encode(), 0),
    team("over-a-mebibyte", b"# " + b"x" * (2**20) + b"\n", says="more than the 1 MiB"),
    team("nul-bytes", "jobs:\x00\n", says="character #x0000 is not allowed"),
    team("deep-nesting", "jobs: " + "[" * 200 + "]" * 200 + "\n", says="nesting deeper"),
    team("deep-block-nesting", "".join(f"{'  ' * i}k{i}:\n" for i in range(100)),
         says="nesting deeper"),
    team("billion-laughs", BILLION_LAUGHS, says="through aliases"),
    team("100k-values-without-aliases", "jobs:\n" + "  - [1, 2, 3, 4]\n" * 21_000,
         says="expands to more than 100,000 values (line"),
    team("recursive-alias", "jobs: &j [*j]\n", says="refers to the value that contains it"),
    team("python-object-tag", "jobs: !!python/object/apply:os.system ['true']\n",
         says="invalid YAML"),
    team("yaml-list-at-top", "- a\n- b\n", says="expected a mapping"),
    team("yaml-scalar-at-top", "just words\n", says="expected a mapping"),
    team("tab-indentation", "jobs:\n\t- name: a\n", says="invalid YAML"),
    team("unclosed-bracket", "jobs: [\n", says="invalid YAML"),
    team("duplicate-key", GOOD_TEAM + "name: again\n", says="duplicate key 'name'"),
    team("5000-digit-number", "jobs: " + "9" * 5000 + "\n", says="5000-digit number"),
    team("unknown-top-field", team_yaml({"jbos": []}), says="Did you mean 'jobs'?"),
    team("jobs-empty", team_yaml({"jobs": []}), says="non-empty list"),
    team("jobs-a-mapping", team_yaml({"jobs": {"a": 1}}), says="non-empty list"),
    team("jobs-501", team_yaml({"jobs": [{**JOB, "name": f"j{i}"} for i in range(501)]}),
         says="at most 500"),
    team("job-not-a-mapping", team_yaml({"jobs": ["a"]}), says="expected a mapping"),
    team("title-a-list", team_yaml({"name": [1, 2]}), says="name: expected a non-empty string"),
    # Dates: kept as strings by the loader, checked by the planner.
    team("date-feb-30-unquoted", GOOD_TEAM.replace("'2027-03-10'", "2027-02-30"),
         says="'2027-02-30' is not a date (day is out of range for month)"),
    team("date-month-13", team_yaml(earliest_start="2027-13-01"), says="is not a date"),
    team("date-an-integer", team_yaml(deadline=20270310), says="20270310 is not a date"),
    team("date-a-list", team_yaml(deadline=[2027, 3, 10]), says="is not a date"),
    team("date-year-1900", team_yaml(earliest_start="1900-01-01"), says="outside 2000"),
    team("date-year-9999", team_yaml(deadline="9999-12-31"), says="outside 2000"),
    team("window-over-10-years", team_yaml(deadline="2040-01-01"), says="more than 10 years"),
    team("deadline-before-start", team_yaml(deadline="2027-02-01"), says="is before"),
    team("deadline-on-start", team_yaml(deadline="2027-03-01"), says="is on"),
    team("date-with-time-unquoted", GOOD_TEAM.replace("'2027-03-10'", "2027-03-10 12:00:00"),
         says="is not a date"),
    # Job fields.
    team("job-unknown-field", team_yaml(deadlne="2027-03-10"), says="Did you mean 'deadline'?"),
    team("job-missing-deadline", team_yaml(deadline=_DROP), says="missing 'deadline'"),
    team("job-name-a-number", team_yaml(name=123), says="'name' is required"),
    team("job-name-newline", team_yaml(name="a\nb"), says="one printable line"),
    team("job-name-10k-chars", team_yaml(name="x" * 10_000), says="at most 200 characters"),
    team("job-name-duplicate", team_yaml({"jobs": [JOB, JOB]}), says="name already used"),
    team("team-a-list", team_yaml(team=["x"]), says="team must be a non-empty string"),
    team("team-empty", team_yaml(team=""), says="team must be a non-empty string"),
    team("max-gpus-10-to-12", team_yaml(max_gpus=10**12), says="<= 65,536"),
    team("max-gpus-zero", team_yaml(max_gpus=0), says="max_gpus must be a whole number"),
    team("max-gpus-negative", team_yaml(max_gpus=-8), says="max_gpus must be a whole number"),
    team("max-gpus-fraction", team_yaml(max_gpus=1.5), says="max_gpus must be a whole number"),
    team("max-gpus-true", team_yaml(max_gpus=True), says="max_gpus must be a whole number"),
    team("max-gpus-nan", GOOD_TEAM.replace("max_gpus: 16", "max_gpus: .nan"),
         says="max_gpus must be a whole number"),
    team("priority-text", team_yaml(priority="high"), says="priority must be a whole number"),
    team("priority-huge", team_yaml(priority=10**39), says="priority must be a whole number"),
    team("priority-41-digits", team_yaml(priority=10**40), says="41-digit number"),
    team("min-probability-nan", GOOD_TEAM.replace("max_gpus: 16", "min_probability: .nan"),
         says="min_probability: must be a number in (0, 1)"),
    team("min-probability-2", team_yaml(min_probability=2), says="must be a number in (0, 1)"),
    team("min-probability-negative", team_yaml(min_probability=-0.1),
         says="must be a number in (0, 1)"),
    team("min-probability-one", team_yaml(min_probability=1), says="1 is never met"),
    team("min-probability-text", team_yaml(min_probability="0.9"),
         says="must be a number in (0, 1)"),
    team("offsets-negative", team_yaml(start_offsets_days=[-1]), says="whole days from 0"),
    team("offsets-huge", team_yaml(start_offsets_days=[100_000]), says="whole days from 0"),
    team("offsets-too-many", team_yaml(start_offsets_days=list(range(40))),
         says="at most 32 whole days"),
    team("offsets-floats", team_yaml(start_offsets_days=[0.5]), says="whole days"),
    team("clouds-misspelt", team_yaml(clouds=["awz"]), says="Did you mean 'aws'?"),
    team("clouds-a-number", team_yaml(clouds=123), says="expected a list of names"),
    team("regions-unknown", team_yaml(regions=["us-east-9"]), says="unknown region 'us-east-9'"),
    team("pricing-misspelt", team_yaml(pricing=["spto"]), says="Did you mean 'spot'?"),
    team("accelerator-unknown", team_yaml(accelerators=["H1OO"]), says="unknown GPU 'H1OO'"),
    # Workload fields: counts through parse_count, sizes bounded, no server paths from text.
    workload("tokens-empty", tokens="", says="tokens is empty"),
    workload("tokens-nan", tokens=float("nan"), says="not a finite number"),
    workload("tokens-inf", tokens=float("inf"), says="too large"),
    workload("tokens-negative", tokens=-5, says="must be positive"),
    workload("tokens-zero", tokens=0, says="must be positive"),
    workload("tokens-1e400-text", tokens="1e400", says="too large: at most 1e15 tokens"),
    workload("tokens-400-digits", tokens=int("9" * 400), says="400-digit number"),
    workload("tokens-40-digits", tokens=int("9" * 40), says="too large: at most 1e15"),
    workload("tokens-a-list", tokens=[1], says="must be a count"),
    workload("tokens-true", tokens=True, says="must be a count"),
    workload("seq-len-zero", seq_len=0, says="seq_len must be a whole number from 1"),
    workload("seq-len-huge", seq_len=10**9, says="seq_len must be a whole number from 1"),
    workload("seq-len-text", seq_len="4096", says="seq_len must be a whole number"),
    workload("layers-true", layers=True, says="layers must be a whole number"),
    workload("hidden-negative", hidden=-1, says="hidden must be a whole number"),
    workload("model-a-number", model=7, says="model must be a name"),
    workload("model-unknown", model="gpt-9", says="gpt-9"),
    workload("model-and-params", params="1B", says="exactly one of"),
    workload("params-too-many", model=_DROP, params="1e15",
             says="too large: at most 1e14 parameters"),
    workload("precision-a-list", precision=["bf16"], says="precision must be a name"),
    team("workload-not-a-mapping", team_yaml(workload="gpt2"), says="expected a mapping"),
    team("workload-config-missing",
         team_yaml(workload={"config": "nope/config.json", "tokens": "2B"}),
         says="cannot read config"),
    team("workload-config-dev-zero",
         team_yaml(workload={"config": "/dev/zero", "tokens": "2B"}), says="is a device"),
    team("workload-config-directory",
         team_yaml(workload={"config": "cfgdir", "tokens": "2B"}), says="is a directory",
         files={"cfgdir": Directory()}),
    # Quotas and budgets inside a team plan.
    team("quota-unknown-region", team_yaml({"quotas": [{"cloud": "aws", "region": "us-east-9",
                                                        "gpus": 8}]}),
         says="unknown aws region 'us-east-9'. Did you mean"),
    team("quota-month-13", team_yaml({"quotas": [{"cloud": "aws", "gpus": 8,
                                                  "month": "2027-13"}]}),
         says="'2027-13' is not a month"),
    team("quota-gpus-nan", GOOD_TEAM + "quotas: [{cloud: aws, gpus: .nan}]\n",
         says="gpus must be a whole number"),
    team("budget-negative", team_yaml({"budgets": {"total": -5}}), says="USD >= 0"),
    team("budget-nan", GOOD_TEAM + "budgets: {total: .nan}\n", says="USD >= 0"),
    team("budget-inf", GOOD_TEAM + "budgets: {total: .inf}\n", says="USD >= 0"),
    team("budget-400-digits", GOOD_TEAM + f"budgets: {{total: {'9' * 400}}}\n",
         says="400-digit number"),
    team("budget-a-trillion-and-more", team_yaml({"budgets": {"total": 1e13}}),
         says="<= 1,000,000,000,000"),
    team("budget-true", team_yaml({"budgets": {"total": True}}), says="USD >= 0"),
    team("budget-text", team_yaml({"budgets": {"total": "lots"}}),
         says="budgets.total 'lots' is not an amount of USD"),
    team("budget-bad-period", team_yaml({"budgets": {"March": 100}}), says="not a period"),
    team("budget-a-list", team_yaml({"budgets": [100]}), says="budgets must be a mapping"),
    team("overrides-percent-150",
         team_yaml({"overrides": {"discounts": [{"cloud": "aws", "percent": 150}]}}),
         says="overrides: discounts[1]: percent must be a number"),
    # Good plans, and what reaches a spreadsheet.
    team("good-plan", GOOD_TEAM, 0, says="# GPU budget: hostile"),
    Case("team-good-plan-json", (*REPORT, "--json"), 0, {"team": GOOD_TEAM}, '"jobs"',
         check=lambda o: json.loads(o.out)),
    Case("team-md-link-and-image-in-names-escaped", REPORT, 0,
         {"team": team_yaml(name="![x](https://tracker.example/p.png)", team="[a](http://x)")},
         says="!\\[x\\](https\\://tracker.example/p.png)"),
    Case("team-html-and-svg-with-mathtext-and-emoji-names", (*REPORT, "--out", "{tmp}/r.html"),
         0, {"team": team_yaml(name="$\\frac{1}{0}$ <b>\U0001f680", team="$x$")},
         check=file_contains("r.html", "&lt;b&gt;", absent=("<b>",))),
    Case("team-csv-formula-cells-neutralised", (*REPORT, "--format", "csv"), 0,
         {"team": team_yaml(name="=HYPERLINK(\"http://x.example/\"&A1)", team="@SUM(A1)")},
         says="'=HYPERLINK"),
    Case("team-csv-file-formula-cells-neutralised",
         (*REPORT, "--out", "{tmp}/budget.csv"), 0,
         {"team": team_yaml(name="+cmd|' /C calc'!A0", team="-2+3")},
         check=file_contains("budget.csv", "'+cmd|", ",'-2+3,",
                             absent=(",+cmd", ",-2+3,"))),
]

# ---- actuals ------------------------------------------------------------------------------------

ACTUALS = (*REPORT, "--actuals", "{actuals}")


def actuals(case_id: str, text: str | bytes, expect: int = 2, says: str = "") -> Case:
    return Case(f"actuals-{case_id}", ACTUALS, expect, {"team": GOOD_TEAM, "actuals": text},
                says)


ACTUALS_CASES = [
    Case("actuals-missing-file", (*REPORT, "--actuals", "{tmp}/nope.csv"), 2,
         {"team": GOOD_TEAM}, "no such file"),
    Case("actuals-empty-path", (*REPORT, "--actuals", ""), 2, {"team": GOOD_TEAM}, "empty"),
    Case("actuals-dev-zero", (*REPORT, "--actuals", "/dev/zero"), 2, {"team": GOOD_TEAM},
         "is a device"),
    Case("actuals-directory", ACTUALS, 2, {"team": GOOD_TEAM, "actuals": Directory()},
         "is a directory"),
    Case("actuals-fifo", ACTUALS, 2, {"team": GOOD_TEAM, "actuals": Fifo()}, "named pipe"),
    actuals("latin-1", "job,gpu_hours,cost_usd,note\na,1,2,caf\xe9\n".encode("latin-1"),
            says="not UTF-8"),
    actuals("empty-file", "", says="missing column(s)"),
    actuals("utf-16-without-bom", "job,gpu_hours,cost_usd\na,1,2\n".encode("utf-16-le"),
            says="is UTF-16 text, not UTF-8. To fix: save the file as UTF-8"),
    # a binary file's scattered NULs are not UTF-16 (a PNG was called "UTF-16 text")
    actuals("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00"
            b"\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" * 3, says="is not UTF-8 text (byte 0x89"),
    actuals("missing-columns", "job,hours\na,1\n", says="missing column(s)"),
    actuals("unknown-job", "job,gpu_hours,cost_usd\nb,1,2\n", says="unknown job 'b'"),
    actuals("misspelt-job", "job,gpu_hours,cost_usd\naa,1,2\n", says="Did you mean 'a'?"),
    actuals("nan", "job,gpu_hours,cost_usd\na,nan,2\n", says="gpu_hours 'nan' is not a number"),
    actuals("inf", "job,gpu_hours,cost_usd\na,1,inf\n", says="cost_usd 'inf' is not a number"),
    # float() took these: a typo read as 20.5, other scripts' digits, stray dollar signs
    actuals("underscore", "job,gpu_hours,cost_usd\na,1,2_0.5\n", says="'2_0.5' is not a number"),
    actuals("arabic-indic-digits", "job,gpu_hours,cost_usd\na,\u0661\u0662\u0663,2\n",
            says="is not a number"),
    actuals("full-width-digits", "job,gpu_hours,cost_usd\na,\uff11\uff10,2\n",
            says="is not a number"),
    actuals("dollar-at-the-end", "job,gpu_hours,cost_usd\na,1,10$\n", says="'10$' is not a number"),
    actuals("two-dollars", "job,gpu_hours,cost_usd\na,1,$$20\n", says="'$$20' is not a number"),
    actuals("exponent-and-point-are-fine", "job,gpu_hours,cost_usd\na,1.5e3,.5\n", 0),
    actuals("negative", "job,gpu_hours,cost_usd\na,-5,2\n", says="must be a number from 0"),
    actuals("1e400", "job,gpu_hours,cost_usd\na,1e400,2\n", says="must be a number from 0"),
    actuals("400-digits", "job,gpu_hours,cost_usd\na,1," + "9" * 400 + "\n",
            says="is not a number"),
    actuals("words", "job,gpu_hours,cost_usd\na,ten,2\n", says="'ten' is not a number"),
    actuals("missing-cell", "job,gpu_hours,cost_usd\na,1\n",
            says="row 2 has 2 cells, the header has 3 columns"),
    actuals("too-much-money", "job,gpu_hours,cost_usd\na,1,1e13\n", says="from 0 to"),
    actuals("nul-byte", "job,gpu_hours,cost_usd\na,1\x00,2\n", says="is not a number"),
    actuals("huge-field", "job,gpu_hours,cost_usd\na,1,2,\"" + "x" * 200_000 + "\"\n",
            says="line 2: not valid CSV"),  # the line being read (it said line 1, the header)
    actuals("header-only", "job,gpu_hours,cost_usd\n", 0),
    actuals("bom-and-dollars", "\ufeffjob,gpu_hours,cost_usd\na,\"1,000\",\"$2,500.50\"\n", 0,
            says="Estimate vs actual"),
    actuals("formula-note-is-ignored", "job,gpu_hours,cost_usd,note\na,1,2,=cmd()\n", 0),
]

# ---- quota files (`plan --quota-file`) ----------------------------------------------------------

PLAN = ("plan", "--model", "gpt2", "--tokens", "2B", "--deadline", "14d", "--gpu", "H100",
        "--clouds", "aws", "--max-gpus", "16")
QUOTA = (*PLAN, "--quota-file", "{quotas}")


def quota(case_id: str, text: str | bytes, expect: int = 2, says: str = "") -> Case:
    return Case(f"quota-{case_id}", QUOTA, expect, {"quotas": text}, says)


def rules(*entries: dict) -> str:
    return yaml.safe_dump({"quotas": list(entries)})


QUOTA_CASES = [
    Case("quota-missing-file", (*PLAN, "--quota-file", "{tmp}/nope.yaml"), 2,
         says="no such file"),
    Case("quota-empty-path", (*PLAN, "--quota-file", ""), 2, says="empty"),
    Case("quota-dev-zero", (*PLAN, "--quota-file", "/dev/zero"), 2, says="is a device"),
    Case("quota-directory", QUOTA, 2, {"quotas": Directory()}, "is a directory"),
    Case("quota-fifo", QUOTA, 2, {"quotas": Fifo()}, "named pipe"),
    quota("latin-1", "quotas:\n  - {cloud: aws, gpus: 8}  # \xe9\n".encode("latin-1"),
          says="not UTF-8"),
    quota("over-a-mebibyte", b"#" * (2**20 + 1), says="more than the 1 MiB"),
    quota("empty-file", "", says="expected a top-level 'quotas:' list"),
    quota("a-list-at-top", "- {gpus: 1}\n", says="expected a top-level 'quotas:' list"),
    # limits nothing while the plan's JSON said quotas applied, as an empty overrides file
    quota("no-rules", "quotas: []\n", says="'quotas' lists no rule, so the file limits nothing"),
    quota("no-rules-null", "quotas:\n", says="'quotas' lists no rule"),
    quota("unknown-top-field", "quotas: []\nquota: []\n", says="Did you mean 'quotas'?"),
    quota("misspelt-top-field-alone", "quota:\n  - {cloud: aws, gpus: 8}\n",
          says="unknown top-level field 'quota'. Did you mean 'quotas'?"),
    quota("quotas-a-mapping", "quotas: {cloud: aws}\n", says="must be a list"),
    quota("rule-a-string", "quotas: [aws]\n", says="expected a mapping"),
    quota("unknown-field", rules({"cloud": "aws", "gpu": 8}), says="Did you mean 'gpus'?"),
    quota("unknown-cloud", rules({"cloud": "awz", "gpus": 8}), says="Did you mean 'aws'?"),
    quota("cloud-a-number", rules({"cloud": 3, "gpus": 8}), says="expected a name"),
    quota("region-read-as-a-number", "quotas:\n  - {cloud: aws, region: 1e3, gpus: 8}\n",
          says="YAML read it as a number: write the name in quotes"),
    quota("unknown-region", rules({"cloud": "aws", "region": "us-east-9", "gpus": 8}),
          says="unknown aws region 'us-east-9'"),
    quota("gcp-region-under-aws", rules({"cloud": "aws", "region": "us-central1", "gpus": 8}),
          says="unknown aws region 'us-central1'"),
    quota("unknown-accelerator", rules({"accelerator": "H1OO", "gpus": 8}),
          says="unknown GPU 'H1OO'"),
    quota("accelerator-not-in-region",
          rules({"cloud": "aws", "region": "ap-south-1", "accelerator": "TPU-v5e",
                 "gpus": 8}), says="quotas[1]"),
    quota("gpus-negative", rules({"cloud": "aws", "gpus": -1}), says="gpus must be"),
    quota("gpus-nan", "quotas: [{cloud: aws, gpus: .nan}]\n", says="gpus must be"),
    quota("gpus-huge", rules({"cloud": "aws", "gpus": 10**12}), says="0 to 1,000,000"),
    quota("gpus-text", rules({"cloud": "aws", "gpus": "8"}), says="gpus must be"),
    quota("gpus-true", rules({"cloud": "aws", "gpus": True}), says="gpus must be"),
    quota("gpus-missing", rules({"cloud": "aws"}), says="gpus must be"),
    quota("month-13", rules({"cloud": "aws", "gpus": 8, "month": "2027-13"}),
          says="is not a month"),
    quota("billion-laughs", BILLION_LAUGHS.replace("jobs:", "quotas:"),
          says="through aliases"),
    quota("deep-nesting", "quotas: " + "[" * 100 + "]" * 100 + "\n", says="nesting deeper"),
    quota("duplicate-key", "quotas: []\nquotas: []\n", says="duplicate key"),
    quota("good", rules({"cloud": "aws", "region": "us-east-1", "accelerator": "H100",
                         "gpus": 8}), 0),
    quota("good-alias", rules({"cloud": "aws", "accelerator": "h100", "gpus": 16}), 0),
    # a month-scoped rule is a team plan's (jobs have start dates): refused, never ignored
    quota("month-in-a-plan", rules({"cloud": "aws", "accelerator": "h100", "gpus": 16},
                                   {"cloud": "aws", "gpus": 8, "month": "2027-03"}),
          says="quotas[2]: month '2027-03' scopes a rule"),
]

# ---- report outputs -----------------------------------------------------------------------------

OUT = (*REPORT, "--out")


def out(case_id: str, target: str, expect: int = 2, says: str = "", files=None,
        **kw) -> Case:
    return Case(f"out-{case_id}", (*OUT, target), expect, {"team": GOOD_TEAM, **(files or {})},
                says, **kw)


OUT_CASES = [
    out("empty", "", says="--out is empty"),
    out("directory", "{tmp}", says="is a directory"),
    out("dev-null", "/dev/null", says="is a device", check=still_char_device("/dev/null")),
    out("symlink-to-dev-null", "{link}", says="is a device", files={"link": Symlink("/dev/null")},
        check=still_char_device("/dev/null")),
    out("fifo", "{fifo}", says="named pipe", files={"fifo": Fifo()}, check=still_fifo("fifo")),
    out("missing-directory", "{tmp}/no/such/dir/r.md", says="does not exist"),
    out("parent-is-a-file", "{blocker}/r.md", says="not a directory",
        files={"blocker": "x"}),
    out("sysfs", "/sys/gpuplan-report.md", says="/sys"),
    out("procfs", "/proc/gpuplan-report.md", says="/proc"),
    out("nul-in-name", "{tmp}/r\x00.md", says="NUL"),
    out("name-too-long", "{tmp}/" + "r" * 300 + ".md", says="file name too long"),
    out("replaces-a-report", "{old}", 0, files={"old": "# GPU budget: old\n"},
        check=file_contains("old", "# GPU budget: hostile")),
    out("keeps-another-file", "{old}", 2, "is not a report gpuplan wrote",
        files={"old": "my notes\n"}, check=file_contains("old", "my notes")),
    out("through-a-symlink", "{link}", 0, files={"real.md": "# GPU budget: old\n", "link":
                                                 Symlink("{tmp}/real.md")},
        check=file_contains("real.md", "# GPU budget")),
    out("rich-markup-in-name", "{tmp}/[bold]r[red].md", 0),
    out("html-suffix", "{tmp}/r.html", 0, check=file_contains("r.html", "<!DOCTYPE html>")),
    Case("out-format-empty", (*REPORT, "--format", ""), 2, {"team": GOOD_TEAM},
         "--format is empty"),
    Case("out-format-unknown", (*REPORT, "--format", "docx"), 2, {"team": GOOD_TEAM},
         "--format 'docx' is not one of"),
    Case("out-pdf-to-stdout", (*REPORT, "--format", "pdf"), 2, {"team": GOOD_TEAM},
         "a PDF report needs --out FILE"),
    Case("out-workers-zero", ("report", "{team}", "--workers", "0"), 2, {"team": GOOD_TEAM},
         "--workers must be from 1"),
    Case("out-workers-a-million", ("report", "{team}", "--workers", "1000000"), 2,
         {"team": GOOD_TEAM}, "--workers must be from 1 to 64"),
    Case("out-workers-text", ("report", "{team}", "--workers", "many"), 2, {"team": GOOD_TEAM}),
    Case("out-overrides-empty", (*REPORT, "--overrides", ""), 2, {"team": GOOD_TEAM},
         "--overrides is empty"),
]

# ---- quantities people type: --tokens, --params, --global-batch-tokens, --deadline --------------

TOKENS = ("estimate", "--model", "gpt2", "--gpu", "H100", "--gpus", "8")


def _label(value: str) -> str:
    """A readable case id for a value (a 400-digit value is named by its length)."""
    return repr(value) if len(value) <= 24 else f"{value[:4]!r}…({len(value)} chars)"


def tokens(value: str, expect: int = 2, says: str = "", xfail: str = "") -> Case:
    return Case(f"tokens-{_label(value)}", (*TOKENS, f"--tokens={value}"), expect, says=says,
                xfail=xfail)


def count(option: str, value: str, expect: int = 2, says: str = "") -> Case:
    args = ("estimate", "--gpu", "H100", "--gpus", "8", "--tokens", "2B")
    if option != "--params":
        args = (*args, "--model", "gpt2")
    return Case(f"count-{option.lstrip('-')}-{_label(value)}", (*args, f"{option}={value}"),
                expect, says=says)


DEADLINE = ("plan", "--model", "gpt2", "--tokens", "2B", "--gpu", "H100", "--clouds", "aws",
            "--max-gpus", "8")


def deadline(value: str, expect: int = 2, says: str = "") -> Case:
    return Case(f"deadline-{_label(value)}", (*DEADLINE, f"--deadline={value}"), expect, says=says)


VALUE_CASES = [
    tokens("", says="--tokens is empty"),
    tokens(" ", says="--tokens is empty"),
    tokens("nan", says="not a finite number"),
    tokens("NaN", says="not a finite number"),
    tokens("inf", says="not a finite number"),
    tokens("-Infinity", says="not a finite number"),
    tokens("-1", says="must be positive"),
    tokens("0", says="must be positive"),
    tokens("0.5", says="must be at least 1"),
    tokens("1e400", says="at most 1e15 tokens"),
    tokens("1e16", says="at most 1e15 tokens"),
    tokens("2000P", says="at most 1e15 tokens"),
    tokens("9" * 400, says="is not a count"),
    tokens("10^400", says="is not a count"),
    tokens("10**12", says="is not a count"),
    tokens("1e-400", says="must be positive"),
    tokens("2X", says="is not a count"),
    tokens("T", says="is not a count"),
    tokens("1,000", says="is not a count"),
    tokens("\u0663", says="is not a count"),  # an Arabic-Indic digit three
    tokens("2T", 0),
    tokens(" 15t ", 0),
    tokens("1P", 0),
    count("--params", "nan", says="--params 'nan' is not a finite number"),
    count("--params", "1e15", says="at most 1e14 parameters"),
    count("--params", "-7B", says="must be positive"),
    count("--params", "7B", 0),
    count("--global-batch-tokens", "1e10", says="at most 1e9 tokens per step"),
    count("--global-batch-tokens", "inf", says="not a finite number"),
    count("--global-batch-tokens", "4M", 0),
    deadline("", says="--deadline is empty"),
    deadline("nan", says="not a finite duration"),
    deadline("inf", says="not a finite duration"),
    deadline("-5d", says="must be in the future"),
    deadline("0h", says="must be in the future"),
    deadline("0.5h", says="less than an hour away"),
    deadline("1e400d", says="more than 10 years away"),  # an exponent, as `tokens` takes
    deadline("1e", says="not a duration or a date"),
    deadline("99999d", says="more than 10 years away"),
    deadline("9" * 400 + "h", says="not a duration or a date"),
    deadline("9999-12-31", says="more than 10 years away"),
    deadline("2027-02-30", says="not a duration or a date (day is out of range for month)"),
    deadline("1900-01-01", says="in the past"),
    deadline("soon", says="not a duration or a date"),
    deadline("\uff11\uff14d", says="not a duration or a date"),  # full-width "14"
    deadline("14d", 0),
    deadline("2 weeks", 0),
]

CASES = [*TEAM_CASES, *ACTUALS_CASES, *QUOTA_CASES, *OUT_CASES, *VALUE_CASES]

# ---- the kernel's own files: refused by place, for reading and writing, root or not ---------
# (catalog._files.system_location). Every case here is safe even if the refusal regressed: the
# reads are read-only, and /proc and /sys let no one, root included, create a file.

SYS_SETTING = "/sys/kernel/mm/transparent_hugepage/enabled"  # a regular file root may write

SYSTEM_CASES = [
    Case("team-proc-self-status", ("report", "/proc/self/status"), 2, says="is under /proc"),
    Case("team-symlink-into-proc", REPORT, 2, {"team": Symlink("/proc/self/status")},
         "is under /proc"),
    Case("config-proc-self-environ", (*ESTIMATE, "--config", "/proc/self/environ"), 2,
         says="is under /proc"),
    Case("quota-proc-self-mounts", (*PLAN, "--quota-file", "/proc/self/mounts"), 2,
         says="is under /proc"),
    Case("actuals-sys-kernel-setting", (*REPORT, "--actuals", SYS_SETTING), 2,
         {"team": GOOD_TEAM}, "is under /sys"),
    out("sys-kernel-setting", SYS_SETTING, says="is under /sys"),
    out("symlink-to-sys-kernel-setting", "{link}", says="is under /sys",
        files={"link": Symlink(SYS_SETTING)}),
    out("symlink-into-proc", "{link}/r.md", says="is under /proc",
        files={"link": Symlink("/proc/self")}),
    out("proc-sys-vm", "/proc/sys/vm/gpuplan-report.md", says="is under /proc"),
]

CASES += SYSTEM_CASES
