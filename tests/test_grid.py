"""GridClock: quantisation policies on a physics grid (SPEC §7, C-GRID-1..3)."""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from functools import partial

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simclock import EVENTS_TOPIC, Event, EventKind, HeapSimClock, Message, seconds_to_ns
from simclock.lowlevel import Handle
from simclock.sim._grid import GridClock, Policy, format_ns, quantise

MS = 1_000_000


def test_C_GRID_1_step_ns_is_the_grid_step() -> None:
    clock = GridClock(0, 2 * MS)
    assert clock.step_ns() == 2 * MS
    assert clock.now_ns() == 0
    assert clock.default_policy is Policy.STRICT
    assert [quantise(t, 2 * MS) for t in (0, 1, 2 * MS, 2 * MS + 1, 7 * MS)] == [
        0,
        2 * MS,
        2 * MS,
        4 * MS,
        8 * MS,
    ]


def test_C_GRID_1_start_must_be_a_boundary() -> None:
    with pytest.raises(
        ValueError,
        match=r"^start_ns=3 is not on the 2 ns grid; start at a multiple of step_ns$",
    ):
        GridClock(0, 2, start_ns=3)


def test_C_GRID_2_seven_ms_on_two_ms_grid_runs_at_8_14_22_28() -> None:
    clock = GridClock(0, 2 * MS, default_policy="next_boundary")
    fired: list[int] = []
    handle = clock.schedule_periodic(7 * MS, lambda: fired.append(clock.now_ns()))
    clock.advance(29 * MS)
    assert fired == [0, 8 * MS, 14 * MS, 22 * MS, 28 * MS]
    stats = handle.stats()
    assert (stats.fired, stats.failed, stats.skipped, stats.overrun) == (5, 0, 0, 0)


@given(
    step=st.integers(1, 50),
    period=st.integers(1, 200),
    phase=st.integers(0, 200),
    n=st.integers(1, 40),
)
def test_C_GRID_2_nth_firing_is_quantised_nominal_never_drifts(
    step: int, period: int, phase: int, n: int
) -> None:
    clock = GridClock(0, step, default_policy=Policy.NEXT_BOUNDARY)
    fired: list[int] = []
    clock.schedule_periodic(period, lambda: fired.append(clock.now_ns()), phase)
    clock.advance(phase + n * period + step)
    expected = [quantise(phase + k * period, step) for k in range(n + 1)]
    assert fired[: n + 1] == expected


def test_C_GRID_3_strict_refuses_off_grid_period_naming_the_schedule() -> None:
    clock = GridClock(0, 2 * MS)
    clock.schedule(4 * MS, lambda: None)
    with pytest.raises(
        ValueError,
        match=(
            r"^schedule 'imu': period 7 ms is not on the 2 ms grid \(policy strict\); "
            r"use a multiple of 2000000 ns or policy 'next_boundary'$"
        ),
    ):
        clock.schedule_periodic(7 * MS, lambda: None, name="imu")
    # A refused call changes nothing.
    assert clock.pending_count() == 1
    assert clock.next_event_ns() == 4 * MS


def test_C_GRID_3_strict_refuses_off_grid_phase_and_time() -> None:
    clock = GridClock(0, 2 * MS, default_policy="next_boundary")

    def encoder() -> None:
        pass

    with pytest.raises(
        ValueError,
        match=r"^schedule 'encoder': phase 1 ms is not on the 2 ms grid \(policy strict\); ",
    ):
        clock.schedule_periodic(2 * MS, encoder, 1 * MS, policy="strict", name="encoder")
    with pytest.raises(
        ValueError,
        match=r"^schedule 'test_C_GRID_3_strict_refuses_off_grid_phase_and_time.<locals>.encoder'"
        r": at 3 ms is not on the 2 ms grid \(policy strict\); ",
    ):
        clock.schedule(3 * MS, encoder, policy=Policy.STRICT)
    assert clock.pending_count() == 0


def test_C_GRID_3_strict_accepts_on_grid_and_fires_exactly() -> None:
    clock = GridClock(0, 2 * MS)
    fired: list[int] = []
    clock.schedule_periodic(4 * MS, lambda: fired.append(clock.now_ns()), 2 * MS)
    clock.advance(10 * MS)
    assert fired == [2 * MS, 6 * MS, 10 * MS]


def test_policy_value_is_checked() -> None:
    clock = GridClock(0, 2)
    with pytest.raises(ValueError, match=r"^policy must be 'next_boundary' or 'strict', got 'up'$"):
        clock.schedule(2, lambda: None, policy="up")
    with pytest.raises(TypeError, match=r"^policy must be 'next_boundary' or 'strict', got int 1$"):
        clock.schedule(2, lambda: None, policy=1)  # type: ignore[arg-type]
    assert clock.pending_count() == 0


def _push_order_trace(first: str) -> list[str]:
    clock = GridClock(0, 2 * MS, default_policy="next_boundary")
    order: list[str] = []
    nominal = {"late7": 7 * MS, "exact8": 8 * MS}
    for name in (first, *(n for n in nominal if n != first)):
        clock.schedule(nominal[name], partial(order.append, name))
    clock.advance(8 * MS)
    return order


def test_C_TIE_1_equal_boundary_fires_in_push_order_not_nominal_order() -> None:
    """A 7 ms deadline moved to 8 ms and an 8 ms deadline fire in push order."""
    assert _push_order_trace("late7") == ["late7", "exact8"]
    assert _push_order_trace("exact8") == ["exact8", "late7"]


def test_C_PER_2_shared_boundary_order_of_encoder_and_imu() -> None:
    """Encoder (2 ms strict) and IMU (7 ms next_boundary) share boundaries 0, 8, 14, 22, 28.

    At 0 both entries were pushed at registration: encoder first. Later the IMU's
    entry for a boundary is pushed at its previous firing, earlier than the
    encoder's (pushed one step before), so the IMU fires first (C-PER-2).
    """
    clock = GridClock(0, 2 * MS)
    trace: list[tuple[int, str]] = []
    clock.schedule_periodic(2 * MS, lambda: trace.append((clock.now_ns() // MS, "enc")))
    clock.schedule_periodic(
        7 * MS,
        lambda: trace.append((clock.now_ns() // MS, "imu")),
        policy="next_boundary",
    )
    clock.advance(14 * MS)
    assert trace == [
        (0, "enc"),
        (0, "imu"),
        (2, "enc"),
        (4, "enc"),
        (6, "enc"),
        (8, "imu"),
        (8, "enc"),
        (10, "enc"),
        (12, "enc"),
        (14, "imu"),
        (14, "enc"),
    ]


def test_C_X_STATS_period_shorter_than_step_overruns_and_still_fires_each_deadline() -> None:
    clock = GridClock(0, 2, default_policy="next_boundary")
    fired: list[int] = []
    handle = clock.schedule_periodic(1, lambda: fired.append(clock.now_ns()))
    clock.advance(4)
    # Nominal 0,1,2,3,4 -> boundaries 0,2,2,4,4; the firings for nominal 1 and 3
    # land at the next nominal deadline (2 and 4): overruns.
    assert fired == [0, 2, 2, 4, 4]
    stats = handle.stats()
    assert (stats.fired, stats.skipped, stats.overrun) == (5, 0, 2)


def test_C_ERR_1_grid_callback_failure_names_the_user_callback_and_keeps_periodic() -> None:
    clock = GridClock(0, 2, default_policy="next_boundary")
    events: list[Message] = []
    clock.bus.subscribe(EVENTS_TOPIC, events.append)
    fired: list[int] = []

    def flaky() -> None:
        fired.append(clock.now_ns())
        raise ZeroDivisionError("boom")

    handle = clock.schedule_periodic(3, flaky)
    clock.advance(6)
    assert fired == [0, 4, 6]
    assert [m.payload for m in events] == [
        Event(
            EventKind.SCHEDULER_CALLBACK_FAILED,
            t,
            {
                "callback": "test_C_ERR_1_grid_callback_failure_names_the_user_callback_and_"
                "keeps_periodic.<locals>.flaky",
                "error_type": "ZeroDivisionError",
                "error_message": "boom",
            },
        )
        for t in (0, 4, 6)
    ]
    assert handle.stats().failed == 3


def test_C_ERR_2_base_exception_propagates_clock_consistent() -> None:
    steps: list[int] = []
    clock = GridClock(0, 2, on_step=steps.append, default_policy="next_boundary")
    later: list[int] = []

    def stop() -> None:
        raise KeyboardInterrupt

    clock.schedule(3, stop)
    clock.schedule(6, lambda: later.append(clock.now_ns()))
    with pytest.raises(KeyboardInterrupt):
        clock.advance(10)
    assert clock.now_ns() == 4
    assert steps == [1, 2]
    assert clock.steps == 2
    clock.advance(2)
    assert later == [6]
    assert steps == [1, 2, 3]


def test_C_CAN_2_cancel_inside_own_callback_stops_quantised_periodic() -> None:
    clock = GridClock(0, 2, default_policy="next_boundary")
    fired: list[int] = []
    handles: list[Handle] = []

    def cb() -> None:
        fired.append(clock.now_ns())
        if len(fired) == 2:
            handles[0].cancel()
            handles[0].cancel()

    handles.append(clock.schedule_periodic(3, cb))
    clock.advance(20)
    assert fired == [0, 4]
    assert clock.pending_count() == 0


def test_C_CAN_2_cancel_from_another_callback_at_same_boundary() -> None:
    clock = GridClock(0, 2, default_policy="next_boundary")
    fired: list[str] = []
    handles: list[Handle] = []

    def killer() -> None:
        fired.append("killer")
        handles[0].cancel()

    clock.schedule(4, killer)
    handles.append(clock.schedule(3, lambda: fired.append("victim")))  # quantised to 4
    clock.advance(10)
    assert fired == ["killer"]
    assert handles[0].stats().fired == 0


def test_C_ADV_4_nested_advance_refused_and_changes_nothing() -> None:
    clock = GridClock(0, 2, on_step=lambda k: None)
    errors: list[str] = []

    def nested() -> None:
        try:
            clock.advance(2)
        except RuntimeError as exc:
            errors.append(str(exc))
        errors.append(f"now={clock.now_ns()} steps={clock.steps}")

    clock.schedule(2, nested)
    clock.advance(4)
    assert errors == [
        "advance(dt_ns=2) called from inside a callback at now=2 ns; "
        "schedule the work with schedule() instead",
        "now=2 steps=1",
    ]
    assert clock.now_ns() == 4
    assert clock.steps == 2


def test_C_GRID_1_on_step_runs_once_per_boundary_before_its_firings() -> None:
    trace: list[object] = []
    clock = GridClock(0, 2, on_step=lambda k: trace.append(("step", k)), default_policy="strict")
    clock.schedule_periodic(2, lambda: trace.append(("cb", clock.now_ns(), clock.steps)))
    clock.advance(0)
    clock.advance(3)
    assert clock.steps == 1
    clock.advance(1)
    assert trace == [
        ("cb", 0, 0),
        ("step", 1),
        ("cb", 2, 1),
        ("step", 2),
        ("cb", 4, 2),
    ]
    assert clock.steps == clock.now_ns() // clock.step_ns()


def test_bus_future_stamp_off_grid_delivers_before_the_step() -> None:
    trace: list[object] = []
    clock = GridClock(0, 4, on_step=lambda k: trace.append(("step", k)))
    clock.bus.subscribe("/x", lambda m: trace.append(("msg", m.stamp_ns, clock.steps)))
    clock.bus.publish("/x", "hi", stamp_ns=3)
    clock.advance(4)
    assert trace == [("msg", 3, 0), ("step", 1)]


_ops = st.lists(
    st.one_of(
        st.tuples(st.just("advance"), st.integers(0, 9)),
        st.tuples(st.just("once"), st.integers(0, 12)),
        st.tuples(st.just("periodic"), st.integers(1, 7), st.integers(0, 9)),
        st.tuples(st.just("cancel"), st.integers(0, 20)),
    ),
    max_size=25,
)


def _record(trace: list[object], clock: GridClock | HeapSimClock, i: int) -> None:
    trace.append((i, clock.now_ns()))


def _run_ops(clock: GridClock | HeapSimClock, ops: list[tuple[int | str, ...]]) -> list[object]:
    trace: list[object] = []
    handles: list[Handle] = []
    for i, op in enumerate(ops):
        kind = op[0]
        if kind == "advance":
            assert isinstance(op[1], int)
            clock.advance(op[1])
        elif kind == "once":
            assert isinstance(op[1], int)
            at = clock.now_ns() + op[1]
            handles.append(clock.schedule(at, partial(_record, trace, clock, i)))
        elif kind == "periodic":
            assert isinstance(op[1], int) and isinstance(op[2], int)
            handles.append(clock.schedule_periodic(op[1], partial(_record, trace, clock, i), op[2]))
        elif handles:
            assert isinstance(op[1], int)
            handles[op[1] % len(handles)].cancel()
    clock.advance(30)
    return trace


@given(ops=_ops)
def test_C_TIE_1_step_one_grid_matches_heap_clock(ops: list[tuple[int | str, ...]]) -> None:
    """With ``s == 1`` every time is a boundary: the trace is HeapSimClock's (SPEC §1)."""
    assert _run_ops(GridClock(0, 1), ops) == _run_ops(HeapSimClock(0), ops)


@given(ops=_ops, split=st.integers(0, 30))
def test_C_ADV_5_splitting_advance_changes_nothing_with_physics_hook(
    ops: list[tuple[int | str, ...]], split: int
) -> None:
    def run(chunks: list[int]) -> list[object]:
        steps: list[object] = []
        clock = GridClock(
            0, 3, on_step=lambda k: steps.append(("step", k)), default_policy="next_boundary"
        )
        trace = _run_ops(clock, ops)
        for c in chunks:
            clock.advance(c)
        return [*trace, *steps, clock.now_ns(), clock.steps]

    assert run([split, 30 - split]) == run([30])


def test_C_X_RATE_rate_on_grid_next_boundary() -> None:
    clock = GridClock(0, 2 * MS, default_policy="next_boundary")
    fired: list[int] = []
    clock.schedule_rate(30, lambda: fired.append(clock.now_ns()))
    clock.advance(1_000 * MS)
    # Nominal ceil(k * 1e9 / 30): 0, 33333334, 66666667, 100000000, ...
    assert fired[:4] == [0, 34 * MS, 68 * MS, 100 * MS]
    assert fired[-1] == 1_000 * MS
    assert len(fired) == 31


def test_C_X_RATE_strict_refuses_rate_off_grid() -> None:
    clock = GridClock(0, 2 * MS)
    with pytest.raises(
        ValueError,
        match=r"^schedule 'cam': rate 30 Hz has period 3.33333e\+07 ns, not a multiple of the "
        r"2 ms grid \(policy strict\); use policy 'next_boundary'$",
    ):
        clock.schedule_rate(30, lambda: None, name="cam")
    clock.schedule_rate(Fraction(250), lambda: None, name="ok")
    assert clock.pending_count() == 1


def test_format_ns() -> None:
    assert [format_ns(v) for v in (0, 7 * MS, 1_500_000, 333, 10**10, 3_000)] == [
        "0 s",
        "7 ms",
        "1.5 ms",
        "333 ns",
        "10 s",
        "3 us",
    ]


def test_C_X_RATE_strict_on_one_ns_grid_accepts_any_rate() -> None:
    """With ``s == 1`` every ns is a boundary: strict never refuses, firings are exact."""
    clock = GridClock(0, 1)
    heap = HeapSimClock(0)
    fired: list[int] = []
    expected: list[int] = []
    clock.schedule_rate(30, lambda: fired.append(clock.now_ns()))
    heap.schedule_rate(30, lambda: expected.append(heap.now_ns()))
    clock.advance(200 * MS)
    heap.advance(200 * MS)
    assert (
        fired
        == expected
        == [0, 33_333_334, 66_666_667, 100_000_000, 133_333_334, 166_666_667, 200_000_000]
    )


def test_C_ERR_2_steps_follow_now_after_base_exception_without_hook() -> None:
    """Without ``on_step`` too, ``steps == now_ns() // s`` after an interrupted advance."""
    clock = GridClock(0, 2, default_policy="next_boundary")
    later: list[int] = []

    def stop() -> None:
        raise KeyboardInterrupt

    clock.schedule(5, stop)  # quantised to 6
    clock.schedule(8, lambda: later.append(clock.now_ns()))
    with pytest.raises(KeyboardInterrupt):
        clock.advance(10)
    assert (clock.now_ns(), clock.steps) == (6, 3)
    clock.advance(4)
    assert (later, clock.now_ns(), clock.steps) == ([8], 10, 5)


def test_C_GRID_1_hook_sees_the_instant_before_its_boundary() -> None:
    """During ``on_step(k)``: now is ``k*s - 1`` and ``steps`` is ``k - 1`` (documented)."""
    seen: list[tuple[int, int, int]] = []
    clock = GridClock(0, 10, on_step=lambda k: seen.append((k, clock.now_ns(), clock.steps)))
    clock.advance(20)
    assert seen == [(1, 9, 0), (2, 19, 1)]


@pytest.mark.parametrize(
    ("seconds", "ns"),
    [
        (0.002, 2_000_000),
        (np.float64(0.0025), 2_500_000),
        # A float32 timestep's shortest decimal at float32 precision is "0.002".
        (np.float32(0.002), 2_000_000),
        (np.float16(0.5), 500_000_000),
        (Fraction(1, 250), 4_000_000),
        (Decimal("0.001"), 1_000_000),
        ("1e-9", 1),
        (3, 3_000_000_000),
        (np.int64(2), 2_000_000_000),
    ],
    ids=repr,
)
def test_C_GRID_4_seconds_to_ns_is_exact(seconds: object, ns: int) -> None:
    result = seconds_to_ns(seconds)
    assert type(result) is int and result == ns


@pytest.mark.parametrize(
    ("seconds", "error", "message"),
    [
        (
            1e-10,
            ValueError,
            "seconds = 1e-10 s is not a whole number of nanoseconds (1/10 ns); "
            "refusing to round it",
        ),
        (
            np.float32(1e-10),
            ValueError,
            "seconds = np.float32(1e-10) s is not a whole number of nanoseconds "
            "(1/10 ns); refusing to round it",
        ),
        (
            Fraction(1, 3),
            ValueError,
            "seconds = Fraction(1, 3) s is not a whole number of nanoseconds "
            "(1000000000/3 ns); refusing to round it",
        ),
        (-0.5, ValueError, "seconds must be >= 0 s, got -0.5"),
        (float("nan"), ValueError, "seconds must be finite, got nan"),
        ("inf", ValueError, "seconds must be finite, got 'inf'"),
        ("2 ms", ValueError, "seconds must be a decimal number of seconds, got '2 ms'"),
        (True, TypeError, "seconds must be a number of seconds, got bool True"),
        (
            None,
            TypeError,
            "seconds must be a number of seconds (int, Fraction, Decimal, str or float), "
            "got NoneType None",
        ),
    ],
    ids=repr,
)
def test_C_GRID_4_seconds_to_ns_refuses_rather_than_rounds(
    seconds: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        seconds_to_ns(seconds)
