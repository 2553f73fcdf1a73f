"""run_paced and the execution modes (SPEC §4 C-SYS-4, §11 C-MODE-1..2).

The wall clock is a fake (``FakeWall``: reads cost nothing, ``sleep`` moves
time by exactly the duration asked), so pacing is checked as exact wall
instants and no test measures a real duration. Fingerprints come from
``simclock.Fingerprinter`` (C-X-FP) subscribed to the clock's bus.
"""

from __future__ import annotations

import threading
import time
from decimal import Decimal
from fractions import Fraction
from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st

import simclock
from simclock import (
    EVENTS_TOPIC,
    Bus,
    Event,
    EventKind,
    Fingerprinter,
    HeapSimClock,
    Message,
    PacingControl,
    PacingMode,
    PacingReport,
    run_paced,
)

MS = 1_000_000
ALL_MODES = [m.value for m in PacingMode]


class FakeWall:
    """Wall time that only moves when slept on (or when a test moves it)."""

    def __init__(self, start: int = 1_000 * MS) -> None:
        self.t = start
        self.start = start
        self.reads = 0
        self.sleeps: list[int] = []

    def source(self) -> int:
        self.reads += 1
        return self.t

    def sleep(self, duration_ns: int) -> None:
        self.sleeps.append(duration_ns)
        self.t += duration_ns

    def offset(self) -> int:
        return self.t - self.start


def build_scenario() -> tuple[HeapSimClock, Fingerprinter]:
    """Periodics, a 30 Hz rate, one-shots, a failing callback and a future-stamped message."""
    clock = HeapSimClock(7)
    fingerprint = Fingerprinter()
    clock.bus.subscribe(None, fingerprint)
    noise = clock.random_source().child("noise")

    def tick(label: str) -> None:
        draw = int(noise.integers(0, 1_000_000))
        clock.bus.publish("/trace", {"label": label, "t": clock.now_ns(), "draw": draw})

    def fail() -> None:
        raise ValueError("boom")

    def later() -> None:
        clock.bus.publish("/later", {"x": 1}, stamp_ns=clock.now_ns() + 2_500_000)

    clock.schedule_periodic(3 * MS, partial(tick, "p3"))
    clock.schedule_periodic(2 * MS, partial(tick, "p2"), phase_ns=MS)
    clock.schedule_rate(30, partial(tick, "r30"))
    clock.schedule(7_500_001, partial(tick, "once"))
    clock.schedule(12 * MS, fail)
    clock.schedule(5 * MS, later)
    return clock, fingerprint


def reference_fingerprint(until: int) -> str:
    clock, fingerprint = build_scenario()
    clock.advance(until)
    return fingerprint.hexdigest()


# -- C-MODE-1 / C-SYS-4: pacing never changes the trace ------------------------------


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("rtf", [1, 0.5, Fraction(3)])
def test_C_MODE_1_every_mode_gives_the_identical_fingerprint(mode: str, rtf: object) -> None:
    until = 100 * MS
    clock, fingerprint = build_scenario()
    wall = FakeWall()
    report = run_paced(
        clock,
        until,
        rtf=rtf,  # type: ignore[arg-type]
        mode=mode,
        source=wall.source,
        sleep=wall.sleep,
        on_frame=(lambda _ns: None) if mode == "rendered" else None,
    )
    assert clock.now_ns() == until
    assert report.sim_end_ns == until
    assert fingerprint.count == 91  # 34 p3 + 50 p2 + 4 r30 + once + failure event + /later
    assert fingerprint.hexdigest() == reference_fingerprint(until)


@pytest.mark.parametrize("mode", ALL_MODES)
def test_C_MODE_1_real_wall_clock_gives_the_identical_fingerprint(mode: str) -> None:
    # Real time.monotonic_ns/time.sleep at 50x: asserts the trace, never a duration.
    until = 60 * MS
    clock, fingerprint = build_scenario()
    run_paced(clock, until, rtf=50, mode=mode)
    assert fingerprint.hexdigest() == reference_fingerprint(until)


class RecordingClock:
    """Delegates to a clock and records every ``advance`` as ``(now before, dt)``."""

    def __init__(self, inner: HeapSimClock) -> None:
        self.inner = inner
        self.calls: list[tuple[int, int]] = []

    def advance(self, dt_ns: int) -> None:
        self.calls.append((self.inner.now_ns(), dt_ns))
        self.inner.advance(dt_ns)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def test_C_MODE_1_the_advance_plan_is_the_same_in_every_mode() -> None:
    reports: list[PacingReport] = []
    plans: list[list[tuple[int, int]]] = []
    for mode in ALL_MODES:
        clock = RecordingClock(build_scenario()[0])
        wall = FakeWall()
        reports.append(
            run_paced(clock, 50 * MS, mode=mode, source=wall.source, sleep=wall.sleep)  # type: ignore[arg-type]
        )
        plans.append(clock.calls)
    assert [r.mode for r in reports] == list(PacingMode)
    # The very same advance calls, in the same order, whatever the mode.
    assert all(plan == plans[0] for plan in plans)
    assert [r.advances for r in reports] == [len(plans[0])] * len(ALL_MODES)
    assert sum(dt for _, dt in plans[0]) == 50 * MS


def test_C_MODE_1_lag_does_not_change_the_trace() -> None:
    """A host too slow for real time lags, reports it, and still runs the same simulation."""
    until = 40 * MS
    clock, fingerprint = build_scenario()
    wall = FakeWall()

    def slow() -> None:
        wall.t += 50 * MS  # the host spends 50 ms of wall time in this callback

    clock.schedule(6 * MS, slow)
    report = run_paced(clock, until, source=wall.source, sleep=wall.sleep)
    assert len(report.lag_events) == 1

    ci_clock, ci_fingerprint = build_scenario()
    ci_clock.schedule(6 * MS, lambda: None)
    run_paced(ci_clock, until, mode="deterministic_ci")
    assert fingerprint.hexdigest() == ci_fingerprint.hexdigest()


@given(
    periods=st.lists(
        st.tuples(st.integers(MS // 20, 7 * MS), st.integers(0, 5 * MS)), min_size=1, max_size=4
    ),
    shots=st.lists(st.integers(0, 30 * MS), max_size=4),
    step=st.integers(MS // 10, 9 * MS),
    until=st.integers(0, 30 * MS),
)
def test_C_MODE_1_paced_run_equals_one_advance(
    periods: list[tuple[int, int]], shots: list[int], step: int, until: int
) -> None:
    def run(drive: str) -> tuple[list[tuple[int, int]], int]:
        clock = HeapSimClock(1)
        trace: list[tuple[int, int]] = []
        for i, (period, phase) in enumerate(periods):
            clock.schedule_periodic(
                period, partial(lambda i: trace.append((clock.now_ns(), i)), i), phase_ns=phase
            )
        for j, at in enumerate(shots):
            clock.schedule(at, partial(lambda j: trace.append((clock.now_ns(), 100 + j)), j))
        if drive == "advance":
            clock.advance(until)
            return trace, 0
        wall = FakeWall()
        report = run_paced(
            clock, until, step_ns=step, mode=drive, source=wall.source, sleep=wall.sleep
        )
        assert clock.now_ns() == until
        return trace, report.advances

    expected, _ = run("advance")
    ci_trace, ci_advances = run("deterministic_ci")
    paced_trace, paced_advances = run("realtime_paced")
    assert ci_trace == expected
    assert paced_trace == expected
    assert ci_advances == paced_advances


# -- C-MODE-2: pacing stays outside the simulation ------------------------------


@pytest.mark.parametrize("mode", ALL_MODES)
def test_C_MODE_2_only_the_calling_thread_advances_the_clock(mode: str) -> None:
    clock = HeapSimClock(0)
    threads: set[threading.Thread] = set()
    clock.schedule_periodic(MS, lambda: threads.add(threading.current_thread()))
    before = threading.active_count()
    wall = FakeWall()
    run_paced(clock, 10 * MS, mode=mode, source=wall.source, sleep=wall.sleep)
    assert threads == {threading.current_thread()}
    assert threading.active_count() == before


def test_C_MODE_2_deterministic_ci_never_reads_the_wall_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def forbidden(*_args: object) -> int:
        raise AssertionError("deterministic_ci read the wall clock")

    for name in (
        "monotonic_ns",
        "monotonic",
        "perf_counter",
        "perf_counter_ns",
        "time",
        "time_ns",
        "sleep",
    ):
        monkeypatch.setattr(time, name, forbidden)
    clock, fingerprint = build_scenario()
    report = run_paced(
        clock, 50 * MS, rtf=3, mode="deterministic_ci", source=forbidden, sleep=forbidden
    )
    monkeypatch.undo()
    assert report.wall_ns is None
    assert report.achieved_rtf is None
    assert report.lag_events == ()
    assert fingerprint.hexdigest() == reference_fingerprint(50 * MS)


def test_C_MODE_1_unbounded_never_sleeps_and_reads_the_wall_twice() -> None:
    clock, _ = build_scenario()
    wall = FakeWall()
    report = run_paced(clock, 50 * MS, mode="unbounded", source=wall.source, sleep=wall.sleep)
    assert wall.reads == 2
    assert wall.sleeps == []
    assert report.wall_ns == 0


# -- C-SYS-4: what the wall-paced modes pace ----------------------------------------


@pytest.mark.parametrize(
    ("rtf", "expected_ms"),
    [(1, [0, 5, 10, 15, 20]), (2, [0, 2.5, 5, 7.5, 10]), (Fraction(1, 3), [0, 15, 30, 45, 60])],
)
def test_C_SYS_4_realtime_paced_fires_each_entry_at_its_wall_time(
    rtf: int | Fraction, expected_ms: list[float]
) -> None:
    clock = HeapSimClock(0)
    wall = FakeWall()
    seen: list[int] = []
    clock.schedule_periodic(5 * MS, lambda: seen.append(wall.offset()))
    report = run_paced(clock, 20 * MS, rtf=rtf, source=wall.source, sleep=wall.sleep)
    assert seen == [int(ms * MS) for ms in expected_ms]
    assert report.wall_ns == seen[-1]
    assert report.achieved_rtf == pytest.approx(float(rtf))
    assert report.lag_events == ()


def run_with_hiccup(
    mode: str, events: Bus | None = None
) -> tuple[list[tuple[int, int]], PacingReport]:
    """A 5 ms periodic to 20 ms whose firing at 5 ms stalls the wall clock for 30 ms.

    Returns ``(sim ns, wall offset)`` of every firing and the report.
    """
    clock = HeapSimClock(0)
    wall = FakeWall()
    seen: list[tuple[int, int]] = []

    def tick() -> None:
        seen.append((clock.now_ns(), wall.offset()))
        if clock.now_ns() == 5 * MS:
            wall.t += 30 * MS

    clock.schedule_periodic(5 * MS, tick)
    report = run_paced(
        clock, 20 * MS, mode=mode, source=wall.source, sleep=wall.sleep, events=events
    )
    return seen, report


def test_C_SYS_4_realtime_paced_reports_lag_once_and_catches_up() -> None:
    events = Bus()
    published: list[Message] = []
    events.subscribe(EVENTS_TOPIC, published.append)
    seen, report = run_with_hiccup("realtime_paced", events)
    # Behind by 29 ms before the 6 ms step: one event, then no waiting until caught up.
    assert seen == [
        (0, 0),
        (5 * MS, 5 * MS),
        (10 * MS, 35 * MS),
        (15 * MS, 35 * MS),
        (20 * MS, 35 * MS),
    ]
    lag = Event(
        EventKind.PACING_LAG,
        5 * MS,
        {"mode": "realtime_paced", "lag_ns": 29 * MS, "threshold_ns": 20 * MS, "rtf": "1"},
    )
    assert report.lag_events == (lag,)
    assert [(m.stamp_ns, m.payload) for m in published] == [(5 * MS, lag)]
    assert report.unreported == 0
    assert report.max_lag_ns == 29 * MS
    assert report.dropped_ns == 0


def test_C_SYS_4_events_bus_reused_behind_its_last_stamp_does_not_abort_the_run() -> None:
    events = Bus()
    events.publish("/earlier-run", "done", stamp_ns=50 * MS)
    seen, report = run_with_hiccup("realtime_paced", events)
    # The lag at sim 5 ms cannot be stamped on this bus; the run still completes.
    assert [sim for sim, _ in seen] == [0, 5 * MS, 10 * MS, 15 * MS, 20 * MS]
    assert report.sim_end_ns == 20 * MS
    assert [e.details["lag_ns"] for e in report.lag_events] == [29 * MS]
    assert report.unreported == 1
    assert events.next_sequence == 1


def test_C_SYS_4_operator_training_drops_lag_instead_of_bursting() -> None:
    seen, report = run_with_hiccup("operator_training")
    # Re-anchored 29 ms later: the rest keeps real-time spacing after the hiccup.
    assert seen == [
        (0, 0),
        (5 * MS, 5 * MS),
        (10 * MS, 39 * MS),
        (15 * MS, 44 * MS),
        (20 * MS, 49 * MS),
    ]
    assert report.lag_events == (
        Event(
            EventKind.PACING_LAG,
            5 * MS,
            {
                "mode": "operator_training",
                "lag_ns": 29 * MS,
                "threshold_ns": 20 * MS,
                "rtf": "1",
                "dropped_ns": 29 * MS,
            },
        ),
    )
    assert report.dropped_ns == 29 * MS


def test_C_SYS_4_lag_below_the_threshold_is_not_an_event() -> None:
    clock = HeapSimClock(0)
    wall = FakeWall()
    clock.schedule(5 * MS, lambda: setattr(wall, "t", wall.t + 10 * MS))
    report = run_paced(clock, 20 * MS, source=wall.source, sleep=wall.sleep)
    assert report.lag_events == ()
    assert report.max_lag_ns == 9 * MS


def test_C_SYS_4_operator_training_pause_and_rate_change() -> None:
    clock = HeapSimClock(0)
    wall = FakeWall()
    control = PacingControl()
    polls: list[int] = []
    seen: list[int] = []

    def sleep(duration_ns: int) -> None:
        wall.sleep(duration_ns)
        if control.paused:
            polls.append(duration_ns)
            if len(polls) == 3:
                control.set_rtf(2)
                control.resume()

    def tick() -> None:
        seen.append(wall.offset())
        if clock.now_ns() == 10 * MS:
            control.pause()

    clock.schedule_periodic(5 * MS, tick)
    report = run_paced(
        clock, 20 * MS, mode="operator_training", control=control, source=wall.source, sleep=sleep
    )
    # Paused for three 10 ms polls after the 10 ms firing, then twice as fast, no catch-up.
    assert polls == [10 * MS] * 3
    assert seen == [0, 5 * MS, 10 * MS, 42_500_000, 45 * MS]
    assert report.lag_events == ()
    assert control.rtf == 2


def test_C_SYS_4_control_paused_before_the_run_holds_the_first_advance() -> None:
    clock = HeapSimClock(0)
    wall = FakeWall()
    control = PacingControl(rtf=Fraction(1, 2))
    control.pause()
    seen: list[int] = []

    def sleep(duration_ns: int) -> None:
        wall.sleep(duration_ns)
        if control.paused and len(wall.sleeps) == 2:
            control.resume()

    clock.schedule_periodic(5 * MS, lambda: seen.append(wall.offset()))
    run_paced(
        clock,
        10 * MS,
        rtf=4,
        mode="realtime_paced",
        control=control,
        source=wall.source,
        sleep=sleep,
    )
    # Two 10 ms polls, then the control's rate (half speed), not the argument's.
    assert seen == [20 * MS, 30 * MS, 40 * MS]


def test_C_SYS_4_rendered_paces_frames_not_advances() -> None:
    clock = HeapSimClock(0)
    wall = FakeWall()
    fired: list[tuple[int, int]] = []
    frames: list[tuple[int, int]] = []
    clock.schedule_periodic(5 * MS, lambda: fired.append((clock.now_ns(), wall.offset())))
    report = run_paced(
        clock,
        30 * MS,
        mode="rendered",
        step_ns=10 * MS,
        on_frame=lambda ns: frames.append((ns, wall.offset())),
        source=wall.source,
        sleep=wall.sleep,
    )
    # Each frame is computed ahead, then shown at its wall time.
    assert frames == [(10 * MS, 10 * MS), (20 * MS, 20 * MS), (30 * MS, 30 * MS)]
    assert fired == [
        (0, 0),
        (5 * MS, 0),
        (10 * MS, 0),
        (15 * MS, 10 * MS),
        (20 * MS, 10 * MS),
        (25 * MS, 20 * MS),
        (30 * MS, 20 * MS),
    ]
    assert report.frames == 3


def test_C_SYS_4_step_defaults_to_the_clock_grid_and_entries_round_up_to_it() -> None:
    clock = HeapSimClock(0, step_ns=3 * MS)
    wall = FakeWall()
    seen: list[int] = []
    clock.schedule(4 * MS, lambda: seen.append(wall.offset()))
    report = run_paced(clock, 12 * MS, source=wall.source, sleep=wall.sleep)
    # Pacing step = 3 ms (1 ms rounded up to the grid): targets 3, 6, 9, 12 ms.
    assert report.advances == 4
    assert seen == [6 * MS]


def test_C_SYS_4_until_now_makes_one_advance_zero() -> None:
    clock = HeapSimClock(0, start_ns=5 * MS)
    fired: list[int] = []
    clock.schedule(5 * MS, lambda: fired.append(clock.now_ns()))
    wall = FakeWall()
    report = run_paced(clock, 5 * MS, source=wall.source, sleep=wall.sleep)
    assert fired == [5 * MS]
    assert report.advances == 1
    assert (report.sim_start_ns, report.sim_end_ns) == (5 * MS, 5 * MS)


# -- refused calls change nothing -----------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"until_ns": 4 * MS},
            simclock.SimclockValueError,
            r"^until_ns=4000000 is before the clock's now \(5000000 ns\); pass a time >= now$",
        ),
        (
            {"until_ns": 6e6},
            simclock.SimclockTypeError,
            r"^until_ns must be an int of nanoseconds, got float 6000000.0; ",
        ),
        (
            {"mode": "fast"},
            simclock.SimclockValueError,
            r"^mode must be one of unbounded, realtime_paced, deterministic_ci, rendered, "
            r"operator_training; got 'fast'$",
        ),
        ({"mode": 3}, simclock.SimclockTypeError, r"^mode must be a str or PacingMode, got int 3$"),
        (
            {"rtf": 0},
            simclock.SimclockValueError,
            r"^rtf must be > 0 \(1.0 is real time, 2.0 twice as fast\), got 0$",
        ),
        (
            {"rtf": float("nan")},
            simclock.SimclockValueError,
            r"^rtf must be finite and > 0, got nan$",
        ),
        (
            {"rtf": Decimal("sNaN")},
            simclock.SimclockValueError,
            r"^rtf must be finite and > 0, got Decimal\('sNaN'\)$",
        ),
        (
            {"rtf": True},
            simclock.SimclockTypeError,
            r"^rtf must be a positive number \(int, float, Fraction or Decimal\), got bool True$",
        ),
        (
            {"step_ns": 2_500_000},
            simclock.SimclockValueError,
            r"^step_ns=2500000 is not a multiple of the clock's step \(2000000 ns\); "
            r"use a multiple such as 4000000$",
        ),
        (
            {"lag_threshold_ns": 0},
            simclock.SimclockValueError,
            r"^lag_threshold_ns must be > 0 ns, got 0$",
        ),
        (
            {"on_frame": print},
            simclock.SimclockValueError,
            r"^on_frame is only called in mode 'rendered', got mode 'realtime_paced'; ",
        ),
        (
            {"control": PacingControl(), "mode": "deterministic_ci"},
            simclock.SimclockValueError,
            r"^control needs a wall-paced mode \(realtime_paced, rendered, operator_training\), "
            r"got mode 'deterministic_ci'$",
        ),
        (
            {"control": 1},
            simclock.SimclockTypeError,
            r"^control must be a simclock.PacingControl, got 1$",
        ),
        (
            {"events": []},
            simclock.SimclockTypeError,
            r"^events must be a simclock.Bus or None, got \[\]$",
        ),
        ({"source": 1}, simclock.SimclockTypeError, r"^source must be callable, got 1$"),
    ],
)
def test_C_SYS_4_refused_run_changes_nothing(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    clock = HeapSimClock(0, start_ns=5 * MS, step_ns=2 * MS)
    fired: list[int] = []
    clock.schedule(5 * MS, lambda: fired.append(1))
    wall = FakeWall()
    args: dict[str, object] = {"until_ns": 20 * MS, "sleep": wall.sleep}
    args.setdefault("source", wall.source)
    args.update(kwargs)
    with pytest.raises(error, match=message):
        run_paced(clock, **args)  # type: ignore[arg-type]
    assert clock.now_ns() == 5 * MS
    assert fired == []
    assert wall.reads == 0
    assert wall.sleeps == []


@pytest.mark.parametrize(
    ("clock", "name"), [("clock", "str"), (simclock.MonotonicClock(0), "MonotonicClock")]
)
def test_C_SYS_4_a_clock_that_is_not_a_simclock_is_refused(clock: object, name: str) -> None:
    wall = FakeWall()
    with pytest.raises(
        simclock.SimclockTypeError,
        match=rf"^clock must be a SimClock \(with advance and schedule\), got {name}; "
        r"a free-running SystemClock needs no pacing: use schedule_periodic_thread$",
    ):
        run_paced(clock, 10 * MS, source=wall.source, sleep=wall.sleep)  # type: ignore[arg-type]
    assert (wall.reads, wall.sleeps) == (0, [])


def test_C_SYS_4_the_clock_check_knows_every_protocol_method_and_never_caches_a_refusal() -> None:
    """The cached type check of run_paced answers as ``isinstance(clock, SimClock)``."""
    from simclock.core._protocols import SimClock
    from simclock.realtime import _pacing

    methods = {name for name in vars(SimClock) if not name.startswith("_")}
    assert set(_pacing._SIMCLOCK_METHODS) == methods

    class Attached:
        """Every method as an instance attribute: a SimClock, but not by its type."""

        def __init__(self, clock: simclock.HeapSimClock) -> None:
            for name in methods:
                setattr(self, name, getattr(clock, name))

    attached = Attached(simclock.HeapSimClock(0))
    assert _pacing._is_simclock(attached) and Attached not in _pacing._SIMCLOCK_TYPES
    half = Attached(simclock.HeapSimClock(0))
    delattr(half, "advance")
    assert not _pacing._is_simclock(half)
    heap = simclock.HeapSimClock(0)
    assert _pacing._is_simclock(heap) and _pacing._is_simclock(heap)
    assert type(heap) in _pacing._SIMCLOCK_TYPES
    for _ in range(2):  # a refusal is asked again every time, never remembered
        with pytest.raises(simclock.SimclockTypeError, match=r"^clock must be a SimClock "):
            run_paced(half, 10 * MS)  # type: ignore[arg-type]


def test_C_SYS_4_pacing_control_refuses_a_bad_rate_and_keeps_the_old_one() -> None:
    control = PacingControl(Fraction(1, 2))
    with pytest.raises(simclock.SimclockValueError, match=r"^rtf must be > 0 "):
        control.set_rtf(-1)
    assert control.rtf == Fraction(1, 2)
    assert not control.paused


@pytest.mark.parametrize("mode", ALL_MODES)
def test_C_MODE_1_grid_backend_trace_is_the_same_in_every_mode(mode: str) -> None:
    def run(drive: str | None) -> list[tuple[str, int, int]]:
        clock = simclock.GridClock(3, 2 * MS, default_policy="next_boundary")
        trace: list[tuple[str, int, int]] = []
        clock.schedule_periodic(7 * MS, lambda: trace.append(("p7", clock.now_ns(), 0)))
        clock.schedule(5 * MS, lambda: clock.bus.publish("/once", {"t": clock.now_ns()}))
        clock.bus.subscribe(None, lambda m: trace.append((m.topic, m.stamp_ns, m.sequence)))
        if drive is None:
            clock.advance(41 * MS)
        else:
            wall = FakeWall()
            run_paced(clock, 41 * MS, mode=drive, source=wall.source, sleep=wall.sleep)
        assert clock.now_ns() == 41 * MS
        return trace

    expected = run(None)
    # C-GRID-2: a 7 ms period on a 2 ms grid runs at 0, 8, 14, 22, 28, 36 ms.
    assert [t for label, t, _ in expected if label == "p7"] == [
        0,
        8 * MS,
        14 * MS,
        22 * MS,
        28 * MS,
        36 * MS,
    ]
    assert run(mode) == expected
