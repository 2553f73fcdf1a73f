"""Example tests for SPEC §3 (bus and events), C-BUS-1..4.

A delivery record is ``(now_ns() during delivery, topic, sequence)``. The
plain cases the conformance suite checks on HeapSimClock (one global
sequence, total order for every subscriber, a future message waiting for the
clock) live there only; this file keeps the detailed and Bus-specific ones.
"""

from __future__ import annotations

import functools
import re
import threading
from decimal import Decimal
from fractions import Fraction
from types import TracebackType

import numpy as np
import pytest

from simclock import (
    EVENTS_TOPIC,
    Bus,
    Event,
    EventKind,
    GridClock,
    HeapSimClock,
    Message,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
)
from simclock.lowlevel import Handle

Record = tuple[int, str, int]


def exact(message: str) -> str:
    """A ``match=`` pattern accepting exactly ``message``."""
    return "^" + re.escape(message) + "$"


def listen(clock: HeapSimClock, topic: str | None, into: list[Record]) -> Handle:
    """Subscribe a recorder of ``(now, topic, sequence)``."""
    return clock.bus.subscribe(topic, lambda m: into.append((clock.now_ns(), m.topic, m.sequence)))


# ---------------------------------------------------------------------------
# C-BUS-1: one global sequence across topics.
# ---------------------------------------------------------------------------


def test_C_BUS_1_message_carries_stamp_and_sequence() -> None:
    clock = HeapSimClock(0, start_ns=40)
    first = clock.bus.publish("/x", {"v": 1})
    future = clock.bus.publish("/y", "later", stamp_ns=90)
    assert first == Message("/x", 40, 0, {"v": 1})
    assert future == Message("/y", 90, 1, "later")


def test_C_BUS_1_clock_events_take_the_same_sequence() -> None:
    clock = HeapSimClock(0)
    seen: list[Message] = []
    clock.bus.subscribe(None, seen.append)
    clock.bus.publish("/a", 1)

    def boom() -> None:
        raise ValueError("x")

    clock.schedule(3, boom)
    clock.schedule(4, lambda: clock.bus.publish("/b", 2))
    clock.advance(5)
    assert [(m.topic, m.stamp_ns, m.sequence) for m in seen] == [
        ("/a", 0, 0),
        (EVENTS_TOPIC, 3, 1),
        ("/b", 4, 2),
    ]


# ---------------------------------------------------------------------------
# C-BUS-2: every subscriber receives the total order, whatever the subscription order.
# ---------------------------------------------------------------------------


def test_C_BUS_2_publish_from_a_subscriber_is_delivered_after_the_current_message() -> None:
    bus = Bus()
    log: list[tuple[str, int]] = []

    def relay(m: Message) -> None:
        log.append(("relay", m.sequence))
        if m.topic == "/a":
            bus.publish("/b", "relayed", stamp_ns=m.stamp_ns)

    bus.subscribe("/a", relay)
    bus.subscribe("/b", relay)
    bus.subscribe(None, lambda m: log.append(("late-wildcard", m.sequence)))
    bus.publish("/a", "original", stamp_ns=1)
    # The wildcard subscribed after relay must still see seq 0 before seq 1:
    # the relayed message waits until every subscriber has had seq 0.
    assert log == [
        ("relay", 0),
        ("late-wildcard", 0),
        ("relay", 1),
        ("late-wildcard", 1),
    ]


def test_C_BUS_2_subscriber_added_later_sees_only_later_messages() -> None:
    bus = Bus()
    bus.publish("/a", 0, stamp_ns=0)
    got: list[int] = []
    bus.subscribe("/a", lambda m: got.append(m.sequence))
    bus.publish("/a", 1, stamp_ns=0)
    assert got == [1]


def test_C_BUS_2_unsubscribe_via_handle_cancel_is_idempotent() -> None:
    bus = Bus()
    got: list[int] = []
    other: list[int] = []
    handle = bus.subscribe("/a", lambda m: got.append(m.sequence))
    bus.subscribe("/a", lambda m: other.append(m.sequence))
    assert isinstance(handle, Handle)
    bus.publish("/a", None, stamp_ns=0)
    handle.cancel()
    handle.cancel()
    bus.publish("/a", None, stamp_ns=0)
    handle.cancel()
    assert got == [0]
    assert other == [0, 1]


def test_C_BUS_2_unsubscribe_from_inside_own_delivery() -> None:
    bus = Bus()
    got: list[int] = []
    after: list[int] = []
    handles: list[Handle] = []

    def once(m: Message) -> None:
        got.append(m.sequence)
        handles[0].cancel()

    handles.append(bus.subscribe("/a", once))
    bus.subscribe("/a", lambda m: after.append(m.sequence))
    bus.publish("/a", None, stamp_ns=0)
    bus.publish("/a", None, stamp_ns=0)
    assert got == [0]
    assert after == [0, 1]


# ---------------------------------------------------------------------------
# C-BUS-3: future stamps are delivered when the clock reaches them.
# ---------------------------------------------------------------------------


def test_C_BUS_3_delivery_in_stamp_then_sequence_order() -> None:
    clock = HeapSimClock(0)
    got: list[Record] = []
    listen(clock, None, got)
    clock.bus.publish("/a", None, stamp_ns=200)  # seq 0
    clock.bus.publish("/b", None, stamp_ns=100)  # seq 1
    clock.bus.publish("/c", None, stamp_ns=200)  # seq 2
    clock.bus.publish("/d", None)  # seq 3, stamp now = 0: delivered at once
    assert got == [(0, "/d", 3)]
    clock.advance(300)
    assert got == [(0, "/d", 3), (100, "/b", 1), (200, "/a", 0), (200, "/c", 2)]


def test_C_BUS_3_later_publishes_at_the_same_stamp_follow_in_sequence_order() -> None:
    clock = HeapSimClock(0)
    got: list[Record] = []
    listen(clock, None, got)
    clock.bus.publish("/early", None, stamp_ns=50)  # seq 0, from t=0
    clock.schedule(20, lambda: clock.bus.publish("/mid", None, stamp_ns=50))  # seq 1
    # seq 2: published at t=50 itself, stamp now.
    clock.schedule(50, lambda: clock.bus.publish("/now", None))
    clock.advance(60)
    assert got == [(50, "/early", 0), (50, "/mid", 1), (50, "/now", 2)]


def test_C_BUS_3_interleaving_with_clock_callbacks_at_the_stamp() -> None:
    clock = HeapSimClock(0)
    log: list[tuple[int, str]] = []
    clock.bus.subscribe(
        None, lambda m: log.append((clock.now_ns(), f"msg {m.topic} #{m.sequence}"))
    )
    clock.schedule(100, lambda: log.append((clock.now_ns(), "cb-before")))
    clock.bus.publish("/a", None, stamp_ns=100)  # seq 0

    def cb_mid() -> None:
        log.append((clock.now_ns(), "cb-mid"))
        clock.bus.publish("/c", None)  # seq 2, stamp now

    clock.schedule(100, cb_mid)
    clock.bus.publish("/b", None, stamp_ns=100)  # seq 1
    clock.schedule(100, lambda: log.append((clock.now_ns(), "cb-after")))
    clock.advance(100)
    # A callback pushed at 100 before the first message was published runs before
    # its delivery (clock FIFO). At the first delivery point every message due at
    # 100 goes out in (stamp, sequence) order, so #1 precedes cb-mid: it must
    # precede #2, which cb-mid publishes at now and which is delivered at once.
    assert log == [
        (100, "cb-before"),
        (100, "msg /a #0"),
        (100, "msg /b #1"),
        (100, "cb-mid"),
        (100, "msg /c #2"),
        (100, "cb-after"),
    ]


def test_C_BUS_3_future_message_published_during_advance_before_target() -> None:
    clock = HeapSimClock(0)
    got: list[Record] = []
    listen(clock, "/a", got)
    clock.schedule(10, lambda: clock.bus.publish("/a", None, stamp_ns=15))
    clock.schedule(10, lambda: clock.bus.publish("/a", None, stamp_ns=25))
    clock.advance(20)
    assert got == [(15, "/a", 0)]
    assert clock.now_ns() == 20
    clock.advance(5)
    assert got == [(15, "/a", 0), (25, "/a", 1)]


def test_C_BUS_3_split_advance_delivers_the_same() -> None:
    def run(steps: list[int]) -> list[Record]:
        clock = HeapSimClock(0)
        got: list[Record] = []
        listen(clock, None, got)
        for stamp in (30, 10, 30, 20):
            clock.bus.publish("/t", None, stamp_ns=stamp)
        clock.schedule_periodic(10, lambda: clock.bus.publish("/tick", None), 5)
        for dt in steps:
            clock.advance(dt)
        return got

    expected: list[Record] = [
        (5, "/tick", 4),
        (10, "/t", 1),
        (15, "/tick", 5),
        (20, "/t", 3),
        (25, "/tick", 6),
        (30, "/t", 0),
        (30, "/t", 2),
    ]
    assert run([30]) == expected
    assert run([10, 10, 10]) == expected
    assert run([1] * 30) == expected


# ---------------------------------------------------------------------------
# C-BUS-4: a raising subscriber is reported and does not stop the others.
# ---------------------------------------------------------------------------


def test_C_BUS_4_raising_subscriber_reported_others_still_receive() -> None:
    clock = HeapSimClock(0, start_ns=7)
    first: list[int] = []
    last: list[int] = []
    events: list[Message] = []
    clock.bus.subscribe("/imu", lambda m: first.append(m.sequence))

    def broken(m: Message) -> None:
        raise KeyError("gyro")

    clock.bus.subscribe("/imu", broken)
    clock.bus.subscribe("/imu", lambda m: last.append(m.sequence))
    clock.bus.subscribe(EVENTS_TOPIC, events.append)
    clock.bus.publish("/imu", 1.0)
    clock.bus.publish("/imu", 2.0)
    assert first == [0, 2]
    assert last == [0, 2]
    qualname = "test_C_BUS_4_raising_subscriber_reported_others_still_receive.<locals>.broken"
    assert events == [
        Message(
            EVENTS_TOPIC,
            7,
            1,
            Event(
                EventKind.SUBSCRIBER_FAILED,
                7,
                {
                    "subscriber": qualname,
                    "topic": "/imu",
                    "sequence": 0,
                    "error_type": "KeyError",
                    "error_message": "'gyro'",
                },
            ),
        ),
        Message(
            EVENTS_TOPIC,
            7,
            3,
            Event(
                EventKind.SUBSCRIBER_FAILED,
                7,
                {
                    "subscriber": qualname,
                    "topic": "/imu",
                    "sequence": 2,
                    "error_type": "KeyError",
                    "error_message": "'gyro'",
                },
            ),
        ),
    ]
    assert clock.bus.next_sequence == 4


def test_C_BUS_4_failure_of_a_future_message_reported_at_its_stamp() -> None:
    clock = HeapSimClock(0)
    events: list[tuple[int, Event]] = []
    clock.bus.subscribe(EVENTS_TOPIC, lambda m: events.append((clock.now_ns(), m.payload)))

    def broken(m: Message) -> None:
        raise RuntimeError("late")

    clock.bus.subscribe("/a", broken)
    clock.bus.publish("/a", None, stamp_ns=40)
    clock.advance(100)
    assert [(now, e.kind, e.at_ns, e.details["sequence"]) for now, e in events] == [
        (40, EventKind.SUBSCRIBER_FAILED, 40, 0)
    ]


def test_C_BUS_4_raising_events_subscriber_does_not_loop() -> None:
    clock = HeapSimClock(0)
    good: list[Message] = []
    clock.bus.subscribe(EVENTS_TOPIC, good.append)

    def bad_listener(m: Message) -> None:
        raise ValueError("cannot log")

    clock.bus.subscribe(EVENTS_TOPIC, bad_listener)

    def boom() -> None:
        raise OSError("disk")

    clock.schedule(5, boom)
    clock.advance(5)
    # seq 0: the callback failure; bad_listener raises on it → seq 1: its
    # SUBSCRIBER_FAILED report; bad_listener raises on that too → only counted.
    assert [(m.sequence, m.payload.kind) for m in good] == [
        (0, EventKind.SCHEDULER_CALLBACK_FAILED),
        (1, EventKind.SUBSCRIBER_FAILED),
    ]
    assert good[1].payload.details == {
        "subscriber": "test_C_BUS_4_raising_events_subscriber_does_not_loop.<locals>.bad_listener",
        "topic": EVENTS_TOPIC,
        "sequence": 0,
        "error_type": "ValueError",
        "error_message": "cannot log",
    }
    assert clock.bus.dropped_failures == 1
    assert clock.bus.next_sequence == 2
    assert clock.pending_count() == 0


def test_C_BUS_4_unbound_bus_reports_at_the_last_stamp() -> None:
    bus = Bus()
    events: list[Message] = []
    bus.subscribe(EVENTS_TOPIC, events.append)

    def broken(m: Message) -> None:
        raise ValueError("no")

    bus.subscribe("/a", broken)
    bus.publish("/a", None, stamp_ns=12)
    assert [(m.stamp_ns, m.sequence, m.payload.kind, m.payload.at_ns) for m in events] == [
        (12, 1, EventKind.SUBSCRIBER_FAILED, 12)
    ]


def test_C_BUS_4_base_exception_in_subscriber_propagates() -> None:
    bus = Bus()

    def stop(m: Message) -> None:
        raise KeyboardInterrupt

    got: list[int] = []
    handle = bus.subscribe("/a", stop)
    bus.subscribe("/a", lambda m: got.append(m.sequence))
    with pytest.raises(KeyboardInterrupt):
        bus.publish("/a", None, stamp_ns=0)
    handle.cancel()
    # The bus is not left "delivering": the next publish is delivered.
    bus.publish("/a", None, stamp_ns=0)
    assert got == [1]


def test_C_BUS_4_event_to_json() -> None:
    event = Event(EventKind.SUBSCRIBER_FAILED, 5, {"topic": "/a"})
    assert event.to_json() == {
        "kind": "SUBSCRIBER_FAILED",
        "at_ns": 5,
        "details": {"topic": "/a"},
    }


# ---------------------------------------------------------------------------
# Refused calls: exact errors, nothing published.
# ---------------------------------------------------------------------------

BAD_TOPICS: list[tuple[object, type[Exception], str]] = [
    (3, SimclockTypeError, "topic must be a str, got int 3"),
    (None, SimclockTypeError, "topic must be a str, got NoneType None"),
    (b"/a", SimclockTypeError, "topic must be a str, got bytes b'/a'"),
    ("", SimclockValueError, "topic must start with '/' and use only [A-Za-z0-9_./-], got ''"),
    ("a", SimclockValueError, "topic must start with '/' and use only [A-Za-z0-9_./-], got 'a'"),
    (
        "/a b",
        SimclockValueError,
        "topic must start with '/' and use only [A-Za-z0-9_./-], got '/a b'",
    ),
    ("/é", SimclockValueError, "topic must start with '/' and use only [A-Za-z0-9_./-], got '/é'"),
    (
        "/a\n",
        SimclockValueError,
        "topic must start with '/' and use only [A-Za-z0-9_./-], got '/a\\n'",
    ),
]


@pytest.mark.parametrize(("topic", "error", "message"), BAD_TOPICS, ids=repr)
def test_C_BUS_1_bad_topic_refused_nothing_published(
    topic: object, error: type[Exception], message: str
) -> None:
    clock = HeapSimClock(0)
    got: list[Message] = []
    clock.bus.subscribe(None, got.append)
    clock.bus.publish("/ok", None)
    with pytest.raises(error, match=exact(message)):
        clock.bus.publish(topic, None)  # type: ignore[arg-type]
    with pytest.raises(error, match=exact(message)):
        clock.bus.publish(topic, None, stamp_ns=5)  # type: ignore[arg-type]
    if topic is not None:  # subscribe(None, ...) is the wildcard subscription
        with pytest.raises(error, match=exact(message)):
            clock.bus.subscribe(topic, got.append)  # type: ignore[arg-type]
    assert clock.bus.next_sequence == 1
    assert clock.pending_count() == 0
    clock.advance(10)
    assert [m.sequence for m in got] == [0]


STAMP_FIX = "; convert seconds explicitly, e.g. simclock.seconds_to_ns(...)"


@pytest.mark.parametrize(
    ("stamp", "error", "message"),
    [
        (
            9,
            SimclockValueError,
            "stamp_ns=9 is in the past (now is 10 ns); stamp messages at or after now",
        ),
        (
            0,
            SimclockValueError,
            "stamp_ns=0 is in the past (now is 10 ns); stamp messages at or after now",
        ),
        (-1, SimclockValueError, "stamp_ns must be >= 0 ns, got -1"),
        (
            12.0,
            SimclockTypeError,
            "stamp_ns must be an int of nanoseconds, got float 12.0" + STAMP_FIX,
        ),
        (
            True,
            SimclockTypeError,
            "stamp_ns must be an int of nanoseconds, got bool True" + STAMP_FIX,
        ),
        (
            "12",
            SimclockTypeError,
            "stamp_ns must be an int of nanoseconds, got str '12'" + STAMP_FIX,
        ),
        (
            Decimal(12),
            SimclockTypeError,
            "stamp_ns must be an int of nanoseconds, got Decimal Decimal('12')" + STAMP_FIX,
        ),
        (
            Fraction(12),
            SimclockTypeError,
            "stamp_ns must be an int of nanoseconds, got Fraction Fraction(12, 1)" + STAMP_FIX,
        ),
        (
            np.float64(12.0),
            SimclockTypeError,
            f"stamp_ns must be an int of nanoseconds, got float64 {np.float64(12.0)!r}" + STAMP_FIX,
        ),
    ],
    ids=repr,
)
def test_C_BUS_3_bad_stamp_on_bound_bus_refused_nothing_published(
    stamp: object, error: type[Exception], message: str
) -> None:
    clock = HeapSimClock(0, start_ns=10)
    got: list[Message] = []
    clock.bus.subscribe(None, got.append)
    clock.bus.publish("/a", "pending", stamp_ns=20)
    with pytest.raises(error, match=exact(message)):
        clock.bus.publish("/a", "refused", stamp_ns=stamp)  # type: ignore[arg-type]
    assert clock.bus.next_sequence == 1
    assert clock.pending_count() == 1  # only the delivery of "pending"
    clock.advance(100)
    assert [m.payload for m in got] == ["pending"]


def test_C_BUS_3_stamp_refused_by_the_clock_changes_nothing() -> None:
    """A bound clock that refuses the delivery time (strict grid) leaves the bus unchanged.

    The refused message is never delivered later, and no sequence is consumed.
    """
    clock = GridClock(0, 2)
    bus = Bus(clock)
    got: list[Message] = []
    bus.subscribe(None, got.append)
    with pytest.raises(
        SimclockValueError,
        match=exact(
            "schedule 'Bus.flush': at 3 ns is not on the 2 ns grid (policy strict); "
            "use a multiple of 2 ns or policy 'next_boundary'"
        ),
    ):
        bus.publish("/a", "refused", stamp_ns=3)
    assert bus.next_sequence == 0
    assert clock.pending_count() == 0
    clock.advance(4)
    bus.publish("/a", "later", stamp_ns=4)
    assert [(m.payload, m.stamp_ns, m.sequence) for m in got] == [("later", 4, 0)]


def test_C_BUS_3_numpy_integer_stamp_accepted() -> None:
    clock = HeapSimClock(0)
    message = clock.bus.publish("/a", None, stamp_ns=np.int64(30))  # type: ignore[arg-type]
    assert type(message.stamp_ns) is int and message.stamp_ns == 30


def test_C_BUS_3_unbound_bus_needs_a_stamp() -> None:
    bus = Bus()
    got: list[Message] = []
    bus.subscribe(None, got.append)
    with pytest.raises(
        SimclockValueError,
        match=exact(
            "stamp_ns is required on a bus with no clock; pass stamp_ns=... "
            "or bind the bus to a clock"
        ),
    ):
        bus.publish("/a", None)
    assert bus.next_sequence == 0
    assert got == []


def test_C_BUS_3_unbound_bus_refuses_a_decreasing_stamp() -> None:
    bus = Bus()
    got: list[Message] = []
    bus.subscribe(None, got.append)
    bus.publish("/a", None, stamp_ns=10)
    with pytest.raises(
        SimclockValueError,
        match=exact(
            "stamp_ns=4 is before the last stamp published (10 ns) on this unbound bus; "
            "stamps must not decrease"
        ),
    ):
        bus.publish("/a", None, stamp_ns=4)
    bus.publish("/a", None, stamp_ns=10)
    assert [(m.stamp_ns, m.sequence) for m in got] == [(10, 0), (10, 1)]


def test_subscribe_non_callable_refused() -> None:
    bus = Bus()
    with pytest.raises(SimclockTypeError, match=exact("callback must be callable, got 5")):
        bus.subscribe("/a", 5)  # type: ignore[arg-type]
    bus.publish("/a", None, stamp_ns=0)  # no broken subscriber left behind
    assert bus.next_sequence == 1


def test_bus_binds_to_one_clock_only() -> None:
    clock = HeapSimClock(0)
    assert clock.bus.clock is clock
    shared = Bus()
    owner = HeapSimClock(1, bus=shared)
    assert owner.bus is shared
    message = "bus is already bound to another clock; create one Bus per clock"
    with pytest.raises(SimclockRuntimeError, match=exact(message)):
        HeapSimClock(2, bus=shared)
    with pytest.raises(SimclockRuntimeError, match=exact(message)):
        shared.bind(clock)
    assert shared.clock is owner
    shared.bind(owner)  # binding again to the same clock is harmless
    with pytest.raises(
        SimclockTypeError, match=exact("bus must be a simclock.Bus or None, got 'x'")
    ):
        HeapSimClock(0, bus="x")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Thread safety (C-BUS-1 "atomic under threads").
# ---------------------------------------------------------------------------


def test_C_BUS_1_threads_get_unique_gap_free_sequences() -> None:
    bus = Bus()
    received: list[int] = []
    bus.subscribe(None, lambda m: received.append(m.sequence))
    n_threads, per_thread = 8, 400
    results: list[list[int]] = [[] for _ in range(n_threads)]
    barrier = threading.Barrier(n_threads)

    def worker(i: int) -> None:
        barrier.wait()
        for j in range(per_thread):
            results[i].append(bus.publish(f"/t{i}", j, stamp_ns=0).sequence)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = n_threads * per_thread
    everything = sorted(s for r in results for s in r)
    assert everything == list(range(total))
    assert all(r == sorted(r) for r in results)
    assert bus.next_sequence == total
    assert received == list(range(total))


class _PreemptAt:
    """Stand-in for the bus lock that runs ``hook`` right after its ``at``-th release.

    It simulates the publishing thread being pre-empted at that exact point.
    """

    def __init__(self, at: int, hook: object) -> None:
        self._inner = threading.RLock()
        self._owner = threading.current_thread()
        self._depth = 0
        self._releases = 0
        self._at = at
        self._hook = hook

    def __enter__(self) -> _PreemptAt:
        self._inner.acquire()
        if threading.current_thread() is self._owner:
            self._depth += 1
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        mine = threading.current_thread() is self._owner
        if mine:
            self._depth -= 1
        self._inner.release()
        if mine and self._depth == 0:
            self._releases += 1
            if self._releases == self._at:
                assert callable(self._hook)
                self._hook()


@pytest.mark.parametrize("at", range(1, 8))
def test_C_BUS_2_publish_from_another_thread_at_any_point_is_delivered(at: int) -> None:
    # Regression: flush() used to clear its "delivering" flag after leaving the
    # critical section that found nothing due; a publish from another thread
    # landing in that gap saw the flag still set and was never delivered.
    bus = Bus()
    got: list[int] = []
    bus.subscribe(None, lambda m: got.append(m.sequence))

    def other_thread_publishes() -> None:
        t = threading.Thread(target=lambda: bus.publish("/other", None, stamp_ns=0))
        t.start()
        t.join()

    bus._lock = _PreemptAt(at, other_thread_publishes)  # type: ignore[assignment]
    bus.publish("/main", None, stamp_ns=0)
    assert got == list(range(bus.next_sequence))


class _BrokenSink:
    """A callable-object subscriber that always raises."""

    def __call__(self, message: Message) -> None:
        raise ValueError("sink full")


def _broken_function(message: Message, why: str) -> None:
    raise ValueError(why)


def test_C_BUS_4_reported_subscriber_name_has_no_memory_address() -> None:
    # Regression (C-DET-1): a subscriber without __qualname__ (a callable object,
    # a functools.partial) was reported by repr(), which carries its address and
    # so differed between runs.
    bus = Bus()
    names: list[str] = []
    bus.subscribe(EVENTS_TOPIC, lambda m: names.append(m.payload.details["subscriber"]))
    bus.subscribe("/a", _BrokenSink())
    bus.subscribe("/a", functools.partial(_broken_function, why="no"))
    bus.publish("/a", None, stamp_ns=0)
    assert names == ["_BrokenSink", "partial(_broken_function)"]
