"""Deliberately broken backends: each differs from ``SortedListClock`` by one defect.

:data:`BROKEN` maps each factory name (``backends.broken:<name>``) to the
clause the conformance suite must report as failed and a one-line description
of the defect. ``tests/test_conformance_selfcheck.py`` runs the suite on every
one of them; ``tests/backends/table.py`` writes the results to
``docs/conformance.md``.
"""

from __future__ import annotations

import contextlib
import random
import threading
from collections import deque
from collections.abc import Callable

import numpy as np

from simclock import Bus, Callback, SimclockValueError

from .sorted_list import _GIGA, Item, SortedListClock, Timer
from .streams import PathStream, join_label
from .wheel import Entry, WheelClock

__all__ = [
    "BLOCKED_OWN_CLAUSE",
    "BROKEN",
    "EXPECTED_FAILED",
    "EXPECTED_FAILED_SERVE",
    "NOT_YET_OWN_CLAUSE",
    "REAL_DEFECTS",
]


class _LifoTies(SortedListClock):
    def _key(self, at: int, seq: int) -> tuple[int, int]:
        return (-at, seq)  # defect: equal times pop newest first


class _RepushKeepsSeq(SortedListClock):
    def _next_seq(self, timer: Timer) -> int:
        # defect: a re-pushed periodic reuses the seq it got at registration
        if not timer.repeats:
            return super()._next_seq(timer)
        first: dict[Timer, int] = self.__dict__.setdefault("_first_seq", {})
        if timer not in first:
            first[timer] = super()._next_seq(timer)
        return first[timer]


class _FloatSeconds(SortedListClock):
    def _time_of(self, timer: Timer) -> int:
        if timer.period is None:
            return super()._time_of(timer)
        # defect: the grid is accumulated in float seconds
        if timer.k == 0 or timer.seconds == 0.0:
            timer.seconds = (timer.phase + timer.k * timer.period) / 1e9
        else:
            timer.seconds += timer.period / 1e9  # noqa: SCK403 - the defect on show
        return int(timer.seconds * 1e9)  # noqa: SCK402 - the defect on show


class _FloatsAccepted(SortedListClock):
    def _time(self, value: object, name: str) -> int:
        if isinstance(value, float):
            value = round(value)  # defect: floats are rounded instead of refused
        return super()._time(value, name)


class _SecondCancelRaises(SortedListClock):
    def _cancel(self, timer: Timer) -> None:
        if timer.cancelled:
            raise SimclockValueError("handle already cancelled")  # defect
        super()._cancel(timer)


class _OwnCancelIgnored(SortedListClock):
    def _cancel(self, timer: Timer) -> None:
        if not timer.queued and timer.repeats and timer.fired > 0:
            return  # defect: a periodic running its callback cannot be cancelled
        super()._cancel(timer)


class _ExceptionsEscape(SortedListClock):
    def _run(self, at: int, timer: Timer) -> bool:
        timer.cb()  # defect: exceptions propagate out of advance
        return True


class _FailureStopsRest(SortedListClock):
    def _run(self, at: int, timer: Timer) -> bool:
        try:
            timer.cb()
        except Exception as exc:
            timer.failed += 1
            self._report(at, timer.cb, exc)
            return False  # defect: the rest of this advance is dropped
        return True


class _NewEntriesWait(SortedListClock):
    def advance(self, dt_ns: int) -> None:
        # defect: entries pushed during this advance wait for the next one
        self._limit = self._counter
        super().advance(dt_ns)

    def _due(self, target: int) -> Item | None:
        limit = getattr(self, "_limit", None)
        if limit is None:
            return super()._due(target)
        self._drop_dead_tail()
        for i in range(len(self._items) - 1, -1, -1):
            neg_at, neg_seq, timer = self._items[i]
            if -neg_at > target:
                return None
            if -neg_seq < limit and not timer.cancelled:
                return self._items.pop(i)
        return None


class _NowIsTarget(SortedListClock):
    _now_override: int | None = None

    def advance(self, dt_ns: int) -> None:
        dt = self._time(dt_ns, "dt_ns")
        target = self._now + dt
        self._now_override = target
        try:
            super().advance(dt)
        finally:
            self._now_override = None

    def now_ns(self) -> int:
        override = self._now_override
        # defect: inside advance, now is already the target
        return override if override is not None else self._now


class _AdvanceZeroSkips(SortedListClock):
    def advance(self, dt_ns: int) -> None:
        if type(dt_ns) is int and dt_ns == 0:
            return  # defect: advance(0) does nothing
        super().advance(dt_ns)


class _PastAccepted(SortedListClock):
    def _check_not_past(self, at: int) -> None:
        pass  # defect: entries in the past are accepted (and fire at once)


class _RelativeGrid(SortedListClock):
    def _first_k(self, timer: Timer) -> int:
        # defect: the grid starts at registration: now + phase, now + phase + period, ...
        timer.phase += self._now
        return 0


class _HashStream(PathStream):
    def key(self) -> list[int]:
        # defect: Python's salted hash() keys the child streams
        return [self._seed, hash(self._path) & 0xFFFF_FFFF_FFFF_FFFF]


class _HashKeyedChildren(SortedListClock):
    def _make_root(self, seed: int) -> PathStream:
        return _HashStream(seed)


class _NeverCompacts(SortedListClock):
    def _should_purge(self) -> bool:
        return False  # defect: cancelled entries stay forever


class _NestedAdvanceAllowed(SortedListClock):
    def advance(self, dt_ns: int) -> None:
        self._busy = False  # defect: no guard against advance from a callback
        super().advance(dt_ns)


class _BaseExceptionSwallowed(SortedListClock):
    def _run(self, at: int, timer: Timer) -> bool:
        try:
            timer.cb()
        except BaseException as exc:  # defect: KeyboardInterrupt is reported, not raised
            timer.failed += 1
            self._report(at, timer.cb, exc if isinstance(exc, Exception) else Exception(repr(exc)))
        return True


class _PeekSeesCancelled(SortedListClock):
    def next_event_ns(self) -> int | None:
        # defect: tombstones are not skipped
        return -self._items[-1][0] if self._items else None


class _RateRoundedPeriod(SortedListClock):
    def _time_of(self, timer: Timer) -> int:
        if timer.rate is None:
            return super()._time_of(timer)
        # defect: the rate becomes a rounded integer period
        return timer.phase + timer.k * round(_GIGA / timer.rate)


class _CancelByCallback(SortedListClock):
    def _cancel(self, timer: Timer) -> None:
        # defect: cancel looks entries up by callback, hitting other schedules of it
        for _, _, other in list(self._items):
            if other.cb is timer.cb and other is not timer:
                super()._cancel(other)
        super()._cancel(timer)


class _NumpyNowLeaks(SortedListClock):
    def _time(self, value: object, name: str) -> int:
        if isinstance(value, np.integer):
            if value < 0:
                raise SimclockValueError(f"{name} must be >= 0")
            return value  # type: ignore[return-value]  # defect: not normalised to int
        return super()._time(value, name)


class _OrderDependentChildren(PathStream):
    def __init__(self, seed: int, path: str = "/", parent: PathStream | None = None) -> None:
        super().__init__(seed, path)
        self._parent = parent

    def child(self, label: str) -> PathStream:
        # defect: a child is seeded by its parent's generator, so creation order matters
        child = _OrderDependentChildren(self._seed, join_label(self._path, label), self)
        entropy = int(self._gen.integers(0, 1 << 62))
        child._gen = np.random.Generator(np.random.PCG64(entropy))
        return child


class _SpawnedChildren(SortedListClock):
    def _make_root(self, seed: int) -> PathStream:
        return _OrderDependentChildren(seed)


class _OneFiringPerAdvance(SortedListClock):
    _target = 0

    def advance(self, dt_ns: int) -> None:
        if not self._busy:
            self._target = self._now + self._time(dt_ns, "dt_ns")
        super().advance(dt_ns)

    def _after(self, timer: Timer) -> None:
        if timer.repeats and not timer.cancelled:
            # defect: grid points a periodic missed within one advance are dropped
            timer.k += 1
            while self._time_of(timer) <= self._target:
                timer.k += 1
            self._push(self._time_of(timer), timer)


class _StepZero(SortedListClock):
    def step_ns(self) -> int:
        return 0  # defect: a pure event clock "has no step"


class _FreshGenerator(PathStream):
    def numpy_rng(self) -> np.random.Generator:
        # defect: a new Generator object (over the same bit generator) every call
        return np.random.Generator(self._gen.bit_generator)


class _FreshGenerators(SortedListClock):
    def _make_root(self, seed: int) -> PathStream:
        return _FreshGenerator(seed)


class _GlobalJitter(SortedListClock):
    jitter_ns = 0

    def _push(self, at: int, timer: Timer) -> None:
        # defect: jitter (disabled, scaled by 0) is still drawn from global random
        super()._push(at + int(random.random() * self.jitter_ns), timer)  # noqa: SCK101


class _ReseedsGlobals(SortedListClock):
    def __init__(self, seed: int, bus: Bus | None = None, *, start_ns: int = 0) -> None:
        # defect: every new clock reseeds the global generators with one constant, as
        # simulators that "make runs reproducible" by default do
        random.seed(1234567)  # noqa: SCK101
        np.random.seed(1234567)  # noqa: SCK102
        super().__init__(seed, bus, start_ns=start_ns)


class _ReseedsNumpyWithSeed(SortedListClock):
    def __init__(self, seed: int, bus: Bus | None = None, *, start_ns: int = 0) -> None:
        # defect: the clock's seed is also given to the global numpy generator
        np.random.seed(seed % 2**32)  # noqa: SCK102
        super().__init__(seed, bus, start_ns=start_ns)


class _EmptyRootLabel(SortedListClock):
    def _make_root(self, seed: int) -> PathStream:
        return PathStream(seed, "")  # defect: the root is labelled "" instead of "/"


class _UncheckedLabel(PathStream):
    def child(self, label: str) -> PathStream:
        # defect: labels are joined without validation
        body = label[1:] if label.startswith("/") else label
        return type(self)(self._seed, ("" if self._path == "/" else self._path) + "/" + body)


class _UncheckedLabels(SortedListClock):
    def _make_root(self, seed: int) -> PathStream:
        return _UncheckedLabel(seed)


class _FailurePathNameError(SortedListClock):
    def _report(self, at: int, cb: Callback, exc: Exception) -> None:
        # defect: an import mistake in the failure path (the helper was never imported)
        publish_failure(self.bus, at, cb, exc)  # type: ignore[name-defined]  # noqa: F821


class _Float64Times(SortedListClock):
    def _key(self, at: int, seq: int) -> tuple[int, int]:
        return (-int(float(at)), -seq)  # defect: times stored as float64 (exact only to 2**53)


class _Wraps64(SortedListClock):
    def _key(self, at: int, seq: int) -> tuple[int, int]:
        return (-(at & 0xFFFF_FFFF_FFFF_FFFF), -seq)  # defect: times stored modulo 2**64


_U64 = 2**64 - 1


class _U64Counter(SortedListClock):
    """An unsigned 64-bit counter: times are taken modulo 2**64, an advance past it refused."""

    def _time(self, value: object, name: str) -> int:
        ns = super()._time(value, name)
        if name == "dt_ns":
            if self._now + ns > _U64:
                raise SimclockValueError(f"dt_ns={ns} takes now past 2**64 - 1")
            return ns
        # defect: a time argument is cut to 64 bits, so schedule(2**64 + 5) at now = 0
        # fires at 5 (a wrapped time in the past is refused as past, which hides it)
        return ns & _U64


class _TiesByOrigin(SortedListClock):
    def _next_seq(self, timer: Timer) -> int:
        # defect: at one instant, entries pushed from outside fire before those pushed
        # while advance runs (by callbacks or a periodic's re-push), each in push order
        return super()._next_seq(timer) + (1 << 62 if self._busy else 0)


class _RandomTieOrder(SortedListClock):
    def _next_seq(self, timer: Timer) -> int:
        # defect: equal times fire in a scrambled (hash of the push count) order, the same
        # in every run: a deterministic "random" tie-break
        seq = super()._next_seq(timer)
        return (((seq * 2654435761) & 0xFFFF_FFFF) << 40) | seq


class _NowRefused(SortedListClock):
    def _check_not_past(self, at: int) -> None:
        if at <= self._now:  # defect: at == now is refused as well
            raise SimclockValueError(f"at_ns={at} is not after now={self._now}; schedule later")


class _Int63Times(SortedListClock):
    def _time(self, value: object, name: str) -> int:
        ns = super()._time(value, name)
        if ns > 2**63 - 1 or (name == "dt_ns" and self._now + ns > 2**63 - 1):
            # defect: times are signed 64-bit, so everything past 2**63 - 1 is refused
            raise SimclockValueError(f"{name}={ns} does not fit a signed 64-bit time")
        return ns


class _HaltedPeriodicDropped(SortedListClock):
    _raised = False

    def _run(self, at: int, timer: Timer) -> bool:
        self._raised = True  # stays True when a BaseException leaves the callback
        keep_going = super()._run(at, timer)
        self._raised = False
        return keep_going

    def _after(self, timer: Timer) -> None:
        if self._raised:
            self._raised = False
            return  # defect: re-armed only when the callback returned (not in a `finally`)
        super()._after(timer)


class _NestedRunsThenRewinds(SortedListClock):
    def advance(self, dt_ns: int) -> None:
        if not self._busy:
            super().advance(dt_ns)
            return
        # defect: a nested advance runs (fires what is due up to its target), then the
        # outer advance puts the time back where the callback was
        saved = self._now
        self._busy = False
        try:
            super().advance(dt_ns)
        finally:
            self._now = saved
            self._busy = True


class _CancelledOneShotQueued(SortedListClock):
    def _cancel(self, timer: Timer) -> None:
        if not timer.repeats:
            return  # defect: a one-shot's cancel leaves it queued, so it still fires
        super()._cancel(timer)


class _WorkerThreadCallbacks(SortedListClock):
    def _run(self, at: int, timer: Timer) -> bool:
        # defect: each callback runs on a worker thread the advance waits for; what the
        # worker cannot hand back (a BaseException such as KeyboardInterrupt) is dropped
        def work() -> None:
            with contextlib.suppress(BaseException):
                SortedListClock._run(self, at, timer)

        worker = threading.Thread(target=work, name="simclock-callback")
        worker.start()
        worker.join()
        return True


class _FloatSecondsNow(SortedListClock):
    @property
    def _now(self) -> int:
        return round(self._now_s * 1e9)  # noqa: SCK402 - the defect on show

    @_now.setter
    def _now(self, ns: int) -> None:
        self._now_s = ns / 1e9  # defect: now is kept in float seconds


class _CascadeReversesTies(WheelClock):
    def _cascade(self, level: int, slot: int, entries: deque[Entry]) -> None:
        # defect: a cascade re-places a slot's entries newest first
        super()._cascade(level, slot, deque(reversed(entries)))


class _PeekSlotBound(WheelClock):
    def next_event_ns(self) -> int | None:
        found = self._lowest()
        if found is None:
            return None
        level, slot, entries = found
        # defect: a slot's lower bound instead of its earliest entry
        return entries[0][0] if level == 0 else self._lower_bound(level, slot)


def _factory(cls: type[SortedListClock]) -> Callable[[int, Bus], SortedListClock]:
    def make(seed: int, bus: Bus) -> SortedListClock:
        return cls(seed, bus)

    return make


BROKEN: dict[str, tuple[str, str, type[SortedListClock]]] = {
    "lifo_ties": ("C-TIE-1", "equal times fire newest first (LIFO)", _LifoTies),
    "repush_keeps_seq": (
        "C-PER-2",
        "a periodic's re-push keeps its first seq",
        _RepushKeepsSeq,
    ),
    "float_seconds_grid": (
        "C-PER-3",
        "periodic times accumulated in float seconds",
        _FloatSeconds,
    ),
    "floats_accepted": ("C-TIME-3", "float times rounded instead of refused", _FloatsAccepted),
    "second_cancel_raises": (
        "C-CAN-1",
        "a second cancel() raises",
        _SecondCancelRaises,
    ),
    "own_cancel_ignored": (
        "C-CAN-2",
        "cancel inside its own callback does not stop a periodic",
        _OwnCancelIgnored,
    ),
    "exceptions_escape": ("C-ERR-1", "callback exceptions escape advance", _ExceptionsEscape),
    "failure_stops_rest": (
        "C-ERR-1",
        "one failing callback stops the rest of the advance",
        _FailureStopsRest,
    ),
    "new_entries_wait": (
        "C-ADV-3",
        "entries scheduled during advance wait for the next advance",
        _NewEntriesWait,
    ),
    "now_is_target": ("C-ADV-2", "now during a callback equals the target", _NowIsTarget),
    "advance_zero_skips": ("C-ADV-1", "advance(0) skips entries due now", _AdvanceZeroSkips),
    "past_accepted": ("C-SCH-1", "scheduling in the past is accepted", _PastAccepted),
    "relative_grid": (
        "C-PER-1",
        "periodic grid relative to registration time",
        _RelativeGrid,
    ),
    "hash_keyed_children": (
        "C-RNG-2",
        "child streams keyed by Python's salted hash()",
        _HashKeyedChildren,
    ),
    "never_compacts": ("C-CAN-4", "cancelled tombstones are never compacted", _NeverCompacts),
    "nested_advance_allowed": (
        "C-ADV-4",
        "advance from inside a callback is allowed",
        _NestedAdvanceAllowed,
    ),
    "base_exception_swallowed": (
        "C-ERR-2",
        "KeyboardInterrupt is caught and reported",
        _BaseExceptionSwallowed,
    ),
    "peek_sees_cancelled": (
        "C-X-PEEK",
        "next_event_ns() reports cancelled entries",
        _PeekSeesCancelled,
    ),
    "rate_rounded_period": (
        "C-X-RATE",
        "schedule_rate rounds 1e9/rate to an integer period",
        _RateRoundedPeriod,
    ),
    "cancel_by_callback": (
        "C-CAN-3",
        "cancel() of a fired entry cancels other schedules of its callback",
        _CancelByCallback,
    ),
    "numpy_now_leaks": (
        "C-TIME-1",
        "numpy integers are stored unnormalised, so now_ns() returns numpy",
        _NumpyNowLeaks,
    ),
    "order_dependent_children": (
        "C-RNG-4",
        "child streams seeded from the parent's generator (creation order matters)",
        _SpawnedChildren,
    ),
    "one_firing_per_advance": (
        "C-ADV-5",
        "a periodic fires at most once per advance; missed grid points are dropped",
        _OneFiringPerAdvance,
    ),
    "step_zero": ("C-STEP-1", "step_ns() returns 0", _StepZero),
    "numpy_rng_fresh": (
        "C-RNG-5",
        "numpy_rng() returns a new Generator object on every call",
        _FreshGenerators,
    ),
    "global_random_jitter": (
        "C-RNG-6",
        "draws (zero-scaled) jitter from the global random module",
        _GlobalJitter,
    ),
    "reseeds_global_random": (
        "C-RNG-6",
        "every new clock reseeds the global random and numpy.random with a constant",
        _ReseedsGlobals,
    ),
    "reseeds_numpy_with_seed": (
        "C-RNG-6",
        "the clock's seed is given to numpy.random.seed as well",
        _ReseedsNumpyWithSeed,
    ),
    "empty_root_label": (
        "C-RNG-1",
        "the root stream is labelled '' instead of '/'",
        _EmptyRootLabel,
    ),
    "labels_unchecked": (
        "C-RNG-3",
        "malformed child labels (spaces, '//', '*') are accepted",
        _UncheckedLabels,
    ),
    "failure_path_name_error": (
        "C-ERR-1",
        "a NameError (import mistake) in the callback-failure path",
        _FailurePathNameError,
    ),
    "float64_times": (
        "C-TIME-4",
        "times stored as float64: 2**60+1 fires at 2**60",
        _Float64Times,
    ),
    "wraps_at_2_64": (
        "C-TIME-4",
        "times stored modulo 2**64: 2**64+1 is accepted and fires at 1",
        _Wraps64,
    ),
    "u64_counter_times": (
        "C-TIME-4",
        "times kept modulo 2**64 (an unsigned counter): 2**64+5 at now 0 fires at 5",
        _U64Counter,
    ),
    "ties_by_origin": (
        "C-TIE-1",
        "equal times fire those pushed from outside first, then those pushed by callbacks",
        _TiesByOrigin,
    ),
    "random_tie_order": (
        "C-TIE-1",
        "equal times fire in a scrambled order, the same every run",
        _RandomTieOrder,
    ),
    "now_refused": ("C-SCH-1", "a time equal to now is refused", _NowRefused),
    "int63_times": (
        "C-TIME-4",
        "times above 2**63-1 are refused (a signed 64-bit time)",
        _Int63Times,
    ),
    "halted_periodic_dropped": (
        "C-ERR-2",
        "a periodic whose callback raised a BaseException is not re-armed",
        _HaltedPeriodicDropped,
    ),
    "nested_runs_then_rewinds": (
        "C-ADV-4",
        "a nested advance runs, then time is set back to the callback's",
        _NestedRunsThenRewinds,
    ),
    "cancelled_one_shot_queued": (
        "C-CAN-2",
        "a cancelled one-shot stays queued and fires",
        _CancelledOneShotQueued,
    ),
    "worker_thread_callbacks": (
        "C-ERR-2",
        "callbacks run on a worker thread; a BaseException there is dropped",
        _WorkerThreadCallbacks,
    ),
    "float_seconds_now": (
        "C-TIME-4",
        "now kept in float seconds: exact only up to about 2**52 ns",
        _FloatSecondsNow,
    ),
    "wheel_cascade_reverses_ties": (
        "C-TIE-1",
        "timer wheel (1024 slots per level) whose cascade reverses tie order",
        _CascadeReversesTies,
    ),
    "wheel_peek_slot_bound": (
        "C-X-PEEK",
        "timer wheel whose next_event_ns() answers the slot's lower bound",
        _PeekSlotBound,
    ),
}
"""``name -> (clause that must fail, defect, class)``."""

_ORACLE = "SM-ORACLE"  # the state machine: a scheduling defect is a failure of its own too

EXPECTED_FAILED: dict[str, tuple[str, ...]] = {
    "lifo_ties": ("C-TIE-1", _ORACLE),
    "repush_keeps_seq": ("C-PER-2", _ORACLE),
    # C-PER-1: the grid is "computed in integers", which float seconds are not.
    # C-TIME-4: beyond 2**53 ns its grid points are not exact times (a far firing's
    # time rests on C-TIME-4 first, PRECEDENCE in protocol/_reasons.py).
    "float_seconds_grid": ("C-TIME-4", "C-PER-1", "C-PER-3", _ORACLE),
    "floats_accepted": ("C-TIME-3",),
    "second_cancel_raises": ("C-CAN-1", _ORACLE),
    "own_cancel_ignored": ("C-CAN-2", _ORACLE),
    # The rest are blocked by C-ERR-1: their programs' first difference is the escaped
    # exception or the firings missing after it; their in-process tests, which have no
    # reference reply behind them, end with a callback's exception let out of the
    # backend (a root cause "..., from a callback"): C-ERR-1's rule too.
    "exceptions_escape": ("C-ERR-1", _ORACLE),
    "failure_stops_rest": ("C-ERR-1", _ORACLE),
    "new_entries_wait": ("C-ADV-3", _ORACLE),
    # C-TIME-4 here and in the rows below marked "far": the programs scheduling beyond
    # 2**64-1 from far starts meet the defect first at a far time, where the firing's
    # time rests on C-TIME-4 first (PRECEDENCE in protocol/_precedence.py).
    "now_is_target": ("C-TIME-4", "C-ADV-2", _ORACLE),
    # C-ADV-4: the skipping advance(0) returns before the nesting check, so
    # advance(0) from a callback is accepted: a failure of C-ADV-4 of its own.
    "advance_zero_skips": ("C-ADV-1", "C-ADV-4", _ORACLE),
    "past_accepted": ("C-SCH-1",),
    # C-X-RATE: a rate registered late fires off its grid too (phase + ceil(k*1e9/rate)).
    "relative_grid": ("C-TIME-4", "C-PER-1", "C-X-RATE", _ORACLE),  # far: see above
    # C-DET-1: SPEC asks for the same run "with any PYTHONHASHSEED".
    "hash_keyed_children": ("C-DET-1", "C-RNG-2"),
    "never_compacts": ("C-CAN-4",),
    "nested_advance_allowed": ("C-ADV-4", _ORACLE),
    "base_exception_swallowed": ("C-ERR-2", _ORACLE),
    "peek_sees_cancelled": ("C-X-PEEK", _ORACLE),
    "rate_rounded_period": ("C-X-RATE", _ORACLE),
    "cancel_by_callback": ("C-CAN-3",),
    # C-TIME-3: the times of entries made with numpy ints come back as numpy
    # integers, which C-TIME-3's test of numpy arguments checks.
    "numpy_now_leaks": ("C-TIME-1", "C-TIME-3"),
    # C-RNG-3: child('a').child('b') (two draws from generators) != child('a/b') (one).
    "order_dependent_children": ("C-RNG-3", "C-RNG-4"),
    # C-PER-3: dropped grid points break the n-th firing (a rate's too: C-X-RATE); a
    # re-push missing within its own advance is C-PER-2's, C-PER-3's or C-ADV-3's, and
    # the other programs' dropped points settle it on C-PER-3.
    "one_firing_per_advance": ("C-TIME-4", "C-ADV-5", "C-PER-3", "C-X-RATE", _ORACLE),  # far
    "step_zero": ("C-STEP-1",),
    "numpy_rng_fresh": ("C-RNG-5",),
    "global_random_jitter": ("C-RNG-6",),
    "reseeds_global_random": ("C-RNG-6",),
    "reseeds_numpy_with_seed": ("C-RNG-6",),
    "empty_root_label": ("C-RNG-1",),
    "labels_unchecked": ("C-RNG-3",),
    "failure_path_name_error": ("C-ERR-1", _ORACLE),  # as exceptions_escape
    # C-X-PEEK: next_event_ns() answers a time, and C-TIME-4 keeps every time exact.
    "float64_times": ("C-TIME-4", "C-X-PEEK", _ORACLE),
    "wraps_at_2_64": ("C-TIME-4", _ORACLE),
    "wheel_cascade_reverses_ties": ("C-TIE-1", _ORACLE),
    "wheel_peek_slot_bound": ("C-X-PEEK", _ORACLE),
    # The defects of REAL_DEFECTS: what the report charges now. Those with more than
    # their own clause (and SM-ORACLE) are listed in NOT_YET_OWN_CLAUSE.
    "u64_counter_times": ("C-TIME-4", _ORACLE),
    "ties_by_origin": ("C-TIE-1", _ORACLE),
    "random_tie_order": ("C-TIE-1", "C-PER-2", _ORACLE),
    "now_refused": ("C-SCH-1", _ORACLE),
    "int63_times": ("C-TIME-4", _ORACLE),
    "halted_periodic_dropped": ("C-ERR-2",),
    "nested_runs_then_rewinds": ("C-ADV-4", _ORACLE),
    "cancelled_one_shot_queued": ("C-CAN-2", "C-CAN-4", "C-X-PEEK", _ORACLE),
    "worker_thread_callbacks": ("C-ERR-2", _ORACLE),
    "float_seconds_now": ("C-TIME-4",),
}
"""``name -> the exact failed clauses`` (not blocked), in report order.

Each backend's own clause plus only the other rules its defect breaks, each with the
reason (a difference is charged to the rule that decided that part of the oracle's
reply, ``protocol/_reasons.py``). Every other clause it breaks must be reported as
blocked by one of these.
"""

BLOCKED_OWN_CLAUSE: dict[str, str] = {}
"""``name -> the clause its own clause is reported blocked by``: empty, since differences
are charged by the rule they break; a backend whose own clause is blocked again must be
listed here, with the reason."""

REAL_DEFECTS = (
    "random_tie_order",
    "ties_by_origin",
    "now_refused",
    "int63_times",
    "halted_periodic_dropped",
    "nested_runs_then_rewinds",
    "cancelled_one_shot_queued",
    "worker_thread_callbacks",
    "float_seconds_now",
    "u64_counter_times",
)
"""Broken backends modelling defects found in real schedulers (time-int clocks, async test
clocks, discrete-event frameworks): each is checked in process (:data:`EXPECTED_FAILED`)
and through ``serve`` (:data:`EXPECTED_FAILED_SERVE`)."""

EXPECTED_FAILED_SERVE: dict[str, tuple[str, ...]] = {
    "u64_counter_times": ("C-TIME-4", _ORACLE, "C-WIRE-7"),
    "ties_by_origin": ("C-TIE-1", _ORACLE, "C-WIRE-7"),
    # C-PER-2: as in process (a scrambled order that once kept push order at an instant
    # makes a re-pushed periodic's place C-PER-2's, _charge._order).
    "random_tie_order": ("C-TIE-1", "C-PER-2", _ORACLE, "C-WIRE-7"),
    "now_refused": ("C-SCH-1", _ORACLE, "C-WIRE-7"),
    "int63_times": ("C-TIME-4", _ORACLE, "C-WIRE-7"),
    "halted_periodic_dropped": ("C-ERR-2", _ORACLE, "C-WIRE-7"),
    "nested_runs_then_rewinds": ("C-ADV-4", _ORACLE, "C-WIRE-7"),
    # C-CAN-4, C-X-PEEK: the queued tombstones are held and peeked at, as in process.
    "cancelled_one_shot_queued": ("C-CAN-2", "C-CAN-4", "C-X-PEEK", _ORACLE, "C-WIRE-7"),
    "worker_thread_callbacks": ("C-ERR-2", _ORACLE, "C-WIRE-7"),
    "float_seconds_now": ("C-TIME-4", _ORACLE, "C-WIRE-7"),
}
"""``name -> the exact failed clauses through serve`` (golden vectors included), in report
order, for the backends of :data:`REAL_DEFECTS`."""

NOT_YET_OWN_CLAUSE = tuple(
    name
    for name in REAL_DEFECTS
    if {*EXPECTED_FAILED[name], *EXPECTED_FAILED_SERVE[name]}
    - {BROKEN[name][0], _ORACLE, "C-WIRE-7"}
)
"""Real defects charged to more than their own clause (and the aggregating SM-ORACLE and
golden vectors) by the report as it charges now."""

for _name, (_clause, _defect, _cls) in BROKEN.items():
    globals()[_name] = _factory(_cls)

# The salted-hash random tree of ``hash_keyed_children``, handed over as a lambda
# (no MODULE:FACTORY of its own: the suite must ship it to the other process).
hash_keyed_lambda: Callable[[int, Bus], SortedListClock] = (  # noqa: E731  (a lambda on purpose)
    lambda seed, bus: _HashKeyedChildren(seed, bus)  # noqa: PLW0108
)
