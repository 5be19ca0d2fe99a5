"""YAML a user wrote, loaded safely: ``load_yaml_text``.

A module of its own so that PyYAML (~8–14 ms of imports) loads only when a YAML file is read:
`gpuplan estimate` and `plan` without a quota or override file never need it.

Two loaders share every check (``_Checked``: YAML 1.2 numbers, dates as text, no duplicate
keys, bounded nesting and node count): libyaml's C parser where PyYAML has it, PyYAML's
pure-Python one otherwise. The C parser only makes the events: composing and constructing stay
in Python, so the checks and their marks are the same. Pure Python spent 6–9 s of CPU on a 1 MB
team file (5,000 jobs, refused only afterwards); with libyaml's events it is under a second. A
text libyaml refuses is read again by the pure-Python loader, whose messages (and tolerance) are
the ones gpuplan has always given.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from ._files import MAX_NUMBER_DIGITS, _fail, _one_line

try:  # libyaml's parser, when PyYAML was built with it (its wheels are)
    from yaml._yaml import CParser as _CParser
except ImportError:  # pragma: no cover - a PyYAML without libyaml
    _CParser = None

# Nodes a YAML document may expand to once aliases are followed. A team plan has hundreds;
# "billion laughs" expands nine aliases into 10^9 strings. The composer counts the nodes it
# makes and stops at this many, mid-file: a 1 MB file of 5,000 jobs was composed to its end
# (seconds) before its size was refused. No lower cap is sound for a team plan: its exclude
# lists have no length limit of their own, and quotas may hold 10,000 rules of ~7 values each.
MAX_YAML_EXPANDED_NODES = 100_000

_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"


_SHOWN_CHARS = 40  # of a value's YAML text that its repr quotes back


class _WrittenFloat(float):
    """A float YAML spelled as something no number can show: ``1e400`` (inf once read), or
    ``.inf``. Messages quote values with ``repr``, which said "inf" for the ``1e400`` the
    user wrote; this one says what the file says, as a config.json's huge size is echoed."""

    __slots__ = ("text",)

    def __new__(cls, value: float, text: str) -> _WrittenFloat:
        self = super().__new__(cls, value)
        self.text = text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 1] + "…"
        return self

    def __getnewargs__(self) -> tuple[float, str]:  # pickled to a planning worker intact
        return float(self), self.text

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return self.text  # no format spec gives digits for inf: "{:,.0f}" said "inf" too


class _Binary(bytes):
    """A ``!!binary`` value: no gpuplan field takes one, so it only ever reaches a message,
    where ``b'\\x89PNG…'`` was Python's spelling, not the file's."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "a binary value (!!binary)"

    __str__ = __repr__


class _Set(set):
    """A ``!!set`` value, quoted back in YAML's spelling (``!!set {aws, gcp}``), not as
    Python's ``{'aws', 'gcp'}``, which reads as a mapping to a YAML user."""

    def __repr__(self) -> str:
        # on one line: a message is one line, and a set's text may hold a newline
        items = ", ".join(sorted("null" if v is None else " ".join(str(v).split())
                                 for v in self))
        if len(items) > _SHOWN_CHARS:
            items = items[:_SHOWN_CHARS - 1] + "…"
        return f"a set (!!set {{{items}}})"

    __str__ = __repr__


class _TooManyNodes(Exception):
    """The composer made more than MAX_YAML_EXPANDED_NODES nodes; ``mark``: where the
    collection holding most of them starts."""

    def __init__(self, mark) -> None:  # noqa: ANN001 - a PyYAML or libyaml mark
        super().__init__()
        self.mark = mark


class _Checked(yaml.composer.Composer, yaml.constructor.SafeConstructor,
               yaml.resolver.Resolver):
    """Composing and constructing as SafeLoader does, with dates kept as strings, bounded
    nesting and node count, and no duplicate keys; events come from the parser it is mixed
    with (``_PyLoader``, ``_CLoader``).

    Dates stay strings because PyYAML's timestamp constructor raises a bare ValueError on
    ``2027-02-30`` (a traceback, before our validation can say which field is wrong).
    """

    def __init__(self, max_depth: int) -> None:
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self.max_depth = max_depth
        self._depth = 0
        self._nodes = 0
        self._open: list[tuple[int, Any]] = []  # (nodes made before, start mark) per collection
        self.anchored = False  # an anchor was defined: aliases may expand the document

    def compose_node(self, parent, index):  # noqa: ANN001 - PyYAML's signature
        # One override, not one per kind of node: it runs for every node of the file.
        event = self.peek_event()
        self._depth += 1
        try:
            # The composer is recursive; refusing depth here comes before Python's recursion
            # limit (and an alias deeper than allowed is refused as a value would be).
            if self._depth > self.max_depth:
                raise yaml.composer.ComposerError(
                    None, None, f"nesting deeper than {self.max_depth} levels",
                    event.start_mark)
            kind = type(event)
            if kind is yaml.AliasEvent:  # no new node: _check_expansion counts what it repeats
                return super().compose_node(parent, index)
            if event.anchor is not None:
                self.anchored = True
            self._nodes += 1
            if self._nodes > MAX_YAML_EXPANDED_NODES:
                raise _TooManyNodes(self._widest())
            if kind is yaml.ScalarEvent:
                return super().compose_node(parent, index)
            self._open.append((self._nodes, event.start_mark))
            node = super().compose_node(parent, index)
            self._open.pop()
            return node
        finally:
            self._depth -= 1

    def _widest(self):  # noqa: ANN202 - a PyYAML or libyaml mark
        """Where the innermost open collection holding half the nodes or more starts: the
        jobs list of a 5,000-job file, not the job being read when the count ran out (the
        outermost collection always qualifies)."""
        return next(mark for before, mark in reversed(self._open)
                    if self._nodes - before >= MAX_YAML_EXPANDED_NODES // 2)

    def construct_mapping(self, node, deep=False):  # noqa: ANN001
        if isinstance(node, yaml.MappingNode):
            seen: set[tuple[str, str]] = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = (key_node.tag, key_node.value)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key_node.value!r}", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node):  # noqa: ANN001
        # YAML 1.2's integers (docs/team.md): 010 is ten, not YAML 1.1's octal eight; octal
        # and hex are written 0o17 and 0x1f. Only _YAML12_INT's forms reach here.
        _check_digits(node)
        text = str(node.value).replace("_", "")
        sign = -1 if text.startswith("-") else 1
        body = text.lstrip("+-")
        if body[:2] in ("0o", "0x"):
            return sign * int(body[2:], 8 if body[1] == "o" else 16)
        return sign * int(body, 10)

    def construct_yaml_float(self, node):  # noqa: ANN001
        _check_digits(node)
        if not str(node.value).replace("_", ""):
            # `!!float` alone (or `!!float _`): PyYAML's constructor raised IndexError
            raise yaml.constructor.ConstructorError(
                None, None, "an empty value tagged !!float", node.start_mark)
        if ":" in str(node.value):
            # only an explicit !!float reaches here with YAML 1.1's base 60 (1:30 = 90.0)
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.value!r} is a YAML 1.1 base-60 number, which YAML 1.2 "
                "does not have: write it in base 10", node.start_mark)
        value = super().construct_yaml_float(node)
        # 1e400 overflows to inf: kept as written for the message that refuses it
        return value if math.isfinite(value) else _WrittenFloat(value, str(node.value))

    def construct_yaml_bool(self, node):  # noqa: ANN001
        # PyYAML's own raised a bare KeyError (a traceback) on `!!bool maybe`
        value = self.construct_scalar(node)
        if value.lower() not in self.bool_values:
            raise yaml.constructor.ConstructorError(
                None, None, f"{value!r} is not a boolean (true or false)", node.start_mark)
        return self.bool_values[value.lower()]

    def construct_yaml_str(self, node):  # noqa: ANN001
        return _joined_surrogates(super().construct_yaml_str(node))

    def construct_yaml_binary(self, node):  # noqa: ANN001
        return _Binary(super().construct_yaml_binary(node))

    def construct_yaml_set(self, node):  # noqa: ANN001
        # PyYAML's two-step form (yield, then fill) lets an alias refer to the set
        data = _Set()
        yield data
        data.update(self.construct_mapping(node))


def _joined_surrogates(text: str) -> str:
    """``text`` with each escaped UTF-16 pair joined into its character: json.dump writes 🚀
    as "\\ud83d\\ude80", which YAML reads as two lone surrogates (a team file written so was
    refused: "'train \\ud83d\\ude80' must be one printable line"). A lone one stays, for the
    checks to refuse."""
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    try:
        return text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        return text


def _check_digits(node: yaml.ScalarNode) -> None:
    digits = sum(c.isdigit() for c in str(node.value))
    if digits > MAX_NUMBER_DIGITS:
        raise yaml.constructor.ConstructorError(
            None, None, f"a {digits}-digit number (at most {MAX_NUMBER_DIGITS} digits)",
            node.start_mark)


# Copy the resolver table before editing it: it is shared with yaml.SafeLoader otherwise.
# YAML 1.1's integers and floats go too: they read 010 as 8 (octal), 1:30 as 90 (base 60) and
# 0b11 as 3, where YAML 1.2 reads ten and text; a budget of 0600000 was $196,608, silently.
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_Checked.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_TIMESTAMP, _INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
# YAML 1.2 core integers (underscores between digits kept, as the CLI's 1_000), and floats
# without 1.1's base-60 form.
_YAML12_INT = re.compile(r"^(?:[-+]?[0-9][0-9_]*|0o[0-7][0-7_]*|0x[0-9a-fA-F][0-9a-fA-F_]*)$")
_YAML12_FLOAT = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.X)
_Checked.add_implicit_resolver(_INT, _YAML12_INT, list("-+0123456789"))
_Checked.add_implicit_resolver(_FLOAT, _YAML12_FLOAT, list("-+.0123456789"))
# YAML 1.2 floats that YAML 1.1 reads as text: an exponent without a dot or without a sign
# (1e13, 2.5e9 — what the CLI accepts for --tokens); 1.1's own float forms stay as they are.
_EXPONENT_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")
_Checked.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT_FLOAT,
                                  list("-+.0123456789"))
_Checked.add_constructor(_TIMESTAMP, yaml.SafeLoader.construct_yaml_str)
_Checked.add_constructor("tag:yaml.org,2002:int", _Checked.construct_yaml_int)
_Checked.add_constructor("tag:yaml.org,2002:float", _Checked.construct_yaml_float)
_Checked.add_constructor("tag:yaml.org,2002:bool", _Checked.construct_yaml_bool)
_Checked.add_constructor("tag:yaml.org,2002:str", _Checked.construct_yaml_str)
_Checked.add_constructor("tag:yaml.org,2002:binary", _Checked.construct_yaml_binary)
_Checked.add_constructor("tag:yaml.org,2002:set", _Checked.construct_yaml_set)


def _check_expansion(node: yaml.Node, *, what: str) -> None:
    """Refuse a document whose aliases expand to too many nodes, or refer to themselves."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    # Iterative post-order walk; aliases make the node graph a DAG (or a cycle), so memoise.
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    aliased = False
    while stack:
        current, done = stack.pop()
        key = id(current)
        children: list[yaml.Node] = []
        if isinstance(current, yaml.SequenceNode):
            children = list(current.value)
        elif isinstance(current, yaml.MappingNode):
            children = [n for pair in current.value for n in pair]
        if done:
            active.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > MAX_YAML_EXPANDED_NODES:
                raise _too_many(what, current.start_mark, aliased=aliased)
            continue
        if key in sizes:
            aliased = True  # a node reached twice: an alias points at it
            continue
        if key in active:
            mark = current.start_mark
            raise _fail(f"{what}: an alias refers to the value that contains it (line "
                        f"{mark.line + 1}). To fix: remove the recursive alias.")
        active.add(key)
        stack.append((current, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)


def _too_many(what: str, mark, *, aliased: bool):  # noqa: ANN001 - a PyYAML or libyaml mark
    how = " through aliases" if aliased else ""
    return _fail(f"{what}: expands to more than {MAX_YAML_EXPANDED_NODES:,} values{how} (line "
                 f"{mark.line + 1}). To fix: "
                 + ("write the values out, or use fewer nested aliases." if aliased
                    else "split it into smaller files, or write fewer entries."))


def _fix_for(problem: str, language: str) -> str:
    """What to do about a YAML error, by its kind: "quote values that contain ':'" answered a
    duplicate key, a Python tag, a tab, a second document, a 45-digit number, nesting too deep
    and a JSON file's stray comma too."""
    if depth := _DEPTH.search(problem):
        return f"nest at most {depth[1]} levels"
    for words, fix in _FIXES:
        if words in problem:
            return fix
    if language == "JSON":  # its strings are quoted already
        return "correct the file (check the commas, brackets and quotes there)"
    return "correct the file (quote values that contain ':' or '#')"


_DEPTH = re.compile(r"nesting deeper than (\d+) levels")


# (words of PyYAML's problem, the fix): checked in order
_FIXES = (
    ("duplicate key", "keep one of the two keys (merge what they hold)"),
    ("constructor for the tag", "remove the tag: gpuplan reads plain YAML (mappings, lists, "
                                "text, numbers, dates)"),
    ("another document", "keep one document in the file (remove the '---' that starts "
                         "another, and what follows)"),
    ("found character '\\t'", "indent with spaces: YAML does not allow tabs there"),
    ("undefined alias", "define the anchor (&name) before its alias (*name), or write the "
                        "value out"),
    ("duplicate anchor", "give each anchor (&name) a name of its own"),
    ("expected ',' or ']'", "close the list's '[' with ']'"),
    ("expected ',' or '}'", "close the mapping's '{' with '}'"),
    ("duplicate YAML directive", "keep one %YAML line"),
    ("unhashable key", "make the key text or a number (a list or a mapping cannot be a key)"),
    ("-digit number (at most", "write a smaller number"),
    ("base-60 number", "write the number in base 10 (1:30 is 90)"),
    ("is not a boolean", "write true or false"),
    ("empty value tagged", "write a number, or remove the tag"),
)


class _PyLoader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, _Checked):
    """PyYAML's pure-Python reader, scanner and parser under the checks."""

    def __init__(self, stream: str, max_depth: int) -> None:
        # The reader checks every character while it is constructed: a NUL fails here.
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        _Checked.__init__(self, max_depth)


if _CParser is not None:
    class _CLoader(_Checked, _CParser):
        """libyaml's parser under the checks: ``_Checked`` comes first so that composing is
        its own (libyaml's recursive C composer would have no depth or node limits)."""

        def __init__(self, stream: str, max_depth: int) -> None:
            _CParser.__init__(self, stream)
            _Checked.__init__(self, max_depth)
else:  # pragma: no cover
    _CLoader = None

# libyaml reads a few texts that PyYAML refuses or reads otherwise (a differential fuzz of the
# two, 200,000 texts, found these): a tab after "key:" or inside brackets, a "?" inside a plain
# scalar, a byte-order mark past the start, a "#" right after a block scalar's "|" or ">", and
# an empty value tagged "!" ("" for libyaml, null for PyYAML). A text with any of these is read
# by PyYAML alone, so that a file means the same with libyaml and without it; gpuplan's files
# need none of them outside comments and quotes.
_PYYAML_ONLY = re.compile("[\t?!\ufeff]|[|>][-+0-9]*#")
# What libyaml's parser raises on a text it refuses: the text is read again by PyYAML's, whose
# messages gpuplan's hints are written for.
_C_REFUSALS = (yaml.reader.ReaderError, yaml.scanner.ScannerError, yaml.parser.ParserError)


def load_yaml_text(text: str, *, what: str, max_depth: int = 32) -> Any:
    """The data in YAML ``text``: plain dicts, lists, strings (dates too), numbers, booleans.

    A float that is no finite number (``1e400``, ``.inf``), a ``!!binary`` and a ``!!set``
    value equal what PyYAML reads, but their ``repr`` (what a message quotes) is the YAML's:
    "1e400", "a binary value (!!binary)", "a set (!!set {a, b})". Errors name ``what`` with
    the line and column of the problem, and call the text JSON when ``what`` ends in ".json"
    (a JSON file is read as the YAML it is).
    """
    language = "JSON" if what.lower().endswith(".json") else "YAML"
    if bad := yaml.reader.Reader.NON_PRINTABLE.search(text):
        line = text.count("\n", 0, bad.start()) + 1
        raise _fail(f"{what}: invalid {language} at line {line}: character "
                    f"#x{ord(bad.group()):04x} is not allowed in YAML"
                    f"{' (gpuplan reads JSON as YAML)' if language == 'JSON' else ''}. To fix: "
                    "remove it (is this a binary file?).")
    if _CLoader is not None and not _PYYAML_ONLY.search(text):
        try:
            return _load(_CLoader(text, max_depth), what, language)
        except _C_REFUSALS:
            pass  # read again below, for PyYAML's own message
    return _load(_PyLoader(text, max_depth), what, language)


def _load(loader: _Checked, what: str, language: str) -> Any:
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if loader.anchored:  # without an anchor no alias can repeat or contain a value
            _check_expansion(node, what=what)
        return loader.construct_document(node)
    except _TooManyNodes as exc:
        raise _too_many(what, exc.mark, aliased=False) from None
    except yaml.YAMLError as exc:
        if isinstance(exc, _C_REFUSALS) and not isinstance(loader, _PyLoader):
            raise  # libyaml's refusal: load_yaml_text reads the text again
        if isinstance(exc, yaml.MarkedYAMLError):
            raise _invalid(what, language, exc) from None
        raise _fail(f"{what}: invalid {language}: {_one_line(exc)}. To fix: correct the "
                    "file.") from None
    except (ValueError, OverflowError, RecursionError) as exc:
        # PyYAML's int constructor on a 5000-digit number, for example.
        raise _fail(f"{what}: invalid {language} value ({_one_line(exc)}). To fix: correct "
                    "the file.") from None
    finally:
        loader.dispose()


def _invalid(what: str, language: str, exc: yaml.MarkedYAMLError):
    mark = exc.problem_mark or exc.context_mark
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = exc.problem or exc.context or "malformed YAML"
    if exc.context and exc.problem and (problem.startswith("but ")
                                        or problem == "second occurrence"):
        # a fragment alone: "but found another document", "second occurrence"
        problem = f"{exc.context.removesuffix('; first occurrence')} ({problem})" \
            if problem == "second occurrence" else f"{exc.context}, {problem}"
    return _fail(f"{what}: invalid {language}{where}: {problem}. To fix: "
                 f"{_fix_for(problem, language)}.")
