"""Backends that declare a horizon (``FACTORY.horizon_ns``): self-check rows of C-CONF-4.

A declared horizon makes the suite run its far-time programs from far starts
(``FACTORY(seed, bus, start_ns=...)``) and never advance one test's clock by
more than the horizon. Two rows show that the verdict stays truthful:

- ``sorted_list``: the correct sorted-list backend with a horizon of 2**16 ns.
  It passes every test, but the ones the horizon reduced are ``limited``, so
  the verdict is INCOMPLETE, never CONFORMING;
- ``float64_times``: the float64 defect of ``backends.broken`` with the same
  horizon. Far starts still reach 2**53 and beyond, so C-TIME-4 fails: a
  horizon hides long advances, not magnitudes.
"""

from __future__ import annotations

from simclock import Bus

from .broken import BROKEN
from .sorted_list import SortedListClock

__all__ = ["HORIZON", "LIMITED", "float64_times", "sorted_list"]

HORIZON = 2**16
"""The horizon both factories declare: the suite's smallest.

The suite's horizons are in ``simclock_conformance.kit._reach``.
"""

LIMITED: dict[str, tuple[str, str]] = {
    "sorted_list": ("INCOMPLETE", "none (correct backend declaring a horizon of 2**16 ns)"),
    "float64_times": ("C-TIME-4", "times stored as float64, behind a horizon of 2**16 ns"),
}
"""``name -> (expected verdict or failing clause, what it is)``."""


def sorted_list(seed: int, bus: Bus, start_ns: int = 0) -> SortedListClock:
    """The correct sorted-list backend, started at ``start_ns``."""
    return SortedListClock(seed, bus, start_ns=start_ns)


def float64_times(seed: int, bus: Bus, start_ns: int = 0) -> SortedListClock:
    """The float64 defect (``backends.broken:float64_times``), started at ``start_ns``."""
    return BROKEN["float64_times"][2](seed, bus, start_ns=start_ns)


sorted_list.horizon_ns = HORIZON  # type: ignore[attr-defined]
float64_times.horizon_ns = HORIZON  # type: ignore[attr-defined]
