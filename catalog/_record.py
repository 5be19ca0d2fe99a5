"""``record``: the frozen, slotted dataclass every typed record of gpuplan is, built cheaper.

``@dataclass(frozen=True, slots=True)`` compiles six methods per class from generated source
(``exec``): about 2 ms a class, and the ~50 records `gpuplan plan` imports spent 95 ms of its
150 ms of own imports there (benchmarks/import_budget.py). ``record`` lets ``dataclass``
generate ``__init__`` and the frozen ``__setattr__``/``__delattr__`` (what only generated
code does well) and gives ``__eq__``, ``__hash__`` and ``__repr__`` as closures over
``operator.attrgetter``: nothing compiled, and the same results as ``dataclass``'s own —
equality over the fields that compare, the hash of the same tuple, ``Name(a=1, b='x')``
(tests/catalog/test_record.py checks each against a plain dataclass).
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import dataclass_transform

__all__ = ["record"]


@dataclass_transform(frozen_default=True, kw_only_default=True)
def record(cls=None, /, *, kw_only: bool = True):
    """``@record`` (keyword-only) or ``@record(kw_only=False)``: a frozen, slotted dataclass
    with ``dataclass``'s equality, hash and repr. A class that writes its own ``__eq__``,
    ``__hash__`` or ``__repr__`` keeps it (as with ``dataclass``)."""

    def wrap(cls):
        own = {name for name in ("__eq__", "__hash__", "__repr__") if name in cls.__dict__}
        made = dataclass(cls, frozen=True, slots=True, kw_only=kw_only, eq=False, repr=False)
        _add_methods(made, own)
        return made

    return wrap if cls is None else wrap(cls)


def _values(names: tuple[str, ...]):
    """A function giving the tuple of an instance's ``names`` attributes (attrgetter gives a
    bare value for one name, and takes none)."""
    if not names:
        return lambda obj: ()
    get = attrgetter(*names)
    if len(names) == 1:
        return lambda obj: (get(obj),)
    return get


def _add_methods(cls, own: set[str]) -> None:
    fs = fields(cls)
    compared = _values(tuple(f.name for f in fs if f.compare))
    # dataclass hashes the fields whose ``hash`` is True, or None and compared
    hashed = _values(tuple(f.name for f in fs if (f.compare if f.hash is None else f.hash)))
    shown = tuple(f.name for f in fs if f.repr)
    shown_values = _values(shown)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self):
        return hash(hashed(self))

    @reprlib.recursive_repr()
    def __repr__(self):
        return (f"{self.__class__.__qualname__}("
                + ", ".join(f"{name}={value!r}"
                            for name, value in zip(shown, shown_values(self), strict=True))
                + ")")

    if "__eq__" not in own:  # a class's own __eq__ keeps its own __hash__ (None or written)
        cls.__eq__ = __eq__
        if "__hash__" not in own:
            cls.__hash__ = __hash__
    if "__repr__" not in own:
        cls.__repr__ = __repr__
    for method in (__eq__, __hash__, __repr__):
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
