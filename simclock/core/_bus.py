"""The message bus and its events (SPEC §3, C-BUS-1..4).

Every ``publish`` takes the next value of one global sequence, whatever the
topic (C-BUS-1); ``(stamp_ns, sequence)`` is the total order and every
subscriber sees messages in that order (C-BUS-2).

A bus bound to a `SimClock` refuses stamps in the past,
delivers a message stamped ``now`` at once, and holds a future-stamped message
until the clock reaches its stamp (C-BUS-3): it asks the clock to
``schedule`` a delivery at that stamp, so delivery is an ordinary clock entry
and runs with ``now_ns() == stamp``. Whichever comes first at that instant --
the delivery entry, or a callback publishing at ``now`` -- delivers every
message then due, in ``(stamp_ns, sequence)`` order: a held message is never
overtaken by a later one with the same stamp, even when the clock runs the
publishing callback before the delivery entry. An unbound bus delivers at once
and refuses a stamp lower than the last one.

A subscriber that raises ``Exception`` is reported as an
``Event(kind=SUBSCRIBER_FAILED)`` on `EVENTS_TOPIC` and delivery to the
others goes on (C-BUS-4). A failure while delivering such a failure report is
only counted (``dropped_failures``), so a broken events subscriber cannot loop.
"""

from __future__ import annotations

import heapq
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MethodType
from typing import Any

from simclock.core._enum import CheckedStrEnum
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._names import (
    callback_name,
    check_str_matching,
    exact_str,
    exception_message,
    safe_repr,
    type_name,
)
from simclock.core._numpy import is_numpy_integer
from simclock.core._protocols import Handle, SimClock
from simclock.core._sender import BusState, SinkSender
from simclock.core._timeint import check_time_ns

__all__ = [
    "EVENTS_TOPIC",
    "RESERVED_TOPICS",
    "Bus",
    "Event",
    "EventKind",
    "LineSink",
    "Message",
    "Sender",
    "Subscriber",
    "TraceSink",
    "check_topic",
    "checked_message",
    "is_reserved_topic",
    "register_trace_sink",
]

EVENTS_TOPIC = "/simclock/events"
_TOPIC = re.compile(r"/[A-Za-z0-9_./-]*")

RESERVED_TOPICS = ("/clock", "/simclock/...")
"""Topics only the library publishes on (C-BUS-5): ``/clock`` and all of ``/simclock/``."""


def is_reserved_topic(topic: str) -> bool:
    """True for ``/clock`` and every topic under ``/simclock/`` (C-BUS-5)."""
    return topic in ("/clock", "/simclock") or topic.startswith("/simclock/")


class EventKind(CheckedStrEnum):
    """Kinds of [`Event`][simclock.Event] the library publishes."""

    SCHEDULER_CALLBACK_FAILED = "SCHEDULER_CALLBACK_FAILED"
    SUBSCRIBER_FAILED = "SUBSCRIBER_FAILED"
    PERIODIC_DEADLINE_MISSED = "PERIODIC_DEADLINE_MISSED"
    PACING_LAG = "PACING_LAG"
    EPISODE_RESET = "EPISODE_RESET"


@dataclass(frozen=True, slots=True)
class Event:
    """Something the library reports about itself, published on `EVENTS_TOPIC`.

    ``details`` holds JSON-friendly values; for a failed callback they are
    ``callback`` (qualified name), ``error_type`` and ``error_message`` (C-ERR-1).
    """

    kind: EventKind
    at_ns: int
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # An unknown kind was accepted and recorded, then replay refused the whole file.
        if not isinstance(self.kind, EventKind):
            if not isinstance(self.kind, str):
                raise SimclockTypeError(
                    f"kind must be a simclock.EventKind, got {type(self.kind).__name__} "
                    f"{safe_repr(self.kind)}"
                )
            try:
                kind = EventKind(self.kind)
            except ValueError:
                raise SimclockValueError(
                    f"kind must be one of {[str(k) for k in EventKind]}, got "
                    f"{safe_repr(self.kind)}; publish your own records as plain payloads on a "
                    "topic of your own"
                ) from None
            object.__setattr__(self, "kind", kind)
        # Checked at construction, not when the event is first hashed or recorded.
        if type(self.at_ns) is not int or self.at_ns < 0:
            object.__setattr__(self, "at_ns", check_time_ns(self.at_ns, "at_ns"))
        if not isinstance(self.details, Mapping):
            raise SimclockTypeError(
                f"details must be a mapping of str to JSON values, got "
                f"{type(self.details).__name__} {safe_repr(self.details)}"
            )

    def to_json(self) -> dict[str, Any]:
        """A plain dict for recording: ``{"kind", "at_ns", "details"}``."""
        return {"kind": str(self.kind), "at_ns": self.at_ns, "details": dict(self.details)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Event:
        """Inverse of `to_json` (used by replay); ``ValueError`` for an unknown kind."""
        if not isinstance(data, Mapping):
            raise SimclockTypeError(
                f"data must be a mapping as made by Event.to_json(), got "
                f"{type(data).__name__} {safe_repr(data)}"
            )
        try:
            kind = EventKind(data["kind"])
        except (KeyError, ValueError, TypeError):
            raise SimclockValueError(
                f"event must have a 'kind' among {[str(k) for k in EventKind]}, "
                f"got {safe_repr(data)}"
            ) from None
        details = data.get("details", {})
        if not isinstance(details, Mapping):
            raise SimclockTypeError(
                f"details must be a mapping, got {type(details).__name__} {safe_repr(details)}"
            )
        return cls(kind, check_time_ns(data.get("at_ns"), "at_ns"), dict(details))


@dataclass(frozen=True, slots=True)
class Message:
    """One published message; ``(stamp_ns, sequence)`` is its place in the total order.

    ``encoded`` (library API, not part of equality): the canonical JSON of a
    plain ``payload`` as ASCII bytes, when its publisher already made it
    ([`Bus.publisher`][simclock.Bus.publisher]); the fingerprint and the recorder then use it
    instead of encoding the payload again, so a message is encoded once. It
    must equal ``canonical_json(payload).encode()`` of the payload as published.
    """

    topic: str
    stamp_ns: int
    sequence: int
    payload: Any
    encoded: bytes | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Fast path first: the bus makes one Message per publish. Any topic str is
        # allowed (a replayed foreign file may have any); the bus checks its own.
        if type(self.topic) is not str:
            if not isinstance(self.topic, str):
                raise SimclockTypeError(
                    f"topic must be a str, got {type(self.topic).__name__} {safe_repr(self.topic)}"
                )
            object.__setattr__(self, "topic", exact_str(self.topic))
        if type(self.stamp_ns) is not int or self.stamp_ns < 0:
            object.__setattr__(self, "stamp_ns", check_time_ns(self.stamp_ns, "stamp_ns"))
        sequence = self.sequence
        if type(sequence) is not int or sequence < 0:
            if isinstance(sequence, bool) or not (
                isinstance(sequence, int) or is_numpy_integer(sequence)
            ):
                raise SimclockTypeError(
                    f"sequence must be an int >= 0, got {type(sequence).__name__} "
                    f"{safe_repr(sequence)}"
                )
            if sequence < 0:
                raise SimclockValueError(f"sequence must be >= 0, got {safe_repr(sequence)}")
            object.__setattr__(self, "sequence", int(sequence))
        if self.encoded is not None and type(self.encoded) is not bytes:
            raise SimclockTypeError(
                f"encoded must be bytes (the payload's canonical JSON) or None, got "
                f"{type(self.encoded).__name__} {safe_repr(self.encoded)}"
            )


Subscriber = Callable[[Message], object]

_new_object = object.__new__
_set_topic, _set_stamp, _set_sequence, _set_payload, _set_encoded = (
    Message.__dict__[name].__set__
    for name in ("topic", "stamp_ns", "sequence", "payload", "encoded")
)


def checked_message(
    topic: str, stamp_ns: int, sequence: int, payload: Any, encoded: bytes | None
) -> Message:
    """``Message(...)`` for fields the caller has already checked, without re-checking them.

    The bus's own publish paths know the topic is a checked ``str``, the stamp
    and sequence ``int >= 0`` and ``encoded`` bytes or ``None``; a frozen
    dataclass's ``__init__`` and ``__post_init__`` cost three times these five
    slot stores, once per message. Equal to ``Message(...)`` in every field
    (a test compares them field by field).
    """
    message: Message = _new_object(Message)
    _set_topic(message, topic)
    _set_stamp(message, stamp_ns)
    _set_sequence(message, sequence)
    _set_payload(message, payload)
    _set_encoded(message, encoded)
    return message


LineSink = Callable[[int, int, bytes], object]
"""``sink(stamp_ns, sequence, encoded)``: a subscriber's work on one message of one topic."""

TraceSink = Callable[[Any, str], LineSink]
"""``trace(subscriber, topic) -> sink``: the `LineSink` of ``subscriber`` for ``topic``.

Registered with `register_trace_sink` for a subscriber whose whole work
on a message with canonical JSON ``encoded`` is a function of its stamp,
sequence, topic and ``encoded`` (the fingerprint, the recorder), which never publishes and
never waits on anything that may wait on a bus: a sink runs with the bus's
lock held. A `Bus.sender` hands such messages to the topic's sinks
without building the `Message` or its payload.
"""

Sender = Callable[[bytes | None, Any, Callable[[], Any] | None], None]
"""``send(encoded, payload, make_payload)``: see `Bus.sender`."""

# id(owner) -> (owner, its trace): keyed by identity, so no hash or __eq__ of a
# user's type or callable ever runs while the bus routes a message.
_TRACE_SINKS: dict[int, tuple[object, TraceSink]] = {}


def register_trace_sink(owner: type | Callable[..., object], trace: TraceSink) -> None:
    """Library API: subscribers ``owner`` make their per-topic sinks with ``trace``.

    ``owner`` is a class whose instances are subscribers (``trace(instance,
    topic)``) or a function whose bound methods are subscribers
    (``trace(method.__self__, topic)``). Only exact matches count: a subclass
    or an override is an ordinary subscriber. The sink must have the same
    effects as the subscriber called with the `Message` of its fields.
    """
    _TRACE_SINKS[id(owner)] = (owner, trace)


def _trace_sink(sub: Subscriber, topic: str) -> LineSink | None:
    """The registered sink of ``sub`` for ``topic``, or ``None`` (an ordinary subscriber)."""
    kind = type(sub)
    if kind is MethodType:
        owner: object = sub.__func__  # type: ignore[attr-defined]
        instance = sub.__self__  # type: ignore[attr-defined]
    else:
        owner, instance = kind, sub
    entry = _TRACE_SINKS.get(id(owner))
    if entry is None or entry[0] is not owner:
        return None
    return entry[1](instance, topic)


def check_topic(topic: object) -> str:
    """``topic`` as a plain ``str`` (a subclass's ``__hash__`` never runs), or refused."""
    checked = check_str_matching(
        topic, "topic", _TOPIC, "start with '/' and use only [A-Za-z0-9_./-]"
    )
    return exact_str(checked)


def _subscriber_name(sub: Subscriber) -> str:
    """A deterministic name for ``sub`` (C-DET-1): never a repr carrying a memory address."""
    return callback_name(sub)


class Bus:
    """Publish/subscribe in the total order ``(stamp_ns, sequence)`` (SPEC §3).

    Thread-safe: the global sequence and the pending queue are guarded by one
    re-entrant lock, so sequences are unique and gap-free across threads.
    Complexity: publish and delivery are O(log n) in pending messages plus
    O(subscribers of the topic).
    """

    def __init__(self, clock: SimClock | None = None) -> None:
        self._lock = threading.RLock()
        # Invariant: every element is (stamp_ns, sequence, message) with
        # stamp_ns >= the bound clock's now at the time it was pushed.
        self._pending: list[tuple[int, int, Message]] = []
        self._subs: dict[str | None, list[Subscriber]] = {}
        # topic -> the subscribers a message on it goes to (the topic's, then the
        # wildcard ones), as one tuple: built on the first message after a
        # subscribe or cancel, not at every publish. Invariant: emptied under the
        # lock whenever _subs changes; a delivery iterates the tuple it started with.
        self._targets: dict[str, tuple[Subscriber, ...]] = {}
        # topic -> ((sink, subscriber), ...) when every target of the topic has a trace
        # sink, else None; emptied with _targets.
        self._sinks: dict[str, tuple[tuple[LineSink, Subscriber], ...] | None] = {}
        # _delivering, _last_stamp, _clock and _next_sequence live in one compiled object
        # that the bus sender (simclock.core._sender) reads and writes natively.
        self._state = BusState()
        self.dropped_failures = 0
        if clock is not None:
            self.bind(clock)

    @property
    def clock(self) -> SimClock | None:
        """The clock this bus takes ``now`` from, or ``None`` when unbound."""
        clock: SimClock | None = self._state.clock
        return clock

    @property
    def next_sequence(self) -> int:
        """The sequence the next ``publish`` will take."""
        return self._state.next_sequence

    def bind(self, clock: SimClock) -> None:
        """Take time from ``clock``; binding twice to different clocks is refused.

        ``clock`` needs ``now_ns()`` and ``schedule(at_ns, cb)`` (a
        [`SimClock`][simclock.SimClock]); anything else is a ``TypeError`` here,
        not at the first publish.
        """
        if not (
            callable(getattr(clock, "now_ns", None)) and callable(getattr(clock, "schedule", None))
        ):
            raise SimclockTypeError(
                f"clock must be a SimClock (with now_ns() and schedule()), got "
                f"{type(clock).__name__} {safe_repr(clock)}"
            )
        if self._state.clock is not None and self._state.clock is not clock:
            raise SimclockRuntimeError(
                "bus is already bound to another clock; create one Bus per clock"
            )
        self._state.clock = clock

    def subscribe(self, topic: str | None, callback: Subscriber) -> Handle:
        """Call ``callback(message)`` for every message on ``topic`` (``None``: all topics).

        Returns a [`Handle`][simclock.lowlevel.Handle] whose ``cancel()`` unsubscribes (idempotent).
        """
        if topic is not None:
            topic = check_topic(topic)
        if not callable(callback):
            raise SimclockTypeError(f"callback must be callable, got {safe_repr(callback)}")
        with self._lock:
            self._subs.setdefault(topic, []).append(callback)
            self._targets.clear()
            self._sinks.clear()

        def cancel() -> None:
            with self._lock:
                subs = self._subs.get(topic, [])
                for i, sub in enumerate(subs):
                    if sub is callback:
                        # Copy-on-write: a delivery in progress iterates the old list.
                        self._subs[topic] = subs[:i] + subs[i + 1 :]
                        self._targets.clear()
                        self._sinks.clear()
                        return

        return Handle(cancel=cancel)

    def publish(self, topic: str, payload: Any, *, stamp_ns: int | None = None) -> Message:
        """Publish ``payload`` on ``topic``; return the `Message` with its sequence.

        ``stamp_ns`` defaults to the bound clock's ``now``. Bound: a stamp before
        ``now`` is a ``ValueError``; a future stamp is delivered when the clock
        reaches it (C-BUS-3). Unbound: ``stamp_ns`` is required and must not be
        lower than the last stamp published.
        """
        topic = check_topic(topic)
        clock = self._state.clock
        with self._lock:
            if stamp_ns is None:
                if clock is None:
                    raise SimclockValueError(
                        "stamp_ns is required on a bus with no clock; pass stamp_ns=... "
                        "or bind the bus to a clock"
                    )
                stamp = clock.now_ns()
                if type(stamp) is not int or stamp < 0:
                    # A foreign clock's now, checked before the sequence is taken: a
                    # refused publish leaves the bus as it was.
                    stamp = check_time_ns(stamp, "stamp_ns")
            else:
                stamp = check_time_ns(stamp_ns, "stamp_ns")
                floor = clock.now_ns() if clock is not None else self._state.last_stamp
                if stamp < floor and clock is not None:
                    raise SimclockValueError(
                        f"stamp_ns={stamp} is in the past (now is {floor} ns); "
                        "stamp messages at or after now"
                    )
                if stamp < floor:
                    raise SimclockValueError(
                        f"stamp_ns={stamp} is before the last stamp published ({floor} ns) "
                        "on this unbound bus; stamps must not decrease"
                    )
            due = clock is None or stamp <= clock.now_ns()
            if not due and clock is not None:
                # Before the sequence is taken: a clock that refuses the stamp (a
                # strict GridClock, off its grid) must leave the bus unchanged.
                clock.schedule(stamp, self.flush)
            seq = self._state.next_sequence
            self._state.next_sequence = seq + 1
            message = checked_message(topic, stamp, seq, payload, None)
            heapq.heappush(self._pending, (stamp, seq, message))
            self._state.last_stamp = max(self._state.last_stamp, stamp)
        if due:
            self.flush()
        return message

    def flush(self) -> None:
        """Deliver every pending message whose stamp is due, in total order.

        Re-entrant: a subscriber that publishes adds to the queue, and the
        outermost ``flush`` delivers it in order.
        """
        with self._lock:
            if self._state.delivering:
                return
            self._state.delivering = True
        self._drain(None)

    def _drain(self, first: Message | None) -> None:
        """Deliver ``first`` (if any), then every due pending message; clears the flag.

        Called with ``_delivering`` set by the caller, who owns the delivery.
        """
        try:
            if first is not None:
                self._deliver(first)
            while True:
                with self._lock:
                    pending = self._pending
                    clock = self._state.clock
                    if not pending or (clock is not None and pending[0][0] > clock.now_ns()):
                        # Invariant: the flag is cleared in the critical section that saw
                        # nothing due; clearing it later let a publish from another thread
                        # land in between, see the flag still set, and never be delivered.
                        self._state.delivering = False
                        return
                    message = heapq.heappop(pending)[2]
                self._deliver(message)
        except BaseException:
            with self._lock:
                self._state.delivering = False
            raise

    def publisher(self, topic: str) -> Callable[[Any, bytes | None], Message]:
        """Library API: ``publish(payload, encoded)`` on ``topic`` stamped now, topic checked once.

        For a component that publishes on one topic at every firing (a
        sensor's deliveries, a controller's commands): the returned callable
        is ``lambda payload, encoded: bus.publish(topic, payload)`` without the
        per-call topic check; ``encoded`` (``None`` or the payload's canonical
        JSON bytes) goes into `Message.encoded`. Same order and sequences as `publish`
        (C-BUS-1..3): a message that is due now while nothing is queued
        before it and no delivery is in progress goes straight to the
        subscribers, otherwise through the pending queue. On a bus with no
        clock it is `publish` (which refuses the missing stamp).
        """
        checked = check_topic(topic)
        lock = self._lock
        pending = self._pending
        state = self._state

        def publish(payload: Any, encoded: bytes | None = None) -> Message:
            clock = state.clock
            if clock is None:
                return self.publish(checked, payload)
            if encoded is not None and type(encoded) is not bytes:
                Message(checked, 0, 0, payload, encoded)  # raises its TypeError; nothing changed
            with lock:
                stamp = clock.now_ns()
                if type(stamp) is not int or stamp < 0:
                    # A foreign clock's now, checked before the sequence is taken: a
                    # refused publish leaves the bus as it was.
                    stamp = check_time_ns(stamp, "stamp_ns")
                seq = state.next_sequence
                state.next_sequence = seq + 1
                message = checked_message(checked, stamp, seq, payload, encoded)
                state.last_stamp = max(state.last_stamp, stamp)
                # Due now: pushed and popped at once by flush, unless something queued
                # comes first (a delivery in progress, or a message stamped now or
                # earlier that is still waiting for its flush entry).
                direct = not state.delivering and (not pending or pending[0][0] > stamp)
                if direct:
                    state.delivering = True
                else:
                    heapq.heappush(pending, (stamp, seq, message))
            if not direct:
                self.flush()
                return message
            targets = self._targets.get(checked)
            if targets is None:
                targets = self._targets_of(checked)
            try:
                for sub in targets:  # _deliver, inlined
                    try:
                        sub(message)
                    except Exception as exc:  # C-BUS-4: one subscriber never stops the others
                        self._report_subscriber_failure(message, sub, exc)
            except BaseException:
                with lock:
                    state.delivering = False
                raise
            with lock:
                if not pending:
                    # _drain's exit, inlined: nothing was published meanwhile. The flag
                    # is cleared in the critical section that saw the queue empty.
                    state.delivering = False
                    return message
            self._drain(None)  # what the subscribers published meanwhile; clears the flag
            return message

        return publish

    def sender(self, topic: str) -> Sender:
        """Library API: ``send(encoded, payload, make_payload)`` on ``topic`` stamped now.

        A `publisher` for a payload whose canonical JSON the caller has
        already made (``encoded``, or ``None``), and whose payload object may
        be built only if someone needs it: ``payload`` is the payload when
        ``make_payload`` is ``None``, else ``make_payload()`` is. When every
        subscriber of the topic has a trace sink (`register_trace_sink`)
        and the message is delivered at once, the sinks get its four fields
        and neither the [`Message`][simclock.Message] nor the payload is built; otherwise
        it is ``publisher(topic)(payload, encoded)``. The order, the sequences
        and what each subscriber sees are the same either way (C-BUS-1..4);
        a sink that raises is reported with the message built then (C-BUS-4).
        A reserved topic always takes the message path (a recorder reads the
        payload of ``/clock``).
        """
        checked = check_topic(topic)
        publish = self.publisher(checked)
        if is_reserved_topic(checked):

            def send_message(
                encoded: bytes | None, payload: Any, make_payload: Callable[[], Any] | None
            ) -> None:
                publish(payload if make_payload is None else make_payload(), encoded)

            return send_message
        # The per-message path, compiled with the core (simclock.core._sender).
        return SinkSender(
            self,
            checked,
            publish,
            self._sinks,
            self._pending,
            self._lock,
            check_time_ns,
            checked_message,
        )

    def _sinks_of(self, topic: str) -> tuple[tuple[LineSink, Subscriber], ...] | None:
        """The trace sinks of every target of ``topic``, or ``None`` if one has none; cached."""
        with self._lock:  # one critical section: a subscribe cannot land between the two
            targets = self._targets.get(topic)
            if targets is None:
                targets = self._targets_of(topic)
            pairs = [(_trace_sink(sub, topic), sub) for sub in targets]
            sinks = None
            if all(sink is not None for sink, _ in pairs):
                sinks = tuple((sink, sub) for sink, sub in pairs if sink is not None)
            self._sinks[topic] = sinks
            return sinks

    def _discard_before(self, t_ns: int) -> None:
        """Drop the pending messages stamped before ``t_ns``: they will never be delivered.

        Called by ``HeapSimClock.skip_to`` (a replay's seek), which drops the
        clock entries that would have delivered them; left here, the next
        delivery would hand them out with a stamp in the past. O(pending).
        """
        with self._lock:
            pending = self._pending
            kept = [item for item in pending if item[0] >= t_ns]
            if len(kept) != len(pending):
                # In place: a publisher (see publisher()) holds this very list.
                pending[:] = kept
                heapq.heapify(pending)

    def deliver(self, message: Message) -> None:
        """Hand an already-sequenced ``message`` to subscribers (used by replay).

        The caller is responsible for the total order; the bus's own sequence
        is not consumed.
        """
        if not isinstance(message, Message):
            raise SimclockTypeError(
                f"message must be a simclock.Message, got {type(message).__name__} "
                f"{safe_repr(message)}"
            )
        self._deliver(message)

    def _targets_of(self, topic: str) -> tuple[Subscriber, ...]:
        """The subscribers of ``topic`` then the wildcard ones, cached until ``_subs`` changes."""
        with self._lock:
            subs = self._subs
            targets = (*subs.get(topic, ()), *subs.get(None, ()))
            self._targets[topic] = targets
            return targets

    def _deliver(self, message: Message) -> None:
        targets = self._targets.get(message.topic)
        if targets is None:
            targets = self._targets_of(message.topic)
        for sub in targets:
            try:
                sub(message)
            except Exception as exc:  # C-BUS-4: one subscriber never stops the others
                self._report_subscriber_failure(message, sub, exc)

    def _report_subscriber_failure(self, message: Message, sub: Subscriber, exc: Exception) -> None:
        payload = message.payload
        if (
            message.topic == EVENTS_TOPIC
            and isinstance(payload, Event)
            and payload.kind is EventKind.SUBSCRIBER_FAILED
        ):
            self.dropped_failures += 1
            return
        event = Event(
            EventKind.SUBSCRIBER_FAILED,
            message.stamp_ns,
            {
                "subscriber": _subscriber_name(sub),
                "topic": message.topic,
                "sequence": message.sequence,
                "error_type": type_name(exc),
                "error_message": exception_message(exc),
            },
        )
        # Bound: now (== the message's stamp); unbound: never below the last stamp.
        state = self._state
        self.publish(EVENTS_TOPIC, event, stamp_ns=None if state.clock else state.last_stamp)
