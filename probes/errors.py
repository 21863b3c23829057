"""The exceptions and warnings of `probes`: each names the bad field or value and the fix."""

from __future__ import annotations

from lingprobe.errors import LingprobeError


class ProbeInputError(LingprobeError, ValueError):
    """Features, targets, splits or keys that cannot be probed (shape, value, or content)."""


class TreeError(ProbeInputError):
    """One sentence's heads in `SentenceTrees` are not a dependency tree (no root, two roots, a
    cycle): `sentence` is its index among the trees, `problem` what is wrong with it, so a
    reader can name the sentence's file and line."""

    def __init__(self, sentence: int, problem: str) -> None:
        self.sentence = sentence
        self.problem = problem
        super().__init__(f"SentenceTrees: sentence {sentence} {problem}")


class ProbeConfigError(LingprobeError, ValueError):
    """A `ProbeGrid`, `TrainConfig` or `MDLBlocks` setting that is out of range or inconsistent."""


class ClassAbsentFromTrainWarning(UserWarning):
    """A class occurs in dev or test but never in train: no probe can learn to predict it.

    Training goes on (the class still counts in the metrics, lowering macro-F1), because rare
    classes missing from a small training split are common in real tagging data.
    """


class ResultsDamagedError(LingprobeError, OSError):
    """A saved results folder is incomplete or changed since it was saved (the message names the
    file); its numbers cannot be trusted, so nothing is loaded."""


class ProbeDivergedWarning(UserWarning):
    """Some probes' parameters or dev loss became NaN or inf during training; their metrics are
    NaN in the results (never scored) and `probes["diverged_epoch"]` says when it happened."""


class EmptySplitWarning(UserWarning):
    """A split has no items, so its metrics are NaN (e.g. no test items: no test score)."""


class LogisticConvergenceWarning(UserWarning):
    """`fit_logistic_regression` stopped at `max_iter` before every probe met `tol`."""


class DegenerateIntervalWarning(UserWarning):
    """A BCa interval is undefined for some statistics (the estimate lies outside every
    bootstrap replicate, or a leave-one-out value is NaN); they get the percentile interval."""
