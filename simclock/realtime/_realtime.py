"""Free-running time for hardware: ``MonotonicClock`` and periodic threads (SPEC §4).

This module reads the wall clock on purpose: it is the hardware side of the
contract, never simulation code. Every read goes through an injectable source
(``MonotonicClock(seed, source=...)`` and ``schedule_periodic_thread(...,
sleep=...)``) so the scheduling logic is tested with a fake time source and no
test depends on how fast the machine is.

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
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from simclock.core._bus import EVENTS_TOPIC, Bus, Event, EventKind
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._failure import callback_failure_event
from simclock.core._names import callback_name, safe_repr
from simclock.core._protocols import Callback, Handle, PeriodicStats, SystemClock
from simclock.core._random import SeededRandomSource
from simclock.core._timeint import check_positive_ns, check_time_ns

__all__ = [
    "JitterStats",
    "LatenessHistogram",
    "MonotonicClock",
    "PeriodicThreadHandle",
    "schedule_periodic_thread",
]

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


class MonotonicClock:
    """A :class:`~simclock.SystemClock` reading the OS monotonic clock (C-SYS-1).

    ``MonotonicClock(seed, *, source=None, bus=None)``. ``source`` is a
    zero-argument callable returning int ns, ``time.monotonic_ns`` by default;
    it is the public attribute ``source``, so tests drive the clock with a fake.
    ``now_ns()`` never decreases: a source that steps back is held at the last
    value returned (``time.monotonic_ns`` never does). ``random_source()`` is the
    root stream of ``seed`` (C-RNG-1). ``bus`` (an unbound :class:`~simclock.Bus`
    by default) is where periodic threads on this clock report failures, stamped
    in this clock's ns.

    Thread-safe; ``now_ns()`` is O(1) and takes one lock.
    """

    def __init__(
        self,
        seed: int,
        *,
        source: Callable[[], int] | None = None,
        bus: Bus | None = None,
    ) -> None:
        if source is not None and not callable(source):
            raise SimclockTypeError(
                f"source must be a callable returning int ns, got {type(source).__name__} "
                f"{safe_repr(source)}; pass e.g. time.monotonic_ns"
            )
        if bus is not None and not isinstance(bus, Bus):
            raise SimclockTypeError(f"bus must be a simclock.Bus or None, got {safe_repr(bus)}")
        self._random = SeededRandomSource(seed)
        self.source: Callable[[], int] = source if source is not None else time.monotonic_ns
        self.bus = bus if bus is not None else Bus()
        self._lock = threading.Lock()
        self._last = 0

    def now_ns(self) -> int:
        """The source's time in int ns, never lower than a value already returned (C-SYS-1)."""
        value = self.source()
        if type(value) is not int or value < 0:
            value = check_time_ns(value, "source()")
        with self._lock:
            # Invariant: _last is the largest value ever returned.
            if value < self._last:
                return self._last
            self._last = value
            return value

    def random_source(self) -> SeededRandomSource:
        """The root random stream, label ``/`` (C-RNG-1); the same object every call."""
        return self._random


class LatenessHistogram:
    """Counts of non-negative ns values in log-linear buckets (C-SYS-3).

    Values below 128 ns have a bucket each; above, each power of two is split
    into 64 buckets, so a percentile is the upper bound of its bucket and
    over-reports by at most 1/64 (1.6 %) of the value; ``max_ns`` and
    ``mean_ns`` are exact. Memory is O(log(max) * 64) whatever the run length,
    so a thread can record for hours. ``add`` is O(1); ``percentile_ns`` and
    ``buckets`` are O(buckets). Not thread-safe (the periodic thread guards it).
    """

    _SUB_BITS = 6
    _SUB = 1 << _SUB_BITS
    # Values of up to this many bits are counted (2**64 ns is 584 years); the bound
    # keeps bucket_bounds() from building a 2**70-bit int for a hostile index.
    MAX_VALUE_BITS = 1 << 12

    def __init__(self) -> None:
        self._counts: dict[int, int] = {}
        self.count = 0
        self.total_ns = 0
        self.max_ns = 0

    @classmethod
    def _index(cls, value: int) -> int:
        if value < 2 * cls._SUB:
            return value
        shift = value.bit_length() - (cls._SUB_BITS + 1)
        return 2 * cls._SUB + (shift - 1) * cls._SUB + ((value >> shift) - cls._SUB)

    @classmethod
    def bucket_bounds(cls, index: int) -> tuple[int, int]:
        """Inclusive ``(low_ns, high_ns)`` of bucket ``index``.

        ``index`` is an int in ``[0, max_index()]`` (``TypeError``/``ValueError``
        otherwise, before any big number is built).
        """
        if isinstance(index, bool) or not isinstance(index, int):
            raise SimclockTypeError(
                f"index must be an int, got {type(index).__name__} {safe_repr(index)}"
            )
        if not 0 <= index <= cls.max_index():
            raise SimclockValueError(
                f"index must be in [0, {cls.max_index()}], got {safe_repr(index)}"
            )
        if index < 2 * cls._SUB:
            return index, index
        shift, sub = divmod(index - 2 * cls._SUB, cls._SUB)
        shift += 1
        mantissa = sub + cls._SUB
        return mantissa << shift, ((mantissa + 1) << shift) - 1

    @classmethod
    def max_index(cls) -> int:
        """The bucket of the largest value :meth:`add` accepts (``2**MAX_VALUE_BITS - 1``)."""
        return cls._index((1 << cls.MAX_VALUE_BITS) - 1)

    def add(self, value_ns: int) -> None:
        """Record one value (int ns, ``0 <= value_ns < 2**MAX_VALUE_BITS``)."""
        if type(value_ns) is not int or value_ns < 0:
            value_ns = check_time_ns(value_ns, "value_ns")
        if value_ns.bit_length() > self.MAX_VALUE_BITS:
            raise SimclockValueError(
                f"value_ns must be below 2**{self.MAX_VALUE_BITS}, got {safe_repr(value_ns)}"
            )
        index = self._index(value_ns)
        self._counts[index] = self._counts.get(index, 0) + 1
        self.count += 1
        self.total_ns += value_ns
        self.max_ns = max(self.max_ns, value_ns)

    @property
    def mean_ns(self) -> int | None:
        """Exact mean rounded down, or ``None`` with no values."""
        return self.total_ns // self.count if self.count else None

    def percentile_ns(self, p: int | float | Fraction) -> int | None:
        """Nearest-rank ``p``-th percentile (``0 < p <= 100``), or ``None`` with no values."""
        if isinstance(p, bool) or not isinstance(p, int | float | Fraction):
            raise SimclockTypeError(
                f"p must be a number in (0, 100], got {type(p).__name__} {safe_repr(p)}"
            )
        # Compared exactly, never through float(): math.isfinite(10**400) overflows.
        if (isinstance(p, float) and math.isnan(p)) or not 0 < p <= 100:
            raise SimclockValueError(f"p must be in (0, 100], got {safe_repr(p)}")
        if not self.count:
            return None
        rank = math.ceil(Fraction(p) * self.count / 100)
        seen = 0
        for index in sorted(self._counts):
            seen += self._counts[index]
            if seen >= rank:
                return min(self.bucket_bounds(index)[1], self.max_ns)
        raise AssertionError("unreachable: rank <= count")  # pragma: no cover

    def buckets(self) -> tuple[tuple[int, int, int], ...]:
        """Non-empty buckets as ``(low_ns, high_ns, count)``, ascending."""
        return tuple((*self.bucket_bounds(i), self._counts[i]) for i in sorted(self._counts))


@dataclass(frozen=True, slots=True)
class JitterStats:
    """A snapshot of a periodic thread's timing (C-SYS-3, C-X-STATS).

    ``lateness`` is how long after its nominal deadline a firing started (its
    callback was called), in ns, always >= 0. ``p50_ns``/``p99_ns`` come from a
    :class:`LatenessHistogram` (at most 1.6 % high), ``max_ns`` and ``mean_ns``
    are exact; all four are ``None`` before the first firing. ``overrun``
    counts firings whose callback returned after the next deadline (which is
    then fired late or skipped). ``deadlines`` is
    ``fired + skipped``: every grid point that has passed and been handled,
    so ``deadlines`` versus elapsed time over period is the drift check.
    ``spin_ns`` is the current calibrated busy-wait stretch. ``unreported``
    counts events that could not be published on the bus.
    ``buckets`` is the histogram: ``(low_ns, high_ns, count)`` tuples.
    """

    fired: int
    failed: int
    skipped: int
    overrun: int
    deadlines: int
    p50_ns: int | None
    p99_ns: int | None
    max_ns: int | None
    mean_ns: int | None
    spin_ns: int
    unreported: int
    buckets: tuple[tuple[int, int, int], ...]


def _no_jitter() -> JitterStats:
    return JitterStats(0, 0, 0, 0, 0, None, None, None, None, 0, 0, ())


@dataclass(frozen=True, slots=True)
class PeriodicThreadHandle(Handle):
    """The :class:`~simclock.Handle` of a periodic thread, with ``jitter()`` (C-SYS-3).

    ``cancel()`` stops the thread and, unless called from the thread itself,
    joins it (C-SYS-2, C-CAN-1..2); ``stats()`` gives the
    :class:`~simclock.PeriodicStats` counters; ``jitter()`` gives a
    :class:`JitterStats` snapshot with lateness percentiles; ``thread`` is the
    worker (for ``is_alive()`` or its name).
    """

    jitter: Callable[[], JitterStats] = _no_jitter
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
    """The loop behind :func:`schedule_periodic_thread`; state is guarded by ``_lock``."""

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
