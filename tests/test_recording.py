"""SPEC §6 (C-MCAP-1..3), C-X-FP: what the Recorder writes, read with the official reader."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

import simclock
from simclock import (
    EVENTS_TOPIC,
    Bus,
    Fingerprinter,
    HeapSimClock,
    Message,
    Recorder,
    SeededRandomSource,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
)


def _read(path: Path) -> tuple[list[tuple[str, int, int, int, bytes]], dict[str, dict[str, str]]]:
    with path.open("rb") as f:
        reader = make_reader(f, validate_crcs=True)
        rows = [
            (ch.topic, m.log_time, m.publish_time, m.sequence, m.data)
            for _s, ch, m in reader.iter_messages(log_time_order=True)
        ]
        meta = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
    return rows, meta


def _scenario(path: Path, seed: int = 5, **kw: Any) -> tuple[Recorder, HeapSimClock]:
    clock = HeapSimClock(seed)
    bus = clock.bus

    def boom() -> None:
        raise ValueError("bad")

    with Recorder(path, bus, seed=seed, **kw) as rec:
        clock.schedule_periodic(4, lambda: bus.publish("/a", {"t": clock.now_ns()}))
        clock.schedule_periodic(6, lambda: bus.publish("/b", [clock.now_ns(), 0.5]))
        clock.schedule(8, boom)
        clock.advance(13)
    return rec, clock


def test_C_MCAP_1_channels_times_sequences_and_total_order(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    _scenario(path)
    rows, _ = _read(path)
    bus_rows = [r for r in rows if r[0] != "/clock"]
    assert [(t, lt, pt, s, json.loads(d)) for t, lt, pt, s, d in bus_rows] == [
        ("/a", 0, 0, 0, {"payload": {"t": 0}, "sequence": 0}),
        ("/b", 0, 0, 1, {"payload": [0, 0.5], "sequence": 1}),
        ("/a", 4, 4, 2, {"payload": {"t": 4}, "sequence": 2}),
        ("/b", 6, 6, 3, {"payload": [6, 0.5], "sequence": 3}),
        (
            EVENTS_TOPIC,
            8,
            8,
            4,
            {
                "payload": {
                    "at_ns": 8,
                    "details": {
                        "callback": "_scenario.<locals>.boom",
                        "error_message": "bad",
                        "error_type": "ValueError",
                    },
                    "kind": "SCHEDULER_CALLBACK_FAILED",
                },
                "sequence": 4,
            },
        ),
        ("/a", 8, 8, 5, {"payload": {"t": 8}, "sequence": 5}),
        ("/b", 12, 12, 6, {"payload": [12, 0.5], "sequence": 6}),
        ("/a", 12, 12, 7, {"payload": {"t": 12}, "sequence": 7}),
    ]
    with path.open("rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None
    topics = sorted(ch.topic for ch in summary.channels.values())
    assert topics == ["/a", "/b", "/clock", EVENTS_TOPIC]
    encodings = {ch.topic: ch.message_encoding for ch in summary.channels.values()}
    assert encodings == {"/a": "json", "/b": "json", "/clock": "cdr", EVENTS_TOPIC: "json"}
    schemas = {
        ch.topic: (summary.schemas[ch.schema_id].name, summary.schemas[ch.schema_id].encoding)
        for ch in summary.channels.values()
    }
    assert schemas == {
        "/a": ("simclock/Message", "jsonschema"),
        "/b": ("simclock/Message", "jsonschema"),
        EVENTS_TOPIC: ("simclock/Event", "jsonschema"),
        "/clock": ("rosgraph_msgs/msg/Clock", "ros2msg"),
    }
    assert all(c.compression == "zstd" for c in summary.chunk_indexes)
    for schema in summary.schemas.values():
        if schema.encoding == "jsonschema":
            assert json.loads(schema.data)["title"] == schema.name


def test_C_MCAP_1_sequence_past_2_32_keeps_the_full_value(tmp_path: Path) -> None:
    path = tmp_path / "big.mcap"
    bus = Bus()
    with Recorder(path, bus, seed=0) as rec:
        bus.deliver(Message("/x", 7, 2**32 + 5, "late"))
        bus.deliver(Message("/x", 7, 2**33 + 1, "later"))
    rows, meta = _read(path)
    assert [(r[3], json.loads(r[4])["sequence"]) for r in rows if r[0] == "/x"] == [
        (5, 2**32 + 5),
        (1, 2**33 + 1),
    ]
    assert meta["simclock"]["last_sequence"] == str(2**33 + 1)
    assert rec.message_count == 2


def test_C_MCAP_2_metadata_seed_versions_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    clock = HeapSimClock(11, step_ns=3)
    fp = Fingerprinter()
    clock.bus.subscribe(None, fp)
    with Recorder(path, clock.bus, seed=11, metadata={"scenario": "demo"}) as rec:
        clock.schedule(2, lambda: clock.bus.publish("/a", 1))
        clock.advance(10)
    _, meta = _read(path)
    sim = meta["simclock"]
    assert sim["format"] == "simclock-recording/2"
    assert sim["library"].startswith(f"simclock/{simclock.__version__} mcap")
    assert sim["recovered"] == ""
    assert len(sim["digest"]) == 64
    assert sim["seed"] == "11"
    assert sim["contract_version"] == simclock.CONTRACT_VERSION
    assert sim["simclock"] == simclock.__version__
    assert sim["numpy"] == np.__version__
    assert {"mcap", "mcap_ros2_support", "python"} <= set(sim)
    assert sim["fingerprint"] == fp.hexdigest() == rec.fingerprint()
    assert sim["fingerprint_algorithm"] == "simclock-trace-v1/sha256"
    assert (sim["message_count"], sim["start_ns"], sim["end_ns"], sim["step_ns"]) == (
        "1",
        "0",
        "10",
        "3",
    )
    assert json.loads(sim["topics"]) == {"/a": 1}
    assert sim["error"] == ""
    assert meta["simclock.user"] == {"scenario": "demo"}


def test_C_MCAP_3_clock_decodes_with_mcap_ros2_and_carries_session_time(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    clock = HeapSimClock(0, start_ns=2_999_999_990)
    with Recorder(path, clock.bus, seed=0):
        clock.schedule(3_000_000_001, lambda: clock.bus.publish("/a", 1))
        clock.advance(20)
    with path.open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        got = [
            (
                d.message.log_time,
                d.message.publish_time,
                d.decoded_message.clock.sec,
                d.decoded_message.clock.nanosec,
            )
            for d in reader.iter_decoded_messages(topics=["/clock"])
        ]
    assert got == [
        (2_999_999_990, 2_999_999_990, 2, 999_999_990),
        (3_000_000_001, 3_000_000_001, 3, 1),
        (3_000_000_010, 3_000_000_010, 3, 10),
    ]


def test_C_MCAP_3_clock_period_records_every_grid_point(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    clock = HeapSimClock(0, start_ns=3)
    with Recorder(path, clock.bus, seed=0, clock_period_ns=4) as rec:
        clock.schedule(9, lambda: clock.bus.publish("/a", 1))
        clock.advance(10)
        rec.clock_tick(13)
        rec.clock_tick(13)
        with pytest.raises(
            SimclockValueError,
            match=r"^session_ns=12 is before the last recorded time 13 ns; /clock must not go "
            r"back$",
        ):
            rec.clock_tick(12)
    rows, _ = _read(path)
    assert [(r[0], r[1]) for r in rows] == [
        ("/clock", 4),
        ("/clock", 8),
        ("/a", 9),
        ("/clock", 12),
        ("/clock", 13),
    ]
    with pytest.raises(
        SimclockRuntimeError,
        match=r"^clock_tick\(\) on a closed Recorder for '.*run.mcap'; create a new Recorder$",
    ):
        rec.clock_tick(20)


def test_C_DET_1_same_run_gives_a_byte_identical_file(tmp_path: Path) -> None:
    _scenario(tmp_path / "1.mcap")
    _scenario(tmp_path / "2.mcap")
    assert (tmp_path / "1.mcap").read_bytes() == (tmp_path / "2.mcap").read_bytes()
    _scenario(tmp_path / "3.mcap", seed=6)
    assert (tmp_path / "1.mcap").read_bytes() != (tmp_path / "3.mcap").read_bytes()


def test_draws_are_recorded_per_label(tmp_path: Path) -> None:
    path = tmp_path / "draws.mcap"
    bus = Bus()
    with Recorder(path, bus, seed=4, record_draws=True) as rec:
        assert rec.draw_observer is not None
        root = SeededRandomSource(4, observer=rec.draw_observer)
        a = root.child("imu")
        x = a.uniform(0.0, 1.0)
        arr = a.normal(0.0, 2.0, size=(2,))
        k = root.integers(0, 10)
    rows, meta = _read(path)
    draws = [(r[0], json.loads(r[4])) for r in rows if r[0].startswith("/simclock/draws")]
    assert draws == [
        ("/simclock/draws/imu", {"args": [0.0, 1.0], "index": 0, "method": "uniform", "value": x}),
        (
            "/simclock/draws/imu",
            {
                "args": [0.0, 2.0, [2]],
                "index": 1,
                "method": "normal",
                "value": {"data": arr.tolist(), "dtype": "float64", "shape": [2]},
            },
        ),
        ("/simclock/draws", {"args": [0, 10, None], "index": 0, "method": "integers", "value": k}),
    ]
    assert meta["simclock"]["record_draws"] == "true"
    assert json.loads(meta["simclock"]["draw_labels"]) == ["/", "/imu"]


def test_unserialisable_payload_is_not_dropped_silently(tmp_path: Path) -> None:
    path = tmp_path / "bad.mcap"
    bus = Bus()
    rec = Recorder(path, bus, seed=0)
    bus.publish("/a", {"ok": 1}, stamp_ns=0)
    bus.publish("/a", {1, 2}, stamp_ns=1)
    with pytest.raises(
        SimclockRuntimeError,
        match=r"^recording '.*bad.mcap' is incomplete: message sequence=1 on '/a' at 1 ns was "
        r"not recorded: payload is not JSON-serialisable \(set \{1, 2\}\); .*$",
    ):
        rec.close()
    rows, meta = _read(path)
    assert meta["simclock"]["fingerprint"] == ""
    assert meta["simclock"]["error"].startswith("message sequence=1 on '/a' at 1 ns")
    # The bus reported the recorder's failure (C-BUS-4) and that report was recorded.
    assert [r[0] for r in rows if r[0] != "/clock"] == ["/a", EVENTS_TOPIC]
    rec.close()  # idempotent


def test_out_of_order_delivery_is_refused(tmp_path: Path) -> None:
    bus = Bus()
    rec = Recorder(tmp_path / "x.mcap", bus, seed=0)
    seen: list[str] = []
    bus.subscribe(simclock.EVENTS_TOPIC, lambda m: seen.append(m.payload.details["error_message"]))
    bus.deliver(Message("/a", 5, 3, 1))
    bus.deliver(Message("/a", 5, 2, 1))
    assert seen == [
        "cannot record message sequence=2 at 5 ns on '/a' arrived after sequence=3 at 5 ns "
        "(not in total order)"
    ]
    with pytest.raises(SimclockRuntimeError, match=r"is incomplete: message sequence=2"):
        rec.close()


def test_C_MCAP_1_message_before_start_ns_is_refused(tmp_path: Path) -> None:
    # Written anyway, it made a file that ReplayClock refuses (stamps before the start).
    path = tmp_path / "early.mcap"
    bus = Bus()
    rec = Recorder(path, bus, seed=0, start_ns=100)
    with pytest.raises(
        SimclockRuntimeError,
        match=r"^cannot record message sequence=0 at 5 ns on '/a': it is before the "
        r"recording's start_ns=100$",
    ):
        rec.record(Message("/a", 5, 0, 1))
    assert rec.message_count == 0
    rec.record(Message("/a", 100, 1, 2))  # at the start instant: recorded
    assert rec.message_count == 1
    with pytest.raises(SimclockRuntimeError, match=r"is incomplete: message sequence=0 at 5 ns"):
        rec.close()


def _unchecked(topic: object, stamp_ns: object, sequence: object, payload: object) -> Message:
    """A Message built around its own validation (issue 14): the Recorder must still refuse it."""
    message = object.__new__(Message)
    for name, value in zip(
        ("topic", "stamp_ns", "sequence", "payload"),
        (topic, stamp_ns, sequence, payload),
        strict=True,
    ):
        object.__setattr__(message, name, value)
    return message


@pytest.mark.parametrize(
    ("message", "error", "text"),
    [
        (
            _unchecked("/a", 1.5, 0, 1),
            SimclockTypeError,
            r"message stamp_ns must be an int of nanoseconds, got float 1.5; convert seconds "
            r"explicitly, e.g. simclock.seconds_to_ns\(\.\.\.\)",
        ),
        (
            _unchecked("/a", 1, -3, 1),
            SimclockValueError,
            r"message sequence must be an int >= 0, got int -3",
        ),
        (
            _unchecked("/a", 1, True, 1),
            SimclockTypeError,
            r"message sequence must be an int >= 0, got bool True",
        ),
        (
            _unchecked(5, 1, 0, 1),
            SimclockTypeError,
            r"message topic must be a str, got int 5",
        ),
    ],
)
def test_C_MCAP_1_a_malformed_message_is_refused_and_the_file_still_closes(
    tmp_path: Path, message: Message, error: type[Exception], text: str
) -> None:
    # These raised bare struct/Attribute/TypeErrors, wrote a file ReplayClock refuses
    # (sequence -1 or true), or broke close() itself (an int topic).
    path = tmp_path / "m.mcap"
    rec = Recorder(path, Bus(), seed=0)
    with pytest.raises(error, match=rf"^{text}$"):
        rec.record(message)
    assert rec.message_count == 0
    with pytest.raises(
        SimclockRuntimeError, match=rf"^recording '.*m.mcap' is incomplete: {text}$"
    ):
        rec.close()
    rows, meta = _read(path)
    assert meta["simclock"]["message_count"] == "0"
    assert [r[0] for r in rows] == ["/clock"]  # the start instant, written by close()
    with pytest.raises(
        SimclockTypeError, match=r"^message must be a simclock.Message, got dict \{'topic': '/a'\}$"
    ):
        Recorder(tmp_path / "n.mcap", Bus(), seed=0).record({"topic": "/a"})  # type: ignore[arg-type]


def test_C_MCAP_1_record_on_a_closed_recorder_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "closed.mcap"
    rec = Recorder(path, Bus(), seed=0)
    rec.record(Message("/a", 1, 0, 1))
    rec.close()
    data = path.read_bytes()
    with pytest.raises(
        SimclockRuntimeError,
        match=r"^record\(\) on a closed Recorder for '.*closed.mcap'; create a new Recorder$",
    ):
        rec.record(Message("/a", 2, 1, 1))
    assert (rec.message_count, path.read_bytes()) == (1, data)
    rec.close()  # idempotent


def test_C_MCAP_1_raw_payloads_are_recorded_and_replayed(tmp_path: Path) -> None:
    # A RawPayload (a foreign file's replay, re-recorded) used to fail with a bare
    # KeyError inside the Recorder: the message was missing and close() said nothing.
    path = tmp_path / "raw.mcap"
    bus = Bus()
    fp = Fingerprinter()
    bus.subscribe(None, fp)
    live: list[Message] = []
    bus.subscribe(None, live.append)
    with Recorder(path, bus, seed=0) as rec:
        bus.publish("/r", simclock.RawPayload("cdr", "pkg/Pose", b"\x00\x01\xff"), stamp_ns=1)
        bus.publish("/j", {"a": 1}, stamp_ns=1)
        bus.publish("/r", simclock.RawPayload("cdr", "pkg/Pose", b""), stamp_ns=2)
    assert [m.topic for m in live] == ["/r", "/j", "/r"]
    assert rec.message_count == 3
    assert rec.fingerprint() == fp.hexdigest()
    rows, _ = _read(path)
    assert [json.loads(r[4]) for r in rows if r[0] == "/r"] == [
        {"payload": {"data": "0001ff", "encoding": "cdr", "schema": "pkg/Pose"}, "sequence": 0},
        {"payload": {"data": "", "encoding": "cdr", "schema": "pkg/Pose"}, "sequence": 2},
    ]
    with simclock.ReplayClock(path) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        clock.advance(clock.end_ns())
    assert got == live


def test_C_MCAP_1_one_channel_per_topic_a_second_payload_kind_is_refused(
    tmp_path: Path,
) -> None:
    # An Event on a topic of plain payloads (or a bus message on /clock) used to open a
    # second channel with the same topic. (A Clock-shaped /clock message is recorded on the
    # /clock channel, C-BUS-5; any other payload there is refused.)
    clock_only = (
        "a bus message on '/clock' must carry rosgraph_msgs/msg/Clock "
        '({"clock": {"sec": int, "nanosec": int}}, as a Session publishes); publish other '
        "payloads on a topic of their own"
    )
    cases: list[tuple[str, Any, Any, tuple[str, str] | str]] = [
        ("/m", {"a": 1}, simclock.Event(simclock.EventKind.PACING_LAG, 2, {}), ("event", "json")),
        ("/m", simclock.Event(simclock.EventKind.PACING_LAG, 2, {}), 1, ("json", "event")),
        ("/clock", None, 1, clock_only),
    ]
    for topic, first, second, reason in cases:
        why = (
            f"a payload of kind '{reason[0]}' on a topic whose channel carries kind "
            f"'{reason[1]}' (one channel per topic, C-MCAP-1); publish it on a topic of its own"
            if isinstance(reason, tuple)
            else reason
        )
        path = tmp_path / "mixed.mcap"
        rec = Recorder(path, Bus(), seed=0)
        if first is not None:
            rec.record(Message(topic, 2, 0, first))
        with pytest.raises(
            SimclockRuntimeError,
            match=rf"^cannot record message sequence=1 at 2 ns on '{topic}': {re.escape(why)}$",
        ):
            rec.record(Message(topic, 2, 1, second))
        with pytest.raises(SimclockRuntimeError, match=r"is incomplete: message sequence=1"):
            rec.close()
        with path.open("rb") as f:
            summary = make_reader(f).get_summary()
        assert summary is not None
        topics = [ch.topic for ch in summary.channels.values()]
        assert len(topics) == len(set(topics))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seed": -1}, SimclockValueError, r"^seed must be >= 0, got -1$"),
        ({"seed": 1.0}, SimclockTypeError, r"^seed must be an int, got float 1.0$"),
        (
            {"seed": 1, "metadata": {"a": 1}},
            SimclockTypeError,
            r"^metadata must map str to str \(MCAP metadata is text\), got 'a': 1; convert "
            r"values with str\(\) or json.dumps\(\)$",
        ),
        (
            {"seed": 1, "compression": "gzip"},
            SimclockValueError,
            r"^compression must be one of 'zstd', 'lz4', 'none', got 'gzip'$",
        ),
        (
            {"seed": 1, "clock_period_ns": 0},
            SimclockValueError,
            r"^clock_period_ns must be > 0 ns, got 0$",
        ),
        (
            {"seed": 1, "chunk_size": 0},
            SimclockValueError,
            r"^chunk_size must be a positive int of bytes, got 0$",
        ),
        (
            {"seed": 1, "chunk_size": True},
            SimclockTypeError,
            r"^chunk_size must be an int of bytes, got bool True$",
        ),
        (
            {"seed": 1, "chunk_size": "4096"},
            SimclockTypeError,
            r"^chunk_size must be an int of bytes, got str '4096'$",
        ),
        (
            {"seed": 1, "compression": ["zstd"]},
            SimclockTypeError,
            r"^compression must be a str \('zstd', 'lz4' or 'none'\), got list \['zstd'\]$",
        ),
        (
            {"seed": 1, "record_draws": 1},
            SimclockTypeError,
            r"^record_draws must be a bool, got 1$",
        ),
    ],
)
def test_bad_arguments_are_refused_before_the_file_exists(
    tmp_path: Path, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    bus = Bus()
    with pytest.raises(error, match=message):
        Recorder(tmp_path / "r.mcap", bus, **kwargs)
    assert not (tmp_path / "r.mcap").exists()
    bus.publish("/a", 1, stamp_ns=0)  # nothing subscribed: no error
    with pytest.raises(SimclockTypeError, match=r"^bus must be a simclock.Bus, got None$"):
        Recorder(tmp_path / "r.mcap", None, seed=1)  # type: ignore[arg-type]


def test_unwritable_path_is_a_simclock_error_and_subscribes_nothing(tmp_path: Path) -> None:
    bus = Bus()
    missing = tmp_path / "no" / "r.mcap"
    with pytest.raises(
        SimclockValueError,
        match=r"^path '.*no/r.mcap' cannot be written \(FileNotFoundError: .*\); pass a file "
        r"path in an existing, writable directory$",
    ):
        Recorder(missing, bus, seed=1)
    with pytest.raises(SimclockValueError, match=r"cannot be written \(IsADirectoryError"):
        Recorder(tmp_path, bus, seed=1)
    seen: list[Message] = []
    bus.subscribe(None, seen.append)
    bus.publish("/a", 1, stamp_ns=0)  # only the test's subscriber: nothing else failed
    assert [m.topic for m in seen] == ["/a"]


def test_event_from_json_inverts_to_json() -> None:
    event = simclock.Event(simclock.EventKind.PACING_LAG, 7, {"lag_ns": 2})
    assert simclock.Event.from_json(event.to_json()) == event
    with pytest.raises(SimclockValueError, match=r"^event must have a 'kind' among \["):
        simclock.Event.from_json({"kind": "NOPE", "at_ns": 1, "details": {}})


@pytest.mark.parametrize(
    "session_ns",
    [
        0,
        1,
        999_999_999,
        1_000_000_000,
        1_700_000_000_123_456_789,
        (2**31 - 1) * 10**9 + 999_999_999,
    ],
)
def test_C_MCAP_3_clock_bytes_equal_the_schema_driven_encoder(session_ns: int) -> None:
    from simclock.recording._recorder import clock_encoder, encode_clock

    sec, nanosec = divmod(session_ns, 10**9)
    assert encode_clock(session_ns) == clock_encoder()({"clock": {"sec": sec, "nanosec": nanosec}})


def test_C_MCAP_3_clock_past_int32_seconds_is_refused(tmp_path: Path) -> None:
    from simclock.recording._recorder import encode_clock

    with pytest.raises(
        SimclockValueError,
        match=r"^session time 2147483648000000000 ns is past the int32 seconds of "
        r"builtin_interfaces/Time; /clock cannot carry it$",
    ):
        encode_clock(2**31 * 10**9)
    bus = Bus()
    rec = Recorder(tmp_path / "far.mcap", bus, seed=0)
    bus.deliver(Message("/a", 2**31 * 10**9, 0, 1))
    with pytest.raises(SimclockRuntimeError, match=r"is incomplete: /clock at 2147483648000000000"):
        rec.close()


def test_C_MCAP_3_clock_past_int32_seconds_never_breaks_the_run_or_the_file(
    tmp_path: Path,
) -> None:
    # close() left a file without footer and raised a bare ValueError; a draw at such a
    # time raised inside the run's own random stream.
    far = 2**31 * 10**9
    clock = HeapSimClock(0)
    path = tmp_path / "far.mcap"
    rec = Recorder(path, clock.bus, seed=0, record_draws=True)
    clock.advance(far)
    with pytest.raises(
        SimclockRuntimeError,
        match=r"^recording '.*far.mcap' is incomplete: /clock at 2147483648000000000 ns was not "
        r"recorded: session time 2147483648000000000 ns is past the int32 seconds of "
        r"builtin_interfaces/Time; /clock cannot carry it$",
    ):
        rec.close()
    with pytest.raises(
        simclock.RecordingError, match=r"^.*far.mcap: offset \d+: the recording is incomplete"
    ):
        simclock.ReplayClock(path)
    bus = Bus()
    rec = Recorder(tmp_path / "far2.mcap", bus, seed=0, record_draws=True)
    clock = HeapSimClock(0, bus=bus, start_ns=far, draw_observer=rec.draw_observer)
    assert clock.random_source().uniform(0, 1) == HeapSimClock(0).random_source().uniform(0, 1)
    with pytest.raises(SimclockValueError, match=r"^session time 2147483649000000000 ns is past"):
        rec.clock_tick(far + 10**9)  # a direct call is refused
    with pytest.raises(SimclockRuntimeError, match=r"is incomplete: /clock at "):
        rec.close()


def test_C_REP_3_heap_clock_draw_observer_sees_every_draw(tmp_path: Path) -> None:
    path = tmp_path / "obs.mcap"
    bus = Bus()
    with Recorder(path, bus, seed=9, record_draws=True) as rec:
        clock = HeapSimClock(9, bus=bus, draw_observer=rec.draw_observer)
        root = clock.random_source()
        values = [root.uniform(0.0, 1.0), root.child("a").child("b").integers(0, 5)]
    reference = SeededRandomSource(9)
    assert values == [reference.uniform(0.0, 1.0), reference.child("a/b").integers(0, 5)]
    rows, _ = _read(path)
    assert [(r[0], json.loads(r[4])["value"]) for r in rows if r[0] != "/clock"] == [
        ("/simclock/draws", values[0]),
        ("/simclock/draws/a/b", values[1]),
    ]
    with pytest.raises(SimclockTypeError, match=r"^draw_observer must be callable or None, got 3$"):
        HeapSimClock(0, draw_observer=3)  # type: ignore[arg-type]
