"""A correct backend with only the six SimClock methods (no schedule_rate, no next_event_ns).

It wraps :class:`SortedListClock` and exposes nothing else, so the suite must
report C-X-RATE and C-X-PEEK as "not applicable" and pass everything else.
:class:`ProtocolOnlyClock` wraps any clock the same way (the heap tests use it
to hide ``heap_size``).
"""

from __future__ import annotations

from simclock import Bus, Callback, RandomSource, SimClock
from simclock.lowlevel import Handle

from .sorted_list import SortedListClock

__all__ = ["ProtocolOnlyClock", "factory"]


class ProtocolOnlyClock:
    """Exactly the ``simclock.SimClock`` protocol, delegated to ``inner``."""

    def __init__(self, inner: SimClock) -> None:
        self._inner = inner

    def now_ns(self) -> int:
        """Current time."""
        return self._inner.now_ns()

    def step_ns(self) -> int:
        """1 ns."""
        return self._inner.step_ns()

    def advance(self, dt_ns: int) -> None:
        """Fire due entries, then move to now + dt."""
        self._inner.advance(dt_ns)

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """One firing at ``at_ns``."""
        return self._inner.schedule(at_ns, cb)

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """Firings on ``phase + k*period``."""
        return self._inner.schedule_periodic(period_ns, cb, phase_ns)

    def random_source(self) -> RandomSource:
        """The root stream."""
        return self._inner.random_source()


def factory(seed: int, bus: Bus) -> ProtocolOnlyClock:
    """``FACTORY(seed, bus)`` for the conformance suite."""
    return ProtocolOnlyClock(SortedListClock(seed, bus))
