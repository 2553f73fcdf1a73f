"""The one scheduling core under every clock, and C-ERR-1 against hostile exceptions.

Part 1: ``HeapSimClock``'s library API that GridClock, Session and ReplayClock
compose (``schedule_repeating`` with a quantum, ``run_until``
with a :class:`~simclock.lowlevel.TimedSource`, ``skip_to``). Part 2: an exception
whose ``__str__`` raises must not escape ``advance`` on any clock, nor the
oracle, nor a ``Bus`` delivery, nor a periodic thread (C-ERR-1, C-BUS-4,
C-SYS-2). Part 3: ``handle.stats().fired`` read inside a periodic's own
callback is 1, 2, 3 on every clock (C-X-STATS).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from fractions import Fraction

import pytest

from simclock import (
    EVENTS_TOPIC,
    Bus,
    Event,
    EventKind,
    GridClock,
    HeapSimClock,
    Message,
    MonotonicClock,
    PeriodicStats,
    SeededRandomSource,
    Session,
    SimclockRuntimeError,
    SimclockValueError,
    schedule_periodic_thread,
)
from simclock.core._names import exception_message
from simclock.lowlevel import Handle
from simclock_oracles import ReferenceClock

Trace = list[tuple[int, str]]
MS = 1_000_000


def exact(message: str) -> str:
    """A ``match=`` pattern accepting exactly ``message``."""
    return "^" + re.escape(message) + "$"


def note(clock: HeapSimClock | GridClock, trace: Trace, name: str) -> Callable[[], None]:
    def cb() -> None:
        trace.append((clock.now_ns(), name))

    return cb


def failures(bus: Bus) -> list[tuple[int, str, str, str]]:
    """Subscribe to ``bus`` events; return the live list of reported callback failures."""
    seen: list[tuple[int, str, str, str]] = []

    def on_event(message: Message) -> None:
        event = message.payload
        if isinstance(event, Event) and event.kind is EventKind.SCHEDULER_CALLBACK_FAILED:
            d = event.details
            seen.append((event.at_ns, d["callback"], d["error_type"], d["error_message"]))

    bus.subscribe(EVENTS_TOPIC, on_event)
    return seen


# -- part 1: the library API ------------------------------------------------------


class ListSource:
    """A TimedSource over a fixed list of times; records ``(now, item)`` into ``trace``."""

    def __init__(self, clock: HeapSimClock, times: list[int], trace: Trace) -> None:
        self.clock = clock
        self.times = sorted(times)
        self.trace = trace

    def next_ns(self) -> int | None:
        return self.times[0] if self.times else None

    def fire(self, at_ns: int) -> None:
        assert self.clock.now_ns() == at_ns
        while self.times and self.times[0] == at_ns:
            self.times.pop(0)
            self.trace.append((at_ns, "src"))


def test_run_until_source_items_go_before_entries_at_a_shared_instant() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    clock.schedule(5, note(clock, trace, "e5"))
    clock.schedule(3, note(clock, trace, "e3"))
    clock.schedule(10, note(clock, trace, "e10"))
    source = ListSource(clock, [0, 5, 12], trace)
    clock.run_until(10, source)
    # Source at 0 and 5 first at their instants; 12 is after the target.
    assert trace == [(0, "src"), (3, "e3"), (5, "src"), (5, "e5"), (10, "e10")]
    assert clock.now_ns() == 10
    assert source.times == [12]
    clock.run_until(12, source)
    assert trace[-1] == (12, "src")


def test_run_until_entries_pushed_by_the_source_fire_at_its_instant() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []

    class Pushing(ListSource):
        def fire(self, at_ns: int) -> None:
            super().fire(at_ns)
            clock.schedule(at_ns, note(clock, trace, f"pushed@{at_ns}"))

    clock.schedule(4, note(clock, trace, "e4"))
    clock.run_until(4, Pushing(clock, [4], trace))
    assert trace == [(4, "src"), (4, "e4"), (4, "pushed@4")]


def test_run_until_refuses_the_past_and_nesting_and_a_source_in_the_past() -> None:
    clock = HeapSimClock(0, start_ns=10)
    with pytest.raises(
        SimclockValueError,
        match=exact("target_ns=9 is in the past (now is 10 ns); pass a time >= now"),
    ):
        clock.run_until(9)
    nested: list[BaseException] = []

    def inside() -> None:
        try:
            clock.run_until(20)
        except SimclockRuntimeError as exc:
            nested.append(exc)

    clock.schedule(11, inside)
    clock.run_until(12)
    assert [str(e) for e in nested] == [
        "run_until() called from inside a callback at now=11 ns; "
        "schedule the work with schedule() instead"
    ]

    class Late:
        def next_ns(self) -> int | None:
            return 3

        def fire(self, at_ns: int) -> None:  # pragma: no cover - never reached
            raise AssertionError

        def __repr__(self) -> str:
            return "Late()"

    with pytest.raises(
        SimclockRuntimeError, match=exact("source Late() has an item at 3 ns, before now=12 ns")
    ):
        clock.run_until(20, Late())
    assert clock.now_ns() == 12


def test_schedule_repeating_quantised_fires_on_boundaries_from_the_nominal_grid() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    handle = clock.schedule_repeating(note(clock, trace, "p"), 0, period=7, quantum=2)
    clock.advance(28)
    # Nominal 0, 7, 14, 21, 28 -> boundaries 0, 8, 14, 22, 28 (no drift, C-GRID-2).
    assert [t for t, _ in trace] == [0, 8, 14, 22, 28]
    assert handle.stats() == PeriodicStats(fired=5, failed=0, skipped=0, overrun=0)
    clock._check()


def test_schedule_repeating_counts_overruns_when_the_period_is_below_the_quantum() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    handle = clock.schedule_repeating(note(clock, trace, "p"), 0, period=3, quantum=10)
    clock.advance(10)
    # Nominal 0, 3, 6, 9 -> boundaries 0, 10, 10, 10; the 10 ns firings of 3 and 6
    # are at or after their next nominal deadline (6 and 9): two overruns.
    assert [t for t, _ in trace] == [0, 10, 10, 10]
    assert handle.stats().overrun == 2


def test_schedule_repeating_rate_with_quantum() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    clock.schedule_repeating(note(clock, trace, "r"), 0, rate=Fraction(30), quantum=MS)
    clock.advance(100 * MS)
    # 30 Hz: 0, 33 333 334, 66 666 667, 100 000 000 -> up to the next ms.
    assert [t for t, _ in trace] == [0, 34 * MS, 67 * MS, 100 * MS]


def test_skip_to_drops_one_shots_and_resumes_periodics_counting_skipped() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    one = clock.schedule(5, note(clock, trace, "one"))
    later = clock.schedule(30, note(clock, trace, "later"))
    per = clock.schedule_periodic(10, note(clock, trace, "per"), 3)
    q = clock.schedule_repeating(note(clock, trace, "q"), 0, period=7, quantum=4)
    clock.skip_to(25)
    assert clock.now_ns() == 25
    assert one.stats() == PeriodicStats(fired=0, failed=0, skipped=1)
    # per: 3, 13, 23 skipped; resumes at 33. q: nominal 0..21 (4 firings) skipped,
    # nominal 28 -> 28 next.
    assert per.stats().skipped == 3
    assert q.stats().skipped == 4
    clock.advance(11)
    # q's nominal 35 is quantised up to 36.
    assert trace == [(28, "q"), (30, "later"), (33, "per"), (36, "q")]
    assert later.stats().fired == 1
    clock._check()
    with pytest.raises(
        SimclockValueError, match=exact("t_ns=1 is before now=36 ns; time never goes back")
    ):
        clock.skip_to(1)


# -- part 2: an exception whose __str__ raises (C-ERR-1) ------------------------------


class HostileError(Exception):
    """An exception whose ``__str__`` itself raises."""

    def __str__(self) -> str:
        raise RuntimeError("no string for you")


class NotAStringError(Exception):
    """``__str__`` returns an int: ``str()`` raises ``TypeError``."""

    def __str__(self) -> str:
        return 42  # type: ignore[return-value]  # noqa: PLE0307


def hostile() -> None:
    raise HostileError


def test_C_ERR_1_exception_message_placeholder() -> None:
    assert exception_message(HostileError()) == "<str() of HostileError raised>"
    assert exception_message(NotAStringError()) == "<str() of NotAStringError raised>"
    assert exception_message(ValueError("x")) == "x"


def _clocks() -> list[Callable[[], HeapSimClock | GridClock]]:
    return [
        lambda: HeapSimClock(0),
        lambda: GridClock(0, 1),
        lambda: GridClock(0, 5, default_policy="next_boundary"),
        lambda: Session(GridClock(0, 5, default_policy="next_boundary"), clock_topic=None).clock,
    ]


@pytest.mark.parametrize("make", _clocks(), ids=["heap", "grid1", "grid5", "session"])
def test_C_ERR_1_hostile_str_does_not_escape_and_periodic_is_rearmed(
    make: Callable[[], HeapSimClock | GridClock],
) -> None:
    clock = make()
    seen = failures(clock.bus)
    trace: Trace = []
    ticks = clock.schedule_periodic(10, hostile, 0)
    clock.schedule(3, hostile)
    clock.schedule(4, note(clock, trace, "after"))
    clock.advance(20)
    assert clock.now_ns() == 20
    # The one-shot at 3 is quantised to 5 on the 5 ns grid (next_boundary).
    one_shot_at = 5 if clock.step_ns() == 5 else 3
    assert trace == [(5 if clock.step_ns() == 5 else 4, "after")]
    assert seen == [
        (0, "hostile", "HostileError", "<str() of HostileError raised>"),
        (one_shot_at, "hostile", "HostileError", "<str() of HostileError raised>"),
        (10, "hostile", "HostileError", "<str() of HostileError raised>"),
        (20, "hostile", "HostileError", "<str() of HostileError raised>"),
    ]
    assert ticks.stats() == PeriodicStats(fired=3, failed=3)
    assert clock.next_event_ns() == 30


def test_C_ERR_1_oracle_survives_a_hostile_str() -> None:
    ref = ReferenceClock()
    ref.schedule_periodic(10, hostile)
    ref.advance(10)
    assert ref.now_ns() == 10
    assert [(f.at_ns, f.error_type, f.error_message) for f in ref.failures] == [
        (0, "HostileError", "<str() of HostileError raised>"),
        (10, "HostileError", "<str() of HostileError raised>"),
    ]
    assert ref.next_event_ns() == 20


def test_C_BUS_4_later_subscribers_get_the_message_after_a_hostile_str() -> None:
    bus = Bus()
    got: list[str] = []
    events: list[Event] = []

    def bad(message: Message) -> None:
        raise HostileError

    bus.subscribe("/a", bad)
    bus.subscribe("/a", lambda m: got.append(m.payload))
    bus.subscribe(EVENTS_TOPIC, lambda m: events.append(m.payload))
    bus.publish("/a", "hello", stamp_ns=5)
    assert got == ["hello"]
    assert [(e.kind, e.at_ns, e.details["error_message"]) for e in events] == [
        (EventKind.SUBSCRIBER_FAILED, 5, "<str() of HostileError raised>")
    ]


def test_C_SYS_2_periodic_thread_survives_a_hostile_str() -> None:
    now = [10 * MS]

    def source() -> int:
        # Every read costs 1 us of fake time, so the final spin always ends.
        now[0] += 1_000
        return now[0]

    def sleep(ns: int) -> None:
        now[0] += ns

    clock = MonotonicClock(0, source=source)
    events: list[Event] = []
    bus = Bus()
    bus.subscribe(EVENTS_TOPIC, lambda m: events.append(m.payload))
    fired = []
    done = threading.Event()
    ready = threading.Event()
    holder: list[Handle] = []

    def cb() -> None:
        ready.wait()  # the handle is in holder before the first firing
        fired.append(now[0])
        if len(fired) == 3:
            holder[0].cancel()
            done.set()
        raise HostileError

    holder.append(schedule_periodic_thread(MS, cb, clock, sleep=sleep, bus=bus))
    ready.set()
    assert done.wait(30)
    thread = getattr(holder[0], "thread", None)
    assert thread is not None
    thread.join(30)
    assert len(fired) == 3
    assert holder[0].stats().failed == 3
    assert [e.details["error_message"] for e in events] == ["<str() of HostileError raised>"] * 3


# -- part 3: stats inside the callback (C-X-STATS) --------------------------------------


@pytest.mark.parametrize("make", _clocks(), ids=["heap", "grid1", "grid5", "session"])
def test_C_X_STATS_fired_counts_the_running_firing(
    make: Callable[[], HeapSimClock | GridClock],
) -> None:
    clock = make()
    inside: list[int] = []
    holder: list[Handle] = []
    holder.append(clock.schedule_periodic(5, lambda: inside.append(holder[0].stats().fired)))
    clock.advance(10)
    assert inside == [1, 2, 3]


def test_read_only_attributes_read_through_and_refuse_assignment_like_a_property() -> None:
    clock = GridClock(1, 5)
    clock.advance(12)
    assert (clock.steps, clock.running, clock.bus is clock.bus) == (2, False, True)
    with pytest.raises(
        AttributeError, match=r"^property 'steps' of 'GridClock' object has no setter$"
    ):
        clock.steps = 7  # type: ignore[misc]
    with pytest.raises(
        AttributeError, match=r"^property 'label' of 'SeededRandomSource' object has no deleter$"
    ):
        del SeededRandomSource(3).label
    assert clock.steps == 2
    assert type(clock).steps.__doc__ == "Boundaries crossed: now_ns() // step_ns()."
    assert repr(SeededRandomSource(3).child("a")) == "SeededRandomSource(seed=3, label='/a')"


def _three_periodics(clock: HeapSimClock, trace: Trace) -> list[Handle]:
    return [
        clock.schedule_periodic(4, note(clock, trace, "p4"), 2),
        clock.schedule_periodic(7, note(clock, trace, "p7")),
        clock.schedule_repeating(note(clock, trace, "r3"), 1, rate=Fraction(10**9, 3), quantum=2),
    ]


@pytest.mark.parametrize("target", [1, 5, 14, 39, 40, 42, 57])
def test_C_PER_2_skip_to_resumes_in_the_order_a_run_without_the_skip_gives(target: int) -> None:
    full: Trace = []
    whole = HeapSimClock(0)
    every = _three_periodics(whole, full)
    whole.advance(90)
    trace: Trace = []
    clock = HeapSimClock(0)
    handles = _three_periodics(clock, trace)
    clock.skip_to(target)
    clock._check()
    clock.advance(90 - target)
    clock._check()
    assert trace == [(t, what) for t, what in full if t >= target]
    for got, ref, name in zip(handles, every, ["p4", "p7", "r3"], strict=True):
        missed = sum(1 for t, what in full if what == name and t < target)
        assert got.stats().skipped == missed
        assert got.stats().fired + missed == ref.stats().fired


def test_C_CAN_4_the_lazy_heap_never_hands_out_a_tombstone() -> None:
    clock = HeapSimClock(0, compact_threshold=0)
    trace: Trace = []
    handles = [clock.schedule(t, note(clock, trace, str(t))) for t in range(10)]
    for handle in handles[:9]:
        handle.cancel()
        clock._check()  # the queue's own invariants, tombstone count and bound included
        assert clock.heap_size() <= 2 * clock.pending_count()
    assert clock.next_event_ns() == 9
    clock.advance(20)
    assert trace == [(9, "9")]
    assert (clock.heap_size(), clock.pending_count()) == (0, 0)
