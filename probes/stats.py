"""Statistics on trained probes: paired bootstrap intervals, paired tests and Holm's correction.

All probes of a run are scored on the same test items, so one draw of the items serves every
probe: `bootstrap_probes` resamples them (`ItemResamples`) into `Replicates`, and
`confidence_interval` turns replicates into BCa or percentile intervals; `seed_mean_intervals`
gives the intervals of seed means that `ProbeResults.summary(ci=...)` shows, and
`bootstrap_rank_metrics` those of AUROC and recall at a false-positive rate. `compare_probes`
pairs two selections of probes and tests their difference (`permutation_test` over
`SwapPatterns`, or `bootstrap_p_values`); `holm_bonferroni` corrects a family of p-values.

This namespace is a module that re-exports, not a package that holds the code: the
implementations (`probes.bootstrap`, `probes.compare`, `probes.significance`,
`probes.intervals`, `probes.rank_bootstrap`) are imported by `ProbeResults` and by each other,
and a package's `__init__` would run, and import all of them, on each such import.
"""

from probes._grid.resampling import ItemResamples, SwapPatterns
from probes.bootstrap import IntervalMethod, Replicates, bootstrap_probes, confidence_interval
from probes.compare import compare_probes
from probes.intervals import seed_mean_intervals
from probes.rank_bootstrap import bootstrap_rank_metrics
from probes.significance import bootstrap_p_values, holm_bonferroni, permutation_test

__all__ = [
    "IntervalMethod",
    "ItemResamples",
    "Replicates",
    "SwapPatterns",
    "bootstrap_p_values",
    "bootstrap_probes",
    "bootstrap_rank_metrics",
    "compare_probes",
    "confidence_interval",
    "holm_bonferroni",
    "permutation_test",
    "seed_mean_intervals",
]
