"""An asyncio event loop on virtual time (``looptime``) as a simclock backend (SPEC §1, §14).

``looptime`` gives an asyncio loop whose ``time()`` only moves when the loop
would otherwise sleep: it jumps to the next timer instead. The adapter is
what an asyncio user would write on top of it:

- ``schedule`` is ``loop.call_at(at_ns / 1e9, ...)``, a periodic timer calls
  ``call_at`` for its next grid point after its callback, ``cancel`` is
  ``TimerHandle.cancel()``.
- ``advance(dt)`` runs the loop (``run_until_complete``) until a stop timer at
  ``(now + dt) / 1e9`` has run and none of the adapter's live entries at or
  before the target is left: entries due at the target, and those their
  callbacks push there, run in the same advance whatever order asyncio's
  timer heap gives them and the stop timer. Which entry fires first is
  asyncio's decision; the adapter only knows its own entries (their integer
  times and whether they are live).
- ``now_ns()`` is ``round(loop.time() * 1e9)``: asyncio's time is float
  seconds (``looptime`` keeps whole nanoseconds internally with
  ``resolution=1e-9`` and hands out ``ticks / 1e9``); ``round`` recovers the
  integer below 2**51 ns, where ``int()`` would make ``15 / 1e9 * 1e9``
  (``14.999999999999998``) one nanosecond early.
- A callback's ``Exception`` is reported with
  ``simclock.publish_callback_failure``. asyncio lets only ``SystemExit`` and
  ``KeyboardInterrupt`` out of a callback and logs any other
  ``BaseException``; the adapter keeps it, stops the loop, holds back the
  entries of the same batch that asyncio would still run (they are put back
  at their own time), and raises it from ``advance``.
- asyncio has no random streams and no event bus: ``SeededRandomSource`` and
  the given ``simclock.Bus``. No ``next_event_ns`` or ``schedule_rate``.

``asyncio.BaseEventLoop`` waits at most a day per loop iteration
(``MAXIMUM_SELECT_TIMEOUT``), so an advance of 2**64 ns (584 years) would
take 213,000 iterations. Like a physics clock, the factory therefore declares
a horizon (``factory.horizon_ns = 2**46``, about 19.5 hours: one wait) and
takes a start (``start_ns``, the loop's ``start=start_ns / 1e9``): the suite
reaches the far times from far starts (``conformance/README.md``, "a
declared horizon"), and the tests it reduced are reported ``limited``.

The suite measures the rest (``docs/conformance.md`` lists the clauses asyncio
keeps and why).

Run: ``PYTHONPATH=examples python -m simclock_conformance asyncio_adapter:factory``.
"""

from __future__ import annotations

import asyncio
from functools import partial

import looptime

from simclock import Bus, Callback, PeriodicStats, SeededRandomSource, SimclockValueError
from simclock.lowlevel import Handle, check_time_ns, publish_callback_failure

__all__ = ["WHY", "AsyncioClock", "factory"]


class _Entry:
    """One registration: its next integer time and the asyncio timer queued for it."""

    __slots__ = ("at", "cancelled", "cb", "failed", "fired", "period", "timer")

    def __init__(self, at: int, cb: Callback, period: int = 0) -> None:
        self.at = at
        self.cb = cb
        self.period = period
        self.timer: asyncio.TimerHandle | None = None
        self.cancelled = False
        self.fired = 0
        self.failed = 0


class AsyncioClock:
    """``simclock.SimClock`` over a ``looptime`` asyncio event loop."""

    def __init__(self, seed: int, bus: Bus, start_ns: int = 0) -> None:
        start = check_time_ns(start_ns, "start_ns")
        # noop_cycles=0: the callbacks here are plain functions, no coroutine chains to let run.
        self._loop = looptime.new_event_loop(start=start / 1e9, resolution=1e-9, noop_cycles=0)
        self._live: dict[_Entry, None] = {}
        self._escaped: BaseException | None = None
        self._target = 0
        self._root = SeededRandomSource(seed)
        self._bus = bus
        if bus.clock is None:
            bus.bind(self)

    def close(self) -> None:
        """Close the event loop."""
        self._loop.close()

    def now_ns(self) -> int:
        """The loop's float seconds, rounded to the nearest nanosecond."""
        # asyncio's time is float seconds by its API; the nearest ns is the intended
        # mapping (seconds_to_ns would refuse a float that is not a whole ns).
        return round(self._loop.time() * 1e9)

    def step_ns(self) -> int:
        """An event clock: 1 ns."""
        return 1

    def random_source(self) -> SeededRandomSource:
        """simclock's seeded tree (asyncio has none)."""
        return self._root

    # -- entries -----------------------------------------------------------

    def _queue(self, entry: _Entry) -> None:
        entry.timer = self._loop.call_at(entry.at / 1e9, self._fire, entry)
        self._live[entry] = None

    def _fire(self, entry: _Entry) -> None:
        if self._escaped is not None:
            # A BaseException ended this advance; asyncio still runs the rest of the batch.
            self._queue(entry)
            return
        self._live.pop(entry, None)
        entry.timer = None
        entry.fired += 1
        try:
            entry.cb()
        except Exception as exc:
            entry.failed += 1
            publish_callback_failure(self._bus, self.now_ns(), entry.cb, exc)
        except BaseException as exc:
            self._escaped = exc
            self._loop.stop()
        finally:
            if entry.period and not entry.cancelled:
                entry.at += entry.period
                self._queue(entry)

    def _handle(self, entry: _Entry) -> Handle:
        def cancel() -> None:
            entry.cancelled = True
            self._live.pop(entry, None)
            if entry.timer is not None:
                entry.timer.cancel()
                entry.timer = None

        stats = partial(lambda e: PeriodicStats(fired=e.fired, failed=e.failed), entry)
        return Handle(cancel=cancel, stats=stats)

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """``loop.call_at(at_ns / 1e9, ...)``."""
        at = check_time_ns(at_ns, "at_ns")
        if not callable(cb):
            raise TypeError(f"cb must be callable, got {cb!r}")
        now = self.now_ns()
        if at < now:
            raise SimclockValueError(f"at_ns={at} is before now={now}; schedule later")
        entry = _Entry(at, cb)
        self._queue(entry)
        return self._handle(entry)

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """``call_at`` the first grid point at or after now; each firing queues the next."""
        period = check_time_ns(period_ns, "period_ns")
        phase = check_time_ns(phase_ns, "phase_ns")
        if period == 0:
            raise SimclockValueError("period_ns must be > 0, got 0")
        if not callable(cb):
            raise TypeError(f"cb must be callable, got {cb!r}")
        now = self.now_ns()
        k0 = 0 if phase >= now else -(-(now - phase) // period)
        entry = _Entry(phase + k0 * period, cb, period)
        self._queue(entry)
        return self._handle(entry)

    # -- advance -----------------------------------------------------------

    def _stop_when_done(self, done: asyncio.Future[None]) -> None:
        """The stop timer: again at the latest due entry's time while one is left."""
        due = [e.at for e in self._live if e.at <= self._target]
        if due:
            self._loop.call_at(max(due) / 1e9, self._stop_when_done, done)
        elif not done.done():
            done.set_result(None)

    def advance(self, dt_ns: int) -> None:
        """``run_until_complete`` until ``(now + dt) / 1e9`` and nothing due is left."""
        dt = check_time_ns(dt_ns, "dt_ns")
        if self._loop.is_running():
            # asyncio's own refusal, before this advance changes anything.
            raise RuntimeError("This event loop is already running")
        target = self.now_ns() + dt
        self._target = target
        done: asyncio.Future[None] = self._loop.create_future()
        stopper = self._loop.call_at(target / 1e9, self._stop_when_done, done)
        try:
            self._loop.run_until_complete(done)
        except RuntimeError:
            # loop.stop() after a BaseException: run_until_complete says the loop stopped.
            if self._escaped is None:
                raise
        finally:
            stopper.cancel()
            escaped, self._escaped = self._escaped, None
        if escaped is not None:
            raise escaped


def factory(seed: int, bus: Bus, start_ns: int = 0) -> AsyncioClock:
    """``FACTORY(seed, bus, start_ns=0)`` for the conformance suite (a declared horizon)."""
    return AsyncioClock(seed, bus, start_ns)


factory.horizon_ns = 2**46  # type: ignore[attr-defined]
"""One loop wait (asyncio's cap is a day): the most one conformance test advances the clock."""


_SKEW_WHY = (
    "nanoseconds as float seconds are off by 1 ns: asyncio runs a timer once "
    "`when < loop.time() + clock_resolution` (1e-9 s on Linux) and looptime rounds each wait to "
    "whole nanoseconds (a wait of 0.99999 ns becomes 2), so entries fire 1 ns early or late"
)
_SKEW = "entries fire 1 ns early or late (float seconds, see C-TIME-3)"
_FLOAT = (
    "past 2**53 ns neighbouring nanoseconds share one float, and at 2**63 ns "
    "`time() + 1e-9 == time()`, so a timer due exactly now never counts as due and the loop "
    "spins without moving time (the test times out)"
)

WHY: dict[str, str] = {
    "C-TIME-2": f"`now_ns()` never decreases, but in its program {_SKEW}: an entry 1 ns "
    "past the target fires in the advance",
    "C-TIME-3": f"numpy-int times are accepted, but {_SKEW_WHY}",
    "C-TIME-4": f"{_FLOAT}; a clock started at 2**64 - 3 ns reads 2**64",
    "C-ADV-1": "entries due together fire in the timer heap's order, not push order "
    f"(C-TIE-1), and {_SKEW}: one 1 ns past the target fires in this advance",
    "C-ADV-3": f"{_SKEW}, also for entries callbacks push",
    "C-ADV-4": f"the nested advance is refused, but {_SKEW}",
    "C-SCH-1": f"a time at now is taken, but in its program {_SKEW}: an entry a callback "
    "schedules at now fires 1 ns late",
    "C-ADV-5": f"{_SKEW}: the stop timer at the target counts as due 1 ns before it, so "
    "`advance(1)` after `advance(2)` ends at 2",
    "C-TIE-1": "the timer heap (`heapq` of `TimerHandle`s ordered by time alone) keeps no "
    "push order for equal times; the far ties hang as in C-TIME-4",
    "C-PER-1": f"{_SKEW}: grid points fire off their time",
    "C-PER-2": f"{_SKEW}: a periodic's next firing comes off its time",
    "C-PER-3": f"{_SKEW}: the n-th firing of a periodic comes 1 ns off phase + n*period",
    "C-CAN-1": f"cancel never raises, but in its program {_SKEW}",
    "C-CAN-2": f"{_SKEW}, on the wrong side of the callback that cancels it",
    "C-CAN-4": "cancelled `TimerHandle`s stay in the heap until the loop runs an iteration "
    "(`_run_once` drops them): schedule/cancel churn between advances grows memory",
    "C-ERR-1": f"{_SKEW}, so the trace and the failure times differ",
    "C-ERR-2": f"{_SKEW}: `now_ns()` after the exception is 1 ns before the entry's time",
    "C-RNG-2": f"the streams are stable, but in its program {_SKEW}",
    "C-BUS-3": "a message stamped at an instant and the callbacks there fire in the timer "
    "heap's order, not push order",
    "SM-ORACLE": "the differences above (nanosecond skew, ties, float times), found by the "
    "state machine",
}
"""Clause -> why asyncio does not keep it (docs/conformance.md)."""
