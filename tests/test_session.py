"""Sessions, episodes and seeds (SPEC §9-§10, C-EP-1..2, C-SEED-1..2)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pytest

from simclock import EVENTS_TOPIC, Event, EventKind, Message, RandomSource, SeededRandomSource
from simclock.sim._devices import SensorSpec
from simclock.sim._grid import GridClock
from simclock.sim._session import Session, clock_payload, component_stream, episode_seed

MS = 1_000_000


def _noise(noise: RandomSource) -> Sequence[float]:
    return [noise.normal(0.0, 1.0), noise.uniform(-1.0, 1.0)]


def _session(seed: int, devices: Sequence[str] = ("imu0",), **kwargs: object) -> Session:
    session = Session(GridClock(seed, 2 * MS), **kwargs)  # type: ignore[arg-type]
    for device in devices:
        session.add_sensor(SensorSpec(device, 7 * MS, latency_ns=3 * MS), _noise)
    return session


def _values(session: Session, device: str) -> list[tuple[int, tuple[float, ...]]]:
    return [
        (s.acquisition_ns - s.episode_start_ns, s.values)
        for s in session.samples
        if s.device == device
    ]


def test_C_EP_1_reset_sets_episode_time_to_zero_session_time_never_goes_back() -> None:
    session = _session(1)
    assert (session.episode, session.episode_time_ns(), session.session_time_ns()) == (-1, 0, 0)
    session.advance(10 * MS)
    assert (session.episode, session.episode_time_ns(), session.session_time_ns()) == (
        0,
        10 * MS,
        10 * MS,
    )
    session.reset_episode()
    assert (session.episode, session.episode_time_ns(), session.session_time_ns()) == (
        1,
        0,
        10 * MS,
    )
    assert session.episode_start_ns == 10 * MS
    session.advance(4 * MS)
    assert (session.episode_time_ns(), session.session_time_ns()) == (4 * MS, 14 * MS)
    # The new episode's schedule restarts from its own 0: acquisitions at episode 0, 7->8 ms.
    ep1 = [s for s in session.samples if s.episode == 1]
    assert [(s.nominal_acquisition_ns, s.acquisition_ns, s.delivery_ns) for s in ep1] == [
        (10 * MS, 10 * MS, 14 * MS)
    ]


def test_C_EP_2_clock_topic_carries_session_time_across_resets() -> None:
    session = _session(1)
    stamps: list[tuple[int, object]] = []
    session.bus.subscribe("/clock", lambda m: stamps.append((m.stamp_ns, m.payload)))
    session.advance(4 * MS)
    session.reset_episode()
    session.advance(4 * MS)
    session.reset_episode(seed=3)
    session.advance(2 * MS)
    assert stamps == [(t * MS, clock_payload(t * MS)) for t in (0, 2, 4, 6, 8, 10)]
    assert clock_payload(12_345_000_000_678) == {"clock": {"sec": 12345, "nanosec": 678}}


def test_C_EP_1_reset_publishes_event_drops_in_flight_and_reruns_boundary() -> None:
    session = _session(5)
    messages: list[Message] = []
    session.bus.subscribe(None, messages.append)
    session.advance(8 * MS)  # the 7 ms sample (acquired at 8) is due at 10: in flight
    session.reset_episode(seed=11)
    assert session.dropped_in_flight == 1
    session.advance(0)
    events = [m.payload for m in messages if m.topic == EVENTS_TOPIC]
    assert events == [Event(EventKind.EPISODE_RESET, 8 * MS, {"episode": 1, "seed": 11})]
    # Boundary 8 ran again for the new episode: acquisition at episode time 0.
    assert session.stats("sensors/imu0").fired == 3


def test_C_EP_1_reset_refused_inside_callback_or_off_boundary() -> None:
    session = _session(1)
    errors: list[str] = []

    def try_reset() -> None:
        try:
            session.reset_episode()
        except RuntimeError as exc:
            errors.append(str(exc))

    session.clock.schedule(2 * MS, try_reset)
    session.advance(3 * MS)
    assert errors == [
        "cannot start an episode from inside a callback (now 2000000 ns); "
        "call reset_episode() between advance() calls"
    ]
    with pytest.raises(
        RuntimeError,
        match=r"^cannot start an episode at 3000000 ns, between grid boundaries "
        r"\(step 2000000 ns\); advance to a boundary first$",
    ):
        session.reset_episode()
    assert (session.episode, session.episode_start_ns) == (0, 0)


def test_C_SEED_1_component_stream_keyed_by_seed_component_and_stream() -> None:
    stream = component_stream(7, "sensors/imu0", "noise")
    assert stream.label == "/sensors/imu0/noise"
    expected = SeededRandomSource(7).child("/sensors/imu0/noise").normal(0, 1, size=4)
    assert list(stream.normal(0, 1, size=4)) == list(expected)
    other = component_stream(8, "sensors/imu0", "noise").normal(0, 1, size=4)
    assert list(other) != list(expected)
    with pytest.raises(
        ValueError,
        match=r"^component_id 'sensors//imu0' segment must start with a letter and use only ",
    ):
        component_stream(7, "sensors//imu0", "noise")
    with pytest.raises(ValueError, match=r"^stream must start with a letter and use only "):
        component_stream(7, "sensors/imu0", "noise/x")


def test_C_REP_3_draw_observer_sees_every_noise_draw_with_its_label() -> None:
    seen: list[tuple[str, str, object]] = []
    session = _session(
        4, draw_observer=lambda label, method, args, value: seen.append((label, method, value))
    )
    session.advance(8 * MS)
    stream = component_stream(4, "sensors/imu0", "noise")
    expected: list[tuple[str, str, object]] = []
    for _acquisition in (0, 8):
        expected.append(("/sensors/imu0/noise", "normal", stream.normal(0.0, 1.0)))
        expected.append(("/sensors/imu0/noise", "uniform", stream.uniform(-1.0, 1.0)))
    assert seen == expected


def test_C_SEED_1_adding_a_device_leaves_other_devices_noise_identical() -> None:
    alone = _session(42)
    crowded = _session(42, devices=("cam0", "imu0", "lidar0"))
    alone.advance(200 * MS)
    crowded.advance(200 * MS)
    assert _values(crowded, "imu0") == _values(alone, "imu0")
    assert len(_values(alone, "imu0")) == 29
    assert _values(crowded, "cam0") != _values(crowded, "imu0")


def test_C_SEED_2_fresh_session_with_explicit_seed_reproduces_a_reset_episode() -> None:
    long_run = _session(1)
    long_run.advance(50 * MS)
    long_run.reset_episode(seed=99)
    long_run.advance(60 * MS)
    fresh = _session(99)
    fresh.advance(60 * MS)
    episode1 = [s for s in long_run.samples if s.episode == 1]
    assert [(s.acquisition_ns - s.episode_start_ns, s.values) for s in episode1] == _values(
        fresh, "imu0"
    )


def test_C_SEED_2_default_episode_seeds_are_stable_and_independent() -> None:
    assert episode_seed(7, 0) == 7
    assert episode_seed(7, 1) == episode_seed(7, 1) != episode_seed(7, 2)
    # The documented derivation, recomputed independently: 63 bits of blake2b.
    digest = hashlib.blake2b(b"simclock.episode_seed.v1\x00" + b"7:1", digest_size=8).digest()
    assert episode_seed(7, 1) == int.from_bytes(digest, "big") >> 1
    a = _session(7)
    a.advance(0)
    a.reset_episode(seed=123)
    a.reset_episode()
    assert a.episode_seed == episode_seed(7, 2)


def test_session_arguments_checked() -> None:
    with pytest.raises(TypeError, match=r"^clock must be a simclock.GridClock, got 3$"):
        Session(3)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError,
        match=r"^clock_period_ns=3000000 is not a multiple of the clock's step \(2000000 ns\)",
    ):
        Session(GridClock(0, 2 * MS), clock_period_ns=3 * MS)
    with pytest.raises(ValueError, match=r"^session_ns=0 is in the past"):
        session = _session(0)
        session.advance(2 * MS)
        session.run_until(0)


def test_clock_topic_checked_when_the_session_is_made() -> None:
    """A bad ``clock_topic`` is refused at once, not by the first tick inside the run."""
    with pytest.raises(
        ValueError,
        match=r"^topic must start with '/' and use only \[A-Za-z0-9_./-\], got 'clock'$",
    ):
        Session(GridClock(0, 2 * MS), clock_topic="clock")
    with pytest.raises(TypeError, match=r"^topic must be a str, got int 5$"):
        Session(GridClock(0, 2 * MS), clock_topic=5)  # type: ignore[arg-type]
    session = Session(GridClock(0, 2 * MS), clock_topic="/sim/clock")
    topics: list[str] = []
    session.bus.subscribe(None, lambda m: topics.append(m.topic))
    session.advance(2 * MS)
    assert topics == ["/sim/clock", "/sim/clock"]


def test_start_checks_seed_and_refuses_a_seed_it_would_ignore() -> None:
    session = _session(1)
    with pytest.raises(TypeError, match=r"^seed must be an int, got str 'x'$"):
        session.start("x")  # type: ignore[arg-type]
    assert session.episode == -1
    session.start(5)
    session.start()  # no-op once started
    with pytest.raises(
        RuntimeError,
        match=r"^start\(seed=6\) after the session started \(episode 0, seed 5\); "
        r"call reset_episode\(seed=6\) for a new episode with that seed$",
    ):
        session.start(6)
    with pytest.raises(TypeError, match=r"^seed must be an int, got float 1.0$"):
        session.start(1.0)  # type: ignore[arg-type]
    assert (session.episode, session.episode_seed) == (0, 5)


def test_argument_types_of_stats_and_episode_seed() -> None:
    session = _session(1)
    with pytest.raises(
        TypeError,
        match=r"^component_id must be a str such as 'sensors/imu0', got int 5$",
    ):
        session.stats(5)  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"^episode must be an int, got str '1'; pass the episode index, e\.g\. 1$"
    ):
        episode_seed(7, "1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^episode must be >= 0, got -1$"):
        episode_seed(7, -1)


def test_C_EP_1_on_reset_that_raises_leaves_the_episode_unbegun() -> None:
    """A failing ``on_reset`` propagates and changes nothing; a retry runs normally."""
    fail = [True, False, True]
    calls: list[int] = []

    def on_reset() -> None:
        calls.append(len(calls))
        if fail[len(calls) - 1]:
            raise OSError("physics not ready")

    session = _session(1, on_reset=on_reset)
    with pytest.raises(OSError, match=r"^physics not ready$"):
        session.advance(2 * MS)
    assert (session.episode, session.session_time_ns(), session.clock.pending_count()) == (-1, 0, 0)
    session.add_sensor(SensorSpec("enc0", 2 * MS), _noise)  # the plan is still open
    session.advance(8 * MS)  # episode 0 starts; the imu sample acquired at 8 is in flight
    # Delivery order; at 4 ms the imu sample acquired at 0 goes before enc0's of 4 ms.
    assert [(s.device, s.acquisition_ns) for s in session.samples] == [
        ("enc0", 0),
        ("enc0", 2 * MS),
        ("imu0", 0),
        ("enc0", 4 * MS),
        ("enc0", 6 * MS),
        ("enc0", 8 * MS),
    ]
    with pytest.raises(OSError, match=r"^physics not ready$"):
        session.reset_episode(seed=9)
    assert (session.episode, session.episode_seed, session.dropped_in_flight) == (0, 1, 0)
    session.advance(2 * MS)  # still episode 0: the in-flight imu sample arrives at 10
    assert [(s.device, s.episode, s.acquisition_ns) for s in session.samples[-2:]] == [
        ("imu0", 0, 8 * MS),
        ("enc0", 0, 10 * MS),
    ]
    assert calls == [0, 1, 2]


# -- the session's phases are a source of the core, not heap entries ---------------------


def test_session_phases_are_not_clock_entries() -> None:
    session = Session(GridClock(0, 2 * MS))
    session.add_sensor(SensorSpec("imu0", 4 * MS), _noise)
    session.start()
    # Only the user's entries are entries (C-X-PEEK): the phases are not.
    assert (session.clock.next_event_ns(), session.clock.pending_count()) == (None, 0)
    session.advance(10 * MS)
    assert [s.acquisition_ns // MS for s in session.samples] == [0, 4, 8]


def test_session_phases_run_before_the_entries_of_their_boundary_whatever_the_push_order() -> None:
    session = Session(GridClock(0, 2 * MS), clock_topic=None)
    session.add_sensor(SensorSpec("imu0", 4 * MS), _noise)
    order: list[str] = []
    session.bus.subscribe("/sensors/imu0", lambda m: order.append(f"sample@{m.stamp_ns // MS}"))
    # Pushed before the session starts, at a boundary where the sensor fires.
    session.clock.schedule(4 * MS, lambda: order.append("entry@4"))
    session.advance(4 * MS)
    assert order == ["sample@0", "sample@4", "entry@4"]


def test_session_idle_stretch_costs_nothing() -> None:
    session = Session(GridClock(0, 1), clock_topic=None)
    session.add_sensor(SensorSpec("imu0", 10**12), _noise)
    session.advance(10**15)  # 10**15 boundaries, 1001 of them with work
    assert len(session.samples) == 1001
    assert session.stats("sensors/imu0").fired == 1001


def test_a_clock_runs_one_session_and_a_refused_second_changes_nothing() -> None:
    clock = GridClock(0, MS)
    first = Session(clock)
    with pytest.raises(
        RuntimeError,
        match=r"^this GridClock already runs a Session; create one GridClock per Session$",
    ):
        Session(clock)
    first.advance(2 * MS)
    assert first.clock.now_ns() == 2 * MS
