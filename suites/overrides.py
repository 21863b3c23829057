"""The one path from a sweep's TOML keys and `lingprobe run`'s flags to a suite's settings.

Every setting is a field of a frozen dataclass: a suite config's own fields, and the probe
settings of the config's `probe_fields` (`probes.ProbeGrid` and `probes.TrainConfig`, or the
suite's own regimen). Overrides are applied with `dataclasses.replace`, values are converted
from the field's annotation, and the dataclasses validate them (`__post_init__`), so a new
setting needs one edit: its field (`suites.commands.run` gives it a flag).
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from lingprobe.errors import LingprobeError
from probes import ProbeGrid, TrainConfig

# Grid fields a suite decides itself: which sites (its `layers`), that task probes exist, and
# explicit masks (built by the suite from its data).
SUITE_OWNED = ("sites", "task", "train_masks", "dev_masks")


class OverrideError(LingprobeError, ValueError):
    """A setting that names no field, or a value its field cannot take."""


def settable(kind: type) -> dict[str, Any]:
    """Field name -> resolved annotation of a frozen settings dataclass (suite-owned left out)."""
    hints = typing.get_type_hints(kind)
    return {
        f.name: hints[f.name]
        for f in dataclasses.fields(kind)
        if f.init and not (kind is ProbeGrid and f.name in SUITE_OWNED)
    }


def probe_fields() -> dict[str, type]:
    """Every overridable probe setting: its name -> `ProbeGrid` or `TrainConfig`."""
    return {name: kind for kind in (ProbeGrid, TrainConfig) for name in settable(kind)}


def convert(name: str, value: Any, hint: Any) -> Any:
    """`value` (from TOML or the command line) as field `name` of annotation `hint` takes it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        nothing = value is None or (isinstance(value, str) and value.lower() == "none")
        if nothing and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return convert(name, value, option)
            except OverrideError as error:
                errors.append(str(error))
        raise OverrideError(errors[0] if errors else f"{name}={value!r} is not allowed")
    if origin is typing.Literal:
        if value not in args:
            raise OverrideError(f"{name}={value!r}: choose one of {list(args)}")
        return value
    if hint is bool:
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        if not isinstance(value, bool):
            raise OverrideError(f"{name}={value!r}: give true or false")
        return value
    if hint in (int, float):
        try:
            if isinstance(value, bool) or (hint is int and isinstance(value, float)):
                raise ValueError
            return hint(value)
        except (TypeError, ValueError):
            what = "an integer" if hint is int else "a number"
            raise OverrideError(f"{name}={value!r}: give {what}") from None
    if hint is str:
        return str(value)
    if origin in (tuple, Sequence, list):
        return _sequence(name, value, args)
    if isinstance(hint, type) and isinstance(value, hint):
        return value
    raise OverrideError(f"{name}={value!r}: not a value this setting takes ({hint})")


def _sequence(name: str, value: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    item = args[0] if args else Any
    if name == "seeds" and isinstance(value, str) and value.strip().isdigit():
        value = int(value)  # `--seeds 3`: seeds 0, 1, 2 (a list is written 0,1,2)
    if name == "seeds" and isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise OverrideError(f"seeds={value}: give how many seeds (>= 1) or a list of seeds")
        return tuple(range(value))  # `seeds = 3`: seeds 0, 1, 2
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple):
        raise OverrideError(f"{name}={value!r}: give a list (TOML) or comma-separated values")
    if (len(args) == 2 and args[1] is Ellipsis) or len(args) == 1:
        return tuple(convert(name, v, item) for v in value)
    if len(value) != len(args):
        raise OverrideError(f"{name}={value!r}: give {len(args)} values")
    return tuple(convert(name, v, a) for v, a in zip(value, args))


def apply(settings: Any, changes: Mapping[str, Any], where: str = "") -> Any:
    """`settings` (a frozen dataclass) with `changes` applied; errors name `where` and the key."""
    fields = settable(type(settings))
    prefix = f"{where}: " if where else ""
    converted = {}
    for key, value in changes.items():
        name = key
        if name not in fields:
            raise OverrideError(_unknown(key, list(fields), where))
        try:
            converted[name] = convert(name, value, fields[name])
        except OverrideError as error:
            raise OverrideError(f"{prefix}{error}") from None
    try:
        return dataclasses.replace(settings, **converted)
    except (ValueError, TypeError) as error:
        raise OverrideError(f"{prefix}{str(error).splitlines()[0]}") from error


def apply_probe(
    grid: ProbeGrid, train: TrainConfig, changes: Mapping[str, Any], where: str = ""
) -> tuple[ProbeGrid, TrainConfig]:
    """(grid, train) with probe settings `changes` (keys: any field of either) applied."""
    owners = probe_fields()
    split: dict[type, dict[str, Any]] = {ProbeGrid: {}, TrainConfig: {}}
    for name, value in changes.items():
        if name not in owners:
            raise OverrideError(_unknown(name, list(owners), where))
        split[owners[name]][name] = value
    return apply(grid, split[ProbeGrid], where), apply(train, split[TrainConfig], where)


def _unknown(key: str, known: list[str], where: str) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean `{close[0]}`? " if close else ""
    prefix = f"{where}: " if where else ""
    return f"{prefix}`{key}` is not a setting here; {hint}settings: {', '.join(known)}"


def probe_owners(config: Any) -> dict[str, str]:
    """Every probe setting a suite config takes -> the config field that holds it.

    The fields are the config's `probe_fields` (`("grid", "train")`, `("logistic",)`, ...); a
    top-level `seeds` of the config (its own seed axis) is "" (the config itself).
    """
    owners: dict[str, str] = {}
    for owner in type(config).probe_fields:
        for name in settable(type(getattr(config, owner))):
            owners.setdefault(name, owner)
    if "seeds" not in owners and "seeds" in settable(type(config)):
        owners["seeds"] = ""
    return owners


def apply_probe_settings(
    config: Any, changes: Mapping[str, Any], suite: str, where: str = ""
) -> Any:
    """`config` (any suite config) with probe settings `changes` (a sweep's `[probe]`, the probe
    flags of `lingprobe run`) applied; a key the suite cannot use is an error naming both."""
    owners = probe_owners(config)
    split: dict[str, dict[str, Any]] = {}
    for key, value in changes.items():
        if key not in owners:
            close = difflib.get_close_matches(key, list(owners), n=1)
            hint = f"did you mean `{close[0]}`? " if close else ""
            prefix = f"{where}: " if where else ""
            raise OverrideError(
                f"{prefix}the {suite} suite cannot use the probe setting `{key}`; {hint}its"
                f" probe settings: {', '.join(owners)}"
            )
        split.setdefault(owners[key], {})[key] = value
    for owner, values in split.items():
        if owner:
            config = dataclasses.replace(
                config, **{owner: apply(getattr(config, owner), values, where)}
            )
        else:
            config = apply(config, values, where)
    return config
