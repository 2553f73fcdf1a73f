"""Conformance tests of SPEC §5 (C-REP-1..4) for replay backends.

A **replay backend** is ``REPLAY(path: str, bus: simclock.Bus, callbacks: bool)
-> SimClock``: a clock that replays the recording at ``path`` (written by
:class:`simclock.Recorder`), delivering its messages to ``bus`` and running
control callbacks only when ``callbacks`` is true. The suite makes its
recordings itself, with the reference :class:`simclock.HeapSimClock`, so a
replay backend is judged against what really happened.

Two ways to run it:

* with the plugin, naming this file: ``pytest --simclock-backend
  simclock_conformance.clauses._replay_clauses:replay_backend -k C_REP
  conformance/simclock_conformance/clauses/_replay_clauses.py`` (simclock runs this for
  :class:`simclock.ReplayClock` in ``tests/test_replay_conformance.py``). The
  backend's ``FACTORY`` carries the replay factory as ``FACTORY.replay``; for
  a backend without it every C-REP test is skipped as *not applicable*;
* in a project's tests: subclass :class:`ReplayConformance` in a ``Test*``
  class and override the ``replay_factory`` fixture. Importing this module
  registers the C-REP clauses in the process-wide registry of
  :mod:`conformance`.

This module is not a ``_suite_*.py`` file, so ``python -m simclock_conformance`` does
not collect it: the runner reports one group per backend and a second suite
class would split the report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from simclock import (
    EVENTS_TOPIC,
    Bus,
    Event,
    EventKind,
    HeapSimClock,
    Message,
    RandomSource,
    Recorder,
    ReplayClock,
    SeededRandomSource,
    SimClock,
    SimclockError,
)
from simclock_conformance.clauses._clauses import register_clauses
from simclock_conformance.kit._harness import NOT_APPLICABLE, load_factory

__all__ = [
    "REPLAY_CLAUSES",
    "ReplayConformance",
    "ReplayFactory",
    "TestReplayBackend",
    "record_reference",
    "replay_backend",
]

ReplayFactory = Callable[[str, Bus, bool], SimClock]
"""``REPLAY(path, bus, callbacks) -> SimClock``: how the suite opens a recording."""

REPLAY_CLAUSES = (
    (
        "C-REP-1",
        "§5",
        "advance(dt) reproduces the recorded messages in (now, now+dt] in total order",
    ),
    ("C-REP-2", "§5", "control callbacks run only when replay is created with callbacks on"),
    ("C-REP-3", "§5", "random_source() refuses unless draws were persisted; then replays them"),
    ("C-REP-4", "§5", "a HeapSimClock run recorded and replayed gives the identical messages"),
)
# Optional: a plain event clock is not a replay backend ("not applicable", C-CONF-1).
register_clauses(REPLAY_CLAUSES, optional=True)

SEED = 11
END_NS = 60


def _replay_clock(path: str, bus: Bus, callbacks: bool) -> SimClock:
    return ReplayClock(path, bus=bus, callbacks=callbacks)


def replay_backend(seed: int, bus: Bus) -> SimClock:
    """simclock's replay backend: HeapSimClock records, :class:`simclock.ReplayClock` replays.

    ``pytest --simclock-backend simclock_conformance.clauses._replay_clauses:replay_backend -k C_REP
    conformance/simclock_conformance/clauses/_replay_clauses.py`` runs the C-REP tests on it.

    ``replay_backend.replay`` is the replay factory the C-REP tests use; the
    clock clauses run on the recording clock itself.
    """
    return HeapSimClock(seed, bus=bus)


replay_backend.replay = _replay_clock  # type: ignore[attr-defined]


def _scenario(clock: HeapSimClock, root: RandomSource) -> None:
    """Several topics, equal stamps, a future stamp, callback failures and draws."""
    bus = clock.bus
    noise = root.child("sensor/noise")
    pick = root.child("pick")

    def sensor() -> None:
        bus.publish("/sensor", {"t": clock.now_ns(), "z": noise.normal(0.0, 1.0)})

    def control() -> None:
        k = pick.integers(0, 10)
        bus.publish("/control", [clock.now_ns(), k])
        bus.publish("/control/echo", {"k": k}, stamp_ns=clock.now_ns() + 2)

    def fail() -> None:
        raise RuntimeError(f"failed at {clock.now_ns()}")

    clock.schedule_periodic(5, sensor)
    clock.schedule_periodic(10, control, 5)  # shares 5, 15, 25, ... with the sensor
    clock.schedule_periodic(20, fail, 10)
    clock.schedule(30, lambda: bus.publish("/once", None))


def record_reference(path: Path, *, draws: bool) -> tuple[list[Message], list[Any]]:
    """Record :func:`_scenario` with HeapSimClock; return its bus trace and its draws."""
    bus = Bus()
    live: list[Message] = []
    drawn: list[Any] = []
    with Recorder(path, bus, seed=SEED, record_draws=draws) as rec:
        clock = HeapSimClock(SEED, bus=bus)
        bus.subscribe(None, live.append)
        observer = rec.draw_observer

        def watch(label: str, method: str, args: tuple[Any, ...], value: Any) -> None:
            drawn.append((label, method, value))
            if observer is not None:
                observer(label, method, args, value)

        _scenario(clock, SeededRandomSource(SEED, observer=watch))
        clock.advance(END_NS)
    return live, drawn


class ReplayConformance:
    """The C-REP clause tests of a replay backend (SPEC §5).

    Override ``replay_factory`` (a fixture returning ``REPLAY(path, bus,
    callbacks) -> SimClock``) in a subclass named ``Test...``.
    """

    __conformance_suite__ = True
    """Marks the suite base: the report names tests a subclass overrides (C-CONF-1)."""

    @pytest.fixture
    def replay_factory(self, request: pytest.FixtureRequest) -> ReplayFactory:
        """The replay backend; by default ``FACTORY.replay`` of ``--simclock-backend``."""
        spec = request.config.getoption("simclock_backend", default=None)
        if not spec:
            pytest.skip("no backend: pass --simclock-backend MODULE:FACTORY")
        replay = getattr(load_factory(str(spec)), "replay", None)
        if not callable(replay):
            pytest.skip(
                f"{NOT_APPLICABLE}: {spec} is not a replay backend (its FACTORY has no "
                "callable .replay(path, bus, callbacks)); C-REP-* apply to replay backends only"
            )
        factory: ReplayFactory = replay
        return factory

    @pytest.fixture(scope="class")
    @classmethod
    def recorded(
        cls, tmp_path_factory: pytest.TempPathFactory
    ) -> tuple[str, list[Message], list[Any]]:
        """A reference recording with persisted draws: (path, live trace, draws)."""
        path = tmp_path_factory.mktemp("replay") / "reference.mcap"
        live, drawn = record_reference(path, draws=True)
        return str(path), live, drawn

    @staticmethod
    def _open(
        factory: ReplayFactory, path: str, *, callbacks: bool = False
    ) -> tuple[SimClock, Bus, list[tuple[Message, int]]]:
        bus = Bus()
        clock = factory(path, bus, callbacks)
        got: list[tuple[Message, int]] = []
        bus.subscribe(None, lambda m: got.append((m, clock.now_ns())))
        return clock, bus, got

    # -- C-REP-1 -----------------------------------------------------------

    @pytest.mark.parametrize("steps", [(0, 5, 0, 1, 4, 10, 40), (60,), (1,) * 61, (3, 7, 2, 2, 46)])
    def test_C_REP_1_each_advance_replays_exactly_its_window(
        self,
        replay_factory: ReplayFactory,
        recorded: tuple[str, list[Message], list[Any]],
        steps: tuple[int, ...],
    ) -> None:
        path, live, _ = recorded
        clock, _bus, got = self._open(replay_factory, path)
        assert clock.now_ns() == 0, f"C-REP-1: replay starts at {clock.now_ns()}, expected 0"
        first = True
        for dt in steps:
            before = clock.now_ns()
            mark = len(got)
            clock.advance(dt)
            assert clock.now_ns() == before + dt, "C-REP-1: now is not now+dt after advance"
            window = [m for m, _ in got[mark:]]
            expected = [
                m
                for m in live
                if (before <= m.stamp_ns if first else before < m.stamp_ns)
                and m.stamp_ns <= before + dt
            ]
            assert window == expected, (
                f"C-REP-1: advance({dt}) from {before} delivered "
                f"{[(m.stamp_ns, m.sequence) for m in window]}, expected "
                f"{[(m.stamp_ns, m.sequence) for m in expected]}"
            )
            first = False
        late = [(m.sequence, m.stamp_ns, now) for m, now in got if now != m.stamp_ns]
        assert late == [], f"C-REP-1: now_ns() differs from the stamp during delivery: {late}"

    def test_C_REP_1_total_order_at_equal_stamps(
        self, replay_factory: ReplayFactory, recorded: tuple[str, list[Message], list[Any]]
    ) -> None:
        path, _, _ = recorded
        clock, _bus, got = self._open(replay_factory, path)
        clock.advance(END_NS)
        keys = [(m.stamp_ns, m.sequence) for m, _ in got]
        assert keys == sorted(keys), f"C-REP-1: not in (stamp, sequence) order: {keys}"
        assert len({s for s, _ in keys}) < len(keys), "the reference must have equal stamps"

    # -- C-REP-2 -----------------------------------------------------------

    def test_C_REP_2_callbacks_do_not_run_unless_enabled(
        self, replay_factory: ReplayFactory, recorded: tuple[str, list[Message], list[Any]]
    ) -> None:
        path, live, _ = recorded
        clock, _bus, got = self._open(replay_factory, path)
        ran: list[int] = []
        clock.schedule(7, lambda: ran.append(clock.now_ns()))
        clock.schedule_periodic(4, lambda: ran.append(clock.now_ns()))
        clock.advance(END_NS)
        assert ran == [], f"C-REP-2: callbacks ran without callbacks enabled at {ran}"
        assert [m for m, _ in got] == live, "C-REP-2: disabled callbacks changed the messages"

    def test_C_REP_2_callbacks_run_when_enabled(
        self, replay_factory: ReplayFactory, recorded: tuple[str, list[Message], list[Any]]
    ) -> None:
        path, live, _ = recorded
        clock, _bus, got = self._open(replay_factory, path, callbacks=True)
        ran: list[int] = []
        clock.schedule(7, lambda: ran.append(clock.now_ns()))
        clock.schedule_periodic(25, lambda: ran.append(clock.now_ns()))
        clock.advance(END_NS)
        assert ran == [0, 7, 25, 50], f"C-REP-2: enabled callbacks fired at {ran}"
        assert [m for m, _ in got] == live, "C-REP-2: callbacks changed the recorded messages"

    # -- C-REP-3 -----------------------------------------------------------

    def test_C_REP_3_no_numbers_without_persisted_draws(
        self, replay_factory: ReplayFactory, tmp_path: Path
    ) -> None:
        path = tmp_path / "nodraws.mcap"
        record_reference(path, draws=False)
        clock, _bus, _got = self._open(replay_factory, str(path))
        with pytest.raises(SimclockError):
            clock.random_source().uniform(0.0, 1.0)

    def test_C_REP_3_persisted_draws_come_back_per_label(
        self, replay_factory: ReplayFactory, recorded: tuple[str, list[Message], list[Any]]
    ) -> None:
        path, _, drawn = recorded
        clock, _bus, _got = self._open(replay_factory, path)
        root = clock.random_source()
        # Draw the labels in another interleaving than the run: only per-label order counts.
        pick = root.child("pick")
        noise = root.child("sensor").child("noise")
        picks = [v for label, _m, v in drawn if label == "/pick"]
        noises = [v for label, _m, v in drawn if label == "/sensor/noise"]
        # Not the recorded draw (another method): refused, and the log is not consumed.
        with pytest.raises(SimclockError):
            pick.uniform(0.0, 10.0)
        assert [pick.integers(0, 10) for _ in picks] == picks, "C-REP-3: /pick draws differ"
        assert [noise.normal(0.0, 1.0) for _ in noises] == noises, "C-REP-3: noise differs"
        with pytest.raises(SimclockError):
            pick.integers(0, 10)  # the log ran out
        with pytest.raises(SimclockError):
            root.child("never").uniform(0.0, 1.0)  # a label that was never drawn

    # -- C-REP-4 -----------------------------------------------------------

    def test_C_REP_4_round_trip_is_identical(
        self, replay_factory: ReplayFactory, recorded: tuple[str, list[Message], list[Any]]
    ) -> None:
        path, live, _ = recorded
        clock, _bus, got = self._open(replay_factory, path)
        clock.advance(END_NS)
        replayed = [m for m, _ in got]
        for i, (a, b) in enumerate(zip(live, replayed, strict=False)):
            assert a == b, f"C-REP-4: message {i} differs: recorded {a}, replayed {b}"
        assert len(replayed) == len(live), (
            f"C-REP-4: {len(replayed)} messages replayed, {len(live)} recorded"
        )
        failure = Event(
            EventKind.SCHEDULER_CALLBACK_FAILED,
            10,
            {
                "callback": "_scenario.<locals>.fail",
                "error_type": "RuntimeError",
                "error_message": "failed at 10",
            },
        )
        assert any(m.topic == EVENTS_TOPIC and m.payload == failure for m in replayed), (
            "C-REP-4: the callback failure event did not come back as an Event"
        )


class TestReplayBackend(ReplayConformance):
    """Collected when this file is named: ``FACTORY.replay`` of ``--simclock-backend``."""
