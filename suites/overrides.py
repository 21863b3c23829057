"""The one path from a sweep's TOML keys and the CLI's flags to a suite's probe settings.

Every probe setting is a field of `probes.ProbeGrid` or `probes.TrainConfig`; overrides are
applied with `dataclasses.replace`, values are converted from the field's annotation, and the
dataclasses validate them (`__post_init__`), so a new training setting needs one edit: its field.
`probe_options` adds a command-line flag for every field the parser does not define yet
(`--batch-size`, `--weight-decay`, `--lr-decay/--no-lr-decay`, ...).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from lingprobe.errors import LingprobeError
from probes import ProbeGrid, TrainConfig

# Grid fields a suite decides itself: which sites (its `layers`) and that task probes exist.
SUITE_OWNED = ("sites", "task")
ALIASES = {"fractions": "train_fractions", "probe": "kind"}  # names older configs and flags use


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
        name = ALIASES.get(key, key)
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
    for key, value in changes.items():
        name = ALIASES.get(key, key)
        if name not in owners:
            raise OverrideError(_unknown(key, list(owners), where))
        split[owners[name]][name] = value
    return apply(grid, split[ProbeGrid], where), apply(train, split[TrainConfig], where)


def _unknown(key: str, known: list[str], where: str) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean `{close[0]}`? " if close else ""
    prefix = f"{where}: " if where else ""
    return f"{prefix}`{key}` is not a setting here; {hint}settings: {', '.join(known)}"


def flag(name: str) -> str:
    """The command-line flag of a setting (`batch_size` -> `--batch-size`)."""
    return "--" + name.replace("_", "-")


def probe_options(parser: argparse.ArgumentParser, grid: ProbeGrid, train: TrainConfig) -> None:
    """A flag for every probe setting the parser does not already have; defaults shown.

    Given flags land in `args.probe_overrides` (see `probe_overrides`).
    """
    taken = set(parser._option_string_actions)
    group = parser.add_argument_group("probe settings (ProbeGrid and TrainConfig fields)")
    for kind, defaults in ((ProbeGrid, grid), (TrainConfig, train)):
        for name, hint in settable(kind).items():
            option = flag(name)
            spellings = {option, "--no-" + option[2:]}
            spellings |= {flag(a) for a, n in ALIASES.items() if n == name}
            if spellings & taken:
                continue
            default = getattr(defaults, name)
            dest = f"override__{name}"
            if hint is bool:
                group.add_argument(
                    option,
                    dest=dest,
                    action=argparse.BooleanOptionalAction,
                    default=argparse.SUPPRESS,
                    help=f"{kind.__name__}.{name} (default: {default})",
                )
            else:
                group.add_argument(
                    option,
                    dest=dest,
                    default=argparse.SUPPRESS,
                    metavar=name.upper(),
                    help=f"{kind.__name__}.{name} (default: {_shown(default)})",
                )


def _shown(value: Any) -> str:
    if isinstance(value, tuple | list | range):
        return ",".join(str(v) for v in value)
    return str(value)


def probe_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The probe settings given as generated flags (`probe_options`)."""
    prefix = "override__"
    return {k.removeprefix(prefix): v for k, v in vars(args).items() if k.startswith(prefix)}


def add_common_flags(parser: argparse.ArgumentParser, grid: ProbeGrid, train: TrainConfig) -> None:
    """The probe flags every suite command has had (`--seeds N`, `--epochs`, ...), then a flag
    for every other probe setting (`probe_options`)."""
    parser.add_argument(
        "--seeds",
        type=int,
        default=argparse.SUPPRESS,
        help=f"probe seeds (default: {len(grid.seeds)})",
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=argparse.SUPPRESS,
        help=f"probe epochs (default: {train.epochs})",
    )
    parser.add_argument(
        "--probe",
        choices=["linear", "mlp"],
        default=argparse.SUPPRESS,
        help=f"probe kind (default: {grid.kind})",
    )
    parser.add_argument(
        "--no-control",
        action="store_true",
        default=argparse.SUPPRESS,
        help="no control-task probes (selectivity)",
    )
    probe_options(parser, grid, train)


def common_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Probe settings from the common flags and the generated ones, as override keys."""
    given = vars(args)
    changes = probe_overrides(args)
    if "seeds" in given:
        changes["seeds"] = given["seeds"]
    if "epochs" in given:
        changes["epochs"] = given["epochs"]
    if "probe" in given:
        changes["kind"] = given["probe"]
    if given.get("no_control"):
        changes["control"] = False
    if given.get("no_mdl"):
        changes["mdl"] = False
    return changes
