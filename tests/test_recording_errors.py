"""C-MCAP-4 and the edges of recording: nothing is dropped silently, errors name the file.

Also: an ``Event`` of an unknown kind is refused when it is made; a refused
replayed draw consumes nothing; a NaN draw behaves the same with and without
recording; a ``Session`` and a ``Recorder`` with their defaults make a valid
recording (C-BUS-5).
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import simclock.recording._recorder as recorder_module
from simclock import (
    Bus,
    Event,
    GridClock,
    HeapSimClock,
    Message,
    RawPayload,
    Recorder,
    ReplayClock,
    Session,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
    trace_fingerprint,
)
from simclock.cli._main import main


def _events(bus: Bus) -> list[Any]:
    seen: list[Any] = []
    bus.subscribe("/simclock/events", lambda m: seen.append(m.payload))
    return seen


class _NoList(np.ndarray):
    """An array whose conversion fails with an error no JSON encoder expects."""

    def tolist(self) -> Any:
        raise RuntimeError("tolist is broken")


def test_C_MCAP_4_a_payload_whose_conversion_fails_is_the_recordings_error(
    tmp_path: Path,
) -> None:
    # A RawPayload with str data failed inside its conversion (AttributeError): the message
    # was dropped and close() succeeded. RawPayload now refuses str data when it is made;
    # any other conversion failure, of any type, is the recording's error.
    with pytest.raises(SimclockTypeError, match=r"^data must be bytes, got str 'x'$"):
        RawPayload("cbor", "", "x")  # type: ignore[arg-type]
    path = tmp_path / "raw.mcap"
    clock = HeapSimClock(0)
    events = _events(clock.bus)
    rec = Recorder(path, clock.bus, seed=0)
    clock.bus.publish("/raw", {"v": np.zeros(2).view(_NoList)})
    clock.advance(1)
    assert [(e.kind, e.details["error_type"]) for e in events] == [
        ("SUBSCRIBER_FAILED", "SimclockTypeError")
    ]
    with pytest.raises(SimclockRuntimeError, match=r"^the recording has no fingerprint: message "):
        rec.fingerprint()
    with pytest.raises(
        SimclockRuntimeError,
        match=rf"^recording '{re.escape(str(path))}' is incomplete: message sequence=0 on '/raw' "
        r"at 0 ns was not recorded: its payload could not be converted \(RuntimeError: tolist "
        r"is broken\)$",
    ):
        rec.close()


class _FlakyFile(io.BufferedWriter):
    """A file whose ``fail_at``-th write raises ``OSError`` once (a transient error)."""

    def __init__(self, path: str, fail_at: int) -> None:
        super().__init__(io.FileIO(path, "wb"))
        self.writes = 0
        self.fail_at = fail_at

    def write(self, data: Any) -> int:
        self.writes += 1
        if self.writes == self.fail_at:
            raise OSError(5, "Input/output error")
        return super().write(data)


def test_C_MCAP_4_a_transient_write_error_is_never_silent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A write error lost messages while close() succeeded and fingerprint() answered.
    path = tmp_path / "flaky.mcap"
    monkeypatch.setattr(
        recorder_module, "open", lambda p, mode: _FlakyFile(p, fail_at=6), raising=False
    )
    clock = HeapSimClock(0)
    events = _events(clock.bus)
    rec = Recorder(path, clock.bus, seed=0, chunk_size=64)
    clock.schedule_periodic(1, lambda: clock.bus.publish("/a", {"pad": "x" * 40}))
    clock.advance(20)
    assert events and events[0].details["error_type"] == "SimclockRuntimeError"
    with pytest.raises(SimclockRuntimeError, match=r"^the recording has no fingerprint: "):
        rec.fingerprint()
    with pytest.raises(
        SimclockRuntimeError,
        match=rf"^recording '{re.escape(str(path))}' is incomplete: the file could not be "
        r"written \(OSError: \[Errno 5\] Input/output error\)$",
    ):
        rec.close()
    assert rec.closed


def test_C_MCAP_4_a_full_disk_is_refused_naming_the_file() -> None:
    # close() raised a bare OSError. The start of the recording is flushed at once (for
    # simclock recover), so a full disk is found when the Recorder is made.
    clock = HeapSimClock(0)
    with pytest.raises(
        SimclockRuntimeError,
        match=r"^recording '/dev/full' is incomplete: the file could not be written "
        r"\(OSError: \[Errno 28\] No space left on device\)$",
    ):
        Recorder("/dev/full", clock.bus, seed=0)
    assert clock.bus.clock is clock  # nothing subscribed: the bus is as it was
    clock.bus.publish("/a", 1)


def test_C_MCAP_4_cli_run_to_a_full_disk_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = Path(__file__).resolve().parent.parent / "examples" / "pendulum.toml"
    code = main(["run", str(scenario), "--out", "/dev/full", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("simclock run: error: recording '/dev/full'")
    assert "No space left on device" in err


def test_unknown_event_kinds_are_refused_when_made() -> None:
    with pytest.raises(
        SimclockValueError,
        match=r"^kind must be one of \['SCHEDULER_CALLBACK_FAILED', 'SUBSCRIBER_FAILED', "
        r"'PERIODIC_DEADLINE_MISSED', 'PACING_LAG', 'EPISODE_RESET'\], got 'CUSTOM_KIND'; publish "
        r"your own records as plain payloads on a topic of your own$",
    ):
        Event("CUSTOM_KIND", 0, {})  # type: ignore[arg-type]
    with pytest.raises(SimclockTypeError, match=r"^kind must be a simclock.EventKind, got int 3$"):
        Event(3, 0, {})  # type: ignore[arg-type]
    assert (
        Event("EPISODE_RESET", 5, {}).kind  # type: ignore[arg-type]
        is Event.from_json({"kind": "EPISODE_RESET", "at_ns": 5}).kind
    )


def _draw_run(path: Path | None) -> list[Any]:
    bus = Bus()
    out: list[Any] = []
    rec = Recorder(path, bus, seed=4, record_draws=True) if path is not None else None
    clock = HeapSimClock(4, bus=bus, draw_observer=rec.draw_observer if rec else None)
    root = clock.random_source()
    for bad in (lambda: root.normal(0.0, math.nan), lambda: root.uniform(math.nan, 1.0)):
        with pytest.raises(SimclockValueError) as refused:
            bad()
        out.append(str(refused.value))
    out.append(root.uniform(0.0, 1.0))
    out.append(root.normal(0.0, 1.0, size=2).tolist())
    clock.advance(1)
    if rec is not None:
        rec.close()
    return out


def test_NaN_draws_behave_the_same_with_and_without_recording_and_in_replay(
    tmp_path: Path,
) -> None:
    # With record_draws=True a NaN draw raised inside the draw (the observer could not encode
    # it); without, it returned NaN. NaN arguments are now refused before drawing, the same
    # way live, recorded and replayed, and a refused replayed draw consumes nothing.
    plain = _draw_run(None)
    path = tmp_path / "nan.mcap"
    assert _draw_run(path) == plain
    assert plain[:2] == [
        "sigma must be finite, got nan",
        "a must be finite, got nan",
    ]
    with ReplayClock(path) as clock:
        root = clock.random_source()
        with pytest.raises(SimclockValueError, match=r"^sigma must be finite, got nan$"):
            root.normal(0.0, math.nan)
        with pytest.raises(SimclockValueError, match=r"^a must be finite, got nan$"):
            root.uniform(math.nan, 1.0)
        with pytest.raises(SimclockValueError, match=r"^sigma must be >= 0, got -1.0$"):
            root.normal(0.0, -1.0)
        with pytest.raises(SimclockRuntimeError, match=r"^draw 0 of label '/': asked normal"):
            root.normal(0.0, 1.0)
        assert root.uniform(0.0, 1.0) == plain[2]
        assert root.normal(0.0, 1.0, size=2).tolist() == plain[3]


def test_non_finite_draw_values_round_trip_through_the_draw_encoding() -> None:
    from simclock.recording._format import decode_draw_value, encode_draw_value

    value = np.array([math.nan, math.inf, -math.inf, 1.5])
    encoded = encode_draw_value(value)
    assert encoded["data"] == [{"float": "nan"}, {"float": "inf"}, {"float": "-inf"}, 1.5]
    back = decode_draw_value(encoded)
    assert repr(back.tolist()) == repr(value.tolist()) and back.dtype == value.dtype
    assert math.isnan(decode_draw_value(encode_draw_value(math.nan)))


def test_C_BUS_5_a_session_and_a_recorder_with_defaults_make_a_valid_recording(
    tmp_path: Path,
) -> None:
    # Session publishes /clock by default and Recorder reserved /clock: close() called the
    # file incomplete. Now the session's /clock is recorded on the rosgraph /clock channel.
    path = tmp_path / "session.mcap"
    clock = GridClock(2, 1_000_000)
    live: list[Message] = []
    clock.bus.subscribe(None, live.append)
    with Recorder(path, clock.bus, seed=2) as rec:
        session = Session(clock)
        session.advance(5_000_000)
    clocks = [m for m in live if m.topic == "/clock"]
    assert [m.payload for m in clocks][:2] == [
        {"clock": {"sec": 0, "nanosec": 0}},
        {"clock": {"sec": 0, "nanosec": 1_000_000}},
    ]
    assert rec.fingerprint() == trace_fingerprint(live)
    replayed: list[Message] = []
    with ReplayClock(path) as replay:
        replay.bus.subscribe(None, replayed.append)
        replay.advance(replay.end_ns() - replay.now_ns())
    assert replayed == live
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    with path.open("rb") as f:
        decoded = [
            (m.log_time, msg.clock.sec, msg.clock.nanosec)
            for _s, c, m, msg in make_reader(
                f, decoder_factories=[DecoderFactory()]
            ).iter_decoded_messages(topics=["/clock"])
        ]
    assert decoded == [(m.stamp_ns, 0, m.stamp_ns) for m in clocks]
