"""A backend whose tie order changes from one clock to the next (C-TIE-1, C-DET-1).

Entries due at the same instant fire in an order drawn when each clock is
made: every run of the same program on a new clock breaks its ties
differently, as a scheduler does that shuffles ready tasks (trio) or orders
them by object address. The draws come from a counter of the clocks made in
this process, so the sequence of orders (and this backend's report) is the
same on every run of the suite. Otherwise it is the sorted-list backend.
"""

from __future__ import annotations

import itertools
import random

from simclock import Bus

from .sorted_list import SortedListClock

__all__ = ["ShuffledTiesClock", "factory"]

_CLOCKS_MADE = itertools.count()


class ShuffledTiesClock(SortedListClock):
    """Ties are broken by a random rank drawn per entry from this clock's own order."""

    def __init__(self, seed: int, bus: Bus | None = None, *, start_ns: int = 0) -> None:
        super().__init__(seed, bus, start_ns=start_ns)
        self._ranks = random.Random(next(_CLOCKS_MADE))

    def _key(self, at: int, seq: int) -> tuple[int, int]:
        return (-at, self._ranks.getrandbits(62))  # defect: ties in a random order


def factory(seed: int, bus: Bus) -> ShuffledTiesClock:
    """``FACTORY(seed, bus)`` for the conformance suite."""
    return ShuffledTiesClock(seed, bus)
