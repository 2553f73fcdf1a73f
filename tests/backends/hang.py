"""Backends that hang inside the standard library (C-CONF-2).

``in_stdlib``'s ``advance`` drains an endless ``heapq.merge`` (a pure-Python
generator of the standard library) in one line; ``in_library``'s calls a
helper module (:mod:`backends.spinlib`, standing for the library a backend
is built on) that does so. When the time limit fires, the innermost frame is
``heapq.py``: the report must name the backend's line (or its library's).
Otherwise both are the sorted-list backend.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque

from simclock import Bus

from . import spinlib
from .sorted_list import SortedListClock

__all__ = ["InLibraryClock", "InStdlibClock", "in_library", "in_stdlib"]


class InStdlibClock(SortedListClock):
    """``advance`` merges two endless counts instead of firing."""

    def advance(self, dt_ns: int) -> None:
        """Never returns."""
        deque(heapq.merge(itertools.count(), itertools.count()), maxlen=0)  # hang: stdlib


class InLibraryClock(SortedListClock):
    """``advance`` waits in its library, which spins in the standard library."""

    def advance(self, dt_ns: int) -> None:
        """Never returns."""
        spinlib.wait_forever()


def in_stdlib(seed: int, bus: Bus) -> InStdlibClock:
    """``FACTORY(seed, bus)``: hangs in ``heapq.merge`` called from ``advance``."""
    return InStdlibClock(seed, bus)


def in_library(seed: int, bus: Bus) -> InLibraryClock:
    """``FACTORY(seed, bus)``: hangs in ``heapq.merge`` called from its library."""
    return InLibraryClock(seed, bus)
