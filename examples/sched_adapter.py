"""The standard library's ``sched.scheduler`` as a simclock backend (SPEC §1, §14).

``sched`` runs on any time function: here a virtual clock that only
``advance`` moves, so times are the integers handed to it. The adapter is
what a user of ``sched`` would write: ``schedule`` is ``enterabs``, ``cancel``
is ``scheduler.cancel`` (which raises ``ValueError`` for an event no longer
queued: the adapter ignores that), a periodic timer re-enters itself after
its callback, and ``advance`` lets ``run(blocking=False)`` execute what is
due at each pending time up to the target. ``sched`` has no random streams
and no event bus: the adapter uses ``SeededRandomSource`` and
``simclock.lowlevel.publish_callback_failure``. The suite measures the rest
(``docs/conformance.md`` lists the clauses it keeps and why).

Run: ``PYTHONPATH=examples python -m simclock_conformance sched_adapter:factory``.
"""

from __future__ import annotations

import contextlib
import sched
from functools import partial
from typing import cast

from simclock import Bus, Callback, PeriodicStats, SeededRandomSource, SimclockValueError
from simclock.lowlevel import Handle, check_time_ns, publish_callback_failure

__all__ = ["WHY", "SchedClock", "factory"]


class _Entry:
    """One registration and the ``sched`` event currently queued for it."""

    __slots__ = ("cancelled", "cb", "event", "failed", "fired")

    def __init__(self, cb: Callback) -> None:
        self.cb = cb
        self.event: sched.Event | None = None
        self.cancelled = False
        self.fired = 0
        self.failed = 0


class SchedClock:
    """``simclock.SimClock`` over ``sched.scheduler`` with a virtual integer time."""

    def __init__(self, seed: int, bus: Bus) -> None:
        self._now = 0
        self._sched = sched.scheduler(timefunc=self.now_ns, delayfunc=self._no_sleep)
        self._root = SeededRandomSource(seed)
        self._bus = bus
        if bus.clock is None:
            bus.bind(self)

    @staticmethod
    def _no_sleep(delay: float) -> None:
        """``run(blocking=False)`` never sleeps; time moves only in ``advance``."""

    def now_ns(self) -> int:
        """The virtual time."""
        return self._now

    def step_ns(self) -> int:
        """An event clock: 1 ns."""
        return 1

    def random_source(self) -> SeededRandomSource:
        """simclock's seeded tree (``sched`` has none)."""
        return self._root

    def next_event_ns(self) -> int | None:
        """Time of ``scheduler.queue[0]`` (cancelled events are removed from the queue)."""
        queue = self._sched.queue
        return int(queue[0].time) if queue else None

    def _run(self, entry: _Entry) -> None:
        entry.event = None
        entry.fired += 1
        try:
            entry.cb()
        except Exception as exc:
            entry.failed += 1
            publish_callback_failure(self._bus, self._now, entry.cb, exc)

    def _handle(self, entry: _Entry) -> Handle:
        def cancel() -> None:
            entry.cancelled = True
            if entry.event is not None:
                # sched raises ValueError for an event no longer queued.
                with contextlib.suppress(ValueError):
                    self._sched.cancel(entry.event)
                entry.event = None

        stats = partial(lambda e: PeriodicStats(fired=e.fired, failed=e.failed), entry)
        return Handle(cancel=cancel, stats=stats)

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """``enterabs(at, 0, ...)``."""
        at = check_time_ns(at_ns, "at_ns")
        if not callable(cb):
            raise TypeError(f"cb must be callable, got {cb!r}")
        if at < self._now:
            raise SimclockValueError(f"at_ns={at} is before now={self._now}; schedule later")
        entry = _Entry(cb)
        entry.event = self._sched.enterabs(at, 0, self._run, (entry,))
        return self._handle(entry)

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """Enter the first grid point; each firing enters the next one after its callback."""
        period = check_time_ns(period_ns, "period_ns")
        phase = check_time_ns(phase_ns, "phase_ns")
        if period == 0:
            raise SimclockValueError("period_ns must be > 0, got 0")
        if not callable(cb):
            raise TypeError(f"cb must be callable, got {cb!r}")
        entry = _Entry(cb)
        k0 = 0 if phase >= self._now else -(-(self._now - phase) // period)

        def fire(k: int) -> None:
            try:
                self._run(entry)
            finally:
                if not entry.cancelled:
                    entry.event = self._sched.enterabs(phase + (k + 1) * period, 0, fire, (k + 1,))

        entry.event = self._sched.enterabs(phase + k0 * period, 0, fire, (k0,))
        return self._handle(entry)

    def advance(self, dt_ns: int) -> None:
        """Move to each pending time up to ``now + dt`` and ``run(blocking=False)`` there."""
        target = self._now + check_time_ns(dt_ns, "dt_ns")
        while (queue := self._sched.queue) and queue[0].time <= target:
            self._now = cast(int, queue[0].time)  # the int given to enterabs
            self._sched.run(blocking=False)
        self._now = target


def factory(seed: int, bus: Bus) -> SchedClock:
    """``FACTORY(seed, bus)`` for the conformance suite."""
    return SchedClock(seed, bus)


WHY: dict[str, str] = {
    "C-ADV-4": "`scheduler.run()` may be called from inside an action: it re-enters and runs "
    "what is due (no guard against nested runs)",
    "SM-ORACLE": "the nested run above, found by the state machine",
}
"""Clause -> why ``sched`` does not keep it (docs/conformance.md)."""
