"""``ReplayClock(callbacks=True)``: what the conformance suite does not already check.

Issue 11 item 2 / issue 12: the replay clock runs its callbacks on the one
scheduling core (a composed HeapSimClock), so it is held to every clause of
SPEC §1-§3, C-X-PEEK and the oracle state machine (``SM-ORACLE``). That run
is the ``replay`` row of the self-check (``backends.replay_clock:factory``,
tests/test_conformance_selfcheck.py), its one home; this file keeps the
replay-specific checks: ``stats()`` inside a callback (C-X-STATS) and the
order of recorded messages against callbacks (C-REP-1).
"""

from __future__ import annotations

from pathlib import Path

from simclock import Bus, HeapSimClock, Recorder, ReplayClock


def _stats_trace(clock: HeapSimClock | ReplayClock) -> list[tuple[int, int]]:
    seen: list[tuple[int, int]] = []
    handle = None

    def tick() -> None:
        assert handle is not None
        seen.append((clock.now_ns(), handle.stats().fired))

    handle = clock.schedule_periodic(5, tick, phase_ns=5)
    clock.advance(15)
    return seen


def test_C_X_STATS_fired_inside_a_periodic_callback_counts_the_running_firing(
    tmp_path: Path,
) -> None:
    # It read 0, 1, 2 on ReplayClock(callbacks=True) and 1, 2, 3 on HeapSimClock.
    path = tmp_path / "run.mcap"
    bus = Bus()
    with Recorder(path, bus, seed=1):
        live = HeapSimClock(1, bus=bus)
        live.schedule(7, lambda: bus.publish("/a", 1))
        live.advance(20)
    with ReplayClock(path, callbacks=True) as replay:
        got = _stats_trace(replay)
    assert got == _stats_trace(HeapSimClock(0)) == [(5, 1), (10, 2), (15, 3)]


def test_C_REP_1_recorded_messages_first_then_callbacks_at_a_shared_instant(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.mcap"
    bus = Bus()
    with Recorder(path, bus, seed=1):
        live = HeapSimClock(1, bus=bus)
        for t in (3, 6, 6, 9):
            live.schedule(t, lambda: bus.publish("/a", live.now_ns()))
        live.advance(10)
    order: list[tuple[str, int]] = []
    with ReplayClock(path, callbacks=True) as replay:
        replay.bus.subscribe("/a", lambda m: order.append(("msg", m.stamp_ns)))
        for t in (2, 6, 7):
            replay.schedule(t, lambda: order.append(("cb", replay.now_ns())))
        replay.schedule_periodic(3, lambda: order.append(("tick", replay.now_ns())), phase_ns=0)
        replay.advance(9)
        assert replay.now_ns() == 9
    assert order == [
        ("tick", 0),
        ("cb", 2),
        ("msg", 3),
        ("tick", 3),
        ("msg", 6),
        ("msg", 6),
        ("cb", 6),
        ("tick", 6),
        ("cb", 7),
        ("msg", 9),
        ("tick", 9),
    ]
