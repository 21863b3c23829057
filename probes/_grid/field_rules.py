"""One check for every field of a configuration dataclass: its type from the annotation, then
its range, with a message naming the field, the value and a valid example.

`TrainConfig`, `ProbeGrid` and `MDLBlocks` call `check_fields` from `__post_init__`, so a value
set by the constructor, by `dataclasses.replace` (how sweep files and command-line overrides
reach them) or by a test is checked the same way. Floats must be finite (NaN and inf never
train a probe); integers must be integers (a float seed or site is refused, never truncated);
sequences are normalised to tuples.
"""

from __future__ import annotations

import math
import numbers
import operator
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from probes.errors import ProbeConfigError


@dataclass(frozen=True)
class Rule:
    """What a field must hold, as a predicate and words: `need` ("a finite number > 0") and an
    `example` ("lr=5e-4 (Holmes)")."""

    ok: Callable[[Any], bool]
    need: str
    example: str


class _Mismatch(Exception):
    """A value does not fit its annotation."""


def check_fields(instance: object, rules: dict[str, Rule]) -> None:
    """Conform every field of the dataclass `instance` to its annotation, then apply `rules`.

    Raises `ProbeConfigError("Class.field=value: needs ...; e.g. ...")` at the first bad field.
    """
    cls = type(instance)
    hints = typing.get_type_hints(cls)
    for spec in fields(instance):  # type: ignore[arg-type]
        value = getattr(instance, spec.name)
        rule = rules.get(spec.name)
        try:
            normal = _conform(value, hints[spec.name])
        except _Mismatch:
            raise _error(cls.__name__, spec.name, value, rule, hints[spec.name]) from None
        if rule is not None and not rule.ok(normal):
            raise _error(cls.__name__, spec.name, value, rule, hints[spec.name])
        object.__setattr__(instance, spec.name, normal)


def _error(owner: str, name: str, value: Any, rule: Rule | None, hint: Any) -> ProbeConfigError:
    need = rule.need if rule is not None else _describe(hint)
    example = f"; e.g. {rule.example}" if rule is not None and rule.example else ""
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    return ProbeConfigError(f"{owner}.{name}={shown}: needs {need}{example}")


def _conform(value: Any, hint: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            try:
                return _conform(value, arg)
            except _Mismatch:
                continue
        raise _Mismatch
    if origin is typing.Literal:
        if any(value == a and type(value) is type(a) for a in args):
            return value
        raise _Mismatch
    if hint is type(None):
        if value is None:
            return None
        raise _Mismatch
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _Mismatch
    if hint is int:
        return _integer(value)
    if hint is float:
        return _finite(value)
    if hint is str:
        if isinstance(value, str):
            return value
        raise _Mismatch
    if origin is tuple:
        return _sequence(value, args)
    if origin is Sequence:
        return _sequence(value, (args[0], ...) if args else (Any, ...))
    if isinstance(hint, type):
        if isinstance(value, hint):
            return value
        raise _Mismatch
    return value


def _integer(value: Any) -> int:
    if isinstance(value, bool):
        raise _Mismatch
    try:
        return operator.index(value)
    except TypeError:
        raise _Mismatch from None


def _finite(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _Mismatch
    number = float(value)
    if not math.isfinite(number):
        raise _Mismatch
    return number


def _sequence(value: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | range):
        raise _Mismatch
    items = list(value)
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_conform(v, args[0]) for v in items)
    if len(items) != len(args):
        raise _Mismatch
    return tuple(_conform(v, a) for v, a in zip(items, args))


def _describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    words = {bool: "True or False", int: "an integer", float: "a finite number", str: "a string"}
    if hint in words:
        return words[hint]
    if hint is type(None):
        return "None"
    if origin in (tuple, Sequence):
        return f"a sequence of {_describe(args[0]) if args else 'values'}"
    return getattr(hint, "__name__", str(hint))
