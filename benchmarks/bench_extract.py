"""Extraction benchmarks: hooks + alignment + pooling vs a bare forward pass and the alternatives.

Each test times lingprobe and the alternative a user would otherwise write in the same run and
prints the ratio (goal: features <= 1.10x a bare forward; vectorised pooling >= 100x a loop).
"""

from __future__ import annotations

import statistics

import pytest
import torch

from benchmarks.ewt_sample import word_items
from benchmarks.extract_common import (
    fresh_process,
    interleaved,
    load,
    median_of,
    model_batches,
    plain_model,
    ratio_line,
)
from benchmarks.figures import Figures
from internals import load_subject, sites
from internals.packaged import MINILM, SMOLLM2
from internals.pool import TokenSegments, pool_spans
from internals.reading import Reading

N_SENTENCES = 512
N_DECODER_SENTENCES = 128


@pytest.fixture(scope="module")
def minilm():
    return load_subject(MINILM)


@pytest.fixture(scope="module")
def items():
    return word_items(N_SENTENCES)


@pytest.fixture(scope="module")
def batches(minilm, items):
    return model_batches(minilm, items)


@pytest.mark.quick
def test_features_vs_bare_forward(figures: Figures, minilm, items, batches):
    every = sites.every_layer(minilm)
    model = plain_model(MINILM)  # unhooked: the subject's own copy carries nnsight's wrappers

    def bare():
        with torch.no_grad():
            for batch in batches:
                model(**batch.inputs)

    def ours():
        minilm.features(items, every, progress=False)

    def hidden_states_loop():
        minilm.plan(items, Reading())  # a user aligns words to tokens too
        with torch.no_grad():
            for batch in batches:
                states = model(**batch.inputs, output_hidden_states=True).hidden_states
                segments = batch.segments["encoder"]
                starts = torch.cumsum(segments.lengths, 0) - segments.lengths
                for state in states:
                    flat = state.reshape(-1, state.shape[-1])
                    for s, n in zip(starts.tolist(), segments.lengths.tolist()):
                        flat[segments.positions[s : s + n]].mean(0)

    lens = load_subject(MINILM, backend="lens")

    def lens_cache():
        with torch.no_grad():
            for batch in batches:
                _, cache = lens.backend.bridge.run_with_cache(
                    batch.inputs["input_ids"],
                    attention_mask=batch.inputs["attention_mask"],
                    names_filter=lambda n: (
                        n.endswith("hook_resid_post") or n == "blocks.0.hook_resid_pre"
                    ),
                )
                for name in cache:
                    pool_spans(cache[name], batch.segments["encoder"], "mean")

    bare_runs, our_runs = interleaved([bare, ours])
    t_bare, t_ours = statistics.median(bare_runs), statistics.median(our_runs)
    t_lens_ours = median_of(lambda: lens.features(items, every, progress=False), rounds=1)
    t_loop = median_of(hidden_states_loop, rounds=1)
    t_lens = median_of(lens_cache, rounds=1)
    figures.record(
        ratio=min(our_runs) / min(bare_runs),
        against="a bare forward pass of MiniLM on the same batches",
        at_most=1.10,
        times={
            "lingprobe": t_ours,
            "bare_forward": t_bare,
            "lingprobe_lens": t_lens_ours,
            "hidden_states_loop": t_loop,
            "run_with_cache": t_lens,
        },
        median_ratio=t_ours / t_bare,
        speedup_vs_hidden_states_loop=t_loop / t_ours,
        speedup_vs_run_with_cache=t_lens / t_ours,
    )
    print(
        f"\n[extract] MiniLM, {N_SENTENCES} EWT sentences, {len(items)} word items, 7 sites,"
        f" {len(batches)} batches, medians of 5 interleaved rounds ({load()})"
    )
    rows = [
        ("bare forward (same batches)", t_bare, ""),
        (
            "lingprobe features (auto = nnsight)",
            t_ours,
            f"{ratio_line(our_runs, bare_runs)} (goal <= 1.10)",
        ),
        ("lingprobe features (backend=lens)", t_lens_ours, f"{t_lens_ours / t_bare:.3f}x bare"),
        ("output_hidden_states + Python loop", t_loop, f"lingprobe {t_loop / t_ours:.1f}x faster"),
        ("transformer-lens run_with_cache", t_lens, f"lingprobe {t_lens / t_ours:.1f}x faster"),
    ]
    for label, seconds, note in rows:
        print(f"  {label:<38}{seconds:8.3f} s   {note}")


@pytest.mark.quick
def test_pooling_vectorised_vs_loop(benchmark, figures: Figures):
    generator = torch.Generator().manual_seed(0)
    batch, tokens, dim = 64, 40, 384
    hidden = torch.randn(batch, tokens, dim, generator=generator)
    rows = []
    for b in range(batch):
        start = 1
        while start < tokens - 1:
            length = int(torch.randint(1, 4, (1,), generator=generator))
            end = min(tokens - 1, start + length)
            rows.append((b, start, end))
            start = end
    ranges = torch.tensor(rows)
    segments = TokenSegments.from_ranges(ranges, tokens)

    def loop():
        return torch.stack([hidden[b, s:e].mean(0) for b, s, e in rows])

    def vectorised():
        return pool_spans(hidden, segments, "mean")

    torch.testing.assert_close(vectorised(), loop(), rtol=1e-5, atol=1e-6)
    t_loop = median_of(loop)
    result = benchmark(vectorised)  # pytest-benchmark's rounds of the short operation
    stats = getattr(benchmark.stats, "stats", None)  # None under --benchmark-disable
    t_vec = stats.median if stats is not None else median_of(vectorised, rounds=20)
    assert result.shape == (len(rows), dim)
    print(
        f"\n[pool] {len(rows)} spans over [{batch}, {tokens}, {dim}]: loop {t_loop * 1e3:.2f} ms,"
        f" vectorised {t_vec * 1e3:.3f} ms (median), ratio {t_loop / t_vec:.0f}x (goal >= 100x)"
    )
    figures.record(
        ratio=t_loop / t_vec,
        against="a Python loop over the spans",
        at_least=100.0,
        times={"lingprobe": t_vec, "loop": t_loop},
    )


@pytest.mark.quick
def test_peak_memory_features_vs_run_with_cache(figures: Figures):
    ours = fresh_process("features")
    cache = fresh_process("cache")
    print(
        f"\n[memory] peak RSS increase, MiniLM every layer, 256 sentences in one batch:"
        f" lingprobe {ours['peak_mib']:.0f} MiB, run_with_cache {cache['peak_mib']:.0f} MiB"
        f" ({cache['peak_mib'] / max(ours['peak_mib'], 1):.1f}x more) ({load()})"
    )
    figures.record(
        ratio=cache["peak_mib"] / max(ours["peak_mib"], 1),
        against="transformer-lens run_with_cache (peak RSS increase)",
        at_least=1.0,
        times={"lingprobe": ours["seconds"], "run_with_cache": cache["seconds"]},
        peak_rss_mib=ours["peak_mib"],
        peak_rss_run_with_cache_mib=cache["peak_mib"],
    )


@pytest.mark.full
@pytest.mark.parametrize("side", ["right", "left"])
def test_decoder_features_vs_bare_forward(figures: Figures, side):
    """SmolLM2-135M (30 layers, every site) against a bare forward on the same batches."""
    subject = load_subject(SMOLLM2, padding_side=side)
    chosen = word_items(N_DECODER_SENTENCES)
    every = sites.every_layer(subject)
    same = model_batches(subject, chosen)
    model = plain_model(SMOLLM2)  # unhooked: the subject's own copy carries nnsight's wrappers

    def bare():
        with torch.no_grad():
            for batch in same:
                model(**batch.inputs)

    def ours():
        subject.features(chosen, every, progress=False)

    bare_runs, our_runs = interleaved([bare, ours])
    t_bare, t_ours = statistics.median(bare_runs), statistics.median(our_runs)
    figures.record(
        ratio=min(our_runs) / min(bare_runs),
        against=f"a bare forward pass of SmolLM2-135M on the same batches ({side} padding)",
        at_most=1.10,
        times={"lingprobe": t_ours, "bare_forward": t_bare},
        median_ratio=t_ours / t_bare,
    )
    print(
        f"\n[extract] SmolLM2-135M, {side} padding, {N_DECODER_SENTENCES} EWT sentences,"
        f" {len(chosen)} word items, {len(every)} sites, {len(same)} batches, 5 interleaved"
        f" rounds: bare forward {min(bare_runs):.2f} s, lingprobe {min(our_runs):.2f} s ="
        f" {ratio_line(our_runs, bare_runs)} (goal <= 1.10) ({load()})"
    )
