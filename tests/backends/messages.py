"""Small broken backends whose failure messages the suite must spell out (C-CONF-3).

Each differs from ``SortedListClock`` by one defect; ``tests/test_conformance_verdicts.py``
checks that the suite's message gives what it expected and what it observed.
"""

from __future__ import annotations

from simclock import Bus

from .sorted_list import SortedListClock

__all__ = ["now_rounds_up"]

_EXACT = 2**53
"""Up to here a float64 holds every integer; past it, float seconds lose the odd ns."""


class _NowRoundsUp(SortedListClock):
    """``now_ns()`` past 2**53 reports an odd time as the next even one (float seconds)."""

    def now_ns(self) -> int:
        now = super().now_ns()
        return now + (now & 1) if now > _EXACT else now  # defect: rounds up like a float


def now_rounds_up(seed: int, bus: Bus) -> SortedListClock:
    """A clock whose ``now_ns()`` runs one ns past an odd target above 2**53."""
    return _NowRoundsUp(seed, bus)
