"""The bus's sender path (``Bus.sender``) and the fast paths of the session built on it.

A sender hands a pre-encoded message to the topic's trace sinks (the
fingerprint) without building its ``Message`` or payload; these tests check
that every subscriber sees what ``publish`` would give it (C-BUS-1..4, C-X-FP)
and that anything unusual takes the message path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simclock
from simclock import (
    EVENTS_TOPIC,
    Bus,
    Event,
    GridClock,
    HeapSimClock,
    Message,
    Sample,
    SensorSpec,
    Session,
    SimclockValueError,
)
from simclock.core._bus import register_trace_sink
from simclock.recording._fingerprint import Fingerprinter, canonical_json, fast_canonical_bytes
from simclock.recording._format import decode_draw_value, encode_draw_value
from simclock.sim._kinds import KindRun
from simclock.sim._scenario import build_session

MS = 1_000_000
PENDULUM = Path(__file__).resolve().parent.parent / "examples" / "pendulum.toml"


class _Maker:
    """``make_payload`` for one message, counting its calls."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        self.calls = 0

    def __call__(self) -> dict[str, Any]:
        self.calls += 1
        return self.payload


def _payloads() -> list[dict[str, Any]]:
    return [{"n": n, "x": n / 3} for n in range(5)]


def _by_publish(subscribe: Callable[[Bus], object]) -> tuple[str, int, int]:
    """The reference: every payload through ``publish``; (fingerprint, count, next sequence)."""
    clock = HeapSimClock(0)
    fp = Fingerprinter()
    clock.bus.subscribe(None, fp)
    subscribe(clock.bus)
    for i, payload in enumerate(_payloads()):
        clock.bus.publish("/t", payload)
        clock.advance(i)
    return fp.hexdigest(), fp.count, clock.bus.next_sequence


def _by_sender(subscribe: Callable[[Bus], object]) -> tuple[tuple[str, int, int], list[int]]:
    """The same payloads through ``sender``: the result and make_payload's calls per message."""
    clock = HeapSimClock(0)
    fp = Fingerprinter()
    clock.bus.subscribe(None, fp)
    subscribe(clock.bus)
    send = clock.bus.sender("/t")
    calls = []
    for i, payload in enumerate(_payloads()):
        maker = _Maker(payload)
        send(canonical_json(payload).encode(), None, maker)
        calls.append(maker.calls)
        clock.advance(i)
    return (fp.hexdigest(), fp.count, clock.bus.next_sequence), calls


def test_C_X_FP_sender_to_sinks_only_builds_no_payload_and_hashes_what_publish_hashes() -> None:
    result, calls = _by_sender(lambda bus: None)
    assert result == _by_publish(lambda bus: None)
    assert result[1:] == (5, 5)
    assert calls == [0, 0, 0, 0, 0]  # the sink path never built a payload


def test_C_BUS_2_sender_with_an_ordinary_subscriber_gives_it_the_message_of_publish() -> None:
    seen: list[Message] = []
    theirs: list[Message] = []
    result, calls = _by_sender(lambda bus: bus.subscribe("/t", seen.append))
    assert result == _by_publish(lambda bus: bus.subscribe("/t", theirs.append))
    assert calls == [1, 1, 1, 1, 1]  # built once each, for the subscriber
    assert [(m.topic, m.stamp_ns, m.sequence, m.payload) for m in seen] == [
        (m.topic, m.stamp_ns, m.sequence, m.payload) for m in theirs
    ]
    assert [m.encoded for m in seen] == [canonical_json(p).encode() for p in _payloads()]


def test_C_BUS_2_a_subclass_of_a_sink_is_an_ordinary_subscriber() -> None:
    class Counting(Fingerprinter):
        __slots__ = ("messages",)

        def __call__(self, message: Message) -> None:
            self.messages = getattr(self, "messages", 0) + 1
            super().__call__(message)

    sub = Counting()
    result, calls = _by_sender(lambda bus: bus.subscribe(None, sub))
    assert calls == [1, 1, 1, 1, 1]
    assert sub.messages == 5 and sub.hexdigest() == result[0]


class Flaky:
    """A subscriber whose registered sink fails on sequence 1."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, int, bytes]] = []

    def __call__(self, message: Message) -> None:
        raise AssertionError("the sink is used, not the subscriber")

    def sink(self, topic: str) -> Callable[[int, int, bytes], None]:
        def line(stamp: int, seq: int, encoded: bytes) -> None:
            if seq == 1:
                raise RuntimeError("sink bug")
            self.lines.append((stamp, seq, encoded))

        return line


register_trace_sink(Flaky, Flaky.sink)


def test_C_BUS_4_a_failing_sink_is_reported_once_every_sink_has_the_message() -> None:
    clock = HeapSimClock(0)
    flaky, fp = Flaky(), Fingerprinter()
    clock.bus.subscribe("/t", flaky)
    clock.bus.subscribe(None, fp)
    events: list[tuple[int, int, dict[str, Any]]] = []
    clock.bus.subscribe(
        EVENTS_TOPIC,
        lambda m: events.append((m.stamp_ns, m.sequence, dict(m.payload.details))),
    )
    send = clock.bus.sender("/t")
    for n in range(3):
        send(b'{"n":%d}' % n, None, _Maker({"n": n}))
    assert flaky.lines == [(0, 0, b'{"n":0}'), (0, 3, b'{"n":2}')]
    assert events == [
        (
            0,
            2,
            {
                "subscriber": "Flaky",
                "topic": "/t",
                "sequence": 1,
                "error_type": "RuntimeError",
                "error_message": "sink bug",
            },
        )
    ]
    # The fingerprint (a sink after the failing one) has all three, then the report.
    reference = Fingerprinter()
    for seq, n in ((0, 0), (1, 1)):
        reference(Message("/t", 0, seq, {"n": n}))
    reference(Message(EVENTS_TOPIC, 0, 2, Event.from_json(_event_json(events[0][2]))))
    reference(Message("/t", 0, 3, {"n": 2}))
    assert fp.hexdigest() == reference.hexdigest() and fp.count == 4


def _event_json(details: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "SUBSCRIBER_FAILED", "at_ns": 0, "details": details}


@pytest.mark.parametrize("use_sender", [True, False])
def test_C_BUS_3_sender_waits_behind_a_message_stamped_now(use_sender: bool) -> None:
    """A message stamped 5 still waiting at 5 is delivered first, through the message path."""
    clock = HeapSimClock(0)
    bus = clock.bus
    fp = Fingerprinter()
    bus.subscribe(None, fp)
    send = bus.sender("/x")
    maker = _Maker({"now": True})

    def at_5() -> None:
        if use_sender:
            send(b'{"now":true}', None, maker)
        else:
            bus.publish("/x", {"now": True})

    clock.schedule(5, at_5)
    bus.publish("/x", {"future": True}, stamp_ns=5)
    clock.advance(5)
    reference = Fingerprinter()
    reference(Message("/x", 5, 0, {"future": True}))
    reference(Message("/x", 5, 1, {"now": True}))
    assert fp.hexdigest() == reference.hexdigest()
    assert maker.calls == (1 if use_sender else 0)  # queued: built as a Message


def test_C_BUS_5_sender_on_clock_and_unencoded_payloads_take_the_message_path() -> None:
    clock = HeapSimClock(0)
    seen: list[Message] = []
    clock.bus.subscribe(None, seen.append)
    clock.bus.sender("/clock")(None, {"clock": {"sec": 0, "nanosec": 0}}, None)
    clock.bus.sender("/t")(None, {"a": 1}, None)
    assert [(m.topic, m.sequence, m.payload, m.encoded) for m in seen] == [
        ("/clock", 0, {"clock": {"sec": 0, "nanosec": 0}}, None),
        ("/t", 1, {"a": 1}, None),
    ]


def test_sender_refuses_a_bad_topic_and_an_unbound_bus_refuses_the_missing_stamp() -> None:
    bus = Bus(HeapSimClock(0))
    with pytest.raises(SimclockValueError, match=r"^topic must start with '/'"):
        bus.sender("no-slash")
    assert bus.next_sequence == 0
    unbound = Bus()
    with pytest.raises(
        SimclockValueError,
        match=r"^stamp_ns is required on a bus with no clock; pass stamp_ns=\.\.\. "
        r"or bind the bus to a clock$",
    ):
        unbound.sender("/x")(b"1", 1, None)
    assert unbound.next_sequence == 0


_plain_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
)


@given(
    payload=st.one_of(
        st.dictionaries(st.text(max_size=6), _plain_values, min_size=1, max_size=1),
        st.dictionaries(st.text(max_size=3), _plain_values, max_size=4),
        st.lists(_plain_values, max_size=3),
    )
)
def test_C_X_FP_fast_canonical_bytes_is_the_canonical_json_or_none(payload: Any) -> None:
    fast = fast_canonical_bytes(payload)
    try:
        expected: bytes | None = canonical_json(payload).encode()
    except (TypeError, ValueError):
        expected = None
    assert fast == expected


def test_C_DEV_2_samples_due_together_are_delivered_in_acquisition_order() -> None:
    """Earlier acquisitions first, then this boundary's, in the order the sensors were added.

    On the 2 ms grid at 10 ms: slow (acquired at 8 ms, latency 2 ms) is due
    from the heap; late (nominal 9 ms, latency 0.5 ms: acquired and due at
    10 ms) and now (latency 0) are both acquired at 10 ms and delivered
    without it, late first (added first).
    """
    session = Session(GridClock(1, 2 * MS), clock_topic=None)
    session.add_sensor(SensorSpec("late", 10 * MS, phase_ns=9 * MS, latency_ns=MS // 2), _one)
    session.add_sensor(SensorSpec("slow", 8 * MS, phase_ns=8 * MS, latency_ns=2 * MS), _one)
    session.add_sensor(SensorSpec("now", 10 * MS, phase_ns=10 * MS), _one)
    seen: list[tuple[str, int]] = []
    session.bus.subscribe(None, lambda m: seen.append((m.payload["device"], m.stamp_ns)))
    session.run_until(10 * MS)
    assert seen == [("slow", 10 * MS), ("late", 10 * MS), ("now", 10 * MS)]
    assert [(s.device, s.acquisition_ns, s.delivery_ns) for s in session.samples] == [
        ("slow", 8 * MS, 10 * MS),
        ("late", 10 * MS, 10 * MS),
        ("now", 10 * MS, 10 * MS),
    ]
    assert math.isclose(session.samples[0].values[0], 1.0)


def _one(noise: object) -> list[float]:
    return [1.0]


def _recorded(path: Path, ordinary_subscriber: bool) -> tuple[str, int]:
    """The pendulum for 1 s recorded; with an ordinary subscriber every message is a Message."""
    scenario = simclock.load_scenario(PENDULUM)
    bus = Bus()
    recorder = simclock.Recorder(path, bus, seed=3, record_draws=True, clock_period_ns=2 * MS)
    if ordinary_subscriber:
        bus.subscribe(None, lambda message: None)
    session = build_session(scenario, 3, bus=bus, draw_observer=recorder.draw_observer)
    session.run_until(1_000 * MS)
    recorder.close()
    return recorder.fingerprint(), recorder.message_count


def test_C_DET_1_C_X_FP_the_recorders_sink_writes_the_file_of_its_message_path(
    tmp_path: Path,
) -> None:
    sink = _recorded(tmp_path / "sink.mcap", ordinary_subscriber=False)
    message = _recorded(tmp_path / "message.mcap", ordinary_subscriber=True)
    assert sink == message and sink[1] == 895
    assert (tmp_path / "sink.mcap").read_bytes() == (tmp_path / "message.mcap").read_bytes()


class _Items:
    """A TimedSource with items at fixed times, counting how often the clock asks it."""

    def __init__(self, times: list[int], trace: list[tuple[str, int]]) -> None:
        self.times = times
        self.trace = trace
        self.asked = 0

    def next_ns(self) -> int | None:
        self.asked += 1
        return self.times[0] if self.times else None

    def fire(self, at_ns: int) -> None:
        self.trace.append(("fire", at_ns))
        self.times.pop(0)


def test_C_ADV_5_run_steps_asks_the_source_at_the_start_and_after_each_fire_only() -> None:
    """One advance over five boundaries: each hook at b - 1, each item at its time, three asks."""
    trace: list[tuple[str, int]] = []
    clock = GridClock(0, 2, on_step=lambda k: trace.append(("step", k)))
    source = _Items([2, 6], trace)
    clock.attach_source(source)
    clock.advance(10)
    assert trace == [
        ("step", 1),
        ("fire", 2),
        ("step", 2),
        ("step", 3),
        ("fire", 6),
        ("step", 4),
        ("step", 5),
    ]
    assert source.asked == 3  # at the start, then after each fire
    assert (clock.now_ns(), clock.steps) == (10, 5)


def test_C_X_FP_the_builtin_pd_command_carries_its_canonical_json() -> None:
    scenario = simclock.load_scenario(PENDULUM)
    session = build_session(scenario, 7)
    clock = session.clock
    assert isinstance(clock, simclock.MujocoClock)
    pd = scenario.controllers[0].impl
    assert pd is not None and pd.encodes
    step = pd.controller(KindRun(clock, "controllers/pd", 7))
    assert step({}) == ({"u": 0.0}, b'{"u":0.0}')  # no samples yet: u is 0

    def latest(angle: float, rate: float) -> dict[str, Sample]:
        return {
            "encoder0": Sample("encoder0", 0, 0, 0, 0, 0, 0, 0, values=(angle,)),
            "imu0": Sample("imu0", 0, 0, 0, 0, 0, 0, 0, values=(0.0, rate, 0.0)),
        }

    payload, encoded = step(latest(0.1, -0.3))
    assert payload == {"u": 8.0 * (0.0 - 0.1) - 0.8 * -0.3}
    assert encoded == canonical_json(payload).encode()
    assert clock.data.ctrl[0] == payload["u"]
    payload, encoded = step(latest(math.nan, 0.0))  # no canonical form: the encoder reports it
    assert math.isnan(payload["u"]) and encoded is None


def test_C_X_FP_sample_json_leaves_values_that_are_not_floats_to_the_encoder() -> None:
    sample = Sample("imu0", 0, 0, 0, 0, 0, 0, 0, values=(1, True))
    assert sample.canonical_json('"imu0"') is None
    assert canonical_json(sample.to_json()).endswith('"values":[1,true]}')


def test_C_REP_3_draw_values_are_encoded_exactly_from_the_dtype_cache() -> None:
    float32 = np.array([0.5], dtype=np.float32)
    for _ in range(2):  # the second time from the cached dtype name
        assert encode_draw_value(np.array([0.25, math.nan])) == {
            "data": [0.25, {"float": "nan"}],
            "dtype": "float64",
            "shape": [2],
        }
        assert encode_draw_value(float32) == {"data": [0.5], "dtype": "float32", "shape": [1]}
    assert encode_draw_value((0.0, 0.02, 3)) == [0.0, 0.02, 3]
    assert encode_draw_value((1.5, -2.5)) == [1.5, -2.5]
    assert encode_draw_value([1.5, math.inf]) == [1.5, {"float": "inf"}]
    back = decode_draw_value(encode_draw_value(float32))
    assert back.dtype == np.float32 and back.tolist() == [0.5]


def test_C_MCAP_1_the_recorders_sink_hands_what_it_cannot_take_to_record(
    tmp_path: Path,
) -> None:
    """The first message of a topic, one out of order, one after close: record's own path."""
    path = tmp_path / "sink.mcap"
    recorder = simclock.Recorder(path, Bus(HeapSimClock(0)), seed=1)
    line = recorder._line_sink("/t")
    line(0, 0, b'{"a":0}')  # no channel yet: record makes it
    line(0, 1, b'{"a":1}')
    assert recorder.message_count == 2
    with pytest.raises(
        simclock.SimclockRuntimeError,
        match=r"^cannot record message sequence=1 at 0 ns on '/t' arrived after sequence=1 "
        r"at 0 ns \(not in total order\)$",
    ):
        line(0, 1, b'{"a":1}')
    assert recorder.message_count == 2
    with pytest.raises(
        simclock.SimclockRuntimeError, match=r"is incomplete: message sequence=1 at 0 ns"
    ):
        recorder.close()
    with pytest.raises(
        simclock.SimclockRuntimeError,
        match=r"^record\(\) on a closed Recorder for '.*sink.mcap'; create a new Recorder$",
    ):
        line(0, 2, b'{"a":2}')
    assert recorder.message_count == 2
