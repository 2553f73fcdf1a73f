"""``simclock run``'s progress bar: only on a terminal, only after 1 s of wall time."""

from __future__ import annotations

import io

from rich.console import Console

from simclock.cli._run import _Progress


def test_progress_appears_after_one_second_of_wall_time_only() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    wall = iter([0, 500_000_000, 1_000_000_000, 1_050_000_000, 1_200_000_000])
    progress = _Progress("simclock run demo", True, console=console, wall_ns=lambda: next(wall))
    progress(1_000_000_000, 10_000_000_000)  # 0.5 s of wall time: nothing yet
    assert not progress.shown
    assert out.getvalue() == ""
    progress(2_000_000_000, 10_000_000_000)  # 1 s: the bar appears
    assert progress.shown
    assert "2 s / 10 s simulated" in out.getvalue()
    progress(3_000_000_000, 10_000_000_000)  # 50 ms later: not redrawn
    assert "3 s / 10 s simulated" not in out.getvalue()
    progress(4_000_000_000, 10_000_000_000)
    assert "4 s / 10 s simulated" in out.getvalue()
    progress.close()


def test_progress_never_shown_off_terminal_or_when_disabled() -> None:
    calls: list[int] = []

    def wall() -> int:
        calls.append(0)
        return 5_000_000_000 * len(calls)

    quiet = _Progress(
        "x", True, console=Console(file=io.StringIO(), force_terminal=False), wall_ns=wall
    )
    off = _Progress(
        "x", False, console=Console(file=io.StringIO(), force_terminal=True), wall_ns=wall
    )
    for progress in (quiet, off):
        progress(1, 2)
        assert not progress.shown
