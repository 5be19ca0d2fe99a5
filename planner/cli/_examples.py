"""The "Examples:" paragraph at the end of every `--help` page (click's epilog).

Each example is a command line that runs as shown, offline, on the packaged catalog, from a
gpuplan checkout (the team file is examples/team.yaml there) — tests/cli/test_help_examples.py
runs every one — except a line whose comment says it does not (``NOT_OFFLINE``). A line ends
with `` \\`` where the command goes on below it: every line fits a help page 60 columns wide.
"""

from __future__ import annotations

# comments that mark an example the tests cannot run here (no GPU, no network, a server that
# runs until stopped, a catalog only a refresh makes); each also tells the reader why
NOT_OFFLINE = ("needs a GPU", "needs the network", "starts a server", "after a refresh")

# command path ("" the root, "catalog info") -> its examples; README's own where it has them
EXAMPLES: dict[str, tuple[str, ...]] = {
    "": (
        "gpuplan plan --model llama3-8b --tokens 1T \\",
        "    --deadline 14d",
        "gpuplan estimate --model llama3-8b --tokens 1T \\",
        "    --gpu H100 --gpus 64",
        "gpuplan offers --gpu h100 --pricing spot --limit 5",
    ),
    "app": (
        "gpuplan app                      # starts a server",
        "gpuplan app --server.port 8502   # starts a server",
    ),
    "gpus": (
        "gpuplan gpus",
        "gpuplan gpus --all --json",
    ),
    "offers": (
        "gpuplan offers --gpu a100-80gb --pricing spot \\",
        "    --min-gpus 8 --sort gpu_price",
        "gpuplan offers --region us-east-1 --max-price 40 --csv",
        "gpuplan offers --flagged",
    ),
    "catalog": (
        "gpuplan catalog info",
        "gpuplan catalog use packaged",
        "gpuplan catalog refresh --cloud aws  # needs the network",
    ),
    "catalog info": (
        "gpuplan catalog info",
        "gpuplan catalog info --json",
    ),
    "catalog use": (
        "gpuplan catalog use packaged",
        "# the catalog before the last refresh:",
        "gpuplan catalog use previous  # after a refresh",
    ),
    "catalog refresh": (
        "# AWS and Azure need no credentials; GCP does:",
        "gpuplan catalog refresh --cloud aws  # needs the network",
        "gpuplan catalog refresh  # needs the network",
    ),
    "launch": (
        "gpuplan launch probes --instance p5.48xlarge --nodes 2 \\",
        "    --region us-east-1 --target skypilot \\",
        "    --out probes.sky.yaml",
    ),
    "launch probes": (
        "gpuplan launch probes --instance p5.48xlarge --nodes 2 \\",
        "    --region us-east-1 --target skypilot \\",
        "    --out probes.sky.yaml",
        "gpuplan launch probes --instance p5.48xlarge \\",
        "    --target dstack --out probes.dstack.yml",
    ),
    "estimate": (
        "gpuplan estimate --model llama3-70b --tokens 15T \\",
        "    --gpu H100 --gpus 2048",
        "gpuplan estimate --params 7B --tokens 300B \\",
        "    --instance p5.48xlarge --nodes 4 --json",
        "gpuplan estimate --model llama3-8b --finetune lora \\",
        "    --tokens 1B --gpu A10G --gpus 8",
    ),
    "plan": (
        "gpuplan plan --model llama3-8b --tokens 1T \\",
        "    --deadline 14d",
        "gpuplan plan --params 13B --tokens 300B --deadline 60d \\",
        "    --budget 250000 --clouds aws,gcp --top 3",
        "gpuplan plan --model llama3-8b --tokens 1T \\",
        "    --deadline 14d --emit skypilot \\",
        "    --emit-out train.sky.yaml",
    ),
    "probe": (
        "gpuplan probe run --out report.json   # needs a GPU",
        "gpuplan probe ingest report.json",
        "gpuplan probe show",
    ),
    "probe run": (
        "gpuplan probe run --out report.json   # needs a GPU",
        "gpuplan probe run --quick --out q.json  # needs a GPU",
    ),
    "probe ingest": (
        "gpuplan probe ingest report.json   # from `probe run`",
        "gpuplan probe ingest report.json \\",
        "    --accelerator H100-SXM5-80GB",
    ),
    "probe show": (
        "gpuplan probe show",
        "gpuplan probe show 1 --json",
    ),
    "probe remove": (
        "gpuplan probe show",
        "gpuplan probe remove 1",
    ),
    "probe workload": (
        "gpuplan probe workload --model llama3-8b --print-command",
        "gpuplan probe workload --model llama3-8b \\",
        "    --out workload-report.json   # needs a GPU",
    ),
    "report": (
        "gpuplan report examples/team.yaml --out budget.html",
        "gpuplan report examples/team.yaml --json",
    ),
}


def epilog(path: str) -> str | None:
    """The examples of the command ``path`` as a help epilog, None where it has none. click
    rewraps an epilog's paragraphs; ``\\b`` keeps this one's lines as they are."""
    lines = EXAMPLES.get(path)
    if not lines:
        return None
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)
