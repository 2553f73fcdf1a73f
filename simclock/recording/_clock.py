"""``ReplayClock``: a recording as a clock, on the one scheduling core (SPEC §5, C-REP-1..4).

The clock composes a `HeapSimClock` (as ``GridClock``
does) for its control callbacks and the bus's deferred deliveries, and hands
it the recording as a `TimedSource`
(`RecordedMessages`): ``advance`` is the core's ``run_until``, so at an
instant shared with entries the recorded messages are delivered first, and
``seek`` is the core's ``skip_to``. Ordering, re-arming, lazy cancellation,
skipping and failure reporting are the inner clock's (C-TIE-1, C-PER-1..3,
C-CAN-1..4, C-ERR-1/2, C-X-STATS); this module only reads the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

from simclock.core._bus import Bus, Message
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._heapclock import HeapSimClock
from simclock.core._names import check_callable, safe_repr
from simclock.core._protocols import Callback, Handle
from simclock.core._timeint import check_positive_ns, check_time_ns
from simclock.recording._closing import Closing
from simclock.recording._draws import DrawLog, ReplayRandomSource
from simclock.recording._reader import RecordingReader

__all__ = ["RecordedMessages", "ReplayClock"]


def _noop() -> None:
    """Cancel of a callback that replay never runs (C-REP-2)."""


class RecordedMessages:
    """Recorded messages as a `TimedSource`: ``fire(s)`` delivers stamp ``s``.

    ``RecordedMessages(messages, deliver)``: ``messages`` is any iterator of
    `Message` in recorded total order ``(stamp, sequence)``
    (the reader's job, which also refuses a file that breaks it); ``deliver``
    hands one to the subscribers. The iterator is read one message ahead,
    lazily: nothing is read before the first ``next_ns``.

    An exception from the iterator (a damaged file) is kept in ``failure`` and
    re-raised; the message being delivered when a subscriber raises a
    ``BaseException`` counts as delivered (C-ERR-2), the rest stays pending.
    O(1) per message.
    """

    def __init__(self, messages: Iterator[Message], deliver: Callable[[Message], None]) -> None:
        self.failure: BaseException | None = None
        self._deliver = deliver
        self._it = messages
        self._next: Message | None = None
        self._primed = False

    def restart(self, messages: Iterator[Message]) -> None:
        """Continue with ``messages`` instead (nothing of the old iterator is read again)."""
        self._it = messages
        self._next = None
        self._primed = False

    def _pull(self) -> None:
        try:
            self._next = next(self._it, None)
        except BaseException as exc:
            self.failure = exc
            self._next = None
            raise

    def next_ns(self) -> int | None:
        """Stamp of the next message, or ``None`` at the end of the recording."""
        if not self._primed:
            self._primed = True
            self._pull()
        nxt = self._next
        return None if nxt is None else nxt.stamp_ns

    def peeked_ns(self) -> int | None:
        """Stamp of the message already read ahead, or ``None`` (none read, or the end)."""
        nxt = self._next
        return None if nxt is None else nxt.stamp_ns

    def skip_before(self, t: int) -> None:
        """Drop the messages stamped before ``t`` without delivering them. O(skipped)."""
        while (at := self.next_ns()) is not None and at < t:
            self._pull()

    def fire(self, at_ns: int) -> None:
        """Deliver every message stamped ``at_ns``, in recorded order."""
        deliver = self._deliver  # a local: this loop runs once per recorded message
        nxt = self._next
        while nxt is not None and nxt.stamp_ns == at_ns:
            try:
                deliver(nxt)
            finally:
                # Also after a BaseException from a subscriber (C-ERR-2).
                self._pull()
            nxt = self._next


class ReplayClock(Closing):
    """A [`SimClock`][simclock.SimClock] that replays a recording (SPEC §5, C-REP-1..4).

    ``ReplayClock(path, *, callbacks=False, topics=None, bus=None)``.

    * ``now_ns()`` starts at the recording's start time (``start_ns`` of a
      simclock recording, the first log time of a foreign file) and never
      decreases (C-TIME-2).
    * ``advance(dt)`` delivers to ``bus`` subscribers every recorded message
      with stamp in ``(now, now+dt]`` in recorded total order; the first
      ``advance`` (also after `seek`) includes the current instant
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
      `ReplayRandomSource` handing back exactly the recorded draws per
      label (C-REP-3).
    * ``seek(t)`` jumps forward to ``t`` without delivering the messages
      before ``t`` (whole chunks are skipped unread); ``t < now`` is a
      ``ValueError``. Nothing due before ``t`` runs: it is the core's
      ``skip_to`` (one-shot entries are dropped, periodic ones resume at
      their first grid point ``>= t``, the dropped firings count as
      ``skipped``, not ``fired``; messages published for delivery before
      ``t`` are dropped). What follows a seek is what a replay from the start
      shows from ``t`` on, except what the skipped callbacks and subscribers
      would have caused.
    * ``topics`` restricts delivery to those topics (the rest is still read
      and checked).

    A recording problem found while streaming raises
    [`RecordingError`][simclock.RecordingError] from ``advance``; the clock then stays
    at the last delivered stamp and every later ``advance``, ``seek`` and
    ``next_event_ns`` raises the same error. Messages published on the
    replay bus during replay take sequences from that bus's own counter.
    Complexity: O(1) amortised per delivered message plus the inner clock's
    O(log n) per firing; ``seek`` is O(log n) per scheduled entry moved, never
    per skipped firing, plus the skipped part of one chunk (a foreign file:
    every skipped message); memory independent of the file's length.
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
        self._running = False
        self._random: ReplayRandomSource | None = None
        self.bus = bus if bus is not None else Bus()
        # The inner clock binds the bus (a refused construction above leaves the
        # caller's bus free): stamps, deferred deliveries and failures are its.
        self._inner = HeapSimClock(
            self.info.seed or 0,
            start_ns=self.info.start_ns,
            step_ns=max(1, self.info.step_ns),
            bus=self.bus,
        )
        self._source = RecordedMessages(self._reader.messages(), self.bus.deliver)

    # -- reading ----------------------------------------------------------------

    @property
    def path(self) -> str:
        """The recording's path."""
        return self._reader.path

    def now_ns(self) -> int:
        """Current replay time in ns; never decreases (C-TIME-1, C-TIME-2)."""
        return self._inner.now_ns()

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
        self._raise_failure()
        message = self._source.next_ns()
        entry = self._inner.next_event_ns()
        if message is None or (entry is not None and entry < message):
            return entry
        return message

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

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """Run ``cb`` at ``at_ns`` if callbacks are enabled (C-SCH-1, C-REP-2)."""
        if self._callbacks:
            return self._inner.schedule(at_ns, cb)
        at = check_time_ns(at_ns, "at_ns")
        check_callable(cb)
        now = self.now_ns()
        if at < now:
            raise SimclockValueError(
                f"at_ns={at} is in the past (now is {now} ns); schedule at or after now"
            )
        return Handle(cancel=_noop)

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """Run ``cb`` at ``phase + k*period`` if callbacks are enabled (C-PER-1..3, C-REP-2).

        The first firing is the first grid point at or after ``now_ns()``.
        """
        if self._callbacks:
            return self._inner.schedule_periodic(period_ns, cb, phase_ns)
        check_positive_ns(period_ns, "period_ns")
        check_time_ns(phase_ns, "phase_ns")
        check_callable(cb)
        return Handle(cancel=_noop)

    # -- running ----------------------------------------------------------------

    def _raise_failure(self) -> None:
        failure = self._source.failure
        if failure is not None:
            raise failure

    def _check_idle(self, what: str) -> None:
        self._reader.check_open(what)
        if self._running:
            raise SimclockRuntimeError(
                f"{what} called from inside a callback or subscriber at now={self.now_ns()} ns; "
                "schedule the work with schedule() instead"
            )
        self._raise_failure()

    def advance(self, dt_ns: int) -> None:
        """Deliver recorded messages and run due callbacks up to ``now + dt`` (C-REP-1).

        The core's ``run_until`` with the recording as its timed source: see the
        class docstring for the order; ``now`` is the target afterwards.
        """
        dt = check_time_ns(dt_ns, "dt_ns")
        self._check_idle(f"advance(dt_ns={dt})")
        self._running = True
        try:
            self._inner.run_until(self._inner.now_ns() + dt, self._source)
        finally:
            self._running = False

    def seek(self, t_ns: int) -> None:
        """Jump to ``t_ns`` without delivering the recorded messages before it.

        ``t_ns < now`` is a ``ValueError`` (time never goes back); the
        messages at ``t_ns`` are delivered by the next ``advance``. Control
        callbacks due before ``t_ns`` are skipped by the core's ``skip_to``
        (see the class docstring).
        """
        t = check_time_ns(t_ns, "t_ns")
        self._check_idle(f"seek(t_ns={t})")
        if t < self.now_ns():
            raise SimclockValueError(
                f"t_ns={t} is before now={self.now_ns()} ns; replay time never goes back, open "
                "a new ReplayClock to start over"
            )
        source = self._source
        if self.info.simclock:
            # Sequences are stored: restart at the first chunk that reaches t, lazily
            # (nothing is read before the next advance or peek).
            at = source.peeked_ns()
            if at is None or at < t:
                source.restart(self._reader.messages(start_ns=t))
        else:
            # Foreign sequences are positions in replay order: keep counting.
            source.skip_before(t)
        self._inner.skip_to(t)
