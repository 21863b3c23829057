"""`python -m benchmarks.performance_page` renders the performance page from figures JSON, and
the `figures` record the benchmarks write is what the page reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import performance_page
from benchmarks.figures import Figures, figures_dir

FIXTURE = {
    "schema": 1,
    "benchmark": "bench_probes_logistic::test_bench_logistic_batched_vs_sklearn_loop",
    "file": "benchmarks/bench_probes_logistic.py",
    "ratio": 4.567,
    "against": "a loop of scikit-learn LogisticRegression",
    "at_least": 4.0,
    "at_most": None,
    "met": True,
    "times_s": {"lingprobe": 10.0, "scikit-learn": 45.67},
    "peak_rss_mib": None,
    "figures": {},
    "process_peak_rss_mib": 900.0,
    "load_average": [3.25, 2.0, 1.0],
    "machine": {"cpu": "Test CPU", "cpus": 2, "gpu": None},
    "commit": "abc1234def",
    "dirty": False,
    "date": "2026-11-27T14:00:00+00:00",
}


def write_fixture(folder: Path, **changes: object) -> None:
    record = {**FIXTURE, **changes}
    name = str(record["benchmark"]).replace("::", "__")
    (folder / f"{name}.json").write_text(json.dumps(record))


def test_page_renders_one_row_per_benchmark_and_each_files_description(tmp_path: Path) -> None:
    write_fixture(tmp_path)
    write_fixture(
        tmp_path,
        benchmark="bench_store_verify::test_cached_extraction_verified_vs_unverified",
        file="benchmarks/bench_store_verify.py",
        ratio=1.2,
        against="the store without verification",
        at_least=None,
        at_most=1.05,
        met=False,
        peak_rss_mib=1536.0,
        dirty=True,
    )
    out = tmp_path / "performance.md"
    assert performance_page.main(["--figures", str(tmp_path), "--out", str(out)]) == 0
    page = out.read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `bench_")]
    assert len(rows) == 2
    logistic, store = rows
    assert "**4.57×**" in logistic and "≥ 4× (met)" in logistic
    assert "Test CPU, 2 CPUs; load 3.2" in logistic and "`abc1234def`" in logistic
    assert "2026-11-27" in logistic
    assert "**1.20×**" in store and "≤ 1.05× (missed)" in store and "(modified)" in store
    assert "1,536 MiB" in store
    # how each number is measured: the benchmark file's own docstring, once per file
    assert page.count("### `benchmarks/bench_probes_logistic.py`") == 1
    assert "26 probes (13 sites x {task, control})" in page


def test_page_without_figures_says_how_to_make_them(tmp_path: Path) -> None:
    page = performance_page.render([])
    assert "No figures yet" in page and "-m quick" in page


def test_a_record_round_trips_through_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LINGPROBE_BENCH_FIGURES", str(tmp_path))
    source = Path(performance_page.__file__).with_name("bench_bootstrap.py")
    record = Figures("bench_bootstrap::test_x", source)
    with pytest.raises(RuntimeError, match="recorded no figures"):
        record.write()
    record.record(ratio=25.0, against="scipy", at_least=20.0, times={"lingprobe": 1.0})
    written = record.write()
    assert written.parent == figures_dir() == tmp_path
    data = json.loads(written.read_text())
    assert data["met"] is True and data["file"] == "benchmarks/bench_bootstrap.py"
    assert data["machine"]["cpus"] >= 1 and len(data["load_average"]) == 3
    page = performance_page.render(performance_page.load_figures(tmp_path))
    assert "**25.00×**" in page and "≥ 20× (met)" in page
