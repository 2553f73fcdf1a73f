"""Periodic threads on a `SystemClock` for hardware (SPEC §4).

This is the hardware side of the contract, never simulation code. It reads
time only through the clock it is given (``clock.now_ns()``, e.g. a
`MonotonicClock` with an injectable
``source``) and sleeps through the ``sleep`` passed to
``schedule_periodic_thread``, so the scheduling logic is tested with a fake
time source and no test depends on how fast the machine is.

Periodic thread timing (C-SYS-2). Deadlines are the absolute integer grid
``base + k*period`` with ``base = clock.now_ns() at the call + phase``; a
deadline is never computed from the previous firing, so nothing drifts. The
thread sleeps until ``spin`` ns before the deadline and busy-waits the rest. The
spin stretch is calibrated on line: every coarse sleep measures how much the OS
overslept, and the 97th percentile of the last 128 oversleeps plus a margin
is the next spin, capped at 200 µs and at half the period; when that
percentile is beyond the cap the CPU is contended, and the spin covers only
the median oversleep. A percentile and a cap rather than the maximum: a
multi-millisecond preemption is not something spinning can fix, and on a
loaded machine a long spin makes the scheduler treat the thread as CPU-bound
and wake it later (measured in ``benchmarks/jitter.py``). On Linux the
worker also lowers its own timer slack to 1 ns (``prctl(PR_SET_TIMERSLACK)``,
this thread only), which cuts the typical oversleep from about 70 µs to about
20 µs, and with it the spin.

When the thread wakes (or a callback returns) after one or more deadlines
already passed, it fires once for the latest passed deadline and counts the
earlier ones as skipped: a late tick never fires twice and missed ticks are
never bunched.
"""

from __future__ import annotations

import ctypes
import math
import os
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from simclock.core._bus import EVENTS_TOPIC, Bus, Event, EventKind
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._failure import callback_failure_event
from simclock.core._names import callback_name, safe_repr
from simclock.core._protocols import Callback, Handle, PeriodicStats, SystemClock
from simclock.core._timeint import check_positive_ns, check_time_ns
from simclock.realtime._jitter import JitterStats, LatenessHistogram, no_jitter

__all__ = ["PeriodicThreadHandle", "schedule_periodic_thread"]

# Oversleep estimate before the first measurement, and the margin added to it.
_INITIAL_OVERSLEEP_NS = 100_000
_SPIN_MARGIN_NS = 20_000
# Spin covers this quantile of the last _OVERSLEEP_WINDOW measured oversleeps.
_OVERSLEEP_WINDOW = 128
_OVERSLEEP_QUANTILE = Fraction(97, 100)
_MAX_AUTO_SPIN_NS = 200_000
_PR_SET_TIMERSLACK = 29
# Publishing an event on an unbound bus can lose a race with another thread's
# later stamp; a fresh read of the clock wins the retry.
_PUBLISH_ATTEMPTS = 3
# The longest single wait of a periodic thread (the OS limit); the loop waits again after it.
_MAX_WAIT_NS = int(threading.TIMEOUT_MAX) * 1_000_000_000


@dataclass(frozen=True, slots=True)
class PeriodicThreadHandle(Handle):
    """The [`Handle`][simclock.lowlevel.Handle] of a periodic thread, with ``jitter()`` (C-SYS-3).

    ``cancel()`` stops the thread and, unless called from the thread itself,
    joins it (C-SYS-2, C-CAN-1..2); ``stats()`` gives the
    [`PeriodicStats`][simclock.PeriodicStats] counters; ``jitter()`` gives a
    [`JitterStats`][simclock.JitterStats] snapshot with lateness percentiles; ``thread`` is the
    worker (for ``is_alive()`` or its name).
    """

    jitter: Callable[[], JitterStats] = no_jitter
    thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        Handle.__post_init__(self)
        if not callable(self.jitter):
            raise SimclockTypeError(
                f"jitter must be callable, got {type(self.jitter).__name__} "
                f"{safe_repr(self.jitter)}"
            )
        if self.thread is not None and not isinstance(self.thread, threading.Thread):
            raise SimclockTypeError(
                f"thread must be a threading.Thread or None, got "
                f"{type(self.thread).__name__} {safe_repr(self.thread)}"
            )


def _lower_timer_slack() -> None:
    """Ask Linux to wake this thread's sleeps within 1 ns of the request, not 50 µs."""
    if sys.platform != "linux":
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_TIMERSLACK, ctypes.c_ulong(1), 0, 0, 0)
    except (OSError, AttributeError):
        pass  # no prctl (e.g. a libc without it): the calibrated spin covers the slack


def _check_priority(priority: object) -> int:
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise SimclockTypeError(
            f"priority must be an int or None, got {type(priority).__name__} {safe_repr(priority)}"
        )
    if not hasattr(os, "sched_setscheduler"):
        raise SimclockRuntimeError(
            f"priority={priority} needs SCHED_FIFO, which this OS does not offer; "
            "pass priority=None"
        )
    low = os.sched_get_priority_min(os.SCHED_FIFO)
    high = os.sched_get_priority_max(os.SCHED_FIFO)
    if not low <= priority <= high:
        raise SimclockValueError(
            f"priority must be in [{low}, {high}] (SCHED_FIFO), got {priority}"
        )
    return priority


class _PeriodicThread:
    """The loop behind `schedule_periodic_thread`; state is guarded by ``_lock``."""

    def __init__(
        self,
        period: int,
        base: int,
        cb: Callback,
        now: Callable[[], int],
        sleep: Callable[[int], object] | None,
        spin: int | None,
        bus: Bus | None,
        name: str,
        priority: int | None = None,
    ) -> None:
        self._period = period
        self._base = base
        self._cb = cb
        self._now = now
        self._stop = threading.Event()
        self._sleep: Callable[[int], object] = sleep if sleep is not None else self._default_sleep
        self._fixed_spin = spin
        self._real_sleep = sleep is None
        self._priority = priority
        # Set by the worker once its scheduling policy is in place (or failed).
        self.ready = threading.Event()
        self.start_error: OSError | None = None
        self._oversleep = _INITIAL_OVERSLEEP_NS
        self._oversleeps: deque[int] = deque(maxlen=_OVERSLEEP_WINDOW)
        self._bus = bus
        self._lock = threading.Lock()
        self._hist = LatenessHistogram()
        self._fired = 0
        self._failed = 0
        self._skipped = 0
        self._overrun = 0
        self._unreported = 0
        # The deadline being waited for or fired; stamps a failure of the worker itself.
        self._deadline = base
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    # -- control ------------------------------------------------------------

    def _default_sleep(self, duration_ns: int) -> None:
        # Waiting on the stop event instead of time.sleep lets cancel() wake us.
        # Capped in ints before dividing: a longer timeout (or a 10**400 ns period,
        # whose float conversion overflows) would raise OverflowError and kill the
        # worker; the loop re-reads the clock and sleeps again, so a cut sleep costs nothing.
        self._stop.wait(min(duration_ns, _MAX_WAIT_NS) / 1e9)

    def cancel(self) -> None:
        """Stop, then join unless called from the worker itself; never raises, idempotent.

        Joining waits for a callback in progress, so that nothing fires after
        ``cancel()`` returns (C-CAN-2). Consequence: two periodic threads whose
        callbacks cancel *each other* at the same moment wait for each other
        forever; cancel a peer thread from outside both callbacks instead.
        """
        self._stop.set()
        thread = self.thread
        # From the callback: the loop ends after it returns; joining would deadlock.
        if thread is not threading.current_thread() and thread.ident is not None:
            thread.join()

    def stats(self) -> PeriodicStats:
        with self._lock:
            return PeriodicStats(self._fired, self._failed, self._skipped, self._overrun)

    def jitter(self) -> JitterStats:
        with self._lock:
            hist = self._hist
            return JitterStats(
                fired=self._fired,
                failed=self._failed,
                skipped=self._skipped,
                overrun=self._overrun,
                deadlines=self._fired + self._skipped,
                p50_ns=hist.percentile_ns(50),
                p99_ns=hist.percentile_ns(99),
                max_ns=hist.max_ns if hist.count else None,
                mean_ns=hist.mean_ns,
                spin_ns=self._spin(),
                unreported=self._unreported,
                buckets=hist.buckets(),
            )

    # -- timing -------------------------------------------------------------

    def _spin(self) -> int:
        if self._fixed_spin is not None:
            return self._fixed_spin
        return min(self._period // 2, _MAX_AUTO_SPIN_NS, self._oversleep + _SPIN_MARGIN_NS)

    def _calibrate(self, overslept: int) -> None:
        # O(window log window) per sleep, paid while there is time to spare.
        window = self._oversleeps
        window.append(overslept)
        ordered = sorted(window)
        tail = ordered[math.ceil(_OVERSLEEP_QUANTILE * len(ordered)) - 1]
        if tail + _SPIN_MARGIN_NS <= min(self._period // 2, _MAX_AUTO_SPIN_NS):
            self._oversleep = tail
        else:
            # The tail is out of reach (a contended CPU): cover only the median.
            # A longer spin is charged as CPU use and gets the thread woken later.
            self._oversleep = ordered[(len(ordered) - 1) // 2]

    def _wait_until(self, deadline: int) -> bool:
        """Return once ``now() >= deadline`` (True) or when cancelled (False)."""
        now = self._now
        stop = self._stop
        while True:
            remaining = deadline - now()
            if remaining <= 0:
                return True
            if stop.is_set():
                return False
            spin = self._spin()
            if remaining > spin:
                wake_at = deadline - spin
                self._sleep(remaining - spin)
                if self._fixed_spin is None:
                    self._calibrate(max(0, now() - wake_at))
                continue
            # The last stretch: the OS cannot wake us this precisely, spin instead.
            while now() < deadline:
                if stop.is_set():
                    return False
            return True

    def _run(self) -> None:
        """The worker: the loop, and a report if something other than ``cb`` raises in it.

        ``cb`` failures are C-ERR-1 events and the loop goes on. Anything else
        raising ``Exception`` on this thread (an injected ``sleep``, the clock's
        ``now_ns`` returning a non-int later on) ends the worker, but never
        silently: it is published as ``SCHEDULER_CALLBACK_FAILED`` with
        ``stopped: True`` in the details, and counted in ``failed``.
        """
        try:
            self._loop()
        except Exception as exc:
            with self._lock:
                self._failed += 1
            event = callback_failure_event(
                self._deadline, self._run, exc, {"thread": self.thread.name, "stopped": True}
            )
            self._publish(event.kind, event.at_ns, dict(event.details))

    def _loop(self) -> None:
        if self._priority is not None:
            try:
                # pid 0 is the calling thread on Linux: only this worker becomes real-time.
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self._priority))
            except OSError as exc:
                self.start_error = exc
                self.ready.set()
                return
        self.ready.set()
        if self._real_sleep:
            _lower_timer_slack()
        period = self._period
        base = self._base
        now = self._now
        k = 0
        while not self._stop.is_set():
            self._deadline = base + k * period
            if not self._wait_until(self._deadline):
                return
            started = now()
            # Fire once, for the latest deadline already passed (C-SYS-2).
            # max(): a SystemClock other than MonotonicClock might step back.
            latest = max(k, (started - base) // period)
            skipped = latest - k
            deadline = base + latest * period
            if self._stop.is_set():
                return
            failure: Exception | None = None
            try:
                self._cb()
            except Exception as exc:
                failure = exc
            finished = now()
            with self._lock:
                self._fired += 1
                self._skipped += skipped
                self._failed += failure is not None
                # Overrun: the callback was still running when the next deadline passed.
                self._overrun += finished > deadline + period
                self._hist.add(max(0, started - deadline))
            if skipped:
                self._publish(
                    EventKind.PERIODIC_DEADLINE_MISSED,
                    deadline,
                    {
                        "thread": self.thread.name,
                        "skipped": skipped,
                        "first_missed_ns": base + k * period,
                    },
                )
            if failure is not None:
                event = callback_failure_event(
                    deadline, self._cb, failure, {"thread": self.thread.name}
                )
                self._publish(event.kind, event.at_ns, dict(event.details))
            k = latest + 1

    def _stamp(self, at_ns: int) -> int:
        """The clock's now for an unbound bus; the event's own time if the clock fails."""
        try:
            return check_time_ns(self._now(), "clock.now_ns()")
        except Exception:
            return at_ns

    def _publish(self, kind: EventKind, at_ns: int, details: dict[str, object]) -> None:
        bus = self._bus
        if bus is None:
            with self._lock:
                self._unreported += 1
            return
        event = Event(kind, at_ns, details)
        for _ in range(_PUBLISH_ATTEMPTS):
            try:
                if bus.clock is not None:
                    bus.publish(EVENTS_TOPIC, event)
                else:
                    bus.publish(EVENTS_TOPIC, event, stamp_ns=self._stamp(at_ns))
                return
            except SimclockValueError:
                continue  # another thread published a later stamp first; re-read now
            except Exception:
                break  # the clock's now_ns itself fails: count the event as unreported
        with self._lock:
            self._unreported += 1


def schedule_periodic_thread(
    period_ns: int,
    cb: Callback,
    clock: SystemClock,
    *,
    phase_ns: int = 0,
    name: str | None = None,
    bus: Bus | None = None,
    spin_ns: int | None = None,
    sleep: Callable[[int], object] | None = None,
    priority: int | None = None,
) -> PeriodicThreadHandle:
    """Run ``cb()`` on a daemon thread at ``start + phase + k*period`` (C-SYS-2, C-SYS-3).

    ``start`` is ``clock.now_ns()`` read during this call; deadlines are exact
    integers on that absolute grid, so the n-th deadline is never shifted by
    earlier lateness (no drift). The thread sleeps until ``spin_ns`` before
    each deadline and busy-waits the rest; ``spin_ns=None`` calibrates it from
    measured oversleep (at most 200 µs and ``period/2``), ``0`` never spins.
    With the default sleep on Linux the worker sets its timer slack to 1 ns.

    Late ticks: when the thread finds deadlines ``k..j`` already passed it
    fires once for ``j`` and counts ``k..j-1`` as skipped, publishing one
    ``Event(PERIODIC_DEADLINE_MISSED)``; so lateness is always below one
    period. A callback raising ``Exception`` is counted and published as
    ``Event(SCHEDULER_CALLBACK_FAILED)`` (details as C-ERR-1 plus ``thread``)
    and the thread goes on; any other ``BaseException`` ends the thread.

    Events go to ``bus``, else to ``clock.bus`` when the clock has one
    (``MonotonicClock`` does), stamped with ``clock.now_ns()`` on an unbound bus
    and with the bound clock's ``now`` otherwise; with no bus they are only
    counted (``JitterStats.unreported``). Subscribers run on this thread.

    ``sleep(duration_ns)`` replaces the coarse sleep (tests inject a fake that
    advances a fake source); the default waits on an event that ``cancel()``
    sets, so cancel never waits for a sleep to end. ``cancel()`` returns
    once the thread has finished: at most the current callback plus one
    clock read later; called from ``cb`` itself it only stops the loop.

    ``priority`` (1..99, Linux) runs the worker thread alone under
    ``SCHED_FIFO`` at that priority, so other processes cannot delay its
    wake-ups; it needs root or ``CAP_SYS_NICE``. This is what keeps lateness in
    the microseconds on a loaded machine (see docs/benchmarks.md). A callback
    that never returns then holds a core, up to the kernel's real-time
    throttling limit.

    Errors: wrong types ``TypeError``, ``period_ns <= 0`` or negative times
    ``ValueError``; a ``SimClock`` (it has ``advance``) is a ``TypeError``,
    since nothing would move its time: use ``clock.schedule_periodic``.
    A ``priority`` the OS refuses is a ``RuntimeError``, raised after the
    worker has ended and before anything fired.
    """
    period = check_positive_ns(period_ns, "period_ns")
    phase = check_time_ns(phase_ns, "phase_ns")
    if not callable(cb):
        raise SimclockTypeError(f"cb must be callable, got {type(cb).__name__} {safe_repr(cb)}")
    if hasattr(clock, "advance") or not callable(getattr(clock, "now_ns", None)):
        raise SimclockTypeError(
            f"clock must be a free-running SystemClock such as simclock.MonotonicClock, "
            f"got {type(clock).__name__}; for a SimClock use clock.schedule_periodic(...)"
        )
    if name is not None and not isinstance(name, str):
        raise SimclockTypeError(
            f"name must be a str or None, got {type(name).__name__} {safe_repr(name)}"
        )
    if bus is not None and not isinstance(bus, Bus):
        raise SimclockTypeError(f"bus must be a simclock.Bus or None, got {safe_repr(bus)}")
    spin = None if spin_ns is None else check_time_ns(spin_ns, "spin_ns")
    if sleep is not None and not callable(sleep):
        raise SimclockTypeError(
            f"sleep must be a callable taking a duration in ns, got {type(sleep).__name__} "
            f"{safe_repr(sleep)}"
        )
    if priority is not None:
        _check_priority(priority)
    if bus is None:
        clock_bus = getattr(clock, "bus", None)
        bus = clock_bus if isinstance(clock_bus, Bus) else None
    thread_name = name if name is not None else f"simclock-periodic:{callback_name(cb)}"
    # Checked here, not on the worker: a clock giving float seconds would only
    # surface as a TypeError that silently ends the thread (C-SYS-1: int ns).
    start = check_time_ns(clock.now_ns(), "clock.now_ns()")
    loop = _PeriodicThread(
        period, start + phase, cb, clock.now_ns, sleep, spin, bus, thread_name, priority
    )
    loop.thread.start()
    if priority is not None:
        loop.ready.wait()
        if loop.start_error is not None:
            loop.thread.join()
            raise SimclockRuntimeError(
                f"priority={priority} was refused by the OS ({loop.start_error}); SCHED_FIFO "
                "needs root or CAP_SYS_NICE: grant it or pass priority=None"
            )
    return PeriodicThreadHandle(
        cancel=loop.cancel, stats=loop.stats, jitter=loop.jitter, thread=loop.thread
    )
