"""Peak memory and time of one extraction in a fresh process: `python -m benchmarks.memory_probe`.

Modes (each prints one JSON line: `peak_mib`, the peak RSS increase over the state after loading
the model and a warm-up, and `seconds`, the extraction's wall time):
- `features`: lingprobe features of 256 EWT sentences' words at every MiniLM layer, one batch;
- `cache`: transformer-lens `run_with_cache` of every layer's residual stream, then pooling;
- `scale N`: MiniLM features of the first N EWT train words at every layer (the scaling curve);
- `batcher budget|fixed`: SmolLM2 features of 128 EWT sentences' words at every layer, token
  budget or fixed 64-text batches.
"""

from __future__ import annotations

import json
import sys
import time

import torch


def _status(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def reset_peak() -> float:
    """Reset the kernel's peak-RSS mark (Linux `clear_refs` 5); return the current RSS, MiB."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    return _status("VmRSS")


def peak_mib() -> float:
    """Peak resident set size since the last reset, MiB."""
    return _status("VmHWM")


def _run_with_cache(subject, items) -> None:
    from internals.batching import collate
    from internals.pool import pool_spans
    from internals.reading import Reading

    bridge = subject.backend.bridge
    plan, _ = subject.plan(items, Reading())
    lengths = [len(row.input_ids) for row in plan.rows]
    for index in subject.batches(lengths):
        batch = collate(
            [plan.rows[i] for i in index], subject._padding(), ["encoder"], subject.device
        )
        with torch.no_grad():
            _, cache = bridge.run_with_cache(
                batch.inputs["input_ids"],
                attention_mask=batch.inputs["attention_mask"],
                names_filter=lambda name: (
                    name.endswith("hook_resid_post") or name == "blocks.0.hook_resid_pre"
                ),
            )
        for name in cache:
            pool_spans(cache[name], batch.segments["encoder"], "mean")
        del cache


def main(mode: str, *args: str) -> None:
    from benchmarks.ewt_sample import first_words, word_items
    from internals import load_subject, sites
    from internals.packaged import MINILM, SMOLLM2

    spec, options = MINILM, {}
    big_batches = {"batch_size": 256, "batch_tokens": 10**9}  # one batch: what a user writes
    if mode == "features":
        items, options = word_items(256), big_batches
    elif mode == "cache":
        items, options = word_items(256), {"backend": "lens", **big_batches}
    elif mode == "scale":
        items = first_words(int(args[0]))
    elif mode == "batcher":
        items, spec = word_items(128), SMOLLM2
        options = {"batch_size": 64} if args[0] == "fixed" else {}
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    subject = load_subject(spec, **options)
    subject.features(items[:4], progress=False)  # warm-up
    base = reset_peak()
    start = time.perf_counter()
    if mode == "cache":
        _run_with_cache(subject, items)
    else:
        subject.features(items, sites.every_layer(subject), progress=False)
    seconds = time.perf_counter() - start
    print(json.dumps({"peak_mib": peak_mib() - base, "seconds": seconds, "items": len(items)}))


if __name__ == "__main__":
    main(*sys.argv[1:])
