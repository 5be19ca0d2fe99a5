"""Errors a user can cause, and the one way to say "unknown name, did you mean …".

    CatalogNotice (a UserWarning)  not an error: the catalog in use is not the one chosen

    GpuplanError                 every user-fixable error (planner's too); the CLI prints one line
    └── CatalogError
        ├── CatalogFileError     a catalog CSV/JSON is unreadable or malformed (file:line: column)
        ├── UnknownNameError     a name that isn't there (an accelerator, cloud, region, instance
        │   │                    type, model preset, job, field …), with close matches
        │   └── AmbiguousNameError  a name that several are called by (a bare "A100"): lists them
        └── OverrideError        a price-overrides file is malformed

Every message ends with what to do ("To fix: …"). An error about one input carries ``field``
(the planner's name for it, e.g. ``seq_len``) and ``value``, so each front end names the input
its own way: the CLI as a flag, the app as a widget label, a team plan as a YAML key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

MATCH_CUTOFF = 0.6  # difflib similarity a suggestion needs (its default; 0.5 suggests noise)
MAX_SUGGESTIONS = 3
RANKED = 4 * MAX_SUGGESTIONS  # difflib's best, ranked again by edit distance (pure Python)
MIN_PREFIX = 3  # a name's start that suggests the names it begins, where none looks alike
MAX_LISTED = 12  # names listed in "use one of …" before "…"
MAX_NAME_SHOWN = 100  # characters of an unknown name quoted back
# A catalog file is gpuplan's own output: a wrong one is replaced, not edited.
REPLACE_CATALOG_FIX = ("To fix: run `gpuplan catalog use packaged`, or `gpuplan catalog "
                       "refresh`")


QUOTED_CHARS = 40  # characters of a user's text a message quotes (more: cut, "…")


def quoted(value: object) -> str:
    """``value`` as a message quotes it: ``repr``, a string longer than QUOTED_CHARS cut
    there with "…" after the quote (a 100 KB GPU name or option value was echoed whole)."""
    if isinstance(value, str) and len(value) > QUOTED_CHARS:
        return f"{value[:QUOTED_CHARS]!r}…"
    return repr(value)


def without_fix(error: BaseException | str) -> str:
    """An error's message without its "To fix: …" and final period, for a caller that
    says what it was doing and gives the fix that applies there."""
    return str(error).split(" To fix")[0].rstrip(". ")


class GpuplanError(Exception):
    """Base of every error a user can cause; ``str(exc)`` is the one line to show.

    ``field``: which input was wrong (None when the error is not about one input); ``value``:
    what it was. ``names_file_keys``: the message already names its inputs as a file's keys
    (a team plan's YAML), so a front end must not rewrite them as its own flags.
    """

    names_file_keys: bool = False

    def __init__(self, message: str = "", *, field: str | None = None,
                 value: object = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class CatalogError(GpuplanError):
    pass


class CatalogFileError(CatalogError):
    pass


class CatalogNotice(UserWarning):
    """Something a user must know that is not an error — the active catalog could not be read
    and another one is used — issued with ``warnings.warn``: a library caller sees it as a
    warning, the CLI as one ``note:`` line on stderr, the app as a notice."""


class OverrideError(CatalogError):
    pass


def close_matches(name: str, known: Iterable[str]) -> tuple[str, ...]:
    """Up to MAX_SUGGESTIONS names of ``known`` close to ``name``, compared case-folded and
    shown as ``known`` spells them ("MI300X" for "mi300": case never hides a match, as a
    case-sensitive first pass hid it behind "B300"). Names that fold alike are shown as the
    first of them in ``known``'s order (the canonical name, where it is listed first). The
    closest by edit distance first, a swap of two letters one edit ('us-east-1' before
    'us-west-1' for 'us-esat-1'), ties by difflib's ratio (``_edit_distance.ranked``)."""
    import difflib  # here, not at import: only an error needs it
    import unicodedata

    from ._edit_distance import ranked

    spelt: dict[str, str] = {}
    for k in known:
        spelt.setdefault(str(k).casefold(), str(k))
    # spaces around it mean nothing; NFKC reads full-width "Ｈ１００" (an IME's) as "H100"
    name = unicodedata.normalize("NFKC", str(name)[:MAX_NAME_SHOWN]).strip().casefold()
    close = ranked(name, difflib.get_close_matches(name, sorted(spelt), n=RANKED,
                                                   cutoff=MATCH_CUTOFF))[:MAX_SUGGESTIONS]
    if not close and len(name) >= MIN_PREFIX:  # "sky" for skypilot: too short to look alike
        close = [k for k in sorted(spelt) if k.startswith(name)][:MAX_SUGGESTIONS]
    if not close and (typed := _LOOKALIKES.sub(_digit, name)) != name:
        # a letter typed for the digit it looks like: "H1OO" (two letters O) is H100, which
        # difflib rates 0.5 against it, under its cutoff
        close = ranked(typed, difflib.get_close_matches(
            typed, sorted(spelt), n=RANKED, cutoff=MATCH_CUTOFF))[:MAX_SUGGESTIONS]
    return tuple(spelt[m] for m in close)


# o/l/i beside a digit (or between digits) read as 0/1/1: not in words ("pool", "slice")
_LOOKALIKES = re.compile(r"(?<=\d)[oli]+|[oli]+(?=\d)")


def _digit(m: re.Match) -> str:
    return m.group().translate(str.maketrans("oli", "011"))


class UnknownNameError(CatalogError):
    """``kind`` ``name`` is not one of ``known``: the message suggests close matches and ends
    with ``hint`` (default: the names to use). ``where`` prefixes the message (a file and
    entry, e.g. "team.yaml: jobs[2]"). ``match_as`` is the name in ``known``'s spelling
    ('spot_instance' for 'Spot-Instance'): matched against them, while the message quotes
    ``name`` as the user wrote it. ``resolves``: a name's resolver where names have aliases
    (``Catalog.resolve_accelerator``: "H100"), so that words separated by spaces are known
    names when it takes each of them. ``listed``: the whole list ``name`` was given in, so
    that the fix for such words is that list with commas (`--gpu "A100,H100 A10G"` →
    A100,H100,A10G), not its last item alone."""

    def __init__(self, kind: str, name: object, known: Iterable[str], hint: str = "", *,
                 where: str = "", field: str | None = None, match_as: str | None = None,
                 resolves: Callable[[str], object] | None = None,
                 listed: Iterable[object] = ()) -> None:
        given = tuple(known)  # in the caller's order: its first spelling is the one shown
        known = sorted(set(given))
        shown = _shown(name)
        close = close_matches(shown if match_as is None else match_as, given)
        suggestion = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        fix = hint or (f"use one of: {', '.join(known[:MAX_LISTED])}"
                       f"{' …' if len(known) > MAX_LISTED else ''}")
        if words := _spaced_names(name, known, resolves):  # "aws gcp", "H100 A10G": a list
            suggestion = f" It is {len(words)} {kind} names separated by spaces."
            items = [w for item in listed for w in (words if item == name else [str(item)])]
            fix = f"separate them with commas: {','.join(items or words)}"
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}unknown {kind} {shown!r}.{suggestion} To fix: {fix}",
                         field=field, value=name)
        self.kind, self.name, self.suggestions = kind, name, close
        self.known = tuple(known)
        self.spaced = tuple(words)  # the names ``name`` is, separated by spaces, or ()


def _spaced_names(name: object, known: Iterable[str],
                  resolves: Callable[[str], object] | None = None) -> list[str]:
    """The known names ``name`` is, separated by whitespace (each matched ignoring case, or
    each taken by ``resolves`` and kept as typed), or [] (one name, or a word that is no known
    name: "US EAST 1" is a misspelt region, not three)."""
    words = str(name).split()
    if len(words) < 2:
        return []
    if resolves is not None:
        try:
            for word in words:
                resolves(word)
        except GpuplanError:
            return []
        return words
    by_case = {k.casefold(): k for k in known}
    found = [by_case.get(w.casefold()) for w in words]
    return [] if None in found else found


def _shown(name: object) -> str:
    text = str(name)
    return text if len(text) <= MAX_NAME_SHOWN else text[:MAX_NAME_SHOWN - 1] + "…"


class AmbiguousNameError(UnknownNameError):
    """``name`` names several of the known names (``choices``: a bare "A100" names three
    boards of two sizes), so it names none: the message lists them, each followed by a
    shorter alias where ``aliases`` gives one, and asks for one. An UnknownNameError, so a
    caller that catches a name it cannot resolve catches this one too."""

    def __init__(self, kind: str, name: object, choices: Iterable[str], *,
                 aliases: dict[str, str] | None = None, field: str | None = None) -> None:
        choices = tuple(choices)
        aliases = aliases or {}
        listed = [c + (f" ({aliases[c]})" if c in aliases else "") for c in choices]
        CatalogError.__init__(
            self, f"{kind} {_shown(name)!r} is ambiguous: it could be {', '.join(listed[:-1])} "
            f"or {listed[-1]}. To fix: name one of them, e.g. {choices[-1]} (a list may name "
            "several)",
            field=field, value=name)
        self.kind, self.name, self.suggestions, self.known = kind, name, choices, choices
