"""SimPy as a simclock backend: the adapter a SimPy user would write (SPEC §1, §14).

Each simclock call maps onto the SimPy idiom for it, with no scheduler of
its own on top: ``schedule`` is a ``Timeout`` with a callback, a periodic
timer is a SimPy process looping over ``Timeout``\\ s, ``advance`` is
``env.run(until=now + dt)``, ``next_event_ns`` is ``env.peek()``. SimPy has
no random streams and no event bus, so the adapter uses simclock's
(``SeededRandomSource``) and reports raising callbacks with
``simclock.lowlevel.publish_callback_failure``; everything else is SimPy's own
behaviour, which the conformance suite measures against the contract
(``docs/conformance.md`` lists the clauses it keeps and why).

Run: ``PYTHONPATH=examples python -m simclock_conformance simpy_adapter:factory``.
"""

from __future__ import annotations

from collections.abc import Generator
from functools import partial
from typing import Any, cast

import simpy

from simclock import Bus, Callback, PeriodicStats, SeededRandomSource, SimclockValueError
from simclock.lowlevel import Handle, check_time_ns, publish_callback_failure

__all__ = ["WHY", "WHY_STEPPED", "SimPyClock", "SteppedSimPyClock", "factory", "stepped_factory"]


class _Entry:
    """One registration: SimPy cannot take a scheduled event back, so cancel is a flag."""

    __slots__ = ("cancelled", "cb", "failed", "fired")

    def __init__(self, cb: Callback) -> None:
        self.cb = cb
        self.cancelled = False
        self.fired = 0
        self.failed = 0


class SimPyClock:
    """``simclock.SimClock`` over ``simpy.Environment``; integer times stay integers in SimPy."""

    def __init__(self, seed: int, bus: Bus) -> None:
        self.env = simpy.Environment(initial_time=0)
        self._root = SeededRandomSource(seed)
        self._bus = bus
        if bus.clock is None:
            bus.bind(self)

    def now_ns(self) -> int:
        """``env.now``: SimPy keeps the integer times it is given (no conversion here)."""
        return cast(int, self.env.now)

    def step_ns(self) -> int:
        """An event clock: 1 ns."""
        return 1

    def random_source(self) -> SeededRandomSource:
        """simclock's seeded tree (SimPy has no random streams)."""
        return self._root

    def next_event_ns(self) -> int | None:
        """``env.peek()``: SimPy's next queued event, ``None`` when there is none."""
        at = self.env.peek()
        return None if at == float("inf") else int(at)

    def _run(self, entry: _Entry) -> None:
        if entry.cancelled:
            return
        entry.fired += 1
        try:
            entry.cb()
        except Exception as exc:
            entry.failed += 1
            publish_callback_failure(self._bus, self.now_ns(), entry.cb, exc)

    def _handle(self, entry: _Entry) -> Handle:
        def cancel() -> None:
            entry.cancelled = True

        stats = partial(lambda e: PeriodicStats(fired=e.fired, failed=e.failed), entry)
        return Handle(cancel=cancel, stats=stats)

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """A ``Timeout(at - now)`` whose callback runs ``cb``."""
        at = check_time_ns(at_ns, "at_ns")
        if not callable(cb):
            raise TypeError(f"cb must be callable, got {cb!r}")
        if at < self.env.now:
            raise SimclockValueError(f"at_ns={at} is before now={self.env.now}; schedule later")
        entry = _Entry(cb)
        timeout = self.env.timeout(at - self.env.now)
        timeout.callbacks.append(lambda _event: self._run(entry))
        return self._handle(entry)

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """A SimPy process: wait for the next grid point ``phase + k*period``, run, repeat."""
        period = check_time_ns(period_ns, "period_ns")
        phase = check_time_ns(phase_ns, "phase_ns")
        if period == 0:
            raise SimclockValueError("period_ns must be > 0, got 0")
        if not callable(cb):
            raise TypeError(f"cb must be callable, got {cb!r}")
        entry = _Entry(cb)
        now = self.now_ns()
        k = 0 if phase >= now else -(-(now - phase) // period)

        def loop(k: int) -> Generator[Any, Any, None]:
            while not entry.cancelled:
                yield self.env.timeout(phase + k * period - self.env.now)
                self._run(entry)
                k += 1

        self.env.process(loop(k))
        return self._handle(entry)

    def advance(self, dt_ns: int) -> None:
        """``env.run(until=now + dt)``; ``advance(0)`` does nothing (SimPy refuses until == now)."""
        dt = check_time_ns(dt_ns, "dt_ns")
        if dt > 0:
            self.env.run(until=self.env.now + dt)


class SteppedSimPyClock(SimPyClock):
    """The same adapter, but ``advance`` steps SimPy's queue itself up to the target.

    ``env.step()`` while ``env.peek() <= target``, then ``env.run(until=target)``
    to move the time: this takes SimPy's exclusive ``until`` out of the
    comparison, so what remains is SimPy's event queue itself.
    """

    def advance(self, dt_ns: int) -> None:
        """Step every event due at or before ``now + dt``, then run until the target."""
        target = self.now_ns() + check_time_ns(dt_ns, "dt_ns")
        while self.env.peek() <= target:
            self.env.step()
        if target > self.env.now:
            self.env.run(until=target)


def factory(seed: int, bus: Bus) -> SimPyClock:
    """``FACTORY(seed, bus)`` for the conformance suite: ``advance`` is ``env.run(until=...)``."""
    return SimPyClock(seed, bus)


def stepped_factory(seed: int, bus: Bus) -> SteppedSimPyClock:
    """``FACTORY(seed, bus)`` whose ``advance`` steps the queue up to the target."""
    return SteppedSimPyClock(seed, bus)


_UNTIL = "`env.run(until=t)` stops before the events at `t` (its stop event is URGENT)"
_NO_CANCEL = (
    "SimPy cannot take a scheduled event back: a cancelled `Timeout` stays queued until its time"
)
_PROCESS_DIES = "a BaseException kills the periodic's SimPy process, so it is not re-armed"
_REENTRANT = "`env.run()`/`env.step()` may be called from inside a callback (re-entrant)"
_PEEK = (
    "`env.peek()` also sees cancelled `Timeout`s and the stop event `env.run(until=t)` "
    "leaves queued at `t`"
)
_INIT = (
    "a periodic is a SimPy process: its first `Timeout` is made when the process starts "
    "(an Initialize event), after entries pushed later at the same instant"
)

WHY: dict[str, str] = {
    "C-TIME-2": f"in its program, the periodic's firing at an advance's target waits: {_UNTIL}",
    "C-TIME-3": f"in its program, the periodics' firings at the last target wait: {_UNTIL}",
    "C-TIME-4": f"times stay exact ints, but {_UNTIL}, so entries at an advance's target wait",
    "C-ADV-1": f"{_UNTIL}; `until` must be > now, so `advance(0)` fires nothing",
    "C-ADV-3": f"entries a callback pushes at the target wait: {_UNTIL}",
    "C-ADV-4": _REENTRANT,
    "C-SCH-1": "an entry at `now` fires only on a later, positive advance (`until` > now)",
    "C-TIE-1": f"{_INIT}; and {_UNTIL}",
    "C-PER-1": f"a grid point at `now` waits for a positive advance: {_UNTIL}",
    "C-PER-2": f"the firings at each advance's target wait: {_UNTIL}",
    "C-PER-3": f"the firing at the last target waits: {_UNTIL}",
    "C-CAN-3": f"the entry at the target had not fired yet: {_UNTIL}",
    "C-CAN-4": _NO_CANCEL,
    "C-ERR-2": f"{_PROCESS_DIES}; entries still due at that instant need a positive advance",
    "C-RNG-2": (
        f"the streams are stable, but in its program a periodic's firing at the target "
        f"waits: {_UNTIL}"
    ),
    "C-BUS-1": f"the failure event at the target is published one advance late: {_UNTIL}",
    "C-BUS-3": f"a message stamped at the target is delivered one advance late: {_UNTIL}",
    "C-X-PEEK": _PEEK,
    "C-X-STATS": (
        f"the counts are kept, but in its program the firing at the target waits: {_UNTIL}"
    ),
    "SM-ORACLE": "the differences above, found by the state machine",
}
"""Clause -> why SimPy (``advance`` = ``env.run(until=...)``) does not keep it."""

WHY_STEPPED: dict[str, str] = {
    "C-ADV-4": _REENTRANT,
    "C-TIE-1": _INIT,
    "C-CAN-4": _NO_CANCEL,
    "C-ERR-2": _PROCESS_DIES,
    "C-X-PEEK": _PEEK,
    "SM-ORACLE": "the differences above, found by the state machine",
}
"""Clause -> why SimPy with a stepped ``advance`` does not keep it (docs/conformance.md)."""
