"""Shared plots (matplotlib, PNG): a metric per layer, and heatmaps."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl


def layer_curves(
    frame: pl.DataFrame,
    path: str | Path,
    *,
    x: str = "layer",
    y: str = "value",
    line: str | Sequence[str] = "model",
    error: str | None = None,
    title: str = "",
    ylabel: str = "",
) -> Path:
    """One line per group of `line` columns: `y` against `x` (with an error band from `error`)."""
    groups = [line] if isinstance(line, str) else list(line)
    fig, ax = plt.subplots(figsize=(8, 4))
    for key, rows in frame.sort(x).group_by(groups, maintain_order=True):
        label = " / ".join(str(k) for k in key)
        xs, ys = rows[x].to_list(), rows[y].to_list()
        ax.plot(xs, ys, marker="o", ms=3, label=label)
        if error is not None:
            err = rows[error].fill_null(0).to_list()
            ax.fill_between(
                xs, [a - b for a, b in zip(ys, err)], [a + b for a, b in zip(ys, err)], alpha=0.2
            )
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel or y)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return save_figure(fig, path)


def heatmap(
    frame: pl.DataFrame,
    path: str | Path,
    *,
    rows: str,
    columns: str,
    value: str = "value",
    title: str = "",
    fmt: str = "{:.2f}",
) -> Path:
    """Heatmap of `value` over `rows` x `columns` (mean where several rows share a cell)."""
    table = frame.group_by(rows, columns).agg(pl.col(value).mean()).sort(rows, columns)
    row_keys = sorted(table[rows].unique().to_list())
    col_keys = sorted(table[columns].unique().to_list())
    cell = {(r, c): v for r, c, v in table.select(rows, columns, value).iter_rows()}
    grid = [[cell.get((r, c), float("nan")) for c in col_keys] for r in row_keys]
    fig, ax = plt.subplots(
        figsize=(max(4, 0.55 * len(col_keys) + 2), max(3, 0.4 * len(row_keys) + 1.5))
    )
    image = ax.imshow(grid, aspect="auto", cmap="viridis")
    ax.set_xticks(
        range(len(col_keys)), [str(c) for c in col_keys], rotation=60, ha="right", fontsize=7
    )
    ax.set_yticks(range(len(row_keys)), [str(r) for r in row_keys], fontsize=7)
    if len(row_keys) * len(col_keys) <= 400:
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                if v == v:
                    ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=6, color="w")
    ax.set_xlabel(columns)
    ax.set_ylabel(rows)
    ax.set_title(title)
    fig.colorbar(image, ax=ax)
    return save_figure(fig, path)


def bars(frame: pl.DataFrame, path: str | Path, *, label: str, value: str, title: str = "") -> Path:
    """Horizontal bar chart of `value` per `label`, best at the top."""
    ordered = frame.sort(value)
    fig, ax = plt.subplots(figsize=(6, max(2.5, 0.3 * ordered.height + 1)))
    ax.barh(ordered[label].cast(pl.String).to_list(), ordered[value].to_list())
    ax.set_xlabel(value)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    return save_figure(fig, path)


def save_figure(fig: plt.Figure, path: str | Path) -> Path:
    """Save a figure as PNG atomically (temporary file + rename) and close it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    tmp = target.with_name(f".{target.name}.tmp.png")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    tmp.replace(target)
    return target
