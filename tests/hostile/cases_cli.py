"""Hostile inputs for the commands that are not the model's: `offers`, `gpus`, `catalog
info|use|refresh`, `probe run|ingest|show`, `launch probes`, `app`, and the command line
itself (unknown options, values that are not numbers, conflicting flags).

Each case runs the real CLI in process (``_runner``): exit 0 or 2, never a traceback, never
NaN/inf in a result, one "error: … To fix: …" line for each exit 2. Case ids start with the
surface (offers-, gpus-, info-, use-, refresh-, run-, ingest-, show-, launch-, app-, cli-).
Nothing here starts a server, runs the probes or touches the network: `app`, `probe run` and
`catalog refresh` cases are all refused by argument validation before any of that, and the
good cases beside the bad ones pin that the limits do not refuse real input.
"""

from __future__ import annotations

import json

import pytest

from ._runner import (
    Case,
    Directory,
    Fifo,
    Symlink,
    file_contains,
    still_char_device,
    still_fifo,
)


def _label(value: str) -> str:
    """A readable case id for a value (a 5000-character value is named by its length)."""
    return repr(value) if len(value) <= 24 else f"{value[:4]!r}…({len(value)} chars)"


# ---- offers: numbers ------------------------------------------------------------------------

def offers(case_id: str, *args: str, expect: int = 2, says: str = "", **kw) -> Case:
    return Case(f"offers-{case_id}", ("offers", *args), expect, says=says, **kw)


def max_price(value: str, expect: int = 2, says: str = "--max-price must be a number above 0"
              ) -> Case:
    return offers(f"max-price-{_label(value)}", "--gpu", "H100", "--limit", "3",
                  f"--max-price={value}", expect=expect, says=says)


def min_gpus(value: str, expect: int = 2, says: str = "--min-gpus") -> Case:
    return offers(f"min-gpus-{_label(value)}", "--limit", "3", f"--min-gpus={value}",
                  expect=expect, says=says)


def limit(value: str, expect: int = 2, says: str = "--limit") -> Case:
    return offers(f"limit-{_label(value)}", "--gpu", "H100", "--cloud", "azure",
                  f"--limit={value}", expect=expect, says=says)


OFFERS_NUMBER_CASES = [
    # read by parse_usd (as people type money: $40, 1,000, 2k): what is no amount is its error
    *[max_price(v, says="--max-price " + repr(v) + " is not a finite amount")
      for v in ("nan", "NaN", "-nan", "inf", "-inf", "Infinity")],
    max_price("1e400", says="--max-price '1e400' is too large"),
    max_price("-5", says="--max-price must not be negative, got -5"),
    max_price("0"), max_price("-0"), max_price("1e-400"),
    max_price("1e308", says="at most 100,000 USD per instance-hour"),
    max_price("100000.01", says="at most 100,000"),
    max_price("9" * 400, says="too long for an amount"),
    max_price("", says="--max-price"), max_price("abc", says="--max-price"),
    max_price("0x10", says="--max-price"), max_price("$40", 0, says="offers"),
    max_price("40", 0, says="offers"), max_price("100000", 0, says="offers"),
    max_price(" 40 ", 0, says="offers"),
    min_gpus("0", says="from 1 to 65,536"), min_gpus("-1"), min_gpus("65537", says="to 65,536"),
    min_gpus("1" + "0" * 30, says="to 65,536"), min_gpus("9" * 400),
    min_gpus("8.5"), min_gpus("nan"), min_gpus(""), min_gpus("8", 0, says="offers"),
    limit("-1", says="from 0 (all) to 100,000"), limit("100001", says="to 100,000"),
    limit("1" + "0" * 30, says="to 100,000"), limit("x"), limit("1.5"), limit("nan"),
    limit("0", 0, says="Standard_ND96isr_H100_v5"), limit("1", 0, says="the first 1"),
]

# ---- offers: names and flags ----------------------------------------------------------------

OFFERS_NAME_CASES = [
    offers("region-of-another-cloud", "--cloud", "gcp", "--region", "us-east-1",
           says="region 'us-east-1' is aws's, not in --cloud gcp. To fix: add aws to --cloud"),
    offers("region-in-one-of-the-clouds", "--cloud", "gcp,aws", "--region", "us-east-1",
           "--limit", "2", expect=0, says="us-east-1"),
    offers("gpu-empty", "--gpu", "", says="--gpu is empty"),
    offers("gpu-only-commas", "--gpu", ",,", says="--gpu is empty"),
    offers("gpu-blank", "--gpu", "   ", says="--gpu is empty"),
    offers("gpu-misspelt", "--gpu", "H10O", says="Did you mean 'H100'"),
    offers("gpu-escape-sequence", "--gpu", "\x1b[31mH100", says="unknown GPU"),
    offers("gpu-path", "--gpu", "../../etc/passwd", says="unknown GPU"),
    offers("gpu-10k-chars", "--gpu", "H" * 10_000, says="unknown GPU"),
    offers("gpu-alias-list", "--gpu", "h100,a100-80gb", "--cloud", "gcp", "--limit", "3",
           expect=0, says="offers"),
    offers("cloud-empty", "--cloud", "", says="--cloud is empty"),
    offers("cloud-unknown", "--cloud", "oracle", says="unknown cloud 'oracle'"),
    offers("cloud-misspelt", "--cloud", "azrue", says="Did you mean 'azure'"),
    offers("cloud-upper-case", "--cloud", "AWS", "--limit", "2", expect=0, says="aws"),
    offers("region-empty", "--region", "", says="--region is empty"),
    offers("region-misspelt", "--region", "us-easst-1", says="Did you mean 'us-east-1'"),
    offers("region-newline", "--region", "us-east-1\nus-east-2", says="unknown region"),
    offers("pricing-empty", "--pricing", "", says="--pricing is empty"),
    offers("pricing-dash", "--pricing", "on-demand", expect=0),  # as people write it
    offers("pricing-misspelt", "--pricing", "ondemand", says="Did you mean 'on_demand'"),
    offers("instance-empty", "--instance", "", says="--instance is empty"),
    offers("instance-misspelt", "--instance", "p5.48xlarg", says="Did you mean 'p5.48xlarge'"),
    offers("sort-empty", "--sort", "", says="unknown sort"),
    offers("sort-unknown", "--sort", "cheap", says="unknown sort 'cheap'"),
    offers("json-and-csv", "--json", "--csv", says="--json and --csv are exclusive"),
    offers("csv-and-json", "--gpu", "H100", "--csv", "--json",
           says="--json and --csv are exclusive"),
    offers("flagged-and-usable", "--flagged", "--usable",
           says="--flagged and --usable are exclusive"),
    offers("unknown-option", "--limt", "3", says="No such option: --limt"),
    offers("extra-argument", "H100", says="unexpected extra argument"),
    offers("azure-h100-in-full", "--gpu", "H100", "--min-gpus", "8", "--cloud", "azure",
           expect=0, says="Standard_ND96isr_H100_v5"),
    offers("wide", "--gpu", "H100", "--cloud", "azure", "--wide", expect=0, says="$/PFLOP-h"),
    offers("json-ignores-wide", "--gpu", "A10", "--json", "--wide", expect=0, says='"A10"',
           check=lambda o: json.loads(o.out)),
    offers("csv", "--instance", "p5.48xlarge", "--pricing", "on_demand", "--csv", expect=0,
           says="p5.48xlarge"),
    offers("flagged-reasons", "--cloud", "gcp", "--instance", "a3-highgpu-8g", "--flagged",
           "--limit", "2", expect=0, says="price_outlier"),
]

# ---- price overrides (offers, gpus, catalog info) ---------------------------------------------

def overrides(case_id: str, text: str | bytes | None, expect: int = 2, says: str = "",
              command: tuple[str, ...] = ("offers", "--instance", "p5.48xlarge", "--limit", "2"),
              path: str = "{o}", files=None) -> Case:
    spec = dict(files or {})
    if text is not None:
        spec["o"] = text
    return Case(f"offers-overrides-{case_id}", (*command, "--overrides", path), expect, spec,
                says)


OVERRIDE_CASES = [
    overrides("two-prices-for-one-offer",
              "prices:\n" + "".join(f"  - {{cloud: aws, instance_type: p5.48xlarge, region: "
                                    f"us-east-1, pricing: on_demand, usd_per_hour: {p}}}\n"
                                    for p in (5, 6)),
              says="prices[2]: the same offer as prices[1]"),
    overrides("two-discounts-one-scope",
              "discounts:\n  - {cloud: aws, percent: 5}\n  - {cloud: aws, percent: 50}\n",
              says="discounts[2]: the same scope as discounts[1]"),
    # YAML 1.1 read 1e1 as text; the CLI takes 2e12 for --tokens
    overrides("exponent-number", "discounts:\n  - {cloud: aws, percent: 1e1}\n", 0,
              says="-10% (overrides", command=("offers", "--instance", "p5.48xlarge",
                                                "--pricing", "on_demand", "--limit", "1",
                                                "--json")),
    overrides("a-list-at-top", "- {cloud: aws, percent: 5}\n",
              says="expected a mapping with the keys 'discounts' and/or 'prices', found a list"),
    overrides("empty-path", None, path="", says="--overrides is empty"),
    overrides("missing", None, path="{tmp}/nope.yaml", says="no such file"),
    overrides("directory", Directory(), says="is a directory"),
    overrides("dev-zero", None, path="/dev/zero", says="is a device"),
    overrides("fifo", Fifo(), says="named pipe"),
    overrides("latin-1", "discounts: [{cloud: aws, percent: 5}]  # \xe9\n".encode("latin-1"),
              says="not UTF-8"),
    overrides("percent-100", "discounts: [{cloud: aws, percent: 100}]\n",
              says="would make prices $0"),
    overrides("percent-nan", "discounts: [{cloud: aws, percent: .nan}]\n", says="percent"),
    overrides("family-empty", "discounts: [{family: '', percent: 50}]\n",
              says="family must be non-empty"),
    overrides("instance-misspelt", "discounts: [{instance_type: p5.48xlarg, percent: 5}]\n",
              says="Did you mean 'p5.48xlarge'"),
    overrides("price-inf", "prices: [{cloud: aws, instance_type: p5.48xlarge, region: "
              "us-east-1, pricing: on_demand, usd_per_hour: .inf}]\n", says="usd_per_hour"),
    overrides("price-negative", "prices: [{cloud: aws, instance_type: p5.48xlarge, region: "
              "us-east-1, pricing: on_demand, usd_per_hour: -5}]\n", says="usd_per_hour"),
    overrides("billion-laughs", "\n".join(
        ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        + [f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]"
           for p, n in zip("abcdefgh", "bcdefghi", strict=True)]
        + ["discounts: *i"]) + "\n", says="aliases"),
    overrides("gpus-empty-path", None, path="", command=("gpus",), says="--overrides is empty"),
    overrides("gpus-dev-zero", None, path="/dev/zero", command=("gpus",), says="is a device"),
    overrides("info-empty-path", None, path="", command=("catalog", "info"),
              says="--overrides is empty"),
    overrides("info-directory", Directory(), command=("catalog", "info"), says="is a directory"),
    overrides("good-discount", "discounts: [{instance_type: p5.48xlarge, percent: 50}]\n",
              expect=0, says="overridden",  # on-demand: a discount is off list prices, and
              # the two cheapest p5 offers are spot since the 2026-12-06 snapshot
              command=("offers", "--instance", "p5.48xlarge", "--pricing", "on_demand",
                       "--limit", "2")),
]

# ---- gpus, catalog info, catalog use ---------------------------------------------------------

CATALOG_CASES = [
    Case("gpus-table", ("gpus",), 0, says="H100-SXM5-80GB"),
    # `gpus --json` is not here: the runner's NaN/inf check reads "AMD Infinity Fabric" (the
    # MI300X's link) as an infinity. tests/cli/test_readability.py checks that JSON instead.
    Case("gpus-all", ("gpus", "--all"), 0, says="TPU"),
    Case("gpus-wide", ("gpus", "--wide"), 0, says="link GB/s"),
    Case("gpus-extra-argument", ("gpus", "H100"), 2, says="unexpected extra argument"),
    Case("gpus-json-value", ("gpus", "--json=yes"), 2, says="--json"),
    Case("info-table", ("catalog", "info"), 0, says="Active catalog: packaged"),
    Case("info-json", ("catalog", "info", "--json"), 0, says='"clouds"',
         check=lambda o: json.loads(o.out)),
    Case("info-unknown-option", ("catalog", "info", "--verbose"), 2, says="No such option"),
    Case("use-empty", ("catalog", "use", ""), 2, says="catalog name is empty"),
    Case("use-blank", ("catalog", "use", "  "), 2, says="catalog name is empty"),
    Case("use-unknown", ("catalog", "use", "nightly"), 2, says="unknown catalog 'nightly'"),
    Case("use-parent-path", ("catalog", "use", "../../etc"), 2, says="not a catalog name"),
    Case("use-absolute-path", ("catalog", "use", "/etc/passwd"), 2, says="not a catalog name"),
    Case("use-5000-chars", ("catalog", "use", "a" * 5000), 2, says="at most 100 characters"),
    Case("use-nul", ("catalog", "use", "pack\x00aged"), 2, says="not a catalog name"),
    Case("use-escape-sequence", ("catalog", "use", "\x1b]0;pwned\x07"), 2,
         says="not a catalog name"),
    Case("use-no-refreshed", ("catalog", "use", "refreshed"), 2, says="no refreshed catalog"),
    Case("use-no-previous", ("catalog", "use", "previous"), 2, says="previous"),
    Case("use-missing-name", ("catalog", "use"), 2, says="Missing argument"),
    Case("use-packaged", ("catalog", "use", "packaged"), 0, says="active catalog: packaged"),
]

# ---- catalog refresh: refused before any network --------------------------------------------

REFRESH_CASES = [
    Case("refresh-cloud-unknown", ("catalog", "refresh", "--cloud", "oracle"), 2,
         says="unknown cloud 'oracle'"),
    Case("refresh-cloud-misspelt", ("catalog", "refresh", "--cloud", "gpc"), 2,
         says="Did you mean 'gcp'"),
    Case("refresh-cloud-empty", ("catalog", "refresh", "--cloud", ""), 2,
         says="--cloud is empty"),
    Case("refresh-cloud-only-comma", ("catalog", "refresh", "--cloud", ","), 2,
         says="--cloud is empty"),
    Case("refresh-region-empty", ("catalog", "refresh", "--cloud", "aws", "--region", ""), 2,
         says="--region is empty"),
    Case("refresh-region-spaces", ("catalog", "refresh", "--cloud", "aws", "--region",
                                   "US EAST 1"), 2, says="is not a region name"),
    Case("refresh-region-path", ("catalog", "refresh", "--cloud", "aws", "--region",
                                 "../etc"), 2, says="is not a region name"),
    Case("refresh-region-300-chars", ("catalog", "refresh", "--cloud", "aws", "--region",
                                      "a" * 300), 2, says="is not a region name"),
    Case("refresh-region-escape", ("catalog", "refresh", "--cloud", "aws", "--region",
                                   "us-east-1\x1b[2J"), 2, says="is not a region name"),
    Case("refresh-unknown-option", ("catalog", "refresh", "--all"), 2, says="No such option"),
]

# ---- probe run: refused before torch runs anything ------------------------------------------

RUN = ("probe", "run")


def run(case_id: str, *args: str, says: str = "", **kw) -> Case:
    return Case(f"run-{case_id}", (*RUN, *args), 2, says=says, **kw)


PROBE_RUN_CASES = [
    run("timeout-nan", "--timeout-s", "nan", says="--timeout-s must be a number from 1 to "
        "86,400"),
    run("timeout-inf", "--timeout-s", "inf", says="from 1 to 86,400"),
    run("timeout-negative", "--timeout-s", "-5", says="from 1 to 86,400"),
    run("timeout-zero", "--timeout-s", "0", says="from 1 to 86,400"),
    run("timeout-huge", "--timeout-s", "1e9", says="from 1 to 86,400"),
    run("timeout-words", "--timeout-s", "soon", says="--timeout-s"),
    run("timeout-missing-value", "--timeout-s", says="--timeout-s"),
    run("sizes-zero", "--sizes", "0", says="bad size"),
    run("sizes-negative", "--sizes", "-1K", says="--sizes"),
    run("sizes-terabyte-unit", "--sizes", "1T", says="bad size"),
    run("sizes-huge", "--sizes", "99999999G", says="at most 16 GiB"),
    run("sizes-400-digits", "--sizes", "9" * 400, says="at most 16 GiB"),
    run("sizes-empty", "--sizes", "", says="--sizes is empty"),
    run("sizes-too-many", "--sizes", ",".join(["1K"] * 100), says="at most 32 sizes"),
    run("shapes-zero", "--shapes", "0x1x1", says="bad shape"),
    run("shapes-two-dims", "--shapes", "4096x4096", says="bad shape"),
    run("shapes-huge", "--shapes", "99999999", says="at most 65,536"),
    run("shapes-too-many", "--shapes", ",".join(["64"] * 100), says="at most 32 shapes"),
    run("dtypes-unknown", "--dtypes", "int3", says="unknown name"),
    run("probes-unknown", "--probes", "nope", says="unknown name"),
    run("device-tpu", "--device", "tpu", says="--device"),
    run("unknown-option", "--bogus", says="--bogus"),
    run("positional", "extra", says="extra"),
    run("out-empty", "--out", "", says="the path is empty"),
    run("out-directory", "--out", "{tmp}", says="is a directory"),
    run("out-dev-null", "--out", "/dev/null", says="is a device",
        check=still_char_device("/dev/null")),
    run("out-fifo", "--out", "{fifo}", files={"fifo": Fifo()}, says="named pipe",
        check=still_fifo("fifo")),
    run("out-missing-directory", "--out", "{tmp}/no/such/r.json", says="does not exist"),
    run("out-proc", "--out", "/proc/gpuplan-probe.json", says="/proc"),
]

# ---- probe ingest ---------------------------------------------------------------------------


def _good_report() -> str:
    from probe_reports import h100_report

    from probes._report_io import report_to_json

    return report_to_json(h100_report())


GOOD_REPORT = _good_report()


def ingest(case_id: str, text, expect: int = 2, says: str = "", *extra: str) -> Case:
    return Case(f"ingest-{case_id}", ("probe", "ingest", "{r}", *extra), expect, {"r": text},
                says)


PROBE_INGEST_CASES = [
    Case("ingest-empty-path", ("probe", "ingest", ""), 2, says="the path is empty"),
    Case("ingest-missing", ("probe", "ingest", "{tmp}/nope.json"), 2, says="no such file"),
    Case("ingest-no-file", ("probe", "ingest"), 2, says="Missing argument"),
    Case("ingest-dev-zero", ("probe", "ingest", "/dev/zero"), 2, says="is a device"),
    Case("ingest-dev-zero-symlink", ("probe", "ingest", "{r}"), 2,
         {"r": Symlink("/dev/zero")}, "is a device"),
    ingest("directory", Directory(), says="is a directory"),
    ingest("fifo", Fifo(), says="named pipe"),
    ingest("empty-file", "", says="(is empty)"),
    ingest("not-json", "report\n", says="invalid JSON"),
    ingest("a-list", "[]", says="expected a JSON object"),
    ingest("latin-1", '{"note": "caf\xe9"}'.encode("latin-1"), says="not UTF-8"),
    ingest("nan", GOOD_REPORT.replace('"bf16_tflops"', '"x"', 1).replace(
        '"tflops": 650.0', '"tflops": NaN', 1), says="NaN is not a number"),
    ingest("infinity", GOOD_REPORT.replace('"tflops": 650.0', '"tflops": Infinity', 1),
           says="Infinity is not a number"),
    ingest("400-digit-number", GOOD_REPORT.replace('"tflops": 650.0',
                                                   '"tflops": ' + "9" * 400, 1),
           says="400-digit number"),
    ingest("deep-nesting", "[" * 10_000 + "]" * 10_000, says="nesting deeper"),
    ingest("over-16-mib", b" " * (16 * 2**20 + 1), says="more than the 16 MiB"),
    ingest("schema-99", json.dumps({**json.loads(GOOD_REPORT), "schema_version": 99}),
           says="schema_version 99 is newer than this gpuplan reads"),
    ingest("schema-as-text", json.dumps({**json.loads(GOOD_REPORT), "schema_version": "3"}),
           says="schema_version must be one of 1, 2, 3, got \"3\""),
    ingest("schema-missing", json.dumps({"created_utc": "2026-01-01"}),
           says="missing field 'schema_version'"),
    ingest("accelerator-unknown", GOOD_REPORT, 2, "unknown GPU 'H1OO'",
           "--accelerator", "H1OO"),
    ingest("accelerator-empty", GOOD_REPORT, 2, "--accelerator is empty", "--accelerator", ""),
    ingest("good", GOOD_REPORT, 0, "report 1"),
    ingest("good-json", GOOD_REPORT, 0, '"ingest_status"', "--json"),
]

# ---- probe show -----------------------------------------------------------------------------

PROBE_SHOW_CASES = [
    Case("show-none", ("probe", "show"), 0, says="no probe reports ingested"),
    Case("show-none-json", ("probe", "show", "--json"), 0, says="[]"),
    Case("show-zero", ("probe", "show", "0"), 2, says="from 1 to 1,000,000,000"),
    Case("show-negative", ("probe", "show", "--", "-1"), 2, says="from 1 to 1,000,000,000"),
    Case("show-huge", ("probe", "show", "1" + "0" * 30), 2, says="from 1 to 1,000,000,000"),
    Case("show-missing", ("probe", "show", "7"), 2, says="no probe report 7"),
    Case("show-words", ("probe", "show", "first"), 2, says="REPORT_ID"),
    Case("show-fraction", ("probe", "show", "1.5"), 2, says="REPORT_ID"),
]

# ---- launch probes --------------------------------------------------------------------------

LAUNCH = ("launch", "probes", "--instance", "p5.48xlarge", "--target", "skypilot")


def launch(case_id: str, *args: str, expect: int = 2, says: str = "", **kw) -> Case:
    return Case(f"launch-{case_id}", (*LAUNCH, *args), expect, says=says, **kw)


def nodes(value: str, says: str = "--nodes") -> Case:
    return launch(f"nodes-{_label(value)}", f"--nodes={value}", says=says)


def out(case_id: str, target: str, expect: int = 2, says: str = "", **kw) -> Case:
    return launch(f"out-{case_id}", "--out", target, expect=expect, says=says, **kw)


LAUNCH_CASES = [
    nodes("0", says="between 1 and 1,024"), nodes("-1", says="between 1 and 1,024"),
    nodes("1025", says="between 1 and 1,024"), nodes("1" + "0" * 26, says="between 1 and 1,024"),
    nodes("9" * 400), nodes("10^26"), nodes("1e3"), nodes("1.5"), nodes("nan"), nodes(""),
    Case("launch-instance-empty", ("launch", "probes", "--instance", "", *LAUNCH[4:]), 2,
         says="--instance is empty"),
    Case("launch-instance-misspelt", ("launch", "probes", "--instance", "p5.48xlarg",
                                      *LAUNCH[4:]), 2,
         says="Did you mean 'p5.48xlarge'"),
    Case("launch-instance-tpu", ("launch", "probes", "--instance", "tpu-v2-32", *LAUNCH[4:]), 2,
         says="do not cover"),
    Case("launch-instance-on-another-cloud", ("launch", "probes", "--instance", "p5.48xlarge",
                                              "--cloud", "gcp", "--target", "skypilot"), 2,
         says="instance type 'p5.48xlarge' is on aws, not gcp. To fix: pass --cloud aws"),
    Case("launch-instance-escape", ("launch", "probes", "--instance", "\x1b]0;x\x07",
                                    *LAUNCH[4:]), 2,
         says="unknown instance"),
    Case("launch-target-empty", (*LAUNCH[:4], "--target", ""), 2, says="unknown launch target"),
    Case("launch-target-slurm", (*LAUNCH[:4], "--target", "slurm"), 2,
         says="unknown launch target 'slurm'"),
    launch("target-twice", "--target", "dstack", says="--target is given 2 times"),
    Case("launch-target-missing", ("launch", "probes", "--instance", "p5.48xlarge"), 2,
         says="Missing option '--target'"),
    launch("region-empty", "--region", "", says="--region is empty"),
    launch("region-unknown", "--region", "us-east-9", says="Did you mean"),
    launch("cloud-unknown", "--cloud", "oracle", says="oracle"),
    launch("cloud-empty", "--cloud", "", says="--cloud is empty"),
    launch("bucket-ftp", "--bucket", "ftp://x", says="bad bucket URI"),
    launch("bucket-empty", "--bucket", "", says="--bucket is empty"),
    launch("bucket-no-name", "--bucket", "s3://", says="bad bucket URI"),
    launch("bucket-shell-in-prefix", "--bucket", "s3://my-bucket/$(reboot)",
           says="bucket prefix"),
    launch("bucket-space-in-prefix", "--bucket", "gs://my-bucket/a b", says="bucket prefix"),
    launch("bucket-newline", "--bucket", "s3://my-bucket/a\nrm -rf /", says="bucket prefix"),
    launch("bucket-quote-in-prefix", "--bucket", "s3://my-bucket/a'b",
           says="may hold only letters, digits and . _ / = + -"),  # one rule, CLI and library
    launch("install-is-named-in-the-task", "--install", "gpuplan==0.1", "--out", "-", expect=0,
           says="installed on every node with pip: gpuplan==0.1"),
    launch("install-empty", "--install", "", says="--install is empty"),
    launch("install-newline", "--install", "gpuplan\nrm -rf ~", says="--install"),
    launch("install-2000-chars", "--install", "x" * 2000, says="at most 500 characters"),
    # quoted safely, but pip fails on the node after the instances are paid for
    launch("install-two-commands", "--install", "gpuplan; rm -rf ~",
           says="is not one pip requirement"),
    launch("install-an-option", "--install", "gpuplan --index-url http://evil",
           says="is not one pip requirement"),
    launch("install-no-url", "--install", "gpuplan @ ", says="is not one pip requirement"),
    launch("install-spaced-version", "--install", "gpuplan >= 0.3", "--out", "-", expect=0),
    launch("install-git-url", "--install", "git+https://example.com/gpuplan.git", "--out", "-",
           expect=0),
    # valid PEP 508 forms the first rule refused (review of the change)
    *[launch(f"install-valid-{i}", "--install", spec, "--out", "-", expect=0)
      for i, spec in enumerate(("gpuplan@ https://example.com/x.whl",
                                'gpuplan; python_version >= "3.10"', "gpuplan (>=0.1)",
                                "gpuplan[probes] >= 1, < 2",
                                "git+ssh://git@example.com/o/g.git"))],
    # another project's name: the nodes had no `python3 -m probes` after they were paid for
    launch("install-another-project", "--install", "pkg[extra] >= 1, < 2",
           says="installs pkg, not gpuplan"),
    # a file here is not copied to the nodes: pip failed there after the instances were paid
    launch("install-local-wheel", "--install", "./local.whl",
           says="a local file is not copied to the nodes"),
    launch("install-a-pipe", "--install", "gpuplan | sh", says="is not one pip requirement"),
    out("empty", "", says="--out is empty"),
    out("directory", "{tmp}", says="is a directory"),
    out("dev-null", "/dev/null", says="is a device", check=still_char_device("/dev/null")),
    out("symlink-to-dev-null", "{link}", says="is a device", files={"link": Symlink(
        "/dev/null")}, check=still_char_device("/dev/null")),
    out("fifo", "{fifo}", says="named pipe", files={"fifo": Fifo()}, check=still_fifo("fifo")),
    out("missing-directory", "{tmp}/no/such/t.yaml", says="does not exist"),
    out("parent-is-a-file", "{blocker}/t.yaml", says="not a directory",
        files={"blocker": "x"}),
    out("proc", "/proc/gpuplan-task.yaml", says="/proc"),
    out("trailing-slash", "{tmp}/t.yaml/", says="ends with '/', which names a directory",
        check=lambda o: not (o.folder / "t.yaml").exists() or pytest.fail("t.yaml written")),
    out("sys", "/sys/gpuplan-task.yaml", says="/sys"),
    out("nul-in-name", "{tmp}/t\x00.yaml", says="NUL"),
    out("name-too-long", "{tmp}/" + "t" * 300 + ".yaml", says="file name too long"),
    out("good", "{tmp}/task.sky.yaml", 0, says="sky launch",
        check=file_contains("task.sky.yaml", "num_nodes: 1")),
    # a file gpuplan did not write is kept (a hand-edited task, an unrelated config)
    out("keeps-a-file-not-its-own", "{old}", says="was not written by gpuplan",
        files={"old": "old task\n"}, check=file_contains("old", "old task")),
    out("stdout", "-", 0, says="# ---- gpuplan-probes.sky.yaml ----"),
    Case("launch-dstack-good", ("launch", "probes", "--instance", "p5.48xlarge", "--target",
                                "dstack", "--nodes", "2", "--out", "{tmp}/t.dstack.yml"), 0,
         says="dstack apply"),
    launch("spot-value", "--spot=yes", says="--spot"),
    Case("launch-no-command", ("launch", "nope"), 2, says="No such command 'nope'"),
]

# ---- app: arguments only (no case starts a server) -------------------------------------------

APP_CASES = [
    Case("app-help", ("app", "--help"), 0, says="Streamlit"),
    Case("app-port-words", ("app", "--server.port", "http"), 2,
         says="--server.port must be a whole number from 1 to 65,535"),
    Case("app-port-zero", ("app", "--server.port", "0"), 2, says="from 1 to 65,535"),
    Case("app-port-huge", ("app", "--server.port", "70000"), 2, says="from 1 to 65,535"),
    Case("app-port-negative", ("app", "--server.port=-1"), 2, says="from 1 to 65,535"),
    Case("app-port-nan", ("app", "--server.port", "nan"), 2, says="from 1 to 65,535"),
    Case("app-port-missing-value", ("app", "--server.port"), 2, says="needs a value"),
    Case("app-port-empty", ("app", "--server.port", ""), 2, says="needs a value"),
    Case("app-upload-200", ("app", "--server.maxUploadSize", "200"), 2,
         says="from 1 to 4"),
    Case("app-upload-nan", ("app", "--server.maxUploadSize=nan"), 2, says="from 1 to 4"),
    Case("app-unknown-option", ("app", "--server.prot", "8502"), 2,
         says="Did you mean 'server.port'"),
    Case("app-option-without-section", ("app", "--port", "8502"), 2,
         says="not a Streamlit option"),
    Case("app-positional", ("app", "other.py"), 2, says="takes Streamlit options only"),
    Case("app-double-dash", ("app", "--", "x"), 2, says="takes Streamlit options only"),
    Case("app-value-newline", ("app", "--theme.base", "dark\nlight"), 2,
         says="one line of printable text"),
    Case("app-value-escape", ("app", "--server.address", "\x1b[2J"), 2,
         says="one line of printable text"),
    Case("app-value-5000-chars", ("app", "--server.baseUrlPath", "a" * 5000), 2,
         says="at most 1,000 characters"),
]

# ---- the command line itself ----------------------------------------------------------------

CLI_CASES = [
    Case("cli-version", ("--version",), 0, says="gpuplan "),
    Case("cli-unknown-command", ("nosuch",), 2, says="No such command 'nosuch'"),
    Case("cli-misspelt-command", ("ofers",), 2, says="No such command 'ofers'"),
    Case("cli-unknown-global-option", ("--verbose", "offers"), 2, says="No such option"),
    Case("cli-help", ("--help",), 0, says="offers"),
    Case("cli-offers-help", ("offers", "--help"), 0, says="--wide"),
    Case("cli-empty-command", ("",), 2, says="No such command"),
    # click kept the last of a repeated single-value option silently
    Case("cli-option-given-twice", ("offers", "--limit", "1", "--limit=2"), 2,
         says="--limit is given 2 times ('1', '2'); it takes one value. To fix: give --limit once"),
    Case("cli-list-option-may-repeat", ("offers", "--gpu", "H100", "--gpu", "A100-80GB", "--limit",
                                        "1"), 0),
    Case("cli-flag-may-repeat", ("estimate", "--model", "gpt2", "--gpu", "H100", "--json",
                                 "--json"), 0),
    Case("cli-subcommand-option-given-twice", ("catalog", "info", "--overrides", "a.yaml",
                                               "--overrides", "b.yaml"), 2,
         says="--overrides is given 2 times"),
    Case("cli-catalog-bad-subcommand", ("catalog", "show"), 2, says="No such command 'show'"),
]

CASES = [*OFFERS_NUMBER_CASES, *OFFERS_NAME_CASES, *OVERRIDE_CASES, *CATALOG_CASES,
         *REFRESH_CASES, *PROBE_RUN_CASES, *PROBE_INGEST_CASES, *PROBE_SHOW_CASES, *LAUNCH_CASES,
         *APP_CASES, *CLI_CASES]
