"""``ReplayClock``: a recording as a clock, on the one scheduling core (SPEC §5, C-REP-1..4).

The clock composes a :class:`~simclock.HeapSimClock` (as ``GridClock``
does) for its control callbacks and the bus's deferred deliveries, and adds
a message source: before delivering the recorded messages stamped ``s`` it
advances the inner clock to ``s - 1``, so entries before ``s`` fire first
and, at an instant shared with recorded messages, the recorded messages are
delivered first. Ordering, re-arming, lazy cancellation and failure
reporting are the inner clock's (C-TIE-1, C-PER-1..3, C-CAN-1..4, C-ERR-1/2).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from simclock.core._bus import Bus, Message
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._heapclock import HeapSimClock
from simclock.core._names import callback_name, check_callable, safe_repr
from simclock.core._protocols import Callback, Handle, PeriodicStats
from simclock.core._timeint import check_positive_ns, check_time_ns
from simclock.recording._closing import Closing
from simclock.recording._draws import DrawLog, ReplayRandomSource
from simclock.recording._reader import RecordingReader

__all__ = ["ReplayClock"]


def _noop() -> None:
    """Cancel of a callback that replay never runs (C-REP-2)."""


class _Gate:
    """A control callback that ``seek`` can step over (counted as skipped, not fired).

    It carries the callback's own name, so a failure is reported naming the
    callback, never the gate (C-ERR-1).
    """

    def __init__(self, clock: ReplayClock, cb: Callback) -> None:
        self.clock = clock
        self.cb = cb
        self.skipped = 0
        self.__qualname__ = callback_name(cb)

    def __call__(self) -> None:
        if self.clock._seeking:
            self.skipped += 1
            return
        self.cb()

    def stats(self, inner: Handle) -> PeriodicStats:
        got = inner.stats()
        return replace(got, fired=got.fired - self.skipped, skipped=got.skipped + self.skipped)


class ReplayClock(Closing):
    """A :class:`~simclock.SimClock` that replays a recording (SPEC §5, C-REP-1..4).

    ``ReplayClock(path, *, callbacks=False, topics=None, bus=None)``.

    * ``now_ns()`` starts at the recording's start time (``start_ns`` of a
      simclock recording, the first log time of a foreign file) and never
      decreases (C-TIME-2).
    * ``advance(dt)`` delivers to ``bus`` subscribers every recorded message
      with stamp in ``(now, now+dt]`` in recorded total order; the first
      ``advance`` (also after :meth:`seek`) includes the current instant
      (C-REP-1). While a message is delivered ``now_ns()`` is its stamp.
      ``advance`` from inside a subscriber or callback raises
      ``RuntimeError`` (C-ADV-4).
    * ``schedule``/``schedule_periodic`` validate their arguments like
      HeapSimClock and return a Handle, but the callback runs only when the
      clock was created with ``callbacks=True`` (C-REP-2). Then entries fire
      on the inner HeapSimClock, with its rules (C-TIE-1, C-PER-1..3,
      C-ERR-1/2, C-X-STATS); at an instant shared with recorded messages the
      recorded messages are delivered first. The bus's own deferred
      deliveries always run: they are not control callbacks.
    * ``random_source()`` raises ``SimclockRuntimeError`` unless the draws
      were persisted (``Recorder(record_draws=True)``); then it returns a
      :class:`ReplayRandomSource` handing back exactly the recorded draws per
      label (C-REP-3).
    * ``seek(t)`` jumps forward to ``t`` without delivering the messages
      before ``t`` (whole chunks are skipped unread); ``t < now`` is a
      ``ValueError``. Control callbacks due before ``t`` do not run: one-shot
      entries are dropped, periodic ones resume at their first grid point
      ``>= t``; the dropped firings count as ``skipped``, not ``fired``.
    * ``topics`` restricts delivery to those topics (the rest is still read
      and checked).

    A recording problem found while streaming raises
    :class:`~simclock.RecordingError` from ``advance``; the clock then stays
    at the last delivered stamp and every later ``advance``, ``seek`` and
    ``next_event_ns`` raises the same error. Messages published on the
    replay bus during replay take sequences from that bus's own counter.
    Complexity: O(1) amortised per delivered message plus the inner clock's
    O(log n) per firing; memory independent of the file's length.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        callbacks: bool = False,
        topics: Iterable[str] | None = None,
        bus: Bus | None = None,
    ) -> None:
        if not isinstance(callbacks, bool):
            raise SimclockTypeError(f"callbacks must be a bool, got {safe_repr(callbacks)}")
        if bus is not None and not isinstance(bus, Bus):
            raise SimclockTypeError(f"bus must be a simclock.Bus or None, got {safe_repr(bus)}")
        if bus is not None and bus.clock is not None:
            raise SimclockRuntimeError(
                "bus is already bound to a clock; pass a new Bus() or None to ReplayClock"
            )
        self._reader = RecordingReader(path, topics=topics)
        self.info = self._reader.info
        self._callbacks = callbacks
        # Invariant: now = max(_floor, inner now); the inner clock never runs ahead of it.
        self._floor = self.info.start_ns
        self._it: Iterator[Message] = self._reader.messages()
        self._next: Message | None = None
        self._primed = False
        self._failure: BaseException | None = None
        self._running = False
        self._seeking = False
        self._pushes = 0  # schedule calls so far: advance re-reads the inner clock on change
        self._random: ReplayRandomSource | None = None
        # Bound last: a refused construction leaves the caller's bus free.
        self.bus = bus if bus is not None else Bus()
        # The inner clock takes its own private bus (a bus binds one clock), then
        # reports callback failures on the replay bus, where subscribers listen.
        self._inner = HeapSimClock(
            self.info.seed or 0, start_ns=self.info.start_ns, step_ns=max(1, self.info.step_ns)
        )
        self._inner.bus = self.bus
        self.bus.bind(self)

    # -- reading ----------------------------------------------------------------

    @property
    def path(self) -> str:
        """The recording's path."""
        return self._reader.path

    def now_ns(self) -> int:
        """Current replay time in ns; never decreases (C-TIME-1, C-TIME-2)."""
        inner = self._inner.now_ns()
        return inner if inner > self._floor else self._floor

    def step_ns(self) -> int:
        """The recorded clock's ``step_ns`` (1 for foreign files) (C-STEP-1)."""
        return self._inner.step_ns()

    def end_ns(self) -> int:
        """The recording's end time: the recorded clock's final ``now``, or for a
        foreign file the last message's log time (C-REP-5)."""
        return self.info.end_ns

    def next_event_ns(self) -> int | None:
        """Stamp of the next recorded message or live callback, or ``None`` (C-X-PEEK)."""
        self._reader.check_open("next_event_ns()")
        if self._failure is not None:
            raise self._failure
        self._prime()
        times = [t for t in (self._inner.next_event_ns(),) if t is not None]
        if self._next is not None:
            times.append(self._next.stamp_ns)
        return min(times) if times else None

    def random_source(self) -> ReplayRandomSource:
        """The replayed root stream (C-REP-3); refused unless draws were persisted."""
        self._reader.check_open("random_source()")
        if self._random is None:
            info = self.info
            if not info.simclock or info.metadata.get("record_draws") != "true":
                raise SimclockRuntimeError(
                    f"recording {self.path!r} has no persisted random draws, so replay cannot "
                    "produce random numbers; record with Recorder(..., record_draws=True)"
                )
            assert info.seed is not None
            self._random = ReplayRandomSource(DrawLog(self._reader, info.draw_labels), info.seed)
        return self._random

    def close(self) -> None:
        """Close the recording's file handles (idempotent).

        Afterwards ``advance``, ``seek``, ``next_event_ns``, ``random_source``
        and draws from a replayed stream raise ``SimclockRuntimeError`` and
        change nothing; ``now_ns`` still answers.
        """
        self._reader.close()

    # -- scheduling -----------------------------------------------------------------

    def _is_bus_delivery(self, cb: Callback) -> bool:
        return getattr(cb, "__self__", None) is self.bus and getattr(cb, "__func__", None) is (
            Bus.flush
        )

    def _gated(self, cb: Callback, schedule: Callable[[_Gate], Handle]) -> Handle:
        gate = _Gate(self, cb)
        inner = schedule(gate)
        return Handle(cancel=inner.cancel, stats=lambda: gate.stats(inner))

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """Run ``cb`` at ``at_ns`` if callbacks are enabled (C-SCH-1, C-REP-2)."""
        at = check_time_ns(at_ns, "at_ns")
        check_callable(cb)
        now = self.now_ns()
        if at < now:
            raise SimclockValueError(
                f"at_ns={at} is in the past (now is {now} ns); schedule at or after now"
            )
        self._pushes += 1
        if self._is_bus_delivery(cb):
            return self._inner.schedule(at, cb)
        if not self._callbacks:
            return Handle(cancel=_noop)
        return self._gated(cb, lambda gate: self._inner.schedule(at, gate))

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """Run ``cb`` at ``phase + k*period`` if callbacks are enabled (C-PER-1..3, C-REP-2).

        The first firing is the first grid point at or after ``now_ns()``.
        """
        period = check_positive_ns(period_ns, "period_ns")
        phase = check_time_ns(phase_ns, "phase_ns")
        check_callable(cb)
        if not self._callbacks:
            return Handle(cancel=_noop)
        self._pushes += 1
        now = self.now_ns()
        # The inner clock may be behind now (while messages at now are delivered): start
        # the grid at its first point >= now, which is the same grid.
        k0 = 0 if phase >= now else -((phase - now) // period)
        first = phase + k0 * period
        return self._gated(cb, lambda gate: self._inner.schedule_periodic(period, gate, first))

    # -- running ----------------------------------------------------------------

    def _prime(self) -> None:
        if not self._primed:
            self._primed = True
            self._next = self._pull()

    def _pull(self) -> Message | None:
        try:
            return next(self._it, None)
        except BaseException as exc:
            self._failure = exc
            self._next = None
            raise

    def _check_idle(self, what: str) -> None:
        self._reader.check_open(what)
        if self._running:
            raise SimclockRuntimeError(
                f"{what} called from inside a callback or subscriber at now={self.now_ns()} ns; "
                "schedule the work with schedule() instead"
            )
        if self._failure is not None:
            raise self._failure

    def _run_inner_to(self, t: int) -> None:
        """Fire the inner clock's entries up to ``t`` (nothing when ``t`` is behind it)."""
        inner = self._inner
        now = inner.now_ns()
        if t >= now:
            inner.advance(t - now)

    def advance(self, dt_ns: int) -> None:
        """Deliver recorded messages and run due callbacks up to ``now + dt`` (C-REP-1).

        See the class docstring for the order; ``now`` is the target afterwards.
        """
        dt = check_time_ns(dt_ns, "dt_ns")
        self._check_idle(f"advance(dt_ns={dt})")
        target = self.now_ns() + dt
        # Local bindings: this loop runs once per recorded message.
        deliver = self.bus.deliver
        peek = self._inner.next_event_ns
        it = self._it
        self._running = True
        try:
            self._prime()
            nxt = self._next
            # The inner clock's next entry, re-read only when something was scheduled
            # (a subscriber, a deferred delivery) or the inner clock ran.
            pushes = self._pushes
            due = peek()
            while nxt is not None and nxt.stamp_ns <= target:
                stamp = nxt.stamp_ns
                if self._pushes != pushes:
                    pushes = self._pushes
                    due = peek()
                if due is not None and due < stamp:
                    self._run_inner_to(stamp - 1)
                    due = peek()
                self._floor = stamp
                try:
                    deliver(nxt)
                finally:
                    # Also after a BaseException from a subscriber (C-ERR-2): that
                    # message counts as delivered, the rest stays pending.
                    try:
                        nxt = self._next = next(it, None)
                    except BaseException as exc:
                        self._failure = exc
                        self._next = None
                        raise
            self._run_inner_to(target)
            self._floor = target
        finally:
            self._running = False

    def seek(self, t_ns: int) -> None:
        """Jump to ``t_ns`` without delivering the recorded messages before it.

        ``t_ns < now`` is a ``ValueError`` (time never goes back); the
        messages at ``t_ns`` are delivered by the next ``advance``. Control
        callbacks due before ``t_ns`` are skipped (see the class docstring).
        """
        t = check_time_ns(t_ns, "t_ns")
        self._check_idle(f"seek(t_ns={t})")
        if t < self.now_ns():
            raise SimclockValueError(
                f"t_ns={t} is before now={self.now_ns()} ns; replay time never goes back, open "
                "a new ReplayClock to start over"
            )
        self._prime()
        if self._next is not None and self._next.stamp_ns < t:
            if self.info.simclock:
                # Sequences are stored: restart at the first chunk that reaches t.
                self._it = self._reader.messages(start_ns=t)
                self._primed = False
                self._next = None
            else:
                # Foreign sequences are positions in replay order: keep counting.
                while self._next is not None and self._next.stamp_ns < t:
                    self._next = self._pull()
        if t > self._inner.now_ns():
            self._seeking = True
            try:
                self._run_inner_to(t - 1)
            finally:
                self._seeking = False
        self._floor = t
