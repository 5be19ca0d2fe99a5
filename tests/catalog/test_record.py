"""``catalog.record`` against ``dataclass(frozen=True, slots=True)``: the same equality, hash
and repr (it builds them without compiling code), and still a frozen, slotted dataclass."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog import record


def _pair(kw_only: bool = True):
    """A record class and the plain frozen dataclass it must behave as, field for field."""

    def body(ns):
        ns["__annotations__"] = {"a": "int", "b": "str", "c": "float | None", "d": "tuple",
                                 "e": "int"}
        ns["c"] = None
        ns["d"] = ()
        ns["e"] = field(default=0, compare=False, repr=False)  # left out of eq, hash, repr

    import types

    ours = record(kw_only=kw_only)(types.new_class("Row", (), {}, body))
    plain = dataclass(frozen=True, slots=True, kw_only=kw_only)(
        types.new_class("Row", (), {}, body))
    return ours, plain


values = st.tuples(st.integers(), st.text(max_size=5),
                   st.one_of(st.none(), st.floats(allow_nan=False)),
                   st.tuples(st.integers()), st.integers())


@given(values, values)
def test_equality_hash_and_repr_are_dataclasses(x, y):
    ours, plain = _pair()
    names = ("a", "b", "c", "d", "e")
    ox, oy = (ours(**dict(zip(names, v, strict=True))) for v in (x, y))
    px, py = (plain(**dict(zip(names, v, strict=True))) for v in (x, y))
    assert (ox == oy) == (px == py)
    assert (ox != oy) == (px != py)
    assert hash(ox) == hash(px)
    assert repr(ox) == repr(px)


def test_keyword_only_or_positional_as_asked():
    ours, plain = _pair(kw_only=False)
    assert ours(1, "x") == ours(1, "x", None, (), 5)  # e does not compare
    assert repr(ours(1, "x")) == repr(plain(1, "x"))
    kw, _ = _pair()
    with pytest.raises(TypeError):
        kw(1, "x")


def test_other_classes_and_values_are_not_equal():
    ours, plain = _pair()
    row = ours(a=1, b="x")
    assert row != plain(a=1, b="x")  # another class, the same fields: as dataclass says
    assert row.__eq__((1, "x", None, ())) is NotImplemented
    assert row == ours(a=1, b="x") and {row, ours(a=1, b="x")} == {row}


@record
class _Row:  # at module level: pickle finds it by name
    a: int
    b: str
    c: float | None = None
    d: tuple = ()
    e: int = field(default=0, compare=False, repr=False)


def test_still_a_frozen_slotted_dataclass():
    ours = _Row
    row = ours(a=1, b="x", d=(1, 2))
    assert dataclasses.is_dataclass(row)
    assert [f.name for f in dataclasses.fields(row)] == ["a", "b", "c", "d", "e"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.a = 2
    with pytest.raises((AttributeError, TypeError)):
        row.z = 1  # slots: no new attributes
    assert not hasattr(row, "__dict__")
    assert dataclasses.replace(row, a=2) == ours(a=2, b="x", d=(1, 2))
    assert pickle.loads(pickle.dumps(row)) == row
    assert copy.deepcopy(row) == row
    assert dataclasses.asdict(row) == {"a": 1, "b": "x", "c": None, "d": (1, 2), "e": 0}


def test_a_class_keeps_its_own_methods():
    @record
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

    @record
    class Loose:
        value: float

        def __eq__(self, other):  # equal within 0.5; such a class is unhashable in Python
            return isinstance(other, Loose) and abs(self.value - other.value) < 0.5

    assert repr(Named(name="x")) == "<x>"
    assert Loose(value=1.0) == Loose(value=1.2)
    with pytest.raises(TypeError):
        hash(Loose(value=1.0))


def test_no_fields_and_one_field_hash_as_dataclass():
    @record
    class Empty:
        pass

    @dataclass(frozen=True, slots=True)
    class PlainEmpty:
        pass

    @record
    class One:
        x: int

    @dataclass(frozen=True, slots=True)
    class PlainOne:
        x: int

    assert Empty() == Empty() and hash(Empty()) == hash(PlainEmpty())
    assert repr(Empty()) == "test_no_fields_and_one_field_hash_as_dataclass.<locals>.Empty()"
    assert hash(One(x=3)) == hash(PlainOne(x=3)) and One(x=3) != One(x=4)
    assert repr(One(x=3)) == repr(PlainOne(x=3)).replace("PlainOne", "One")


def test_a_record_holding_itself_reprs_as_dataclass():
    @record
    class Box:
        items: list

    box = Box(items=[])
    box.items.append(box)
    assert repr(box) == "test_a_record_holding_itself_reprs_as_dataclass.<locals>.Box(items=[...])"
