"""A link's value read as a choice the CLI would take it for (AWS, llama-3-8b, H100), and
the choices a link warning suggests for one it cannot take (an A100 family: its boards)."""

from __future__ import annotations


def as_choices(raw: list[str], choices: list[str], *, many: bool,
               resolve=None) -> list[str]:
    """``raw`` with each value that names a choice as the CLI takes it, in any case, (for
    the model preset) by an alias the planner resolves or by a name ``resolve`` gives the
    choice of, spelt as the choice."""
    if not choices or all(r in choices for r in raw if r != ""):
        return raw
    folded: dict[str, str] = {}
    for choice in choices:
        folded.setdefault(choice.casefold(), choice)  # the first of a spelling
    out = [r if r == "" or r in choices else
           folded.get(r.strip().casefold()) or _preset(r, choices) or
           _resolved(r, choices, resolve) or r for r in raw]
    return list(dict.fromkeys(out)) if many else out  # AWS and aws: one cloud


def _resolved(name: str, choices: list[str], resolve) -> str | None:
    """The choice ``resolve`` says ``name`` means (an accelerator's alias, as `gpuplan offers
    --gpu` and a team plan resolve it), or None: no ``resolve``, a name it refuses (a family
    such as A100, which names several: ``_family`` gives them to the link warning), or one not
    offered."""
    from catalog import GpuplanError

    try:
        found = resolve and resolve(name)
    except GpuplanError:
        return None
    return found if found in choices else None


def _family(name: str, choices: list[str], resolve) -> list[str]:
    """The choices a family name (A100) stands for, as the CLI's ambiguity error lists them;
    [] for any other name: close spellings (A10, A10G of A100) would be the wrong GPUs."""
    from catalog import AmbiguousNameError, GpuplanError

    try:
        resolve and resolve(name)
    except AmbiguousNameError as e:
        return [c for c in e.suggestions if c in choices]
    except GpuplanError:
        pass
    return []


def _preset(name: str, choices: list[str]) -> str | None:
    """The model preset ``name`` (an alias: llama-3-8b) names, where ``choices`` are the
    presets: the planner's own resolution (its alias table stays its own)."""
    import planner  # here: only for a link's unknown value (the model loads numpy)
    from catalog import GpuplanError

    if set(choices) != set(planner.preset_names()):
        return None
    try:
        return planner.preset(name)[0].name
    except GpuplanError:
        return None


def did_you_mean(bad: list[str], choices: list[str], resolve=None) -> str:
    """"; did you mean a, b or c?": up to three choices close to the values not taken, or
    every choice a family name among them names ("A100 is ambiguous: ...")."""
    from catalog import close_matches

    for b in bad:
        if family := _family(b, choices, resolve):
            return f"; {b} is ambiguous: did you mean {_either(family)}?"
    close = list(dict.fromkeys(c for b in bad for c in close_matches(b, choices)))[:3]
    return f"; did you mean {_either(close)}?" if close else ""


def _either(names: list[str]) -> str:
    return (", ".join(names[:-1]) + " or " if names[1:] else "") + names[-1]
