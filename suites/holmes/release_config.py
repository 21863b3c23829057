"""The `config-*.yaml` of a Holmes release-format dataset folder: probe name, probe task type,
control task type and number of labels (`num_labels == 1` means regression).

Each field is type-checked before use. The YAML is read without aliases (`*name`), and files
larger than a config could be are refused before parsing: nested aliases (an alias bomb) would
otherwise expand into a structure too large to hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from suites.readers.text_files import read_utf8
from suites.tasks import TaskError

CONFIG_KEYS = ("probe_name", "probe_task_type", "control_task_type", "num_labels")
CONFIG_BYTES = 1 << 16  # a config is a few lines; larger is refused before parsing
# Holmes evaluation code (core/definitions/probe_task_types.py): the probe task types.
PROBE_TASK_TYPES = {
    "SENTENCE": "sentence classification",
    "SENTENCE_PAIR_BI": "sentence pair classification",
    "SENTENCE_PAIR_CROSS": "sentence pair classification",
    "SENTENCE_TOKENS": "token(s) classification",
    "SENTENCE_SPANS": "token(s) classification",
    "SENTENCE_PAIR_TOKENS_BI": "token(s) pair classification",
    "SENTENCE_PAIR_TOKENS_CROSS": "token(s) pair classification",
}


@dataclass(frozen=True)
class ReleaseConfig:
    """The settings of one `config-*.yaml`."""

    probe_name: str
    probe_task_type: str
    control_task_type: str
    num_labels: int
    path: Path

    @property
    def regression(self) -> bool:
        """Holmes marks regression datasets with `num_labels: 1`."""
        return self.num_labels == 1


class _NoAliasLoader(yaml.SafeLoader):
    """YAML without aliases (`*name`): a config has no use for them, and nested aliases expand
    into structures too large to hold (an alias bomb)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise TaskError(
                f"{self.name}:{mark.line + 1}: YAML alias (*name) in a Holmes config; write the"
                " values out (a config needs no aliases)"
            )
        return super().compose_node(parent, index)


def read_config(path: str | Path) -> ReleaseConfig:
    """Parse one `config-*.yaml`, naming the file and key when something is missing or of the
    wrong type."""
    source = Path(path)
    if source.stat().st_size > CONFIG_BYTES:
        raise TaskError(
            f"{source}: {source.stat().st_size} bytes; a Holmes config is a few lines of YAML"
            f" (at most {CONFIG_BYTES} bytes)"
        )
    loader = _NoAliasLoader(read_utf8(source))
    loader.name = str(source)
    try:
        loaded = loader.get_single_data()
    except yaml.YAMLError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else "?"
        raise TaskError(f"{source}: not valid YAML ({first}); fix the file") from None
    finally:
        loader.dispose()
    if not isinstance(loaded, dict):
        raise TaskError(f"{source}: expected a mapping with keys {list(CONFIG_KEYS)}")
    missing = [k for k in CONFIG_KEYS if k not in loaded]
    if missing:
        raise TaskError(f"{source}: lacks keys {missing}; a Holmes config has {list(CONFIG_KEYS)}")
    name, task, control = (_text(loaded, k, source) for k in CONFIG_KEYS[:3])
    task_type = task.upper()
    if task_type not in PROBE_TASK_TYPES:
        raise TaskError(
            f"{source}: probe_task_type {task!r} is unknown; use one of {sorted(PROBE_TASK_TYPES)}"
        )
    num_labels = loaded["num_labels"]
    if isinstance(num_labels, str) and num_labels.strip().isdigit():
        num_labels = int(num_labels)
    if not isinstance(num_labels, int) or isinstance(num_labels, bool):
        raise TaskError(
            f"{source}: num_labels {_shown(num_labels)} is a {type(num_labels).__name__}; give a"
            " whole number (1 means regression)"
        )
    if num_labels < 1:
        raise TaskError(f"{source}: num_labels {num_labels} must be >= 1 (1 means regression)")
    return ReleaseConfig(name, task_type, control, num_labels, source)


def _text(loaded: dict[Any, Any], key: str, source: Path) -> str:
    value = loaded[key]
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise TaskError(
            f"{source}: {key} {_shown(value)} is a {type(value).__name__}; give a non-empty string"
        )
    return str(value)


def _shown(value: Any) -> str:
    """`repr(value)`, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def find_config(folder: Path, control: str = "none") -> Path:
    """`config-<control>.yaml` in `folder`, else its only `config-*.yaml`."""
    wanted = folder / f"config-{control}.yaml"
    if wanted.exists():
        return wanted
    found = sorted(folder.glob("config-*.yaml"))
    if len(found) == 1:
        return found[0]
    if not found:
        raise TaskError(f"{folder}: no config-*.yaml; a Holmes dataset folder needs one")
    raise TaskError(
        f"{folder}: {[p.name for p in found]} but no config-{control}.yaml; pass control= one of"
        f" {[p.stem.removeprefix('config-') for p in found]}"
    )
