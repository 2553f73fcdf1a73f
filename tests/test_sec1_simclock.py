"""Example tests for SPEC §1 (SimClock) and the §15 clock extras, one or more per clause.

What the backend-agnostic conformance suite already checks on HeapSimClock
(tests/test_conformance_heap.py) is not repeated here: this file keeps the
HeapSimClock-specific parts (exact messages, refused calls leaving the heap
unchanged, compaction, constructor arguments) and the worked examples the
suite does not have.

Every expected trace here is worked out by hand from SPEC.md: the reasoning is
in the comments next to it. A trace item is ``(now_ns() inside the callback, name)``.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from simclock import (
    EVENTS_TOPIC,
    Event,
    EventKind,
    HeapSimClock,
    Message,
    PeriodicStats,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
)
from simclock.lowlevel import Handle

Trace = list[tuple[int, str]]


def exact(message: str) -> str:
    """A ``match=`` pattern accepting exactly ``message``."""
    return "^" + re.escape(message) + "$"


def recorder(clock: HeapSimClock, trace: Trace, name: str) -> Callable[[], None]:
    """A callback that appends ``(now, name)`` to ``trace``."""

    def cb() -> None:
        trace.append((clock.now_ns(), name))

    return cb


def snapshot(clock: HeapSimClock) -> tuple[int, int, int, int | None]:
    """Everything observable about a clock's state without running it."""
    return (clock.now_ns(), clock.pending_count(), clock.heap_size(), clock.next_event_ns())


def noop() -> None:
    pass


# ---------------------------------------------------------------------------
# A standard clock for the "refused call changes nothing" tests.
# ---------------------------------------------------------------------------


def standard_clock() -> tuple[HeapSimClock, Trace]:
    """A clock at now=100 with a periodic, a one-shot and a tombstone pending.

    Periodic "p" (period 40, phase 0) fired at 0, 40, 80 and waits at 120;
    one-shot "o" waits at 150; "x" at 300 was cancelled (a tombstone).
    """
    clock = HeapSimClock(0)
    trace: Trace = []
    clock.schedule_periodic(40, recorder(clock, trace, "p"))
    clock.schedule(150, recorder(clock, trace, "o"))
    clock.schedule(300, recorder(clock, trace, "x")).cancel()
    clock.advance(100)
    assert trace == [(0, "p"), (40, "p"), (80, "p")]
    trace.clear()
    return clock, trace


# After advance(200) from the standard state (target 300): p at 120, 160, 200,
# 240, 280 (320 > 300), o at 150; x never fires.
STANDARD_CONTINUATION: Trace = [
    (120, "p"),
    (150, "o"),
    (160, "p"),
    (200, "p"),
    (240, "p"),
    (280, "p"),
]


def assert_unchanged_and_runs_as_before(
    clock: HeapSimClock, trace: Trace, before: tuple[int, int, int, int | None]
) -> None:
    assert snapshot(clock) == before
    assert trace == []
    clock.advance(200)
    assert trace == STANDARD_CONTINUATION
    assert clock.now_ns() == 300


def test_standard_clock_snapshot() -> None:
    clock, _trace = standard_clock()
    # Live: p@120, o@150; the tombstone x@300 is still physically in the heap.
    assert snapshot(clock) == (100, 2, 3, 120)


# ---------------------------------------------------------------------------
# C-TIME-3: every time argument is a time-int; floats refused, never rounded.
# ---------------------------------------------------------------------------

TYPE_FIX = "; convert seconds explicitly, e.g. simclock.seconds_to_ns(...)"

# (value, how the message shows it): "<type name> <repr>".
BAD_TYPES: list[tuple[object, str]] = [
    (1.5, "float 1.5"),
    (150.0, "float 150.0"),  # integral float: still refused, not rounded
    (True, "bool True"),
    (False, "bool False"),
    ("150", "str '150'"),
    (None, "NoneType None"),
    (Decimal("150"), "Decimal Decimal('150')"),
    (Fraction(150), "Fraction Fraction(150, 1)"),
    (np.float64(150.0), "float64 " + repr(np.float64(150.0))),
    (np.bool_(True), "bool " + repr(np.bool_(True))),
]

CallSite = Callable[[HeapSimClock, object], object]

SITES: dict[str, tuple[str, CallSite]] = {
    "advance": ("dt_ns", lambda c, v: c.advance(v)),  # type: ignore[arg-type]
    "schedule": ("at_ns", lambda c, v: c.schedule(v, noop)),  # type: ignore[arg-type]
    "schedule_periodic.period": (
        "period_ns",
        lambda c, v: c.schedule_periodic(v, noop),  # type: ignore[arg-type]
    ),
    "schedule_periodic.phase": (
        "phase_ns",
        lambda c, v: c.schedule_periodic(10, noop, v),  # type: ignore[arg-type]
    ),
    "schedule_rate.phase": (
        "phase_ns",
        lambda c, v: c.schedule_rate(30, noop, v),  # type: ignore[arg-type]
    ),
}


@pytest.mark.parametrize("site", sorted(SITES))
@pytest.mark.parametrize(("value", "shown"), BAD_TYPES, ids=[s for _, s in BAD_TYPES])
def test_C_TIME_3_bad_types_refused_state_unchanged(site: str, value: object, shown: str) -> None:
    name, call = SITES[site]
    clock, trace = standard_clock()
    before = snapshot(clock)
    with pytest.raises(
        SimclockTypeError,
        match=exact(f"{name} must be an int of nanoseconds, got {shown}{TYPE_FIX}"),
    ):
        call(clock, value)
    assert_unchanged_and_runs_as_before(clock, trace, before)


# Negative values: ValueError. Periods must be > 0, the others >= 0.
BAD_VALUES: list[tuple[str, object, str]] = [
    ("advance", -1, "dt_ns must be >= 0 ns, got -1"),
    ("advance", np.int64(-7), "dt_ns must be >= 0 ns, got -7"),
    ("schedule", -1, "at_ns must be >= 0 ns, got -1"),
    ("schedule", -(10**30), f"at_ns must be >= 0 ns, got {-(10**30)}"),
    ("schedule", 99, "at_ns=99 is in the past (now is 100 ns); schedule at or after now"),
    ("schedule", 0, "at_ns=0 is in the past (now is 100 ns); schedule at or after now"),
    (
        "schedule",
        np.int64(50),
        "at_ns=50 is in the past (now is 100 ns); schedule at or after now",
    ),
    ("schedule_periodic.period", 0, "period_ns must be > 0 ns, got 0"),
    ("schedule_periodic.period", -1, "period_ns must be > 0 ns, got -1"),
    ("schedule_periodic.period", np.int64(-3), "period_ns must be > 0 ns, got -3"),
    ("schedule_periodic.phase", -1, "phase_ns must be >= 0 ns, got -1"),
    ("schedule_rate.phase", -1, "phase_ns must be >= 0 ns, got -1"),
]


@pytest.mark.parametrize(("site", "value", "message"), BAD_VALUES)
def test_C_TIME_3_bad_values_refused_state_unchanged(
    site: str, value: object, message: str
) -> None:
    _name, call = SITES[site]
    clock, trace = standard_clock()
    before = snapshot(clock)
    with pytest.raises(SimclockValueError, match=exact(message)):
        call(clock, value)
    assert_unchanged_and_runs_as_before(clock, trace, before)


def test_C_TIME_3_errors_derive_from_builtins() -> None:
    clock = HeapSimClock(0)
    with pytest.raises(TypeError):
        clock.advance(1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^dt_ns must be >= 0 ns, got -1$"):
        clock.advance(-1)


@pytest.mark.parametrize("argument", ["start_ns", "step_ns"])
@pytest.mark.parametrize(("value", "shown"), BAD_TYPES, ids=[s for _, s in BAD_TYPES])
def test_C_TIME_3_constructor_bad_types(argument: str, value: object, shown: str) -> None:
    with pytest.raises(
        SimclockTypeError,
        match=exact(f"{argument} must be an int of nanoseconds, got {shown}{TYPE_FIX}"),
    ):
        HeapSimClock(0, **{argument: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("argument", "value", "message"),
    [
        ("start_ns", -1, "start_ns must be >= 0 ns, got -1"),
        ("start_ns", np.int64(-2), "start_ns must be >= 0 ns, got -2"),
        ("step_ns", 0, "step_ns must be > 0 ns, got 0"),
        ("step_ns", -1, "step_ns must be > 0 ns, got -1"),
        ("step_ns", np.int32(-5), "step_ns must be > 0 ns, got -5"),
    ],
)
def test_C_TIME_3_constructor_bad_values(argument: str, value: object, message: str) -> None:
    with pytest.raises(SimclockValueError, match=exact(message)):
        HeapSimClock(0, **{argument: value})  # type: ignore[arg-type]


def test_C_TIME_3_numpy_integers_accepted_and_normalised_to_int() -> None:
    clock = HeapSimClock(0, start_ns=np.int64(2), step_ns=np.uint16(1000))
    assert type(clock.now_ns()) is int and clock.now_ns() == 2
    assert type(clock.step_ns()) is int and clock.step_ns() == 1000
    trace: Trace = []
    clock.schedule(np.int64(5), recorder(clock, trace, "a"))
    clock.schedule_periodic(np.int64(3), recorder(clock, trace, "p"), np.int32(4))
    nxt = clock.next_event_ns()
    assert type(nxt) is int and nxt == 4
    clock.advance(np.int64(8))
    # p: 4, 7, (10 > 10? no: target is 2+8 = 10, so 10 fires too); a: 5.
    assert trace == [(4, "p"), (5, "a"), (7, "p"), (10, "p")]
    assert all(type(t) is int for t, _ in trace)
    assert type(clock.now_ns()) is int and clock.now_ns() == 10


def test_C_TIME_3_schedule_rate_numpy_phase_accepted() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    clock.schedule_rate(1000, recorder(clock, trace, "r"), np.int64(5))
    clock.advance(2_000_005)
    # 1 kHz: offsets 0, 1 ms, 2 ms, plus phase 5.
    assert trace == [(5, "r"), (1_000_005, "r"), (2_000_005, "r")]
    assert all(type(t) is int for t, _ in trace)


# ---------------------------------------------------------------------------
# C-TIME-1, C-TIME-2
# ---------------------------------------------------------------------------


def test_C_TIME_1_start_ns_sets_the_start() -> None:
    clock = HeapSimClock(1, start_ns=5_000)
    assert clock.now_ns() == 5_000
    clock.advance(1)
    assert clock.now_ns() == 5_001


def test_C_TIME_2_now_never_decreases_whatever_is_called() -> None:
    clock = HeapSimClock(0)
    seen: list[int] = []

    def look() -> None:
        seen.append(clock.now_ns())

    def inner() -> None:
        look()
        with pytest.raises(SimclockRuntimeError):
            clock.advance(0)
        look()
        clock.schedule(clock.now_ns(), look)

    clock.schedule(30, inner)
    clock.schedule_periodic(25, look, 5)
    look()
    clock.advance(10)
    look()
    with pytest.raises(SimclockValueError):
        clock.schedule(3, look)
    look()
    clock.next_event_ns()
    look()
    clock.advance(0)
    look()
    clock.advance(40)
    look()
    # 0 | p@5 (p re-pushed to 30 after inner@30 was pushed) | 10 | 10 after the
    # refused schedule | 10 after peeking | 10 after advance(0) | at 30: inner
    # looks twice around its refused nested advance, then p, then the look inner
    # pushed at 30 | 50 after advance(40).
    assert seen == [0, 5, 10, 10, 10, 10, 30, 30, 30, 30, 50]
    assert seen == sorted(seen)


# ---------------------------------------------------------------------------
# C-ADV-1..5
# ---------------------------------------------------------------------------


def test_C_ADV_1_now_set_to_target_even_when_nothing_is_due() -> None:
    clock = HeapSimClock(0)
    clock.advance(123)
    assert clock.now_ns() == 123
    clock.schedule(1_000, noop)
    clock.advance(500)
    assert clock.now_ns() == 623
    assert clock.pending_count() == 1


def test_C_ADV_4_nested_advance_raises_and_changes_nothing() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    observed: list[object] = []

    def nested() -> None:
        before = (clock.now_ns(), clock.pending_count(), clock.heap_size())
        with pytest.raises(
            SimclockRuntimeError,
            match=exact(
                "advance(dt_ns=5) called from inside a callback at now=10 ns; "
                "schedule the work with schedule() instead"
            ),
        ):
            clock.advance(5)
        with pytest.raises(RuntimeError):
            clock.advance(0)
        observed.append(before == (clock.now_ns(), clock.pending_count(), clock.heap_size()))
        trace.append((clock.now_ns(), "nested"))

    events: list[Message] = []
    clock.bus.subscribe(EVENTS_TOPIC, events.append)
    clock.schedule(10, nested)
    clock.schedule(12, recorder(clock, trace, "a"))
    clock.schedule(16, recorder(clock, trace, "b"))
    clock.advance(14)
    # The refused nested advance(5) must not have fired "a" (12) from inside
    # nested nor moved now; the outer advance goes on to 14 as if nothing happened.
    assert observed == [True]
    assert trace == [(10, "nested"), (12, "a")]
    assert clock.now_ns() == 14
    assert events == []  # the error was caught inside the callback
    clock.advance(2)
    assert trace[-1] == (16, "b")


def test_C_ADV_4_nested_advance_uncaught_is_reported_as_callback_failure() -> None:
    clock = HeapSimClock(0)
    events: list[Message] = []
    clock.bus.subscribe(EVENTS_TOPIC, events.append)
    clock.schedule(3, lambda: clock.advance(1))
    clock.advance(10)
    assert clock.now_ns() == 10
    assert [m.payload.details["error_type"] for m in events] == ["SimclockRuntimeError"]


# ---------------------------------------------------------------------------
# C-SCH-1, C-SCH-2
# ---------------------------------------------------------------------------


def test_C_SCH_1_at_now_is_allowed_and_fires_on_advance_zero() -> None:
    clock = HeapSimClock(0, start_ns=77)
    trace: Trace = []
    clock.schedule(77, recorder(clock, trace, "a"))
    assert trace == []
    clock.advance(0)
    assert trace == [(77, "a")]


def test_C_SCH_1_at_now_from_a_callback_fires_in_the_same_advance() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    clock.schedule(4, lambda: clock.schedule(clock.now_ns(), recorder(clock, trace, "again")))
    clock.advance(4)
    assert trace == [(4, "again")]


def test_C_SCH_1_past_is_refused_with_value_error() -> None:
    clock = HeapSimClock(0, start_ns=10)
    with pytest.raises(
        SimclockValueError,
        match=exact("at_ns=9 is in the past (now is 10 ns); schedule at or after now"),
    ):
        clock.schedule(9, noop)
    assert snapshot(clock) == (10, 0, 0, None)


def test_C_SCH_1_past_inside_a_callback_is_refused() -> None:
    clock = HeapSimClock(0)
    errors: list[str] = []

    def cb() -> None:
        try:
            clock.schedule(clock.now_ns() - 1, noop)
        except SimclockValueError as exc:
            errors.append(str(exc))

    clock.schedule(50, cb)
    clock.advance(60)
    assert errors == ["at_ns=49 is in the past (now is 50 ns); schedule at or after now"]
    assert clock.pending_count() == 0


def test_C_SCH_1_non_callable_refused() -> None:
    clock, trace = standard_clock()
    before = snapshot(clock)
    with pytest.raises(SimclockTypeError, match=exact("cb must be callable, got int 5")):
        clock.schedule(200, 5)  # type: ignore[arg-type]
    with pytest.raises(SimclockTypeError, match=exact("cb must be callable, got NoneType None")):
        clock.schedule_periodic(10, None)  # type: ignore[arg-type]
    with pytest.raises(SimclockTypeError, match=exact("cb must be callable, got str 'f'")):
        clock.schedule_rate(10, "f")  # type: ignore[arg-type]
    assert_unchanged_and_runs_as_before(clock, trace, before)


def test_C_SCH_2_returns_a_frozen_dataclass_handle_with_cancel() -> None:
    clock = HeapSimClock(0)
    for handle in (
        clock.schedule(1, noop),
        clock.schedule_periodic(1, noop),
        clock.schedule_rate(1, noop),
    ):
        assert isinstance(handle, Handle)
        assert dataclasses.is_dataclass(handle)
        assert callable(handle.cancel)
        with pytest.raises(dataclasses.FrozenInstanceError):
            handle.cancel = noop  # type: ignore[misc]
    assert Handle.__dataclass_params__.frozen  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------
# C-TIE-1
# ---------------------------------------------------------------------------


def test_C_TIE_1_mixed_kinds_fifo() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    # One-shots, a periodic and a rate all landing at 0 and at 1000, pushed in this order.
    clock.schedule(1_000, recorder(clock, trace, "o@1000"))  # seq 0
    clock.schedule(0, recorder(clock, trace, "o1"))  # seq 1
    clock.schedule_periodic(1_000, recorder(clock, trace, "per"))  # seq 2
    clock.schedule_rate(1_000_000, recorder(clock, trace, "rate"))  # seq 3; 1 MHz = 1000 ns
    clock.schedule(0, recorder(clock, trace, "o2"))  # seq 4
    clock.advance(1_000)
    # t=0 by seq: o1, per (re-pushed to 1000 as seq 5), rate (seq 6), o2.
    # t=1000: o@1000 (seq 0), per (5), rate (6).
    assert trace == [
        (0, "o1"),
        (0, "per"),
        (0, "rate"),
        (0, "o2"),
        (1_000, "o@1000"),
        (1_000, "per"),
        (1_000, "rate"),
    ]
    assert clock.pending_count() == 2  # per and rate at 2000


def test_C_TIE_1_ties_independent_of_callback_identity() -> None:
    clock = HeapSimClock(0)
    trace: list[str] = []

    class Named:
        def __init__(self, name: str) -> None:
            self.name = name

        def __call__(self) -> None:
            trace.append(self.name)

        def __lt__(self, other: object) -> bool:
            raise AssertionError("callbacks must never be compared")

    objs = [Named(str(i)) for i in range(6)]
    for obj in reversed(objs):
        clock.schedule(5, obj)
    clock.advance(5)
    assert trace == ["5", "4", "3", "2", "1", "0"]


# ---------------------------------------------------------------------------
# C-PER-1..3
# ---------------------------------------------------------------------------


def test_C_PER_1_grid_from_phase() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    clock.schedule_periodic(30, recorder(clock, trace, "p"), 10)
    clock.advance(100)
    assert trace == [(10, "p"), (40, "p"), (70, "p"), (100, "p")]


@pytest.mark.parametrize(
    ("phase", "first_three"),
    [
        (10, [100, 130, 160]),  # grid 10,40,70,100: 100 == now is included
        (5, [125, 155, 185]),  # grid 5,...,95,125: 95 < now
        (99, [99 + 30, 159, 189]),  # 99 < now by 1
        (250, [250, 280, 310]),  # phase in the future
        (0, [120, 150, 180]),
    ],
)
def test_C_PER_1_first_firing_is_first_grid_point_at_or_after_now(
    phase: int, first_three: list[int]
) -> None:
    clock = HeapSimClock(0, start_ns=100)
    trace: Trace = []
    clock.schedule_periodic(30, recorder(clock, trace, "p"), phase)
    assert clock.next_event_ns() == first_three[0]
    clock.advance(first_three[-1] - 100)
    assert [t for t, _ in trace] == first_three


def test_C_PER_1_bad_period_values() -> None:
    clock, trace = standard_clock()
    before = snapshot(clock)
    with pytest.raises(SimclockValueError, match=exact("period_ns must be > 0 ns, got -5")):
        clock.schedule_periodic(-5, noop)
    with pytest.raises(SimclockValueError, match=exact("period_ns must be > 0 ns, got 0")):
        clock.schedule_periodic(0, noop, 200)
    with pytest.raises(SimclockValueError, match=exact("phase_ns must be >= 0 ns, got -1")):
        clock.schedule_periodic(7, noop, -1)
    assert_unchanged_and_runs_as_before(clock, trace, before)


def test_C_PER_2_repush_happens_after_the_callback_returns() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []

    def p() -> None:
        trace.append((clock.now_ns(), "p"))
        if clock.now_ns() == 0:
            # Pushed during p's callback, so before p's own next entry at 10.
            clock.schedule(10, recorder(clock, trace, "o"))

    clock.schedule_periodic(10, p)
    clock.advance(10)
    assert trace == [(0, "p"), (10, "o"), (10, "p")]


def test_C_PER_2_repush_happens_after_the_callback_raises() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []

    def p() -> None:
        trace.append((clock.now_ns(), "p"))
        if clock.now_ns() == 0:
            clock.schedule(10, recorder(clock, trace, "o"))
            raise RuntimeError("first tick fails")

    clock.schedule_periodic(10, p)
    clock.advance(20)
    assert trace == [(0, "p"), (10, "o"), (10, "p"), (20, "p")]


def test_C_PER_3_no_drift_far_from_origin() -> None:
    # 10**15 - 1 is divisible by 3, so 10**15 + 1 = 2 + 3*333_333_333_333_333 is on
    # the grid and equal to now: it is the first firing.
    clock = HeapSimClock(0, start_ns=10**15 + 1)
    times: list[int] = []
    clock.schedule_periodic(3, lambda: times.append(clock.now_ns()), 2)
    clock.advance(30)
    assert times == [10**15 + 1 + 3 * n for n in range(11)]


def test_C_PER_3_nth_firing_after_registration_mid_grid() -> None:
    clock = HeapSimClock(0)
    clock.advance(1_000_003)
    times: list[int] = []
    clock.schedule_periodic(1_000, lambda: times.append(clock.now_ns()), 250)
    clock.advance(10_000)
    # First grid point >= 1_000_003 is 1_000_250; then every 1000 up to 1_010_003.
    assert times == [1_000_250 + 1_000 * n for n in range(10)]


# ---------------------------------------------------------------------------
# C-CAN-1..4
# ---------------------------------------------------------------------------


def test_C_CAN_1_cancel_one_shot_from_its_own_callback() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    handles: list[Handle] = []

    def own() -> None:
        trace.append((clock.now_ns(), "own"))
        assert handles[0].cancel() is None  # type: ignore[func-returns-value]
        handles[0].cancel()

    handles.append(clock.schedule(5, own))
    clock.schedule(5, recorder(clock, trace, "next"))
    clock.advance(10)
    assert trace == [(5, "own"), (5, "next")]
    assert clock.pending_count() == 0


def test_C_CAN_1_cancel_periodic_from_its_own_callback() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    handles: list[Handle] = []

    def own() -> None:
        trace.append((clock.now_ns(), "p"))
        if len(trace) == 3:
            handles[0].cancel()

    handles.append(clock.schedule_periodic(10, own))
    clock.advance(100)
    assert trace == [(0, "p"), (10, "p"), (20, "p")]
    assert clock.pending_count() == 0
    assert clock.next_event_ns() is None


def test_C_CAN_1_cancel_later_entry_from_callback_at_same_instant() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    victims: list[Handle] = []

    def killer() -> None:
        trace.append((clock.now_ns(), "killer"))
        for h in victims:
            h.cancel()

    clock.schedule(10, killer)
    victims.append(clock.schedule(10, recorder(clock, trace, "victim")))
    victims.append(clock.schedule_periodic(10, recorder(clock, trace, "victim-periodic"), 10))
    clock.schedule(10, recorder(clock, trace, "bystander"))
    clock.advance(50)
    assert trace == [(10, "killer"), (10, "bystander")]
    assert clock.pending_count() == 0


def test_C_CAN_1_cancel_twice_and_outside_advance_never_raises() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    h = clock.schedule(5, recorder(clock, trace, "a"))
    h.cancel()
    h.cancel()
    clock.schedule(5, recorder(clock, trace, "b"))
    clock.advance(5)
    h.cancel()
    assert trace == [(5, "b")]
    assert snapshot(clock) == (5, 0, 0, None)


def test_C_CAN_1_cancel_from_a_bus_subscriber() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    h = clock.schedule_periodic(10, recorder(clock, trace, "p"))
    clock.bus.subscribe("/stop", lambda _m: h.cancel())
    clock.schedule(15, lambda: clock.bus.publish("/stop", None))
    clock.advance(100)
    assert trace == [(0, "p"), (10, "p")]


def test_C_CAN_2_once_cancel_returns_the_entry_never_fires() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    one = clock.schedule(10, recorder(clock, trace, "one"))
    per = clock.schedule_periodic(4, recorder(clock, trace, "per"), 2)
    rate = clock.schedule_rate(100_000_000, recorder(clock, trace, "rate"))  # 10 ns
    clock.advance(6)
    assert trace == [(0, "rate"), (2, "per"), (6, "per")]
    assert clock.pending_count() == 3
    one.cancel()
    per.cancel()
    rate.cancel()
    assert clock.pending_count() == 0
    assert clock.next_event_ns() is None
    clock.advance(1_000)
    assert trace == [(0, "rate"), (2, "per"), (6, "per")]


def test_C_CAN_4_schedule_cancel_churn_keeps_heap_bounded() -> None:
    clock = HeapSimClock(0)
    live: list[Handle] = []
    max_size = 0
    for i in range(20_000):
        h = clock.schedule(clock.now_ns() + (i * 7_919) % 1_000 + 1, noop)
        if i % 10 == 0:
            live.append(h)
        else:
            h.cancel()
        if i % 97 == 0 and live:
            live.pop(0).cancel()
        if i % 500 == 0:
            clock.advance(300)
        assert clock.heap_size() <= 2 * clock.pending_count() + 64
        max_size = max(max_size, clock.heap_size())
    # 20 000 pushes, 18 000 cancelled at once: without compaction the heap would
    # hold thousands of tombstones.
    assert max_size < 1_000


def test_C_CAN_4_churn_with_one_live_entry_cannot_grow_the_heap() -> None:
    clock = HeapSimClock(0)
    clock.schedule(10**12, noop)
    for _ in range(10_000):
        clock.schedule(10**9, noop).cancel()
        assert clock.heap_size() <= 2 * 1 + 64
    assert clock.pending_count() == 1


def test_C_CAN_4_bound_holds_after_firing_live_entries() -> None:
    # Regression: firing lowers the live count while far tombstones stay; the bound
    # must be re-established when advance returns (it was only checked in cancel).
    clock = HeapSimClock(0)
    for t in range(1, 1_001):
        clock.schedule(t, noop)
    far = [clock.schedule(10**9, noop) for _ in range(1_064)]
    for h in far:
        h.cancel()
    assert clock.heap_size() <= 2 * clock.pending_count() + 64
    clock.advance(1_000)
    assert clock.pending_count() == 0
    assert clock.heap_size() <= 2 * clock.pending_count() + 64
    clock._check()


def test_C_CAN_4_compact_threshold_zero_is_the_tightest_bound() -> None:
    clock = HeapSimClock(0, compact_threshold=0)
    hs = [clock.schedule(i, noop) for i in range(100)]
    for h in hs[::2]:
        h.cancel()
        assert clock.heap_size() <= 2 * clock.pending_count()
    clock._check()


# ---------------------------------------------------------------------------
# C-ERR-1, C-ERR-2
# ---------------------------------------------------------------------------


class SensorFaultError(Exception):
    pass


def test_C_ERR_1_periodic_that_raises_stays_scheduled() -> None:
    clock = HeapSimClock(0)
    events: list[Event] = []
    clock.bus.subscribe(EVENTS_TOPIC, lambda m: events.append(m.payload))
    calls: list[int] = []

    def flaky() -> None:
        calls.append(clock.now_ns())
        raise ZeroDivisionError("division by zero")

    h = clock.schedule_periodic(10, flaky, 5)
    clock.advance(30)
    assert calls == [5, 15, 25]
    assert [(e.kind, e.at_ns, e.details["error_type"]) for e in events] == [
        (EventKind.SCHEDULER_CALLBACK_FAILED, 5, "ZeroDivisionError"),
        (EventKind.SCHEDULER_CALLBACK_FAILED, 15, "ZeroDivisionError"),
        (EventKind.SCHEDULER_CALLBACK_FAILED, 25, "ZeroDivisionError"),
    ]
    assert clock.next_event_ns() == 35
    assert h.stats() == PeriodicStats(fired=3, failed=3)


def test_C_ERR_2_keyboard_interrupt_propagates_clock_consistent() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []

    def interrupt() -> None:
        trace.append((clock.now_ns(), "interrupt"))
        raise KeyboardInterrupt

    clock.schedule(10, recorder(clock, trace, "a"))
    clock.schedule(20, interrupt)
    clock.schedule(20, recorder(clock, trace, "b"))
    clock.schedule(30, recorder(clock, trace, "c"))
    with pytest.raises(KeyboardInterrupt):
        clock.advance(100)
    assert trace == [(10, "a"), (20, "interrupt")]
    assert clock.now_ns() == 20
    assert clock.pending_count() == 2
    assert clock.next_event_ns() == 20
    clock._check()
    clock.advance(0)
    assert trace[-1] == (20, "b")
    clock.advance(80)
    assert trace == [(10, "a"), (20, "interrupt"), (20, "b"), (30, "c")]
    assert clock.now_ns() == 100


def test_C_ERR_2_periodic_raising_base_exception_stays_scheduled() -> None:
    clock = HeapSimClock(0)
    calls: list[int] = []

    def stop_once() -> None:
        calls.append(clock.now_ns())
        if len(calls) == 1:
            raise SystemExit(3)

    h = clock.schedule_periodic(10, stop_once)
    with pytest.raises(SystemExit):
        clock.advance(25)
    assert calls == [0]
    assert clock.now_ns() == 0
    assert clock.pending_count() == 1
    assert clock.next_event_ns() == 10
    clock.advance(25)
    assert calls == [0, 10, 20]
    assert h.stats().fired == 3


def test_C_ERR_2_base_exception_does_not_publish_an_event() -> None:
    clock = HeapSimClock(0)
    events: list[Message] = []
    clock.bus.subscribe(EVENTS_TOPIC, events.append)

    def cb() -> None:
        raise KeyboardInterrupt

    clock.schedule(1, cb)
    with pytest.raises(KeyboardInterrupt):
        clock.advance(1)
    assert events == []
    # The clock is not left "running": advance works again.
    clock.advance(1)
    assert clock.now_ns() == 2


# ---------------------------------------------------------------------------
# C-DET-1 (in-process; the subprocess/PYTHONHASHSEED check lives elsewhere)
# ---------------------------------------------------------------------------


def _scenario(seed: int) -> tuple[Trace, list[float], list[int]]:
    clock = HeapSimClock(seed)
    trace: Trace = []
    rng = clock.random_source().child("/sensors/imu0/noise")
    noise: list[float] = []
    ints: list[int] = []

    def imu() -> None:
        trace.append((clock.now_ns(), "imu"))
        noise.append(rng.normal(0.0, 0.1))

    def jitter() -> None:
        ints.append(clock.random_source().child("jitter").integers(0, 1_000))

    clock.schedule_periodic(5_000_000, imu)
    clock.schedule_rate(30, recorder(clock, trace, "cam"))
    clock.schedule_rate(Fraction(30_000, 1_001), recorder(clock, trace, "ntsc"), 7)
    picker = clock.random_source().child("picker")
    for i in range(20):
        at = picker.integers(0, 100_000_000)
        ints.append(at)
        clock.schedule(at, recorder(clock, trace, f"o{i}"))
    clock.schedule(50_000_000, jitter)
    clock.advance(60_000_000)
    clock.advance(40_000_000)
    return trace, noise, ints


def test_C_DET_1_other_seed_other_numbers() -> None:
    _t1, noise1, ints1 = _scenario(42)
    _t2, noise2, ints2 = _scenario(43)
    assert noise1 != noise2
    assert ints1 != ints2


# ---------------------------------------------------------------------------
# C-STEP-1
# ---------------------------------------------------------------------------


def test_C_STEP_1_default_step_is_one_ns() -> None:
    clock = HeapSimClock(0)
    assert type(clock.step_ns()) is int
    assert clock.step_ns() == 1


def test_C_STEP_1_step_is_what_was_given_and_does_not_quantise() -> None:
    clock = HeapSimClock(0, step_ns=1_000_000)
    assert clock.step_ns() == 1_000_000
    trace: Trace = []
    clock.schedule(1_234, recorder(clock, trace, "a"))
    clock.advance(clock.step_ns())
    # An event clock fires at the exact at_ns, not on a step boundary.
    assert trace == [(1_234, "a")]
    assert clock.now_ns() == 1_000_000


# ---------------------------------------------------------------------------
# C-X-PEEK
# ---------------------------------------------------------------------------


def test_C_X_PEEK_none_when_nothing_is_pending() -> None:
    clock = HeapSimClock(0)
    assert clock.next_event_ns() is None
    clock.advance(10)
    assert clock.next_event_ns() is None


def test_C_X_PEEK_earliest_live_entry_skipping_cancelled() -> None:
    clock = HeapSimClock(0)
    a = clock.schedule(5, noop)
    b = clock.schedule(7, noop)
    clock.schedule(9, noop)
    assert clock.next_event_ns() == 5
    a.cancel()
    assert clock.next_event_ns() == 7
    b.cancel()
    assert clock.next_event_ns() == 9
    assert clock.now_ns() == 0
    assert clock.pending_count() == 1


def test_C_X_PEEK_advance_to_next_timer_without_guessing() -> None:
    clock = HeapSimClock(0)
    trace: Trace = []
    clock.schedule_periodic(7, recorder(clock, trace, "p"), 3)
    clock.schedule(11, recorder(clock, trace, "o"))
    visited: list[int] = []
    while (nxt := clock.next_event_ns()) is not None and nxt <= 20:
        clock.advance(nxt - clock.now_ns())
        visited.append(clock.now_ns())
    assert visited == [3, 10, 11, 17]
    assert trace == [(3, "p"), (10, "p"), (11, "o"), (17, "p")]
    assert clock.next_event_ns() == 24


def test_C_X_PEEK_inside_a_callback_sees_the_next_entry() -> None:
    clock = HeapSimClock(0)
    peeks: list[int | None] = []
    clock.schedule(4, lambda: peeks.append(clock.next_event_ns()))
    clock.schedule(4, lambda: peeks.append(clock.next_event_ns()))
    clock.schedule(8, noop)
    clock.advance(10)
    assert peeks == [4, 8]


# ---------------------------------------------------------------------------
# C-X-RATE
# ---------------------------------------------------------------------------


def test_C_X_RATE_30_hz_spreads_the_third_and_hits_one_second_exactly() -> None:
    clock = HeapSimClock(0)
    times: list[int] = []
    clock.schedule_rate(30, lambda: times.append(clock.now_ns()))
    clock.advance(1_000_000_000)
    # ceil(k * 10**9 / 30): 0, 33_333_334, 66_666_667, 100_000_000, ...
    assert times[:4] == [0, 33_333_334, 66_666_667, 100_000_000]
    assert times[30] == 1_000_000_000
    assert len(times) == 31
    assert times == [-(-k * 10**9 // 30) for k in range(31)]
    gaps = {b - a for a, b in itertools.pairwise(times)}
    assert gaps == {33_333_333, 33_333_334}


def test_C_X_RATE_with_phase() -> None:
    clock = HeapSimClock(0)
    times: list[int] = []
    clock.schedule_rate(3, lambda: times.append(clock.now_ns()), 5)
    clock.advance(2_000_000_005)
    # 3 Hz: offsets 0, 333_333_334, 666_666_667, 10**9, ... plus phase 5.
    assert times == [
        5,
        333_333_339,
        666_666_672,
        1_000_000_005,
        1_333_333_339,
        1_666_666_672,
        2_000_000_005,
    ]


def test_C_X_RATE_ntsc_fraction() -> None:
    clock = HeapSimClock(0)
    times: list[int] = []
    clock.schedule_rate(Fraction(30_000, 1_001), lambda: times.append(clock.now_ns()))
    clock.advance(1_001_000_000)
    # Period 1001/30000 s = 33_366_666⅔ ns; firing k at ceil(k * 100_100_000 / 3).
    assert times[:4] == [0, 33_366_667, 66_733_334, 100_100_000]
    # 30 frames span exactly 1.001 s.
    assert times[30] == 1_001_000_000
    assert len(times) == 31


def test_C_X_RATE_first_firing_at_or_after_now() -> None:
    clock = HeapSimClock(0, start_ns=50_000_000)
    times: list[int] = []
    clock.schedule_rate(30, lambda: times.append(clock.now_ns()))
    # Grid 0, 33_333_334, 66_666_667: the first >= 50 ms is k=2.
    assert clock.next_event_ns() == 66_666_667
    clock.advance(50_000_000)
    assert times == [66_666_667, 100_000_000]


def test_C_X_RATE_registration_exactly_on_a_grid_point() -> None:
    clock = HeapSimClock(0, start_ns=33_333_334)
    times: list[int] = []
    clock.schedule_rate(30, lambda: times.append(clock.now_ns()))
    clock.advance(0)
    assert times == [33_333_334]


def test_C_X_RATE_no_drift_at_a_million_firings() -> None:
    # Firing k of 30 Hz is at ceil(k * 10**8 / 3). k = 999_999 is divisible by 3:
    # 33_333_300_000_000 exactly; starting 1 ns later makes k = 10**6 the first.
    clock = HeapSimClock(0, start_ns=33_333_300_000_001)
    times: list[int] = []
    clock.schedule_rate(30, lambda: times.append(clock.now_ns()))
    clock.advance(700_000_000 - 1)  # up to 33_334 s exactly
    # k = 10**6: ceil(33_333_333_333_333.3); k+1: ceil(..._366_666_666.7);
    # k+2 = 1_000_002 is divisible by 3; k+20 = 1_000_020 = 30 * 33_334: a whole second.
    assert times[:3] == [33_333_333_333_334, 33_333_366_666_667, 33_333_400_000_000]
    assert times[-1] == 33_334_000_000_000
    assert len(times) == 21
    assert times == [-(-k * 10**9 // 30) for k in range(10**6, 10**6 + 21)]


def test_C_X_RATE_thousand_seconds_every_whole_second_exact() -> None:
    clock = HeapSimClock(0)
    times: list[int] = []
    clock.schedule_rate(30, lambda: times.append(clock.now_ns()))
    clock.advance(1_000 * 10**9)
    assert len(times) == 30_001
    assert times[::30] == [s * 10**9 for s in range(1_001)]


@pytest.mark.parametrize(
    ("rate", "shown"),
    [
        (30.0, "float 30.0"),
        (29.97, "float 29.97"),
        (True, "bool True"),
        (Decimal("30"), "Decimal Decimal('30')"),
        ("30", "str '30'"),
        (None, "NoneType None"),
        (np.float64(30.0), "float64 " + repr(np.float64(30.0))),
    ],
    ids=repr,
)
def test_C_X_RATE_non_exact_rate_types_refused(rate: object, shown: str) -> None:
    clock, trace = standard_clock()
    before = snapshot(clock)
    with pytest.raises(
        SimclockTypeError,
        match=exact(
            f"rate_hz must be an int or fractions.Fraction of Hz, got {shown}; "
            "write Fraction(30000, 1001) for 29.97 Hz"
        ),
    ):
        clock.schedule_rate(rate, noop)  # type: ignore[arg-type]
    assert_unchanged_and_runs_as_before(clock, trace, before)


@pytest.mark.parametrize(
    ("rate", "message"),
    [
        (0, "rate_hz must be > 0, got 0"),
        (-30, "rate_hz must be > 0, got -30"),
        (Fraction(-1, 2), "rate_hz must be > 0, got Fraction(-1, 2)"),
        (2 * 10**9, "rate_hz must be <= 1e9 (one firing per ns at most), got 2000000000"),
        (
            Fraction(10**9 + 1, 1),
            "rate_hz must be <= 1e9 (one firing per ns at most), got Fraction(1000000001, 1)",
        ),
    ],
)
def test_C_X_RATE_bad_rate_values_refused(rate: object, message: str) -> None:
    clock, trace = standard_clock()
    before = snapshot(clock)
    with pytest.raises(SimclockValueError, match=exact(message)):
        clock.schedule_rate(rate, noop)  # type: ignore[arg-type]
    assert_unchanged_and_runs_as_before(clock, trace, before)


def test_C_X_RATE_one_ghz_fires_every_ns() -> None:
    clock = HeapSimClock(0)
    times: list[int] = []
    clock.schedule_rate(10**9, lambda: times.append(clock.now_ns()))
    clock.advance(5)
    assert times == [0, 1, 2, 3, 4, 5]


# ---------------------------------------------------------------------------
# C-X-STATS
# ---------------------------------------------------------------------------


def test_C_X_STATS_periodic_counts_fired_and_failed() -> None:
    clock = HeapSimClock(0)
    n = iter(range(100))

    def odd_fails() -> None:
        if next(n) % 2 == 1:
            raise ValueError("odd")

    h = clock.schedule_periodic(10, odd_fails)
    assert h.stats() == PeriodicStats(fired=0, failed=0, skipped=0, overrun=0)
    clock.advance(40)
    # Firings at 0, 10, 20, 30, 40; the 2nd and 4th raise.
    assert h.stats() == PeriodicStats(fired=5, failed=2, skipped=0, overrun=0)


def test_C_X_STATS_event_clock_never_skips_or_overruns() -> None:
    clock = HeapSimClock(0)
    h = clock.schedule_periodic(1_000_000, noop)
    r = clock.schedule_rate(30, noop)
    clock.advance(10**9)
    # 1 ms period over [0, 1 s]: 1001 firings; 30 Hz: 31 firings.
    assert h.stats() == PeriodicStats(fired=1_001, failed=0, skipped=0, overrun=0)
    assert r.stats() == PeriodicStats(fired=31, failed=0, skipped=0, overrun=0)


def test_C_X_STATS_one_shot_and_cancelled() -> None:
    clock = HeapSimClock(0)
    one = clock.schedule(3, noop)
    per = clock.schedule_periodic(2, noop)
    assert one.stats() == PeriodicStats()
    clock.advance(4)
    assert one.stats() == PeriodicStats(fired=1)
    assert per.stats() == PeriodicStats(fired=3)  # 0, 2, 4
    per.cancel()
    clock.advance(10)
    assert per.stats() == PeriodicStats(fired=3)
