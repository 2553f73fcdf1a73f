"""A second correct SimClock: a list kept sorted with ``bisect.insort`` (SPEC §1).

Written from SPEC.md without looking at ``HeapSimClock`` so the conformance
suite can show it tests the contract, not one implementation. Pending entries
are ``(-at_ns, -seq, timer)`` in ascending order, so the next entry to fire
(smallest ``(at_ns, seq)``) is always the last item and pops in O(1).
Cancellation marks the timer; marked items are skipped when they reach the
end and purged when they outnumber live items (C-CAN-4).

The small methods (``_key``, ``_first_k``, ``_time_of``, ``_should_purge``, ...)
exist so the broken backends in ``broken.py`` can each change one of them.
"""

from __future__ import annotations

import bisect
import operator
from fractions import Fraction
from functools import partial

import numpy as np

from simclock import (
    Bus,
    Callback,
    PeriodicStats,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
)
from simclock.lowlevel import Handle, publish_callback_failure

from .streams import PathStream

__all__ = ["SortedListClock", "factory"]

_GIGA = 1_000_000_000


class Timer:
    """One registration: a one-shot (``period is None and rate is None``), a periodic or a rate."""

    __slots__ = (
        "cancelled",
        "cb",
        "failed",
        "fired",
        "k",
        "period",
        "phase",
        "queued",
        "rate",
        "seconds",
    )

    def __init__(
        self,
        cb: Callback,
        phase: int,
        period: int | None = None,
        rate: Fraction | None = None,
    ) -> None:
        self.cb = cb
        self.phase = phase
        self.period = period
        self.rate = rate
        self.k = 0
        self.cancelled = False
        self.queued = False
        self.fired = 0
        self.failed = 0
        self.seconds = 0.0  # only used by a broken variant (float accumulation)

    @property
    def repeats(self) -> bool:
        """True for periodic and rate timers."""
        return self.period is not None or self.rate is not None


Item = tuple[int, int, Timer]


class SortedListClock:
    """Event clock over a descending sorted list; behaviour per SPEC §1, C-X-PEEK, C-X-RATE."""

    purge_slack = 32

    def __init__(self, seed: int, bus: Bus | None = None, *, start_ns: int = 0) -> None:
        self._root = self._make_root(seed)
        self._now = self._time(start_ns, "start_ns")
        # Invariant: _items is sorted ascending by (-at_ns, -seq); the last item fires next.
        self._items: list[Item] = []
        # Invariant: _dead == number of items whose timer is cancelled.
        self._dead = 0
        self._counter = 0
        self._busy = False
        self.bus = bus if bus is not None else Bus()
        if self.bus.clock is None:
            self.bus.bind(self)

    def _make_root(self, seed: int) -> PathStream:
        return PathStream(seed)

    # -- validation -------------------------------------------------------

    def _time(self, value: object, name: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise SimclockTypeError(
                f"{name} must be an int of nanoseconds, got {type(value).__name__} {value!r}"
            )
        ns = operator.index(value)
        if ns < 0:
            raise SimclockValueError(f"{name} must be >= 0, got {ns}")
        return ns

    def _check_not_past(self, at: int) -> None:
        if at < self._now:
            raise SimclockValueError(f"at_ns={at} is before now={self._now}; schedule later")

    # -- reading ------------------------------------------------------------

    def now_ns(self) -> int:
        """Current time (C-TIME-1)."""
        return self._now

    def step_ns(self) -> int:
        """An event clock: 1 ns, the resolution (C-STEP-1)."""
        return 1

    def random_source(self) -> PathStream:
        """The root stream (C-RNG-1)."""
        return self._root

    def next_event_ns(self) -> int | None:
        """Earliest live entry or None (C-X-PEEK)."""
        self._drop_dead_tail()
        return -self._items[-1][0] if self._items else None

    def pending_count(self) -> int:
        """Live queued entries."""
        return len(self._items) - self._dead

    # -- queue --------------------------------------------------------------

    def _key(self, at: int, seq: int) -> tuple[int, int]:
        return (-at, -seq)

    def _next_seq(self, timer: Timer) -> int:
        """A fresh seq for every push, re-pushes included (C-TIE-1, C-PER-2)."""
        seq = self._counter
        self._counter += 1
        return seq

    def _push(self, at: int, timer: Timer) -> None:
        key = self._key(at, self._next_seq(timer))
        bisect.insort(self._items, (key[0], key[1], timer))
        timer.queued = True

    def _drop_dead_tail(self) -> None:
        items = self._items
        while items and items[-1][2].cancelled:
            items.pop()[2].queued = False
            self._dead -= 1

    def _should_purge(self) -> bool:
        return self._dead > (len(self._items) - self._dead) + self.purge_slack

    def _purge(self) -> None:
        keep: list[Item] = []
        for item in self._items:
            if item[2].cancelled:
                item[2].queued = False
            else:
                keep.append(item)
        self._items[:] = keep
        self._dead = 0

    # -- scheduling -----------------------------------------------------------

    def _handle(self, timer: Timer) -> Handle:
        return Handle(cancel=partial(self._cancel, timer), stats=partial(self._stats, timer))

    @staticmethod
    def _stats(timer: Timer) -> PeriodicStats:
        return PeriodicStats(fired=timer.fired, failed=timer.failed)

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """One firing at ``at_ns >= now`` (C-SCH-1, C-SCH-2)."""
        at = self._time(at_ns, "at_ns")
        if not callable(cb):
            raise SimclockTypeError(f"cb must be callable, got {cb!r}")
        self._check_not_past(at)
        timer = Timer(cb, at)
        self._push(at, timer)
        return self._handle(timer)

    def _first_k(self, timer: Timer) -> int:
        """Index of the first grid point at or after now (C-PER-1)."""
        behind = self._now - timer.phase
        if behind <= 0:
            return 0
        if timer.period is not None:
            return -(-behind // timer.period)
        assert timer.rate is not None
        # ceil(k * 1e9 / rate) >= behind  <=>  k * 1e9 / rate > behind - 1
        return ((behind - 1) * timer.rate.numerator) // (_GIGA * timer.rate.denominator) + 1

    def _time_of(self, timer: Timer) -> int:
        """Nominal time of firing ``timer.k`` in integers (C-PER-3, C-X-RATE)."""
        if timer.period is not None:
            return timer.phase + timer.k * timer.period
        assert timer.rate is not None
        num = timer.k * _GIGA * timer.rate.denominator
        return timer.phase - (-num // timer.rate.numerator)

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """Fire on the grid ``phase + k*period`` (C-PER-1..3)."""
        period = self._time(period_ns, "period_ns")
        if period == 0:
            raise SimclockValueError("period_ns must be > 0, got 0")
        phase = self._time(phase_ns, "phase_ns")
        if not callable(cb):
            raise SimclockTypeError(f"cb must be callable, got {cb!r}")
        timer = Timer(cb, phase, period=period)
        timer.k = self._first_k(timer)
        self._push(self._time_of(timer), timer)
        return self._handle(timer)

    def schedule_rate(self, rate_hz: int | Fraction, cb: Callback, phase_ns: int = 0) -> Handle:
        """Fire at ``phase + ceil(k * 1e9 / rate_hz)`` (C-X-RATE)."""
        if isinstance(rate_hz, bool) or not isinstance(rate_hz, int | Fraction):
            raise SimclockTypeError(f"rate_hz must be an int or Fraction, got {rate_hz!r}")
        rate = Fraction(rate_hz)
        if not 0 < rate <= _GIGA:
            raise SimclockValueError(f"rate_hz must be in (0, 1e9], got {rate_hz!r}")
        phase = self._time(phase_ns, "phase_ns")
        if not callable(cb):
            raise SimclockTypeError(f"cb must be callable, got {cb!r}")
        timer = Timer(cb, phase, rate=rate)
        timer.k = self._first_k(timer)
        self._push(self._time_of(timer), timer)
        return self._handle(timer)

    def _cancel(self, timer: Timer) -> None:
        """C-CAN-1..4: idempotent, never raises; a running periodic is not re-pushed."""
        if timer.cancelled:
            return
        timer.cancelled = True
        if timer.queued:
            self._dead += 1
            if self._should_purge():
                self._purge()

    # -- running --------------------------------------------------------------

    def _report(self, at: int, cb: Callback, exc: Exception) -> None:
        """C-ERR-1 through the backend author's kit: exact details, safe for any exception."""
        publish_callback_failure(self.bus, at, cb, exc)

    def _run(self, at: int, timer: Timer) -> bool:
        """Run one callback; True to keep going (C-ERR-1)."""
        try:
            timer.cb()
        except Exception as exc:
            timer.failed += 1
            self._report(at, timer.cb, exc)
        return True

    def _after(self, timer: Timer) -> None:
        """Re-push a repeating timer after its callback, with a fresh seq (C-PER-2)."""
        if timer.repeats and not timer.cancelled:
            timer.k += 1
            self._push(self._time_of(timer), timer)

    def _due(self, target: int) -> Item | None:
        """Pop the next live item with ``at_ns <= target``, or None."""
        self._drop_dead_tail()
        if self._items and -self._items[-1][0] <= target:
            return self._items.pop()
        return None

    def advance(self, dt_ns: int) -> None:
        """Fire due entries in (at_ns, seq) order, then now = now + dt (C-ADV-1..5)."""
        dt = self._time(dt_ns, "dt_ns")
        if self._busy:
            raise SimclockRuntimeError(
                f"advance({dt}) called from a callback at {self._now} ns; use schedule()"
            )
        target = self._now + dt
        self._busy = True
        try:
            while (item := self._due(target)) is not None:
                timer = item[2]
                timer.queued = False
                self._now = -item[0]
                timer.fired += 1
                try:
                    keep_going = self._run(self._now, timer)
                finally:
                    self._after(timer)
                if not keep_going:
                    break
            self._now = target
        finally:
            self._busy = False


def factory(seed: int, bus: Bus) -> SortedListClock:
    """``FACTORY(seed, bus)`` for the conformance suite."""
    return SortedListClock(seed, bus)
