"""One look for every figure lingprobe draws: colours, line styles, words, and fitting layouts.

- A model keeps its colour in every figure (a stable hash of its name picks it from a
  colour-blind-safe palette); its random-init twin has the same hue, lighter. Where one model is
  shown, pretrained and random keep two fixed colours.
- A test set or probe variant keeps its line style (original solid, Mem-Exact dashed, ...).
- Axis labels and titles use words (a metric's label in `probes.metric_table`, else `LABELS`),
  never column names or abbreviations.
- `fit(fig)` grows a figure until nothing it draws (titles, tick labels, legends, colour bars)
  falls outside the canvas.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

from matplotlib import colors as mcolors
from matplotlib.figure import Figure

from probes import METRICS

# Okabe & Ito (2008) colour-blind-safe palette, then matplotlib's tab10 for more models.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
    *mcolors.TABLEAU_COLORS.values(),
)
INIT_COLOURS = {"pretrained": "#0072B2", "random": "#D55E00"}
LINE_STYLES = {
    "original": "-",
    "test": "-",
    "mem_exact": "--",
    "mem_freq": ":",
    "mem_uniform": "-.",
    "task": "-",
    "control": ":",
    "pair": "-",
    "hypothesis": "--",
}
# Legends list lines in reading order: pretrained before its random twin, the original test set
# before the filtered ones, the task before its control; other values alphabetically.
READING_ORDER = {
    "pretrained": 0,
    "random": 1,
    "original": 0,
    "test": 0,
    "mem_exact": 1,
    "mem_freq": 2,
    "mem_uniform": 3,
    "task": 0,
    "control": 1,
    "pair": 0,
    "hypothesis": 1,
}
LABELS = {
    "mwr": "mean winning rate",
    "phenomenon_type": "phenomenon type",
    "selectivity": "selectivity (task − control)",
    "drop_pct": "drop on the filtered test set (%)",
    "mem_exact": "Mem-Exact",
    "mem_freq": "Mem-Freq",
    "mem_uniform": "Mem-Uniform",
    "original": "original",
    "layer": "layer",
    "n_per_label": "training examples per label",
    "v_information": "V-information (bits)",
    "score": "score",
    "model": "model",
    "task": "task",
    "value": "feature value",
}
MAX_INCHES = 16.0  # no figure grows wider or taller than this


def label(name: object) -> str:
    """The words for a metric (its label in `probes.metric_table`), column or test-set name."""
    record = METRICS.get(str(name))
    words = (record.label if record else None) or LABELS.get(str(name))
    return words or str(name).replace("_", " ")


def short_model(name: object) -> str:
    """A model name without its hub organisation (`org/model@random` -> `model@random`)."""
    return str(name).split("/")[-1]


def short_names(names: Iterable[object]) -> dict[str, str]:
    """How each of `names` is shown: `short_model` where that stays unique among them, else the
    full name, so two models never share a label. A model and its `@random` twin count as one
    model: `alice/bert` and `bob/bert@random` both keep their organisation."""
    full = list(dict.fromkeys(str(n) for n in names))
    bases = {n.removesuffix("@random") for n in full}
    clashes = Counter(short_model(b) for b in bases)
    taken = set(full)
    shown = {}
    for name in full:
        candidate = short_model(name)
        clash = clashes[short_model(name.removesuffix("@random"))] > 1
        shown[name] = name if clash or (candidate != name and candidate in taken) else candidate
    return shown


def model_colour(model: object, init: object = "pretrained") -> str:
    """The colour of a model in every figure; its random twin is a lighter shade of it."""
    base = str(model).removesuffix("@random")
    index = int(hashlib.sha256(base.encode()).hexdigest(), 16) % len(PALETTE)
    colour = mcolors.to_rgb(PALETTE[index])
    if str(init) == "random" or str(model).endswith("@random"):
        colour = tuple(c + (1 - c) * 0.55 for c in colour)  # type: ignore[assignment]
    return mcolors.to_hex(colour)


def colour_for(key: dict[str, object], single_model: bool) -> str:
    """The colour of a line or bar from its identifying columns (model, init)."""
    init = key.get("init", "pretrained")
    if single_model and str(init) in INIT_COLOURS:
        return INIT_COLOURS[str(init)]
    return model_colour(key.get("model", key.get("label", "")), init)


def reading_order(key: dict[str, object]) -> tuple[tuple[int, str], ...]:
    """The sort key of a legend entry from its identifying columns, in their order: known
    values by `READING_ORDER`, then the others alphabetically."""
    return tuple((READING_ORDER.get(str(v), len(READING_ORDER)), str(v)) for v in key.values())


def line_style(key: dict[str, object]) -> str:
    """The line style of a test set or variant (solid when it has none)."""
    for column in ("test_set", "variant", "input"):
        if column in key:
            return LINE_STYLES.get(str(key[column]), "-")
    return "-"


def fit(fig: Figure, pad: float = 0.05) -> Figure:
    """Lay the figure out so everything it draws lies inside the canvas (growing it if needed)."""
    for _ in range(4):
        fig.tight_layout()
        canvas = fig.bbox_inches
        drawn = fig.get_tightbbox()
        if inside(fig):
            return fig
        width = min(MAX_INCHES, max(canvas.width, drawn.width) + 2 * pad + abs(min(drawn.x0, 0)))
        height = min(MAX_INCHES, max(canvas.height, drawn.height) + 2 * pad)
        if (width, height) == (canvas.width, canvas.height):
            break
        fig.set_size_inches(width, height)
    fig.tight_layout()
    return fig


def inside(fig: Figure, tolerance: float = 0.02) -> bool:
    """True when nothing the figure draws crosses its edges (in inches)."""
    canvas = fig.bbox_inches
    drawn = fig.get_tightbbox()
    return bool(
        drawn.x0 >= canvas.x0 - tolerance
        and drawn.y0 >= canvas.y0 - tolerance
        and drawn.x1 <= canvas.x1 + tolerance
        and drawn.y1 <= canvas.y1 + tolerance
    )


def texts(fig: Figure) -> dict[str, list[str]]:
    """Every title, axis label and legend entry of a figure (tests read figures with this)."""
    found: dict[str, list[str]] = {"title": [], "xlabel": [], "ylabel": [], "legend": []}
    for ax in fig.axes:
        found["title"] += [t for t in (ax.get_title(), ax.get_title("left")) if t]
        if ax.get_xlabel():
            found["xlabel"].append(ax.get_xlabel())
        if ax.get_ylabel():
            found["ylabel"].append(ax.get_ylabel())
        legend = ax.get_legend()
        if legend is not None:
            found["legend"] += [t.get_text() for t in legend.get_texts()]
    if fig.get_suptitle():
        found["title"].append(fig.get_suptitle())
    if fig.get_suptitle():
        found["title"].append(fig.get_suptitle())
    for legend in fig.legends:
        found["legend"] += [t.get_text() for t in legend.get_texts()]
    return found
