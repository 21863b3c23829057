"""Holmes (Waldis et al. 2024): Holmes-format datasets, Holmes-style tasks, benchmark runs.

`read_holmes(folder)` reads the release format; `build_task(name)` builds Holmes-style tasks
from the shared data (BLiMP, EWT, SemEval, curriculum NLI); `run_holmes(models, tasks, out)`
probes every model on every task and writes the leaderboard; rankings live in
`suites.holmes.ranking`, FlashHolmes rank resolution in `suites.holmes.flash`.
`lingprobe run holmes` runs the suite resumably (`suites.holmes.suite`).
"""

from suites.holmes.blimp import read_blimp
from suites.holmes.catalog import available_tasks, build_task, build_tasks, expand_names
from suites.holmes.inventory import PHENOMENON_TYPES, InventoryEntry, inventory_frame, lookup
from suites.holmes.published import (
    published_curve,
    published_flash_scores,
    published_scores,
    read_leaderboard,
)
from suites.holmes.release import read_holmes, read_holmes_tree
from suites.holmes.release_config import ReleaseConfig, read_config
from suites.holmes.run import HolmesConfig, HolmesRunError, collect_leaderboard, run_holmes
from suites.holmes.summary import (
    HolmesSummary,
    summarize,
    summarize_scores,
    write_published,
    write_summary,
)

__all__ = [
    "PHENOMENON_TYPES",
    "HolmesConfig",
    "HolmesRunError",
    "HolmesSummary",
    "InventoryEntry",
    "ReleaseConfig",
    "available_tasks",
    "build_task",
    "build_tasks",
    "collect_leaderboard",
    "expand_names",
    "inventory_frame",
    "lookup",
    "published_curve",
    "published_flash_scores",
    "published_scores",
    "read_blimp",
    "read_config",
    "read_holmes",
    "read_holmes_tree",
    "read_leaderboard",
    "run_holmes",
    "summarize",
    "summarize_scores",
    "write_published",
    "write_summary",
]
