"""One wall-clock reference per paced run (SPEC §4 C-SYS-4, §11 C-MODE-1): ``PacingReference``.

The wall clock is a fake (reads cost nothing, ``sleep`` moves it by exactly
the duration asked, a test moves it to stage a stall), so every assertion is
an exact wall instant and no test measures a real duration.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from simclock import (
    Event,
    EventKind,
    HeapSimClock,
    PacingControl,
    PacingReference,
    run_paced,
)
from simclock.sim._scenario import run_scenario
from simclock.sim._scenario_file import load_scenario

MS = 1_000_000


class FakeWall:
    """Wall time that only moves when slept on (or when a test moves it)."""

    def __init__(self, start: int = 1_000 * MS) -> None:
        self.t = start
        self.start = start

    def source(self) -> int:
        return self.t

    def sleep(self, duration_ns: int) -> None:
        self.t += duration_ns

    def offset(self) -> int:
        return self.t - self.start


def _chunked(wall: FakeWall, reference: PacingReference | None) -> tuple[int, list[Event]]:
    """1 s of sim time in 100 ms ``run_paced`` calls with a 150 ms stall at 500 ms."""
    clock = HeapSimClock(0)

    def stall() -> None:
        wall.t += 150 * MS

    clock.schedule(500 * MS, stall)
    lag: list[Event] = []
    while clock.now_ns() < 1_000 * MS:
        report = run_paced(
            clock,
            clock.now_ns() + 100 * MS,
            source=wall.source,
            sleep=wall.sleep,
            reference=reference,
        )
        lag = list(report.lag_events) if reference is not None else lag + list(report.lag_events)
    return wall.offset(), lag


def test_C_SYS_4_one_reference_catches_up_a_stall_across_chunks() -> None:
    wall = FakeWall()
    end, lag = _chunked(wall, PacingReference())
    # Sim 1 s is due at wall 1 s after the start: the 150 ms stall is caught up.
    assert end == 1_000 * MS
    assert lag == [
        Event(
            EventKind.PACING_LAG,
            500 * MS,
            {"mode": "realtime_paced", "lag_ns": 149 * MS, "threshold_ns": 20 * MS, "rtf": "1"},
        )
    ]


def test_C_SYS_4_negative_control_a_fresh_reference_per_chunk_never_catches_up() -> None:
    # The pre-fix behaviour, kept as a control: each call re-anchors, so the run
    # ends late by the stall (minus what the stalled chunk itself absorbed).
    wall = FakeWall()
    end, _ = _chunked(wall, None)
    assert end > 1_100 * MS


def test_C_SYS_4_reference_report_covers_the_whole_run() -> None:
    wall = FakeWall()
    clock = HeapSimClock(0)
    reference = PacingReference()
    assert not reference.started
    first = run_paced(clock, 30 * MS, source=wall.source, sleep=wall.sleep, reference=reference)
    assert reference.started
    second = run_paced(clock, 50 * MS, source=wall.source, sleep=wall.sleep, reference=reference)
    assert (first.sim_start_ns, first.sim_end_ns, first.wall_ns, first.advances) == (
        0,
        30 * MS,
        30 * MS,
        30,
    )
    assert (second.sim_start_ns, second.sim_end_ns, second.wall_ns, second.advances) == (
        0,
        50 * MS,
        50 * MS,
        50,
    )
    assert second.achieved_rtf == 1.0


def test_C_SYS_4_reference_refuses_another_mode_or_rtf_and_changes_nothing() -> None:
    wall = FakeWall()
    clock = HeapSimClock(0)
    reference = PacingReference()
    run_paced(clock, 10 * MS, source=wall.source, sleep=wall.sleep, reference=reference)
    for kwargs, text in (
        ({"rtf": 2}, "mode 'realtime_paced' and rtf 2"),
        ({"mode": "unbounded"}, "mode 'unbounded' and rtf 1"),
    ):
        with pytest.raises(
            ValueError,
            match="^"
            + text
            + r" differ from the reference's first call \(mode 'realtime_paced', rtf 1\); "
            "one reference is one run: pass the same mode and rtf, or a new PacingReference$",
        ):
            run_paced(
                clock, 20 * MS, source=wall.source, sleep=wall.sleep, reference=reference, **kwargs
            )
        assert clock.now_ns() == 10 * MS
    with pytest.raises(
        TypeError, match=r"^reference must be a simclock.PacingReference or None, got 3$"
    ):
        run_paced(clock, 20 * MS, reference=3)  # type: ignore[arg-type]


def test_C_SYS_4_report_rtf_is_the_factor_in_force() -> None:
    wall = FakeWall()
    clock = HeapSimClock(0)
    control = PacingControl(rtf=1)

    def speed_up() -> None:
        control.set_rtf(Fraction(5, 2))

    clock.schedule(3 * MS, speed_up)
    report = run_paced(clock, 10 * MS, source=wall.source, sleep=wall.sleep, control=control, rtf=1)
    assert report.rtf == Fraction(5, 2)
    # Modes that do not pace have no factor in force.
    assert run_paced(HeapSimClock(0), MS, mode="deterministic_ci").rtf is None
    unbounded = run_paced(HeapSimClock(0), MS, mode="unbounded", source=wall.source)
    assert unbounded.rtf is None


SCENARIO = """
seed = 3
mode = "realtime_paced"
duration = "1 s"

[physics]
step = "10 ms"

[devices.imu]
period = "50 ms"
dim = 1
"""


def test_C_SYS_4_run_scenario_keeps_one_reference_and_reports_lag(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO, encoding="utf-8")
    scenario = load_scenario(path)
    wall = FakeWall()

    def progress(done_ns: int, total_ns: int) -> None:
        if done_ns == 500 * MS:
            # A 150 ms stall of the host between two chunks: 140 ms behind at the
            # next 10 ms step, which is due at 510 ms.
            wall.t += 150 * MS

    result = run_scenario(scenario, progress=progress, source=wall.source, sleep=wall.sleep)
    assert result.end_ns == 1_000 * MS
    assert wall.offset() == 1_000 * MS  # caught up, not 1 150 ms
    pacing = result.pacing
    assert pacing is not None
    assert (pacing.rtf, pacing.wall_ns, pacing.max_lag_ns) == (Fraction(1), 1_000 * MS, 140 * MS)
    assert [(e.at_ns, e.details["lag_ns"]) for e in pacing.lag_events] == [(500 * MS, 140 * MS)]
    # The trace does not depend on pacing (C-MODE-1).
    assert result.fingerprint == run_scenario(scenario, mode="deterministic_ci").fingerprint
