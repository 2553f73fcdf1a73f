"""The reference deterministic clock: a binary heap of entries keyed ``(at_ns, seq)``.

Semantics cite SPEC §1. Entries are ordered by ``(at_ns, seq)`` where ``seq``
comes from a per-clock counter, so comparison never reaches an entry or a
callback (C-TIE-1). Cancellation is lazy (C-CAN-4): the heap, its tombstones
and their compaction are one object, `LazyHeap`
(a cancelled entry stays as a tombstone until it reaches the root or until
the heap holds more than ``2*live + compact_threshold`` items, when it is
rebuilt in place); this module only pushes, pops and re-arms.

This is the one scheduling core of the library: ``GridClock`` (quantisation),
``Session`` (components), ``MujocoClock`` (a physics step) and ``ReplayClock``
(a message source) compose it and never pop, fire or re-arm entries
themselves. Besides the `SimClock` protocol it offers a small
library API (not part of the protocol, used by those clocks):

* `HeapSimClock.schedule_repeating` -- a periodic or rate schedule whose
  firings are quantised up to a grid (``quantum``), counting overruns;
* `HeapSimClock.run_until` -- advance to a target while interleaving a
  `TimedSource` (recorded messages, a session's phases): a source item
  at an instant shared with entries runs first, with ``now`` at its time;
* `HeapSimClock.run_steps` -- ``GridClock.advance``'s boundary loop in
  one call: ``run_until`` to just before each boundary, then its physics hook;
* `HeapSimClock.skip_to` -- jump forward without firing (a replay's
  seek): one-shots due before the jump are dropped and counted ``skipped``,
  repeating entries resume at their first grid point at or after it.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from fractions import Fraction
from functools import cmp_to_key
from typing import Any, Final, Protocol, SupportsIndex, cast

from mypy_extensions import mypyc_attr

from simclock.core._bus import Bus
from simclock.core._entry import (
    _CANCELLED,
    _FAILED,
    _FIRED,
    _ONESHOT,
    _PENDING,
    _PERIODIC,
    _QUANTISED,
    _RATE,
    _RUNNING,
    _SKIPPED,
    _Entry,
    check_rate_hz,
    first_rate_index,
    rate_offset_ns,
)
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._failure import publish_callback_failure
from simclock.core._heap import LazyHeap
from simclock.core._kernels import StepHook
from simclock.core._names import check_callable, safe_repr
from simclock.core._phases import Phases
from simclock.core._protocols import Callback, Handle
from simclock.core._random import DrawObserver, SeededRandomSource
from simclock.core._source import TimedSource, check_timed_source
from simclock.core._timeint import check_positive_ns, check_time_ns

__all__ = [
    "HeapSimClock",
    "TimedSource",
    "check_rate_hz",
    "check_timed_source",
    "rate_offset_ns",
]

# The frozen dataclass __init__ of Handle sets each field through
# object.__setattr__; schedule() is hot, so it fills the two slots directly.
# Same object, same fields: Handle(cancel, stats) == the result.
_METHOD: Final = types.MethodType
_FUNCTION: Final = types.FunctionType
_new_handle: Final[Any] = object.__new__
_set_handle_cancel: Final[Any] = Handle.__dict__["cancel"].__set__
_set_handle_stats: Final[Any] = Handle.__dict__["stats"].__set__


class _Int(Protocol):
    """``compact_threshold``'s type: an ``int`` (it is not a time argument, see below).

    ``int`` as far as a type checker can tell: numpy integers, floats, ``Fraction``
    and ``str`` have no ``bit_length``, so they are refused before they run (and the
    constructor refuses anything but an ``int`` that is not a ``bool`` at run time).
    Not ``int`` itself because mypyc compiles an ``int`` parameter with a check of
    its own (a builtin ``TypeError``, its own message) that would run before the
    constructor's ``SimclockTypeError``; a protocol parameter is a plain object.
    """

    def bit_length(self) -> int: ...
    def __index__(self) -> int: ...


# Compiled by mypyc in the default build (C-NATIVE-1); tests and users may
# still subclass it. The public methods take time arguments (and only those) as
# SupportsIndex (int, numpy integers), not int: a compiled function would check an
# `int` parameter itself (accepting bool, refusing numpy ints, with its own message);
# check_time_ns() is the one place that decides (C-TIME-3).
@mypyc_attr(allow_interpreted_subclasses=True)
class HeapSimClock:
    """Deterministic event clock in integer nanoseconds (SPEC §1).

    ``HeapSimClock(seed, *, start_ns=0, step_ns=1, bus=None, compact_threshold=64,
    draw_observer=None)``. ``draw_observer(label, method, args, value)`` is called
    after every draw from ``random_source()`` and its children (e.g. a
    ``Recorder``'s, to persist draws for replay, C-REP-3).

    Order: entries fire by ``(at_ns, seq)``; ``seq`` is taken when an entry is
    pushed, so equal times fire in push order (C-TIE-1) and a periodic entry,
    re-pushed after its callback with a fresh ``seq`` (C-PER-2), fires after
    entries already waiting at its next time.

    Errors: wrong types are ``TypeError``, bad values ``ValueError``, ``advance``
    from inside a callback ``RuntimeError``; every refused call leaves the clock
    unchanged. A callback raising ``Exception`` is reported on the bus as
    ``Event(SCHEDULER_CALLBACK_FAILED)`` (C-ERR-1); other ``BaseException``s
    propagate with ``now`` at the failing entry (C-ERR-2).

    Complexity: ``schedule*`` and each firing O(log n); ``cancel`` O(1)
    amortised (compaction is O(n) and happens at most once per n cancels).
    """

    def __init__(
        self,
        seed: SupportsIndex,
        *,
        start_ns: SupportsIndex = 0,
        step_ns: SupportsIndex = 1,
        bus: Bus | None = None,
        compact_threshold: _Int = 64,
        draw_observer: DrawObserver | None = None,
    ) -> None:
        if draw_observer is not None and not callable(draw_observer):
            raise SimclockTypeError(
                f"draw_observer must be callable or None, got {safe_repr(draw_observer)}"
            )
        # Any, not int: a compiled cast to int would accept bool; the source checks the seed.
        self._random = SeededRandomSource(cast(Any, seed), observer=draw_observer)
        self._now = check_time_ns(start_ns, "start_ns")
        self._step = check_positive_ns(step_ns, "step_ns")
        if isinstance(compact_threshold, bool) or not isinstance(compact_threshold, int):
            raise SimclockTypeError(
                f"compact_threshold must be an int, got {safe_repr(compact_threshold)}"
            )
        if compact_threshold < 0:
            raise SimclockValueError(f"compact_threshold must be >= 0, got {compact_threshold}")
        if bus is not None and not isinstance(bus, Bus):
            raise SimclockTypeError(f"bus must be a simclock.Bus or None, got {safe_repr(bus)}")
        # Invariant: the queue's live entries are _PENDING; its own invariants (order,
        # unique seq, tombstone count and bound) are its _check().
        self._queue = LazyHeap(compact_threshold)
        self._running = False
        self.bus = bus if bus is not None else Bus()
        self.bus.bind(self)

    # -- reading ----------------------------------------------------------

    def now_ns(self) -> int:
        """Current simulation time in ns (C-TIME-1, C-TIME-2)."""
        return self._now

    def step_ns(self) -> int:
        """The nominal step given at construction, 1 ns by default (C-STEP-1).

        An event clock does not quantise: entries fire at their exact ``at_ns``.
        ``step_ns`` only tells drivers (``run_paced``, a demo loop) how far to
        advance per step.
        """
        return self._step

    def random_source(self) -> SeededRandomSource:
        """The root random stream, label ``/`` (C-RNG-1); the same object every call."""
        return self._random

    def next_event_ns(self) -> int | None:
        """Time of the earliest live entry, or ``None`` (C-X-PEEK). Amortised O(log n)."""
        first = self._queue.peek()
        return None if first is None else first.at

    def pending_count(self) -> int:
        """Live entries in the heap (a running periodic is not counted until re-pushed)."""
        return self._queue.live()

    def heap_size(self) -> int:
        """Items physically in the heap, tombstones included (C-CAN-4)."""
        return self._queue.size()

    # -- scheduling ---------------------------------------------------------

    def _push(self, at: int, entry: _Entry) -> Handle:
        """Push ``entry`` at ``at`` (its ``seq``: C-TIE-1) and return its handle (C-SCH-2)."""
        self._queue.push(entry, at)
        return Handle(entry, entry.stats)

    def schedule(self, at_ns: SupportsIndex, cb: Callback) -> Handle:
        """Fire ``cb`` once at ``at_ns`` (C-SCH-1, C-SCH-2).

        ``at_ns`` must be a time-int ``>= now``; ``at_ns == now`` fires on the
        next ``advance``, even ``advance(0)``. O(log n).
        """
        # Fast path for the common case; check_time_ns gives the exact errors.
        at = at_ns if type(at_ns) is int else check_time_ns(at_ns, "at_ns")
        if at < self._now:
            check_time_ns(at, "at_ns")
            raise SimclockValueError(
                f"at_ns={at} is in the past (now is {self._now} ns); schedule at or after now"
            )
        kind = type(cb)  # the common callables first: callable() is a call when compiled
        if kind is not _METHOD and kind is not _FUNCTION and not callable(cb):
            check_callable(cb)
        queue = self._queue  # _push() inlined for speed
        entry = _Entry(queue, cb)
        queue.push(entry, at)
        handle: Handle = _new_handle(Handle)  # inlined for speed (see _new_handle)
        _set_handle_cancel(handle, entry)
        _set_handle_stats(handle, entry.stats)
        return handle

    def schedule_periodic(
        self, period_ns: SupportsIndex, cb: Callback, phase_ns: SupportsIndex = 0
    ) -> Handle:
        """Fire ``cb`` at ``phase + k*period`` for every grid point ``>= now`` (C-PER-1..3).

        The grid is absolute and computed in integers: the n-th firing is
        exactly at ``phase + (k0 + n) * period`` where ``k0`` is the first index
        whose time is ``>= now`` at the call. ``period > 0``, ``phase >= 0``.
        """
        period = check_positive_ns(period_ns, "period_ns")
        phase = check_time_ns(phase_ns, "phase_ns")
        check_callable(cb)
        return self._repeating(cb, phase, period, None, 1)

    def schedule_rate(
        self, rate_hz: SupportsIndex | Fraction, cb: Callback, phase_ns: SupportsIndex = 0
    ) -> Handle:
        """Fire ``cb`` at ``phase + ceil(k * 10**9 / rate_hz)`` (C-X-RATE).

        ``rate_hz`` is an ``int`` or ``Fraction`` (30 Hz is 33 333 333⅓ ns: the
        third is spread over ticks, so firing 30 is exactly at ``phase + 1 s``).
        Like ``schedule_periodic`` the first firing is the first grid point at
        or after ``now``, and each re-push happens after the callback.
        """
        rate = check_rate_hz(rate_hz)
        phase = check_time_ns(phase_ns, "phase_ns")
        check_callable(cb)
        return self._repeating(cb, phase, 0, rate, 1)

    def schedule_repeating(
        self,
        cb: Callback,
        phase: SupportsIndex,
        *,
        period: SupportsIndex = 0,
        rate: Fraction | None = None,
        quantum: SupportsIndex = 1,
    ) -> Handle:
        """Library API: a periodic (``period``) or rate (``rate``) schedule on a quantum.

        Exactly one of ``period`` (ns, ``> 0``) and ``rate`` (Hz, ``int`` or
        ``Fraction`` as for `schedule_rate`) is given; ``phase`` is a
        time-int and ``quantum`` a positive one. Firing ``k`` is at the first
        multiple of ``quantum`` at or after the nominal ``phase + k*period``
        (or ``phase + ceil(k*1e9/rate)``), and the first ``k`` is the first
        nominal time ``>= now``; the next nominal time comes from the original
        grid, never from a quantised one (C-GRID-2). A firing whose time is at
        or after the next nominal time counts as an ``overrun``. With
        ``quantum == 1`` this is ``schedule_periodic`` / ``schedule_rate``
        (C-PER-1..3, C-X-RATE).

        Errors: wrong types ``TypeError``, bad values (neither or both of
        ``period``/``rate``) ``ValueError``, checked before anything is pushed:
        a refused call changes nothing. A public method of a public class, so it
        checks its arguments like ``schedule_periodic`` does: O(1) per call,
        never per firing. O(log n).
        """
        check_callable(cb)
        start = check_time_ns(phase, "phase")
        grid = check_positive_ns(quantum, "quantum")
        if rate is None:
            if type(period) is int and period == 0:
                raise SimclockValueError(
                    "schedule_repeating needs period= (ns, > 0) or rate= (Hz), got period=0 "
                    "and rate=None"
                )
            return self._repeating(cb, start, check_positive_ns(period, "period"), None, grid)
        hz = check_rate_hz(rate, "rate")
        if not (type(period) is int and period == 0):
            check_time_ns(period, "period")  # a wrong type is a TypeError before "both"
            raise SimclockValueError(
                f"pass period= or rate=, not both, got period={safe_repr(period)} and "
                f"rate={safe_repr(rate)}"
            )
        return self._repeating(cb, start, 0, hz, grid)

    def _repeating(
        self, cb: Callback, phase: int, period: int, rate: Fraction | None, quantum: int
    ) -> Handle:
        """`schedule_repeating` with arguments already checked by the caller.

        (C-PER-1, C-X-RATE: the first firing is the first grid time ``>= now``.)
        """
        now = self._now
        if rate is None:
            kind = _PERIODIC if quantum == 1 else _QUANTISED
            k0 = 0 if phase >= now else -((phase - now) // period)
        else:
            kind = _RATE if quantum == 1 else _QUANTISED
            k0 = first_rate_index(now - phase, rate)
        entry = _Entry(self._queue, cb, kind)
        return self._push(entry.repeating(phase, k0, period, rate, quantum), entry)

    # -- running ------------------------------------------------------------

    def advance(self, dt_ns: SupportsIndex) -> None:
        """Fire every live entry with ``at_ns <= now + dt`` in ``(at_ns, seq)`` order.

        Contract: C-ADV-1 (order, then ``now = target``), C-ADV-2 (``now`` equals
        the entry's ``at_ns`` during its callback), C-ADV-3 (entries pushed by a
        callback at or before the target fire in this call), C-ADV-4 (nested
        call raises ``RuntimeError`` and changes nothing), C-ADV-5 (splitting
        time changes nothing). Each entry is popped and ``now`` set *before* its
        callback, so a raising callback leaves the clock well-defined (C-ERR-2).
        The argument is checked before the nesting: a nested ``advance(1.0)`` is
        the ``TypeError`` of C-TIME-3, a nested ``advance(1)`` the
        ``RuntimeError`` of C-ADV-4; either way nothing changes.
        """
        dt = check_time_ns(dt_ns, "dt_ns")
        if self._running:
            raise SimclockRuntimeError(
                f"advance(dt_ns={dt}) called from inside a callback at now={self._now} ns; "
                "schedule the work with schedule() instead"
            )
        target = self._now + dt
        self._fire(target)
        self._now = target

    def run_until(self, target_ns: SupportsIndex, source: TimedSource | None = None) -> None:
        """Library API: advance to ``target_ns``, interleaving ``source`` with the entries.

        Order: everything by time; at an instant shared by a source item and
        entries, the source item runs first (with ``now`` at that instant),
        then the entries, including those it pushed at that instant. Afterwards
        ``now == target_ns``. ``target_ns < now`` is a ``ValueError``; a call
        from inside a callback or the source a ``RuntimeError``; a source whose
        next item lies in the past is a ``RuntimeError`` (its bug, not the
        clock's). A ``BaseException`` leaves ``now`` at the failing item.
        A ``source`` without callable ``next_ns`` and ``fire`` is a
        ``TypeError`` before anything runs (O(1): two attribute lookups).
        """
        self._check_idle("run_until")
        target = check_time_ns(target_ns, "target_ns")
        if target < self._now:
            raise SimclockValueError(
                f"target_ns={target} is in the past (now is {self._now} ns); pass a time >= now"
            )
        if source is not None:
            check_timed_source(source)
            self._run_to(target, source, source.next_ns())
        else:
            self._fire(target)
            self._now = target

    def run_steps(
        self,
        target_ns: int,
        step_ns: int,
        hook: Callable[[int], object],
        source: TimedSource | None,
        on_hook_failure: Callable[[int, Exception], object],
    ) -> None:
        """Library API: ``GridClock.advance``'s boundary loop, to ``target_ns``, in one call.

        For each boundary ``b = k*step_ns`` in ``(now, target_ns]``: everything
        before ``b`` (entries and ``source`` items, as `run_until`), then
        ``hook(k)`` with ``now == b - 1``; then everything up to ``target_ns``.
        A hook raising ``Exception`` goes to ``on_hook_failure(k, exc)`` and the
        loop goes on; a ``BaseException`` propagates with ``now == b - 1``.
        Arguments are the caller's, checked once: ``target_ns >= now``, an int
        ``step_ns > 0``, the clock idle. ``source.next_ns()`` is asked at the
        start and after each ``fire``, never in between: only its own ``fire``
        moves it (a session's phases, a replay's messages).
        """
        k = self._now // step_ns + 1
        boundary = k * step_ns
        at = None if source is None else source.next_ns()
        # MuJoCo's step hook, called natively (the same call).
        step_hook = hook if type(hook) is StepHook else None
        while boundary <= target_ns:
            at = self._run_to(boundary - 1, source, at)
            try:
                if step_hook is not None:
                    step_hook.__call__(k)
                else:
                    hook(k)
            except Exception as exc:
                on_hook_failure(k, exc)
            k += 1
            boundary += step_ns
        self._run_to(target_ns, source, at)

    def _run_to(self, target: int, source: TimedSource | None, at: int | None) -> int | None:
        """Fire entries and ``source`` items up to ``target``; ``at`` is ``source.next_ns()``.

        Returns the source's next time after the last fire (or ``at`` unchanged).
        """
        if source is not None:
            # A session's phases, run natively (the same calls as fire and next_ns).
            phases = source if type(source) is Phases else None
            while at is not None and at <= target:
                self._fire(at - 1)
                if at < self._now:
                    raise SimclockRuntimeError(
                        f"source {source!r} has an item at {at} ns, before now={self._now} ns"
                    )
                self._now = at
                self._running = True
                try:
                    if phases is not None:
                        phases.tick(at)
                    else:
                        source.fire(at)
                finally:
                    self._running = False
                at = source.next_ns() if phases is None else phases.due
        self._fire(target)
        self._now = target
        return at

    def skip_to(self, t_ns: SupportsIndex) -> None:
        """Library API: move ``now`` to ``t_ns`` firing nothing before it (a replay's seek).

        One-shots due before ``t_ns`` are dropped (``stats().skipped == 1``);
        each repeating entry resumes at its first grid point ``>= t_ns`` and
        counts the firings it missed as ``skipped``; they are re-pushed in the
        order in which their last skipped firings would have run, so at a shared
        later instant they fire in the order a run without the skip gives
        (C-PER-2, C-TIE-1). Messages published on ``bus`` for delivery before
        ``t_ns`` are dropped with the entries that would have delivered them.
        ``t_ns < now`` is a ``ValueError``; from inside a callback a
        ``RuntimeError``. O(k log n) for k entries moved (never per skipped
        firing of a periodic entry; two schedules of different periods or rates
        sharing their last skipped instant compare in a few steps), plus
        O(pending) bus messages.
        """
        self._check_idle("skip_to")
        t = check_time_ns(t_ns, "t_ns")
        if t < self._now:
            raise SimclockValueError(f"t_ns={t} is before now={self._now} ns; time never goes back")
        queue = self._queue
        # (entry, index of its first skipped firing, of its last one)
        moved: list[tuple[_Entry, int, int]] = []
        while True:
            entry = queue.pop_due(t - 1)
            if entry is None:
                break
            if entry.kind == _ONESHOT:
                entry.state = _SKIPPED
            else:
                moved.append((entry, entry.k, entry.first_k_at_or_after(t) - 1))

        def before(a: tuple[_Entry, int, int], b: tuple[_Entry, int, int]) -> int:
            # Re-push order = the order their last skipped firings would have run in.
            at_a = a[0].at_index(a[2])
            at_b = b[0].at_index(b[2])
            if at_a != at_b:
                return -1 if at_a < at_b else 1
            return -1 if a[0].missed_last_before(a[1], a[2], b[0], b[1], b[2]) else 1

        if len(moved) > 1:
            moved.sort(key=cmp_to_key(before))
        for entry, first, last in moved:
            entry.skipped += last + 1 - first
            entry.k = last + 1
            queue.push(entry, entry.at_k())
        self._now = t
        queue.restore_bound()
        self.bus._discard_before(t)

    def _check_idle(self, what: str) -> None:
        """Refuse a call made from inside a callback (C-ADV-4)."""
        if self._running:
            raise SimclockRuntimeError(
                f"{what}() called from inside a callback at now={self._now} ns; "
                "schedule the work with schedule() instead"
            )

    def _fire(self, limit: int) -> None:
        """The one firing loop of the library: every live entry with ``at <= limit``.

        Pops, sets ``now``, runs, reports a failure (C-ERR-1) and re-arms a
        repeating entry after its callback (C-PER-2), then re-establishes the
        C-CAN-4 bound; it keeps a repeating entry's counts (C-X-STATS: ``fired``,
        ``overrun``). Callers check nesting and move ``now`` afterwards.
        """
        queue = self._queue  # a local: this loop is the clock's hot path
        self._running = True
        try:
            while True:
                entry = queue.pop_due(limit)  # never a tombstone
                if entry is None:
                    break
                at = entry.at
                self._now = at
                kind = entry.kind
                if not kind:
                    # One-shot: done before its callback runs, so a cancel from
                    # inside it is the no-op of C-CAN-3.
                    entry.state = _FIRED
                    try:
                        entry.cb()
                    except Exception as exc:
                        entry.state = _FAILED
                        publish_callback_failure(self.bus, at, entry.cb, exc)
                    continue
                entry.state = _RUNNING
                entry.fired += 1
                if kind == _QUANTISED and at >= entry.nominal(entry.k + 1):
                    entry.overrun += 1
                try:
                    entry.cb()
                except Exception as exc:
                    entry.failed += 1
                    publish_callback_failure(self.bus, at, entry.cb, exc)
                finally:
                    if entry.state == _RUNNING:
                        # C-PER-2: re-pushed after the callback (returned or
                        # raised), with a fresh seq; C-PER-3: from the grid.
                        entry.state = _PENDING
                        k = entry.k = entry.k + 1
                        # inlined for speed: the plain periodic's grid, else at_k().
                        nxt = entry.phase + k * entry.period if kind == _PERIODIC else entry.at_k()
                        queue.push(entry, nxt)
                    else:
                        entry.state = _CANCELLED
        finally:
            self._running = False
            # Firing lowers the live count while far-future tombstones stay (C-CAN-4).
            queue.restore_bound()

    # -- checking -------------------------------------------------------------

    def _check(self) -> None:
        """Assert every invariant; called by the state machine after each step."""
        queue = self._queue
        queue._check()
        for entry in queue.live_items():
            at = entry.at
            if not self._running:
                assert at >= self._now, "live entry in the past"
            if entry.kind != _ONESHOT:
                assert at == entry.at_k(), "periodic entry off its grid"
                assert at >= entry.nominal(entry.k), "firing before its nominal time"
