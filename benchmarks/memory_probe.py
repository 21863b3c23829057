"""Peak resident memory of one extraction, in a fresh process: `python -m benchmarks.memory_probe`.

MODE `features`: lingprobe features at every layer (pooled on the fly);
MODE `cache`: transformer-lens `run_with_cache` of every layer's residual stream, then pooling.
Prints the peak RSS increase (MiB) over the state after loading the model and a warm-up.
"""

from __future__ import annotations

import sys

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


def main(mode: str, n: int = 256) -> None:
    from benchmarks.ewt_sample import word_items
    from internals import load_subject, sites
    from internals.pool import pool_spans

    items = word_items(n)
    backend = "lens" if mode == "cache" else "nnsight"
    subject = load_subject(
        "sentence-transformers/all-MiniLM-L6-v2", backend=backend, batch_size=256
    )
    subject.features(items[:4], progress=False)  # warm-up
    base = reset_peak()
    if mode == "features":
        subject.features(items, sites.every_layer(subject), progress=False)
    else:
        bridge = subject.backend.bridge
        encoded, _ = subject.encode(items)
        from internals.batching import collate, length_buckets

        lengths = [len(e.input_ids) for e in encoded]
        for index in length_buckets(lengths, 256, 10**9):
            batch = collate(
                [encoded[i] for i in index], subject._padding(), ["encoder"], subject.device
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
    print(f"{peak_mib() - base:.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
