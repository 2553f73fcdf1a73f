"""A correct but hopelessly slow backend: it visits every nanosecond it advances over.

Its behaviour is the sorted-list backend's, but ``advance(10**12)`` takes
hours: the suite must fail the clauses whose tests it hangs in (C-CONF-2)
and still end with its report.
"""

from __future__ import annotations

from simclock import Bus

from .sorted_list import SortedListClock

__all__ = ["EveryNanosecondClock", "factory"]


class EveryNanosecondClock(SortedListClock):
    """``advance`` walks the time line one nanosecond at a time before firing."""

    def advance(self, dt_ns: int) -> None:
        """Walk to ``now + dt`` one ns at a time, then fire as the sorted list does."""
        dt = self._time(dt_ns, "dt_ns")
        if not self._busy:
            t, target = self._now, self._now + dt
            while t < target:
                t += 1
        super().advance(dt)


def factory(seed: int, bus: Bus) -> EveryNanosecondClock:
    """``FACTORY(seed, bus)`` for the conformance suite."""
    return EveryNanosecondClock(seed, bus)
