"""Concept erasure: LEACE (Belrose et al. 2023) and INLP (Ravfogel et al. 2020), per site.

`fit_leace` and `fit_inlp` return erasers (`AffineEraser`, one low-rank affine map per site;
`InlpResult` adds INLP's per-iteration accuracies), `random_eraser` a same-rank random baseline,
and `erase_then_probe` fits an eraser on the training items and probes the erased features. The
modules below this package are private (`_leace`, `_inlp`, `_then_probe`): import from
`probes.erasure`.
"""

from probes.erasure._inlp import InlpResult, fit_inlp
from probes.erasure._leace import AffineEraser, fit_leace, random_eraser
from probes.erasure._then_probe import erase_then_probe

__all__ = [
    "AffineEraser",
    "InlpResult",
    "erase_then_probe",
    "fit_inlp",
    "fit_leace",
    "random_eraser",
]
