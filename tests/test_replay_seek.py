"""``ReplayClock.seek`` has one meaning: the core's ``skip_to`` (SPEC §5, C-REP-1, C-X-STATS).

A run of ``advance``/``seek`` calls is checked against one replay of the
same file from the start: it shows exactly the from-start trace minus what
lies in the skipped windows, and minus what a skipped message caused (a
subscriber's derived, future-stamped publish). Control callbacks registered
before the first call count the firings a seek dropped as ``skipped``:
``fired + skipped`` equals the from-start ``fired``. Both a simclock
recording (seek jumps chunks) and a foreign file (seek reads through) are
checked, on whichever core build loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcap.writer import Writer

from simclock import Bus, HeapSimClock, Message, PeriodicStats, Recorder, ReplayClock

END = 60
FAR = 250  # past the end and past every time the ops can reach
# (time, what, cause): cause is the time of the recorded message that led to it.
Item = tuple[int, str, int]


def _live_run(bus: Bus) -> None:
    clock = HeapSimClock(3, bus=bus)
    clock.schedule_periodic(3, lambda: bus.publish("/a", clock.now_ns()), phase_ns=1)
    clock.schedule_periodic(5, lambda: bus.publish("/b", clock.now_ns()))
    for t in (7, 7, 20, 41):
        clock.schedule(t, lambda: bus.publish("/c", clock.now_ns()))
    clock.advance(END)


@pytest.fixture(scope="module", params=["simclock", "foreign"])
def recording(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("seek") / f"{request.param}.mcap"
    bus = Bus()
    if request.param == "simclock":
        # Small chunks, so a seek lands in the middle of the file's chunks.
        with Recorder(path, bus, seed=3, chunk_size=256):
            _live_run(bus)
        return path
    seen: list[Message] = []
    bus.subscribe(None, seen.append)
    _live_run(bus)
    with path.open("wb") as f:
        writer = Writer(f, chunk_size=256)
        writer.start()
        channels = {
            topic: writer.register_channel(topic, "json", 0) for topic in ("/a", "/b", "/c")
        }
        for m in seen:
            data = json.dumps(m.payload).encode()
            writer.add_message(channels[m.topic], m.stamp_ns, data, m.stamp_ns)
        writer.finish()  # type: ignore[no-untyped-call]
    return path


class _Run:
    """One ReplayClock with a fixed set of subscribers and control callbacks."""

    def __init__(self, path: Path) -> None:
        self.clock = clock = ReplayClock(path, callbacks=True)
        self.trace: list[Item] = []
        clock.bus.subscribe("/a", self._derive)
        clock.bus.subscribe(None, self._note)
        self.handles = [
            clock.schedule_periodic(4, self._tick("p4"), phase_ns=2),
            clock.schedule_periodic(7, self._tick("p7")),
            clock.schedule(13, self._tick("once13")),
            clock.schedule(30, self._tick("once30")),
        ]

    def _note(self, m: Message) -> None:
        assert self.clock.now_ns() == m.stamp_ns
        cause = m.payload["from"] if m.topic == "/derived" else m.stamp_ns
        self.trace.append((m.stamp_ns, m.topic, cause))

    def _derive(self, m: Message) -> None:
        # A future-stamped publish: a deferred delivery, an entry of the core.
        self.clock.bus.publish("/derived", {"from": m.stamp_ns}, stamp_ns=m.stamp_ns + 2)

    def _tick(self, name: str) -> Any:
        def tick() -> None:
            now = self.clock.now_ns()
            self.trace.append((now, name, now))

        return tick

    def stats(self) -> list[PeriodicStats]:
        return [h.stats() for h in self.handles]


_FROM_START: dict[Path, tuple[list[Item], list[PeriodicStats]]] = {}


def _from_start(path: Path) -> tuple[list[Item], list[PeriodicStats]]:
    """The trace and stats of one replay of ``path`` from the start (computed once)."""
    if path not in _FROM_START:
        run = _Run(path)
        with run.clock:
            run.clock.advance(FAR)
            _FROM_START[path] = (run.trace, run.stats())
    return _FROM_START[path]


ops = st.lists(
    st.one_of(
        st.tuples(st.just("advance"), st.integers(0, 12)),
        st.tuples(st.just("seek"), st.integers(0, 25)),
    ),
    max_size=8,
)


@settings(max_examples=40, deadline=None)
@given(ops=ops)
def test_C_REP_1_seek_shows_the_from_start_trace_minus_the_skipped_windows(
    recording: Path, ops: list[tuple[str, int]]
) -> None:
    full, full_stats = _from_start(recording)
    run = _Run(recording)
    clock = run.clock
    skipped: list[tuple[int, int]] = []  # closed windows [lo, hi] that were skipped
    done = clock.now_ns() - 1  # every time <= done has been handled
    with clock:
        for op, arg in ops:
            if op == "advance":
                clock.advance(arg)
                done = clock.now_ns()
            else:
                t = clock.now_ns() + arg
                clock.seek(t)
                assert clock.now_ns() == t
                if t - 1 > done:
                    skipped.append((done + 1, t - 1))
                    done = t - 1
        clock.advance(FAR - clock.now_ns())
        stats = run.stats()

    def kept(t: int) -> bool:
        return not any(lo <= t <= hi for lo, hi in skipped)

    assert run.trace == [item for item in full if kept(item[0]) and kept(item[2])]
    for got, whole in zip(stats, full_stats, strict=True):
        assert got.fired + got.skipped == whole.fired
        assert got.failed == whole.failed == 0
    # Every firing counted as skipped lies in a skipped window (and none outside one).
    names = ["p4", "p7", "once13", "once30"]
    for name, got in zip(names, stats, strict=True):
        dropped = [t for t, what, _ in full if what == name and not kept(t)]
        assert got.skipped == len(dropped), name


def test_C_REP_1_seek_drops_a_deferred_delivery_due_before_the_target(recording: Path) -> None:
    run = _Run(recording)
    with run.clock as clock:
        clock.advance(1)  # /a at 1 publishes /derived at 3
        clock.seek(5)
        clock.advance(0)
        assert clock.next_event_ns() == 6
    assert [item for item in run.trace if item[1] == "/derived"] == []
    assert run.trace[-1][0] == 5
