"""Progress of a sweep: one overall bar over units, and a line per unit as it ends.

The bar counts finished units (those done in earlier runs count from the start) and shows how
many failed and which units are running. Under the local executor each unit also shows its
own bars (features, probe training) from `internals` and `probes`.
"""

from __future__ import annotations

from tqdm.auto import tqdm

from suites.sweep.units import Unit, UnitOutcome


class SweepProgress:
    """The overall bar and per-unit lines (silent when `enabled` is False)."""

    def __init__(self, total: int, done: int, enabled: bool = True) -> None:
        self.enabled = enabled
        self.bar = tqdm(
            total=total, initial=done, desc="sweep units", unit="unit", disable=not enabled
        )
        self.running: dict[str, Unit] = {}
        self.failed = 0

    def started(self, unit: Unit) -> None:
        """A unit was handed to a worker."""
        self.running[unit.id] = unit
        self._postfix()

    def finished(self, unit: Unit, outcome: UnitOutcome) -> None:
        """A unit ended (done or failed)."""
        self.running.pop(unit.id, None)
        if outcome.ok:
            line = f"done    {unit.title} ({outcome.seconds:.1f} s)"
        else:
            self.failed += 1
            assert outcome.error is not None
            line = f"FAILED  {unit.title}: {outcome.error.type}: {outcome.error.message}"
        if self.enabled:
            self.bar.write(line.splitlines()[0])
        self.bar.update()
        self._postfix()

    def _postfix(self) -> None:
        running = ", ".join(u.title for u in self.running.values())
        self.bar.set_postfix_str(f"failed={self.failed} running: {running or '-'}")

    def close(self) -> None:
        """End the bar."""
        self.bar.close()
