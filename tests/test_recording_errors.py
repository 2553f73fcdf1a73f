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


def test_C_MCAP_4_a_raw_payload_with_str_data_is_the_recordings_error(tmp_path: Path) -> None:
    # It failed inside its conversion, the message was dropped and close() succeeded.
    path = tmp_path / "raw.mcap"
    clock = HeapSimClock(0)
    events = _events(clock.bus)
    rec = Recorder(path, clock.bus, seed=0)
    clock.bus.publish("/raw", RawPayload("cbor", "", "not bytes"))  # type: ignore[arg-type]
    clock.advance(1)
    assert [(e.kind, e.details["error_type"]) for e in events] == [
        ("SUBSCRIBER_FAILED", "SimclockTypeError")
    ]
    with pytest.raises(SimclockRuntimeError, match=r"^the recording has no fingerprint: message "):
        rec.fingerprint()
    with pytest.raises(
        SimclockRuntimeError,
        match=rf"^recording '{re.escape(str(path))}' is incomplete: message sequence=0 on '/raw' "
        r"at 0 ns was not recorded: its payload could not be converted \(AttributeError: 'str' "
        r"object has no attribute 'hex'\)$",
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
    out.append(root.normal(0.0, math.nan))
    out.append(root.normal(math.inf, 1.0))
    with pytest.raises(OverflowError):
        root.uniform(math.nan, 1.0)
    out.append(root.uniform(0.0, 1.0))
    clock.advance(1)
    if rec is not None:
        rec.close()
    return out


def test_nan_draws_behave_the_same_with_and_without_recording(tmp_path: Path) -> None:
    # With record_draws=True a NaN value raised inside the draw; without, it returned NaN.
    plain = _draw_run(None)
    path = tmp_path / "nan.mcap"
    recorded = _draw_run(path)
    assert repr(recorded) == repr(plain)
    assert math.isnan(plain[0]) and plain[1] == math.inf
    with ReplayClock(path) as clock:
        root = clock.random_source()
        assert math.isnan(root.normal(0.0, math.nan))
        assert root.normal(math.inf, 1.0) == math.inf
        # Refused for its arguments, as live: the recorded draw is not consumed.
        with pytest.raises(OverflowError):
            root.uniform(math.nan, 1.0)
        with pytest.raises(SimclockValueError, match=r"^sigma must be >= 0, got -1.0$"):
            root.normal(0.0, -1.0)
        with pytest.raises(SimclockRuntimeError, match=r"^draw 2 of label '/': asked normal"):
            root.normal(0.0, 1.0)
        assert root.uniform(0.0, 1.0) == plain[2]


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
