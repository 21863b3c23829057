"""Progress of an extraction, reported through a callback; the bar lives at the edge (`features`).

A subject's `compute` calls `progress(ProgressStep(...))` after each batch. `ProgressBar` turns
those steps into a tqdm bar that counts items, with the padding waste (padded tokens / real
tokens) in its postfix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from tqdm.auto import tqdm


@dataclass(frozen=True)
class ProgressStep:
    """Work finished since the last step: items, and the real and padded tokens run for them."""

    items: int
    real_tokens: int = 0
    padded_tokens: int = 0


ProgressCallback = Callable[[ProgressStep], None]


class ItemCounter:
    """Spreads `total` items over `units` of work (rows) so that the steps add up to `total`."""

    def __init__(self, total: int, units: int) -> None:
        self.total, self.units = total, max(1, units)
        self.done_units, self.done = 0, 0

    def advance(self, units: int) -> int:
        """Items finished after `units` more units of work (cumulative rounding)."""
        self.done_units = min(self.units, self.done_units + units)
        now = round(self.total * self.done_units / self.units)
        step, self.done = now - self.done, now
        return step


class ProgressBar:
    """A tqdm bar over items fed by `ProgressStep`s; usable as the callback itself."""

    def __init__(self, total: int, description: str, enabled: bool) -> None:
        self.bar = tqdm(
            total=total, desc=description, unit="item", disable=not enabled, leave=False
        )
        self.real, self.padded = 0, 0

    def __call__(self, step: ProgressStep) -> None:
        self.real += step.real_tokens
        self.padded += step.padded_tokens
        if self.real:
            self.bar.set_postfix_str(f"padded/real tokens {self.padded / self.real:.3f}", False)
        self.bar.update(step.items)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.bar.close()
