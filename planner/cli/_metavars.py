"""What --help shows after each option: a word that says what to give (``--out FILE``,
``--gpus N``, ``--assume NAME=VALUE``) instead of the Python type Typer 0.29 prints
(``<str>``, ``<list[str]>``) or the parameter's own name in braces (``{team_file}``).

One table for every command, keyed by the parameter's name (the Python one: ``max_gpus``), so
an option that several commands share reads the same everywhere. A parameter missing from it
keeps a word for its kind (``N``, ``NUMBER``, ``TEXT``); ``tests/cli`` checks none does.
"""

from __future__ import annotations

import functools

METAVARS = {
    # counts and sizes: whole numbers
    **dict.fromkeys(("gpus", "min_gpus", "max_gpus", "nodes", "tp", "pp", "cp", "vp", "ep",
                     "micro_batch", "layers", "hidden", "heads", "kv_heads", "ffn_hidden",
                     "vocab", "experts", "experts_per_token", "lora_rank", "seq_len", "top",
                     "limit", "workers", "max_spot_instances"), "N"),
    "zero": "STAGE",
    "report_id": "REPORT_ID",
    "report_ids": "REPORT_ID",
    # amounts with a unit in their help
    "params": "COUNT", "active_params": "COUNT", "tokens": "COUNT",
    "global_batch_tokens": "COUNT",
    "deadline": "WHEN",
    "budget": "USD", "max_price": "USD", "storage_price": "USD",
    "commitment_use": "SHARE", "min_probability": "P",
    # names from the catalog or the model
    "gpu": "NAME", "accelerator": "NAME", "model": "NAME", "name": "NAME",
    "instance": "TYPE", "exclude": "NAME", "cloud": "CLOUD", "clouds": "CLOUD",
    "region": "REGION", "regions": "REGION", "pricing": "KIND",
    # one of the values listed in the help
    "precision": "KIND", "optimizer": "KIND", "recompute": "KIND", "attention": "KIND",
    "finetune": "KIND", "framework": "KIND", "fmt": "FORMAT", "emit": "TARGET",
    "target": "TARGET", "sort": "KEY", "by": "KEY",
    # files and places
    "out": "FILE", "emit_out": "FILE", "config": "FILE", "actuals": "FILE",
    "overrides": "FILE", "quota_file": "FILE", "team_file": "TEAM_FILE",
    "reports": "REPORT", "bucket": "URI", "install": "SPEC",
    "assume": "NAME=VALUE",
}

# A parameter the table does not know: a word for its kind, never a Python type.
_BY_KIND = {int: "N", float: "NUMBER"}


def readable(command) -> list[str]:
    """Give every parameter of the click ``command`` tree without a metavar of its own the
    word of ``METAVARS`` (or of its kind); the names that had to fall back to their kind."""
    unknown: list[str] = []
    stack = [command]
    while stack:
        cmd = stack.pop()
        stack.extend(getattr(cmd, "commands", {}).values())
        for param in cmd.params:
            if getattr(param, "param_type_name", "") == "argument":
                # Typer's usage line wraps a required argument in braces (``{TEAM_FILE}``),
                # its own metavar too: bare when required, as click writes it
                param.get_usage_pieces = functools.partial(_usage_pieces, param)
            if param.metavar is not None or getattr(param, "is_flag", False):
                continue
            word = METAVARS.get(param.name)
            if word is None:
                unknown.append(param.name)
                kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
                word = _BY_KIND.get(kind, "TEXT")
            param.metavar = word
            if getattr(param, "param_type_name", "") == "argument":
                # an argument's row is its metavar then its type (``TEAM_FILE <str>``): the
                # word alone says it, as for options
                param.display_type_rich = _no_type
    return unknown


def _no_type(ctx) -> None:
    return None


def _usage_pieces(param, ctx) -> list[str]:
    """The argument's usage word: ``TEAM_FILE``, ``[REPORT_ID]``, ``REPORT...``."""
    name = param.metavar if param.required else f"[{param.metavar}]"
    return [name + ("..." if param.nargs != 1 else "")]
