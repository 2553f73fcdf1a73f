"""Sensor devices: acquisition, latency and delivery on the grid (SPEC §8, C-DEV-1..2)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from simclock import EVENTS_TOPIC, Message, RandomSource
from simclock.sim._devices import ControllerSpec, Sample, SensorSpec
from simclock.sim._grid import GridClock, Policy
from simclock.sim._session import Session

MS = 1_000_000


def _zero(noise: RandomSource) -> Sequence[float]:
    return [0.0]


def _times(samples: list[Sample], device: str) -> list[tuple[int, int, int, int]]:
    return [
        (
            s.nominal_acquisition_ns // MS,
            s.acquisition_ns // MS,
            s.requested_delivery_ns // MS,
            s.delivery_ns // MS,
        )
        for s in samples
        if s.device == device
    ]


def test_C_DEV_1_imu_7ms_on_2ms_grid_with_3ms_latency() -> None:
    session = Session(GridClock(0, 2 * MS))
    session.add_sensor(SensorSpec("imu0", 7 * MS, latency_ns=3 * MS), _zero)
    session.advance(32 * MS)
    # (nominal acquisition, actual acquisition, requested delivery, actual delivery) in ms:
    # requested delivery is nominal acquisition + latency, then quantised (C-DEV-1).
    assert _times(session.samples, "imu0") == [
        (0, 0, 3, 4),
        (7, 8, 10, 10),
        (14, 14, 17, 18),
        (21, 22, 24, 24),
        (28, 28, 31, 32),
    ]


def test_C_DEV_1_strict_device_delivers_exactly_at_acquisition_plus_latency() -> None:
    session = Session(GridClock(0, 2 * MS))
    session.add_sensor(
        SensorSpec("enc0", 4 * MS, phase_ns=2 * MS, latency_ns=6 * MS, policy=Policy.STRICT),
        _zero,
    )
    session.advance(18 * MS)
    assert _times(session.samples, "enc0") == [(2, 2, 8, 8), (6, 6, 12, 12), (10, 10, 16, 16)]
    assert session.stats("sensors/enc0").fired == 5  # acquired at 14 and 18, still in flight


def test_C_GRID_3_strict_device_refuses_off_grid_latency_before_anything_runs() -> None:
    session = Session(GridClock(0, 2 * MS))
    with pytest.raises(
        ValueError,
        match=r"^schedule 'sensors/enc0': latency 1 ms is not on the 2 ms grid \(policy strict\); "
        r"use a multiple of 2000000 ns or policy 'next_boundary'$",
    ):
        session.add_sensor(SensorSpec("enc0", 2 * MS, latency_ns=MS, policy=Policy.STRICT), _zero)
    with pytest.raises(
        ValueError,
        match=r"^schedule 'controllers/pd': period 5 ms is not on the 2 ms grid \(policy strict\)",
    ):
        session.add_controller(ControllerSpec("pd", 5 * MS), lambda latest: None)
    session.advance(4 * MS)
    assert session.samples == []
    assert [m.topic for m in _collect(session, 0)] == []


def _collect(session: Session, dt: int) -> list[Message]:
    messages: list[Message] = []
    session.bus.subscribe(None, messages.append)
    session.advance(dt)
    return messages


def test_C_DEV_2_sample_published_at_delivery_with_all_four_times() -> None:
    session = Session(GridClock(0, 2 * MS), clock_topic=None)
    session.add_sensor(
        SensorSpec("imu0", 7 * MS, latency_ns=3 * MS), lambda noise: [1.5, noise.normal(0, 0)]
    )
    messages = _collect(session, 10 * MS)
    assert [(m.topic, m.stamp_ns, m.sequence) for m in messages] == [
        ("/sensors/imu0", 4 * MS, 0),
        ("/sensors/imu0", 10 * MS, 1),
    ]
    assert messages[1].payload == {
        "device": "imu0",
        "index": 1,
        "episode": 0,
        "episode_start_ns": 0,
        "nominal_acquisition_ns": 7 * MS,
        "acquisition_ns": 8 * MS,
        "requested_delivery_ns": 10 * MS,
        "delivery_ns": 10 * MS,
        "values": [1.5, 0.0],
    }
    assert Sample.from_json(messages[1].payload) == session.samples[1]


def test_phase_order_clock_acquire_deliver_control_at_each_boundary() -> None:
    """At a boundary: /clock, acquisitions, deliveries, controllers (documented order)."""
    session = Session(GridClock(0, 2 * MS))
    log: list[str] = []

    def read(name: str) -> object:
        def reader(noise: RandomSource) -> Sequence[float]:
            log.append(f"acquire {name} @{session.session_time_ns() // MS}")
            return [0.0]

        return reader

    def control(latest: Mapping[str, Sample]) -> None:
        seen = ",".join(f"{k}#{v.index}" for k, v in sorted(latest.items()))
        log.append(f"control @{session.session_time_ns() // MS} sees {seen}")

    session.add_controller(ControllerSpec("pd", 4 * MS), control)  # added first, runs last
    session.add_sensor(SensorSpec("imu0", 7 * MS, latency_ns=3 * MS), read("imu0"))  # type: ignore[arg-type]
    session.add_sensor(SensorSpec("enc0", 2 * MS), read("enc0"))  # type: ignore[arg-type]
    session.bus.subscribe(None, lambda m: log.append(f"publish {m.topic} @{m.stamp_ns // MS}"))
    session.advance(8 * MS)
    assert log == [
        "publish /clock @0",
        "acquire imu0 @0",
        "acquire enc0 @0",
        "publish /sensors/enc0 @0",
        "control @0 sees enc0#0",
        "publish /clock @2",
        "acquire enc0 @2",
        "publish /sensors/enc0 @2",
        "publish /clock @4",
        "acquire enc0 @4",
        "publish /sensors/imu0 @4",
        "publish /sensors/enc0 @4",
        "control @4 sees enc0#2,imu0#0",
        "publish /clock @6",
        "acquire enc0 @6",
        "publish /sensors/enc0 @6",
        "publish /clock @8",
        "acquire imu0 @8",
        "acquire enc0 @8",
        "publish /sensors/enc0 @8",
        "control @8 sees enc0#4,imu0#0",
    ]


def test_C_ERR_1_failing_sensor_is_reported_and_others_still_run() -> None:
    session = Session(GridClock(0, 2 * MS), clock_topic=None)

    def broken(noise: RandomSource) -> Sequence[float]:
        raise OSError("bus fault")

    session.add_sensor(SensorSpec("bad", 2 * MS), broken)
    session.add_sensor(SensorSpec("good", 2 * MS), _zero)
    messages = _collect(session, 2 * MS)
    assert [(m.topic, m.stamp_ns) for m in messages] == [
        (EVENTS_TOPIC, 0),
        ("/sensors/good", 0),
        (EVENTS_TOPIC, 2 * MS),
        ("/sensors/good", 2 * MS),
    ]
    assert messages[0].payload.details == {
        "callback": "test_C_ERR_1_failing_sensor_is_reported_and_others_still_run.<locals>.broken",
        "component": "sensors/bad",
        "error_type": "OSError",
        "error_message": "bus fault",
    }
    stats = session.stats("sensors/bad")
    assert (stats.fired, stats.failed) == (2, 2)


def test_C_X_STATS_sensor_faster_than_grid_fires_every_deadline_and_counts_overruns() -> None:
    session = Session(GridClock(0, 2 * MS), clock_topic=None)
    session.add_sensor(SensorSpec("fast", MS), _zero)
    session.advance(4 * MS)
    assert _times(session.samples, "fast") == [
        (0, 0, 0, 0),
        (1, 2, 1, 2),
        (2, 2, 2, 2),
        (3, 4, 3, 4),
        (4, 4, 4, 4),
    ]
    stats = session.stats("sensors/fast")
    assert (stats.fired, stats.failed, stats.skipped, stats.overrun) == (5, 0, 0, 2)
    with pytest.raises(ValueError, match=r"^no component 'fast' in the session; "):
        session.stats("fast")


def test_spec_validation() -> None:
    with pytest.raises(
        ValueError,
        match=r"^device_id must start with a letter and use only \[A-Za-z0-9_.-\], got 'imu 0'$",
    ):
        SensorSpec("imu 0", MS)
    with pytest.raises(ValueError, match=r"^period_ns must be > 0 ns, got 0$"):
        SensorSpec("imu0", 0)
    with pytest.raises(TypeError, match=r"^latency_ns must be an int of nanoseconds, got float"):
        SensorSpec("imu0", MS, latency_ns=0.003)  # type: ignore[arg-type]
    assert SensorSpec("imu0", MS).topic == "/sensors/imu0"
    assert ControllerSpec("pd", MS).policy is Policy.STRICT
    assert SensorSpec("imu0", MS).policy is Policy.NEXT_BOUNDARY


def test_plan_is_closed_after_start_and_duplicates_refused() -> None:
    session = Session(GridClock(0, 2))
    session.add_sensor(SensorSpec("a", 2), _zero)
    with pytest.raises(
        ValueError, match=r"^sensor 'a' is already in the session; give each sensor its own id$"
    ):
        session.add_sensor(SensorSpec("a", 4), _zero)
    session.add_controller(ControllerSpec("a", 2), lambda latest: None)  # ids are per kind
    with pytest.raises(
        ValueError,
        match=r"^controller 'a' is already in the session; give each controller its own id$",
    ):
        session.add_controller(ControllerSpec("a", 4), lambda latest: None)
    with pytest.raises(TypeError, match=r"^step must be callable, got 3$"):
        session.add_controller(ControllerSpec("b", 2), 3)  # type: ignore[arg-type]
    session.advance(4)
    # The refused duplicates (period 4) replaced nothing: the period-2 originals ran
    # at 0, 2 and 4, and the refused "b" was never added.
    assert session.stats("sensors/a").fired == session.stats("controllers/a").fired == 3
    with pytest.raises(ValueError, match=r"^no component 'controllers/b' in the session; "):
        session.stats("controllers/b")
    with pytest.raises(
        RuntimeError,
        match=r"^cannot add sensor 'b' after the session started; add every component first$",
    ):
        session.add_sensor(SensorSpec("b", 2), _zero)


def test_C_DEV_2_numpy_int_schedule_gives_python_int_times() -> None:
    """§0: every time is a Python int; numpy ints are normalised when the spec is made."""
    spec = SensorSpec("imu0", np.int64(7 * MS), np.int32(0), latency_ns=np.uint32(3 * MS))  # type: ignore[arg-type]
    ctl = ControllerSpec("pd", np.int64(4 * MS), np.int16(0))  # type: ignore[arg-type]
    fields = (spec.period_ns, spec.phase_ns, spec.latency_ns, ctl.period_ns, ctl.phase_ns)
    assert [type(v) for v in fields] == [int] * 5
    assert fields == (7 * MS, 0, 3 * MS, 4 * MS, 0)
    session = Session(GridClock(0, 2 * MS))
    session.add_sensor(spec, _zero)
    session.advance(10 * MS)
    assert _times(session.samples, "imu0") == [(0, 0, 3, 4), (7, 8, 10, 10)]
    times = [
        getattr(s, name)
        for s in session.samples
        for name in (
            "nominal_acquisition_ns",
            "acquisition_ns",
            "requested_delivery_ns",
            "delivery_ns",
        )
    ]
    assert [type(t) for t in times] == [int] * 8


@pytest.mark.parametrize("make", [SensorSpec, ControllerSpec], ids=["sensor", "controller"])
def test_spec_topic_checked_when_the_spec_is_made(make: type[SensorSpec | ControllerSpec]) -> None:
    """A bad topic is refused at once, not by the first publish inside a run."""
    with pytest.raises(
        ValueError,
        match=r"^topic must start with '/' and use only \[A-Za-z0-9_./-\], got 'imu 0'$",
    ):
        make("imu0", MS, topic="imu 0")
    with pytest.raises(TypeError, match=r"^topic must be a str, got int 5$"):
        make("imu0", MS, topic=5)  # type: ignore[arg-type]
    assert make("imu0", MS, topic="/robot/imu").topic == "/robot/imu"


@pytest.mark.parametrize("topic", ["/clock", "/simclock/events", "/simclock"])
def test_C_BUS_5_specs_refuse_reserved_topics_when_made(topic: str) -> None:
    with pytest.raises(
        ValueError,
        match="^"
        + re.escape(
            f"topic {topic!r} is reserved for the library (/clock and /simclock/...); "
            "publish on another topic, e.g. the default '/sensors/imu0'"
        )
        + "$",
    ):
        SensorSpec("imu0", MS, topic=topic)
    with pytest.raises(
        ValueError,
        match="^"
        + re.escape(
            f"topic {topic!r} is reserved for the library (/clock and /simclock/...); "
            "publish on another topic, e.g. the default '/controllers/pd'"
        )
        + "$",
    ):
        ControllerSpec("pd", MS, topic=topic)


def test_C_BUS_5_session_clock_topic_may_be_clock_but_not_under_simclock() -> None:
    assert Session(GridClock(0, MS)).bus.clock is not None
    clock = GridClock(0, MS)
    with pytest.raises(
        ValueError,
        match="^"
        + re.escape(
            "clock_topic '/simclock/clock' is reserved for the library's own messages; "
            "use '/clock' (the default) or None"
        )
        + "$",
    ):
        Session(clock, clock_topic="/simclock/clock")
    # Refused before the clock was taken: a second session may still use it.
    Session(clock)


_GOOD_FIELDS: tuple[object, ...] = ("imu0", 3, 0, 0, 7 * MS, 8 * MS, 10 * MS, 10 * MS, (0.5,))


@pytest.mark.parametrize(
    ("position", "bad", "message"),
    [
        (0, 5, r"^device must be a str, got int 5$"),
        (
            1,
            np.int64(3),
            r"^index must be an int, got int64 np\.int64\(3\); convert it with int\(\)$",
        ),
        (2, True, r"^episode must be an int, got bool True$"),
        (5, 8e6, r"^acquisition_ns must be an int, got float 8000000\.0; convert it with int\(\)$"),
        (7, None, r"^delivery_ns must be an int, got NoneType None; convert it with int\(\)$"),
        (8, [0.5], r"^values must be a tuple, got list \[0\.5\]; pass tuple\(values\)$"),
    ],
)
def test_C_DEV_2_sample_refuses_a_field_of_the_wrong_type(
    position: int, bad: object, message: str
) -> None:
    """The constructor names the first wrong field (compiled and pure builds alike)."""
    fields = list(_GOOD_FIELDS)
    fields[position] = bad
    with pytest.raises(TypeError, match=message):
        Sample(*fields)


def test_C_DEV_2_sample_keeps_a_str_subclass_as_a_plain_str_and_cannot_be_subclassed() -> None:
    class Name(str):
        def __hash__(self) -> int:
            raise AssertionError("never hashed inside the library")

    sample = Sample(Name("imu0"), *_GOOD_FIELDS[1:])
    assert type(sample.device) is str and sample == Sample(*_GOOD_FIELDS)
    with pytest.raises(
        TypeError, match=r"^simclock\.Sample cannot be subclassed; wrap a Sample instead$"
    ):

        class Mine(Sample):  # type: ignore[misc]
            pass


def test_C_NATIVE_1_a_sessions_samples_are_the_compiled_sample_when_the_core_is() -> None:
    """The phases build `Sample` natively: the class is compiled with the core, or pure with it."""
    import simclock

    assert ("__mypyc_attrs__" in vars(Sample)) is simclock.COMPILED
    session = Session(GridClock(0, 2 * MS))
    session.add_sensor(SensorSpec("enc0", 2 * MS), _zero)
    session.start()
    session.clock.advance(4 * MS)
    assert [type(s) for s in session.samples] == [Sample, Sample, Sample]
    assert session.samples[2] == Sample("enc0", 2, 0, 0, 4 * MS, 4 * MS, 4 * MS, 4 * MS, (0.0,))
