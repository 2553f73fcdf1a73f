"""A slow, obviously-correct reference scheduler for SPEC §1, C-X-PEEK and C-X-RATE.

Written from SPEC.md alone so that property tests can compare
``simclock.HeapSimClock`` to something that shares none of its code. Pending
entries live in a plain Python list: cancelling removes the entry from the list
(so there are no tombstones), and every pop scans the whole list for the
smallest ``(at_ns, seq)``. Everything is O(n) per operation; speed is not the
point, transparency is.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import partial

import numpy as np

from simclock import PeriodicStats, SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.lowlevel import Handle

__all__ = ["FailureRecord", "ReferenceClock"]

_NS_PER_S = 1_000_000_000


@dataclass(frozen=True, slots=True)
class FailureRecord:
    """One callback that raised ``Exception`` (C-ERR-1).

    ``callback`` is the callable's ``__qualname__``; ``error_type`` the
    exception class's ``__qualname__``; ``error_message`` is ``str(exc)``, or
    ``<str() of TYPE raised>`` when that raises.
    """

    at_ns: int
    callback: str
    error_type: str
    error_message: str


def _show(value: object) -> str:
    """``repr(value)`` for an error message: cut short, and never raising itself."""
    try:
        text = repr(value) if not (type(value) is int and value.bit_length() > 400) else "<big int>"
    except Exception:
        return f"<{type(value).__qualname__} object>"
    return text if len(text) <= 120 else text[:120] + "..."


def _time_int(value: object, name: str) -> int:
    """``value`` as a time-int, else ``TypeError``/``ValueError`` (C-TIME-3)."""
    # bool is an int subclass, hence the exact type test (SPEC §0).
    if type(value) is int:
        result = value
    elif isinstance(value, np.integer) and not isinstance(value, np.bool_):
        result = operator.index(value)
    else:
        raise SimclockTypeError(
            f"{name} must be an int of nanoseconds, got {type(value).__name__} {_show(value)}; "
            "pass an int"
        )
    if result < 0:
        raise SimclockValueError(
            f"{name} must be >= 0, got {_show(result)}; pass a non-negative int"
        )
    return result


def _positive_time_int(value: object, name: str) -> int:
    """A period: a time-int ``> 0`` (C-PER-1, C-TIME-3)."""
    result = _time_int(value, name)
    if result == 0:
        raise SimclockValueError(f"{name} must be > 0, got 0; pass a positive int")
    return result


def _rate(value: object) -> Fraction:
    if isinstance(value, bool | np.bool_):
        raise SimclockTypeError(
            f"rate_hz must be an int or a fractions.Fraction of Hz, got bool {_show(value)}"
        )
    # C-X-RATE names exactly `int` or `Fraction`; a rate is not a time, so the
    # numpy integers that §0 admits for times are refused here (as HeapSimClock does).
    if isinstance(value, int):
        rate = Fraction(value)
    elif isinstance(value, Fraction):
        rate = value
    else:
        raise SimclockTypeError(
            f"rate_hz must be an int or a fractions.Fraction of Hz, got "
            f"{type(value).__name__} {_show(value)}; e.g. Fraction(30)"
        )
    if rate <= 0:
        raise SimclockValueError(f"rate_hz must be > 0, got {_show(value)}; pass a positive rate")
    # Above 1 GHz several firings would share one ns; SPEC is silent, and
    # HeapSimClock refuses, so the oracle refuses too (ValueError).
    if rate > _NS_PER_S:
        raise SimclockValueError(
            f"rate_hz must be <= 10**9 (one firing per ns at most), got {_show(value)}"
        )
    return rate


def _callable(cb: object) -> Callable[[], object]:
    """``cb`` if callable, else ``TypeError``; no clause decides a non-callable callback."""
    if not callable(cb):
        raise SimclockTypeError(f"cb must be callable, got {type(cb).__name__} {_show(cb)}")
    return cb


def _name(cb: object) -> str:
    # A functools.partial has no __qualname__; naming it after the function it
    # wraps keeps the report useful and deterministic (C-ERR-1, the same choice
    # as HeapSimClock).
    if isinstance(cb, partial):
        return f"partial({_name(cb.func)})"
    try:
        qualname = getattr(cb, "__qualname__", None)
    except Exception:
        qualname = None  # a raising __qualname__ property counts as absent
    return qualname if isinstance(qualname, str) else type(cb).__qualname__


def _message(exc: BaseException) -> str:
    """``str(exc)``; when ``__str__`` raises (anything), the SPEC's fixed placeholder (C-ERR-1)."""
    try:
        return str(exc)
    except BaseException:
        return f"<str() of {type(exc).__qualname__} raised>"


class _Schedule:
    """One registration: a one-shot, a periodic grid or a rate grid.

    ``time_of(k)`` is the k-th grid point; a one-shot has only ``k = 0``.
    """

    def __init__(
        self,
        cb: Callable[[], object],
        time_of: Callable[[int], int],
        repeating: bool,
    ) -> None:
        self.cb = cb
        self.time_of = time_of
        self.repeating = repeating
        self.cancelled = False
        self.fired = 0
        self.failed = 0

    def stats(self) -> PeriodicStats:
        """The schedule's counts (C-X-STATS)."""
        return PeriodicStats(fired=self.fired, failed=self.failed)


class _Entry:
    """One pending firing of a schedule: grid index ``k`` at ``at_ns``."""

    __slots__ = ("at_ns", "k", "order", "schedule", "seq")

    def __init__(self, at_ns: int, seq: int, schedule: _Schedule, k: int) -> None:
        self.at_ns = at_ns
        self.seq = seq
        self.schedule = schedule
        self.k = k
        # The firing order's key (C-TIE-1), kept so that the scan below runs in C.
        self.order = (at_ns, seq)


_ORDER = operator.attrgetter("order")


class ReferenceClock:
    """Reference implementation of the observable behaviour of a SimClock (SPEC §1).

    Order: entries fire by ``(at_ns, seq)``, ``seq`` taken from a per-clock
    counter at push (C-TIE-1); a repeating entry's next firing is pushed after
    its callback returns or raises, with a fresh ``seq`` (C-PER-2). Errors:
    ``TypeError`` for non time-ints and non-callables, ``ValueError`` for
    negative or past times and non-positive periods/rates, ``RuntimeError`` for
    ``advance`` from inside a callback (C-ADV-4); a refused call changes
    nothing. Complexity: O(pending) per push, cancel and pop.
    """

    def __init__(self, start_ns: int = 0) -> None:
        self._now = _time_int(start_ns, "start_ns")
        self._seq = 0
        # Invariant: exactly the live pending entries; no cancelled entry is kept.
        self._pending: list[_Entry] = []
        self._running = False
        self.failures: list[FailureRecord] = []

    def now_ns(self) -> int:
        """Current simulation time in ns (C-TIME-1, C-TIME-2)."""
        return self._now

    def step_ns(self) -> int:
        """A pure event clock has no step; it returns 1, the time resolution (C-STEP-1)."""
        return 1

    def pending_count(self) -> int:
        """Number of live pending entries."""
        return len(self._pending)

    def next_event_ns(self) -> int | None:
        """Time of the earliest live entry, or ``None`` (C-X-PEEK)."""
        first = self._earliest()
        return None if first is None else first.at_ns

    def schedule(self, at_ns: int, cb: Callable[[], object]) -> Handle:
        """Fire ``cb`` once at ``at_ns >= now`` (C-SCH-1, C-SCH-2)."""
        # Check order, as in every schedule*: times (type, then value), then cb.
        at = _time_int(at_ns, "at_ns")
        if at < self._now:
            raise SimclockValueError(
                f"at_ns must be >= now ({self._now}), got {_show(at)}; schedule at now or later"
            )
        fn = _callable(cb)
        schedule = _Schedule(fn, lambda k: at, repeating=False)
        self._push(schedule, 0)
        return self._handle(schedule)

    def schedule_periodic(
        self, period_ns: int, cb: Callable[[], object], phase_ns: int = 0
    ) -> Handle:
        """Fire ``cb`` at ``phase + k*period`` from the first grid point >= now (C-PER-1..3)."""
        period = _positive_time_int(period_ns, "period_ns")
        phase = _time_int(phase_ns, "phase_ns")
        fn = _callable(cb)
        schedule = _Schedule(fn, lambda k: phase + k * period, repeating=True)
        self._push(schedule, self._first_index(schedule, phase))
        return self._handle(schedule)

    def schedule_rate(
        self, rate_hz: int | Fraction, cb: Callable[[], object], phase_ns: int = 0
    ) -> Handle:
        """Fire ``cb`` at ``phase + ceil(k * 10**9 / rate_hz)`` (C-X-RATE).

        The first firing is the first such point >= now, as for C-PER-1.
        ``0 < rate_hz <= 10**9``, else ``ValueError``.
        """
        rate = _rate(rate_hz)
        phase = _time_int(phase_ns, "phase_ns")
        fn = _callable(cb)

        def time_of(k: int) -> int:
            # C-X-RATE: phase + ceil(k * 10**9 / rate), exactly.
            exact = k * _NS_PER_S / rate
            return phase + -(-exact.numerator // exact.denominator)

        schedule = _Schedule(fn, time_of, repeating=True)
        self._push(schedule, self._first_index(schedule, phase))
        return self._handle(schedule)

    def advance(self, dt_ns: int) -> None:
        """Fire every live entry with ``at_ns <= now + dt`` in order, then set now (C-ADV-1..5).

        Entries pushed meanwhile fire too when due (C-ADV-3). ``Exception`` from
        a callback is recorded in :attr:`failures` (C-ERR-1); ``BaseException``
        propagates with ``now`` at the failing entry's time (C-ERR-2).
        """
        # The argument is checked first, then the state: a nested advance(1.0)
        # is the TypeError of C-TIME-3, a nested advance(1) the RuntimeError of
        # C-ADV-4 (SPEC is silent on a call that breaks both; HeapSimClock's order).
        dt = _time_int(dt_ns, "dt_ns")
        if self._running:
            raise SimclockRuntimeError(
                "advance called from inside a callback; return from the callback instead"
            )
        target = self._now + dt
        self._running = True
        try:
            while True:
                entry = self._earliest()
                if entry is None or entry.at_ns > target:
                    break
                self._pending.remove(entry)
                self._now = entry.at_ns
                self._fire(entry)
            self._now = target
        finally:
            self._running = False

    def _fire(self, entry: _Entry) -> None:
        schedule = entry.schedule
        schedule.fired += 1
        try:
            schedule.cb()
        except Exception as exc:
            schedule.failed += 1
            self.failures.append(
                FailureRecord(
                    entry.at_ns, _name(schedule.cb), type(exc).__qualname__, _message(exc)
                )
            )
        finally:
            # C-PER-2: the next firing is pushed only now, also after a raise,
            # and not if the callback cancelled its own schedule.
            if schedule.repeating and not schedule.cancelled:
                self._push(schedule, entry.k + 1)

    def _first_index(self, schedule: _Schedule, phase: int) -> int:
        """The first grid index whose time is ``>= now`` (C-PER-1, C-X-RATE)."""
        if phase >= self._now:
            return 0
        # Exponential then binary search for the first k with time_of(k) >= now;
        # grid times are non-decreasing in k, so this is plainly the first one.
        # Invariant: time_of(lo_k) < now <= time_of(hi_k) after the first loop.
        lo_k, hi_k = 0, 1
        while schedule.time_of(hi_k) < self._now:
            lo_k, hi_k = hi_k, hi_k * 2
        while hi_k - lo_k > 1:
            mid = (lo_k + hi_k) // 2
            if schedule.time_of(mid) < self._now:
                lo_k = mid
            else:
                hi_k = mid
        return hi_k

    def _push(self, schedule: _Schedule, k: int) -> None:
        """Queue firing ``k`` with the next ``seq`` (C-TIE-1)."""
        self._pending.append(_Entry(schedule.time_of(k), self._seq, schedule, k))
        self._seq += 1

    def _earliest(self) -> _Entry | None:
        """The pending entry first in ``(at_ns, seq)`` order (C-ADV-1, C-TIE-1, C-X-PEEK).

        A linear scan of the unordered list: ``min`` keeps the first of equal keys,
        and no two entries share a ``seq``.
        """
        return min(self._pending, key=_ORDER, default=None)

    def _handle(self, schedule: _Schedule) -> Handle:
        def cancel() -> None:
            # C-CAN-1, C-CAN-2: removed at once, never raising, a repeat does nothing.
            schedule.cancelled = True
            self._pending = [e for e in self._pending if e.schedule is not schedule]

        return Handle(cancel=cancel, stats=schedule.stats)
