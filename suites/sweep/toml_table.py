"""Reading one TOML table with typed lookups and errors that name the file, the table, the key,
the bad value and the fix; unknown keys are refused with the closest known key suggested."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from suites.sweep.errors import SweepConfigError


class TomlTable:
    """One TOML table being read: typed lookups, then a check that no unknown key is left."""

    def __init__(self, data: Any, where: str, file: str) -> None:
        if not isinstance(data, dict):
            raise SweepConfigError(f"{file}: {where} must be a table (key = value lines)")
        self.data, self.where, self.file = data, where, file
        self.read: set[str] = set()

    def fail(self, key: str, fix: str) -> SweepConfigError:
        """The error for a bad `key`: file, table, key, value and the fix."""
        value = self.data.get(key, "<missing>")
        return SweepConfigError(f"{self.file}: {self.where} {key} = {value!r}: {fix}")

    def get(self, key: str, check: Callable[[Any], bool], fix: str, default: Any = None) -> Any:
        """The value of an optional key (checked), or `default`."""
        self.read.add(key)
        if key not in self.data:
            return default
        value = self.data[key]
        if not check(value):
            raise self.fail(key, fix)
        return value

    def need(self, key: str, check: Callable[[Any], bool], fix: str) -> Any:
        """The value of a required key (checked)."""
        if key not in self.data:
            raise SweepConfigError(f"{self.file}: {self.where} lacks `{key}`: {fix}")
        return self.get(key, check, fix)

    def finish(self, allowed: tuple[str, ...] | None = None) -> None:
        """Refuse keys not in `allowed` (default: the keys read so far), suggesting a close one."""
        known = allowed if allowed is not None else tuple(sorted(self.read))
        for key in self.data:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f"did you mean `{close[0]}`? " if close else ""
                raise SweepConfigError(
                    f"{self.file}: {self.where} has an unknown key `{key}`; {hint}known keys:"
                    f" {', '.join(known)}"
                )


def text(value: Any) -> bool:
    """A non-blank string."""
    return isinstance(value, str) and bool(value.strip())


def count(value: Any) -> bool:
    """A positive integer."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def integer(value: Any) -> bool:
    """An integer (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)


def number(value: Any) -> bool:
    """A positive int or float."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def flag(value: Any) -> bool:
    """true or false."""
    return isinstance(value, bool)
