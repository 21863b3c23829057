"""Skinny products that stream a large operand from memory, through oneDNN on the CPU.

The logistic objective's two products per row block, `W [p K, D] @ rows^T` and
`dz [p K, rows] @ rows`, have a few dozen output rows and read a feature block that is not in
cache. On the CPU, torch's `mm` (MKL) overlaps that stream poorly; oneDNN's inner-product kernel
(the one behind `torch.nn.Linear` in compiled CPU graphs, `torch.ops.mkldnn._linear_pointwise`)
reads it faster, in both products (`benchmarks/bench_probes_logistic_real.py`; figures in
`benchmarks/HISTORY.md`). The grid's evaluation products, 170 outputs per site, gained in one
thread but not on two: not used there. It is used for
float32 tensors on the CPU when this torch build has it and it agrees with `mm` on a small
check; otherwise, and on any other device or dtype, the product is torch's. The two differ only
in rounding.
"""

from __future__ import annotations

from functools import cache

import torch
from jaxtyping import Float
from torch import Tensor


@cache
def onednn_available() -> bool:
    """Whether oneDNN's inner product runs here and matches `torch.mm` on a small product."""
    op = getattr(torch.ops.mkldnn, "_linear_pointwise", None)
    if op is None or not torch.backends.mkldnn.is_available():
        return False
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(5, 7, generator=gen), torch.randn(9, 7, generator=gen)
    try:  # b as a transposed view, as `matmul_nt(dz, rows.T)` gives it
        out = op(a, b.T.contiguous().T, None, "none", [], "")
    except (RuntimeError, NotImplementedError):
        return False
    return out.shape == (5, 9) and bool(torch.allclose(out, a @ b.T, rtol=1e-5, atol=1e-5))


def matmul_nt(a: Float[Tensor, "m k"], b: Float[Tensor, "n k"]) -> Float[Tensor, "m n"]:
    """`a @ b.T` (b may be a transposed view, e.g. `rows.T` for `dz @ rows`)."""
    on_cpu = a.device.type == b.device.type == "cpu"
    if on_cpu and a.dtype == b.dtype == torch.float32 and onednn_available():
        out: Tensor = torch.ops.mkldnn._linear_pointwise(a, b, None, "none", [], "")
        return out
    return a @ b.T
