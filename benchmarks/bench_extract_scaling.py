"""Extraction time and peak memory for 1k, 10k and 100k word items (MiniLM, every layer).

Each size runs in a fresh process (`benchmarks.memory_probe scale N`) so peaks do not mix. The
table goes to `$LINGPROBE_BENCH_OUT` (default `results/benchmarks/`) as parquet and CSV, with a
log-log plot; the growth exponent between sizes (log time ratio / log size ratio) is printed.
The returned features themselves take items x 7 sites x 384 x 4 bytes; the rest of the peak is
working memory.
"""

from __future__ import annotations

import math
from itertools import pairwise

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl
import pytest

from benchmarks.ewt_sample import ewt_path
from benchmarks.extract_common import OUT, fresh_process, load
from benchmarks.figures import Figures

SIZES = (1_000, 10_000, 100_000)
OUTPUT_MIB_PER_ITEM = 7 * 384 * 4 / 2**20


@pytest.mark.full
@pytest.mark.needs_data
def test_extraction_scaling(figures: Figures) -> None:
    ewt_path("train")  # skip early, with a message, when the data is not there
    rows = []
    for n in SIZES:
        result = fresh_process("scale", str(n))
        rows.append(
            {
                "items": n,
                "seconds": result["seconds"],
                "peak_mib": result["peak_mib"],
                "output_mib": n * OUTPUT_MIB_PER_ITEM,
                "ms_per_item": 1e3 * result["seconds"] / n,
            }
        )
    table = pl.DataFrame(rows).with_columns(
        working_mib=pl.col("peak_mib") - pl.col("output_mib"), load=pl.lit(load())
    )
    OUT.mkdir(parents=True, exist_ok=True)
    table.write_parquet(OUT / "extract_scaling.parquet")
    table.write_csv(OUT / "extract_scaling.csv")
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    axes[0].loglog(table["items"], table["seconds"], "o-")
    axes[0].set(xlabel="word items", ylabel="seconds", title="extraction time")
    axes[1].loglog(table["items"], table["peak_mib"], "o-", label="peak RSS increase")
    axes[1].loglog(table["items"], table["output_mib"], "--", label="returned features")
    axes[1].set(xlabel="word items", ylabel="MiB", title="peak memory")
    axes[1].legend()
    figure.tight_layout()
    figure.savefig(OUT / "extract_scaling.png", dpi=120)
    plt.close(figure)
    print(f"\n[scaling] MiniLM, every layer (7 sites), EWT train words ({load()})")
    print(table.drop("load"))
    for a, b in pairwise(rows):
        time_growth = math.log(b["seconds"] / a["seconds"]) / math.log(b["items"] / a["items"])
        memory_growth = math.log(b["peak_mib"] / a["peak_mib"]) / math.log(b["items"] / a["items"])
        print(
            f"  {a['items']} -> {b['items']} items: time grows as n^{time_growth:.2f},"
            f" peak memory as n^{memory_growth:.2f}"
        )
    print(f"  written to {OUT}/extract_scaling.{{parquet,csv,png}}")
    first, last = rows[0], rows[-1]
    figures.record(
        ratio=None,
        against="(a scaling curve: time and peak memory against the number of items)",
        times={f"{r['items']}_items": r["seconds"] for r in rows},
        peak_rss_mib=last["peak_mib"],
        time_growth_exponent=math.log(last["seconds"] / first["seconds"])
        / math.log(last["items"] / first["items"]),
        peak_mib_by_items={str(r["items"]): r["peak_mib"] for r in rows},
    )
