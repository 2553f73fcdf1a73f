"""SPEC §5 (C-REP-1..4): ReplayClock over Recorder files and other writers' files."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcap.reader import make_reader
from mcap.records import Message as McapMessage
from mcap.writer import CompressionType, Writer
from test_replay_helpers import record, replace_in_data, resealed, rewrite

import simclock
from simclock import (
    EVENTS_TOPIC,
    Bus,
    Event,
    EventKind,
    HeapSimClock,
    Message,
    RawPayload,
    Recorder,
    RecordingError,
    ReplayClock,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
)


@pytest.fixture(scope="module")
def recorded(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[Message], str, list[Any]]:
    path = tmp_path_factory.mktemp("rec") / "run.mcap"
    live, fingerprint, draws = record(path)
    return path, live, fingerprint, draws


def _replay_all(path: Path, **kw: Any) -> list[Message]:
    got: list[Message] = []
    with ReplayClock(path, **kw) as clock:
        clock.bus.subscribe(None, got.append)
        clock.advance(clock.end_ns() - clock.now_ns())
    return got


# -- C-REP-4 -------------------------------------------------------------------------


def test_C_REP_4_round_trip_gives_the_identical_message_sequence(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, live, fingerprint, _ = recorded
    got = _replay_all(path)
    assert got == live
    # The scenario has what the contract asks for: several topics, equal stamps,
    # callback failures (events) and a future-stamped message.
    assert {m.topic for m in live} == {"/imu", "/odom", "/odom/late", "/cmd", EVENTS_TOPIC}
    stamps = [m.stamp_ns for m in live]
    assert len(stamps) > len(set(stamps))
    failures = [m.payload for m in got if m.topic == EVENTS_TOPIC]
    assert failures[0] == Event(
        EventKind.SCHEDULER_CALLBACK_FAILED,
        4,
        {
            "callback": "scenario.<locals>.flaky",
            "error_type": "ValueError",
            "error_message": "flaky at 4",
        },
    )
    assert simclock.trace_fingerprint(got) == fingerprint


def test_C_REP_4_round_trip_past_2_32_sequences(tmp_path: Path) -> None:
    path = tmp_path / "wrap.mcap"
    bus = Bus()
    msgs = [
        Message("/a", 1, 2**32 - 1, 0),
        Message("/a", 1, 2**32, 1),
        Message("/b", 2, 2**32 + 1, 2),
    ]
    with Recorder(path, bus, seed=0):
        for m in msgs:
            bus.deliver(m)
    assert _replay_all(path) == msgs


# -- C-REP-1 -------------------------------------------------------------------------


@given(st.lists(st.integers(0, 12), min_size=1, max_size=12))
def test_C_REP_1_advance_delivers_exactly_the_half_open_window(
    recorded: tuple[Path, list[Message], str, list[Any]], dts: list[int]
) -> None:
    path, live, _, _ = recorded
    with ReplayClock(path) as clock:
        seen: list[tuple[Message, int]] = []
        clock.bus.subscribe(None, lambda m: seen.append((m, clock.now_ns())))
        assert clock.now_ns() == 0
        first = True
        for dt in dts:
            before = clock.now_ns()
            start = len(seen)
            clock.advance(dt)
            assert clock.now_ns() == before + dt
            window = [m for m, _ in seen[start:]]
            expected = [
                m
                for m in live
                if (before <= m.stamp_ns if first else before < m.stamp_ns)
                and m.stamp_ns <= before + dt
            ]
            assert window == expected
            first = False
        # C-ADV-2 analogue: during delivery now_ns() is the message's stamp.
        assert all(now == m.stamp_ns for m, now in seen)


def test_C_REP_1_first_advance_includes_the_start_instant(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, live, _, _ = recorded
    with ReplayClock(path) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        clock.advance(0)
        assert got == [m for m in live if m.stamp_ns == 0]
        assert got
        clock.advance(0)
        assert got == [m for m in live if m.stamp_ns == 0]


def test_C_REP_1_topic_filter_and_next_event(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, live, _, _ = recorded
    assert _replay_all(path, topics=["/odom", "/cmd"]) == [
        m for m in live if m.topic in {"/odom", "/cmd"}
    ]
    with ReplayClock(path, topics=["/cmd"]) as clock:
        assert clock.next_event_ns() == 8
        clock.advance(8)
        assert clock.next_event_ns() is None
    with pytest.raises(SimclockTypeError, match=r"^topics must be an iterable of topic names"):
        ReplayClock(path, topics="/cmd")


def test_C_ADV_4_advance_from_a_subscriber_is_refused(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, _, _, _ = recorded
    errors: list[str] = []
    with ReplayClock(path, topics=["/cmd"]) as clock:

        def nested(_m: Message) -> None:
            with pytest.raises(SimclockRuntimeError) as info:
                clock.advance(1)
            errors.append(str(info.value))

        clock.bus.subscribe("/cmd", nested)
        clock.advance(10)
        assert clock.now_ns() == 10
    assert (
        errors
        == [
            "advance(dt_ns=1) called from inside a callback or subscriber at now=8 ns; schedule "
            "the work with schedule() instead"
        ]
        * 2
    )


# -- seek ----------------------------------------------------------------------------


def test_C_TIME_2_seek_skips_forward_and_never_goes_back(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, live, _, _ = recorded
    with ReplayClock(path, callbacks=True) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        fired: list[int] = []
        handle = clock.schedule_periodic(5, lambda: fired.append(clock.now_ns()))
        once = clock.schedule(3, lambda: fired.append(-1))
        clock.advance(2)
        clock.seek(14)
        with pytest.raises(
            SimclockValueError,
            match=r"^t_ns=13 is before now=14 ns; replay time never goes back, open a new "
            r"ReplayClock to start over$",
        ):
            clock.seek(13)
        assert clock.now_ns() == 14
        clock.advance(6)
        assert got == [m for m in live if m.stamp_ns <= 2 or 14 <= m.stamp_ns <= 20]
        assert fired == [0, 15, 20]
        assert handle.stats().skipped == 2  # 5 and 10
        assert once.stats().skipped == 1
        clock.seek(clock.end_ns())
        clock.advance(0)
        end = clock.end_ns()
        assert got == [
            m for m in live if m.stamp_ns <= 2 or 14 <= m.stamp_ns <= 20 or m.stamp_ns == end
        ]
        assert got[-1].stamp_ns == end


def test_C_REP_1_a_closed_replay_clock_refuses_to_run(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    # It used to report the closed file as a damaged recording (RecordingError) and keep
    # that error; draws reopened the file after close.
    path, live, _, _ = recorded
    clock = ReplayClock(path)
    got: list[Message] = []
    clock.bus.subscribe(None, got.append)
    clock.advance(2)
    root = clock.random_source()
    clock.close()
    clock.close()  # idempotent
    name = r"'.*run.mcap'"
    calls: list[tuple[Callable[[], object], str]] = [
        (lambda: clock.advance(10), r"advance\(dt_ns=10\)"),
        (lambda: clock.seek(10), r"seek\(t_ns=10\)"),
        (clock.next_event_ns, r"next_event_ns\(\)"),
        (clock.random_source, r"random_source\(\)"),
        (lambda: root.child("odom").integers(0, 100), r"draws\(\)"),
    ]
    for call, text in calls:
        with pytest.raises(
            SimclockRuntimeError,
            match=rf"^{text} on a closed recording {name}; open a new ReplayClock$",
        ):
            call()
    assert clock.now_ns() == 2
    assert got == [m for m in live if m.stamp_ns <= 2]


# -- C-REP-2 -------------------------------------------------------------------------


def test_C_REP_2_control_callbacks_do_not_run_by_default(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, _, _, _ = recorded
    ran: list[int] = []
    with ReplayClock(path) as clock:
        h1 = clock.schedule(5, lambda: ran.append(1))
        h2 = clock.schedule_periodic(2, lambda: ran.append(2))
        clock.advance(40)
        h1.cancel()
        h2.cancel()
        with pytest.raises(SimclockValueError, match=r"^at_ns=3 is in the past \(now is 40 ns\)"):
            clock.schedule(3, lambda: None)
    assert ran == []


def test_C_REP_2_callbacks_enabled_run_in_order_with_recorded_messages_first(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, _, _, _ = recorded
    trace: list[tuple[int, str]] = []
    with ReplayClock(path, callbacks=True, topics=["/cmd", "/odom"]) as clock:
        clock.bus.subscribe(None, lambda m: trace.append((m.stamp_ns, m.topic)))
        clock.schedule(8, lambda: trace.append((clock.now_ns(), "cb-a")))
        clock.schedule(8, lambda: trace.append((clock.now_ns(), "cb-b")))
        clock.schedule_periodic(3, lambda: trace.append((clock.now_ns(), "p3")), phase_ns=2)

        def boom() -> None:
            raise KeyError("x")

        clock.schedule(9, boom)
        clock.advance(9)
    assert trace == [
        (2, "/odom"),
        (2, "p3"),
        (5, "p3"),
        # C-PER-2 in the recorded run: the one-shots (pushed first) before /odom.
        (8, "/cmd"),
        (8, "/cmd"),
        (8, "/odom"),
        (8, "cb-a"),
        (8, "cb-b"),
        (8, "p3"),
        (9, EVENTS_TOPIC),
    ]


def test_bus_deferred_delivery_runs_without_callbacks(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, _, _, _ = recorded
    with ReplayClock(path, topics=["/cmd"]) as clock:
        got: list[tuple[int, str]] = []
        clock.bus.subscribe("/derived", lambda m: got.append((clock.now_ns(), m.payload)))
        clock.bus.subscribe(
            "/cmd", lambda m: clock.bus.publish("/derived", m.payload, stamp_ns=m.stamp_ns + 1)
        )
        clock.advance(20)
    assert got == [(9, "go"), (9, None)]


# -- C-REP-3 -------------------------------------------------------------------------


def _redo_draws(source: Any) -> list[Any]:
    """The draws the scenario makes, in its order, against ``source``."""
    noise = source.child("imu/noise")
    wheel = source.child("odom")
    out: list[Any] = []
    for t in range(41):
        # At a shared instant odom (re-pushed 6 ns earlier) fires before imu (4 ns), C-PER-2.
        if t >= 2 and (t - 2) % 6 == 0:
            out.append(wheel.integers(0, 100))
        if t % 4 == 0:
            out.append(noise.normal(0.0, 0.1))
            out.append(noise.normal(0.0, 1.0, size=(2,)).tolist())
    return out


def test_C_REP_3_persisted_draws_come_back_exactly_per_label(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, _, _, draws = recorded
    with ReplayClock(path) as clock:
        root = clock.random_source()
        assert root is clock.random_source()
        assert (root.seed, root.label) == (7, "/")
        assert _redo_draws(root) == draws
        with pytest.raises(
            SimclockRuntimeError,
            match=r"^the recorded draws of label '/odom' ran out after 7 draws; the replayed "
            r"code draws more than the recorded run did$",
        ):
            root.child("odom").integers(0, 100)


def test_C_REP_3_labels_are_independent_and_mismatches_are_refused(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, _, _, draws = recorded
    with ReplayClock(path) as clock:
        root = clock.random_source()
        assert root.child("odom").integers(0, 100) == draws[2]  # other label untouched
        with pytest.raises(
            SimclockRuntimeError,
            match=r"^no draws were recorded for label '/gps' \(recorded labels: \['/imu/noise', "
            r"'/odom'\]\); replay must draw from the same streams as the recorded run$",
        ):
            root.child("gps").uniform(0.0, 1.0)
        noise = root.child("imu").child("noise")
        with pytest.raises(
            SimclockRuntimeError,
            match=r"^draw 0 of label '/imu/noise': asked uniform\[0.0,0.1\] but the recording "
            r"has normal\[0.0,0.1,null\]; replay must make the same draws as the recorded run$",
        ):
            noise.uniform(0.0, 0.1)
        assert noise.normal(0.0, 0.1) == draws[0]
        arr = noise.normal(0.0, 1.0, size=(2,))
        assert isinstance(arr, np.ndarray) and arr.dtype == np.float64
        assert arr.tolist() == draws[1]
        with pytest.raises(SimclockRuntimeError, match=r"^numpy_rng\(\) cannot be replayed"):
            noise.numpy_rng()
        with pytest.raises(SimclockValueError, match=r"^label 'a b' is malformed"):
            root.child("a b")


def test_C_REP_3_a_listed_label_without_its_channel_is_a_damaged_file(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    # It used to read as "ran out after 0 draws", blaming the replayed code.
    path, _, _, _ = recorded
    bad = tmp_path / "ghost.mcap"
    rewrite(
        path,
        bad,
        metadata=resealed(
            lambda n, m: (
                {**m, "draw_labels": '["/ghost", "/imu/noise", "/odom"]'} if n == "simclock" else m
            )
        ),
    )
    with ReplayClock(bad) as clock:
        ghost = clock.random_source().child("ghost")
        with pytest.raises(
            RecordingError,
            match=r"^.*ghost.mcap: offset \d+: the metadata lists persisted draws of label "
            r"'/ghost' but the file has no channel '/simclock/draws/ghost'; the file is damaged$",
        ):
            ghost.uniform(0.0, 1.0)


def test_C_REP_3_a_damaged_draw_log_stays_an_error(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    # After the damage was reported the next draw said "ran out after 1 draws".
    path, _, _, draws = recorded
    odom = b"/simclock/draws/odom"

    bad = tmp_path / "draws.mcap"
    rewrite(path, bad, replace_in_data(b'"index":1,', b'"index":5,'))
    assert odom in bad.read_bytes()
    with ReplayClock(bad) as clock:
        wheel = clock.random_source().child("odom")
        assert wheel.integers(0, 100) == draws[2]
        for _ in range(2):
            with pytest.raises(
                RecordingError,
                match=r"^.*draws.mcap: offset \d+: draw 1 of label '/odom' \(log_time "
                r"\d+\) is malformed or out of order: .*$",
            ):
                wheel.integers(0, 100)


def test_C_REP_3_malformed_or_missing_draws_are_a_damaged_file(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    # A draw without "value" raised a bare KeyError; a draw record lost from an unchunked
    # file without CRCs (an unknown opcode is skipped) read as "ran out".
    path, _, _, draws = recorded
    bad = tmp_path / "valux.mcap"
    rewrite(path, bad, replace_in_data(b',"value":', b',"valux":'))
    with (
        ReplayClock(bad) as clock,
        pytest.raises(
            RecordingError,
            match=r"^.*valux.mcap: offset \d+: draw 0 of label '/odom' \(log_time 2\) "
            r"is malformed or out of order: .*$",
        ),
    ):
        clock.random_source().child("odom").integers(0, 100)
    lost = tmp_path / "lost.mcap"
    rewrite(path, lost, chunked=False)
    data = bytearray(lost.read_bytes())
    at = data.rindex(b'{"args":[0,100,null],"index":6,')
    data[at - 31] = 0x7F  # the Message record's opcode: now an unknown record
    lost.write_bytes(bytes(data))
    with ReplayClock(lost) as clock:
        wheel = clock.random_source().child("odom")
        odom = [d for d in draws if isinstance(d, int)]  # imu draws are floats and lists
        assert len(odom) == 7
        assert [wheel.integers(0, 100) for _ in range(6)] == odom[:6]
        with pytest.raises(
            RecordingError,
            match=r"^.*lost.mcap: offset \d+: 6 draws of label '/odom' in the file but the "
            r"summary counts 7; the file is damaged$",
        ):
            wheel.integers(0, 100)


def test_C_REP_3_no_persisted_draws_means_no_numbers(tmp_path: Path) -> None:
    path = tmp_path / "nodraws.mcap"
    record(path, record_draws=False)
    with ReplayClock(path) as clock:
        with pytest.raises(
            SimclockRuntimeError,
            match=r"^recording '.*nodraws.mcap' has no persisted random draws, so replay cannot "
            r"produce random numbers; record with Recorder\(\.\.\., record_draws=True\)$",
        ):
            clock.random_source()
        clock.advance(5)  # messages still replay


# -- other writers' files -------------------------------------------------------------


def _foreign(path: Path, *, chunked: bool) -> None:
    with path.open("wb") as f:
        w = Writer(f, use_chunking=chunked, chunk_size=64, compression=CompressionType.LZ4)
        w.start(profile="", library="someone-else")
        js = w.register_schema("pose", "jsonschema", b"{}")
        pb = w.register_schema("pkg.Pose", "protobuf", b"\x0a\x00")
        a = w.register_channel("/a", "json", js)
        b = w.register_channel("/b", "protobuf", pb)
        c = w.register_channel("/c", "cbor", 0)
        base = 1_700_000_000_000_000_000
        # Equal log times across channels (ties by file position), no sequence, and an
        # out-of-order pair across chunks.
        w.add_message(a, base + 5, b'{"x":1}', base + 5)
        w.add_message(b, base + 5, b"\x01\x02", base + 5)
        w.add_message(c, base + 5, b"\xa0", base + 5)
        w.add_message(a, base + 9, b'{"x":3}', base + 9)
        w.add_message(b, base + 7, b"\x03", base + 7)
        w.add_message(a, base + 9, b"[2]", base + 9)
        w.finish()  # type: ignore[no-untyped-call]


@pytest.mark.parametrize("chunked", [True, False])
def test_foreign_files_replay_in_log_time_order_with_raw_payloads(
    tmp_path: Path, chunked: bool
) -> None:
    path = tmp_path / "foreign.mcap"
    _foreign(path, chunked=chunked)
    base = 1_700_000_000_000_000_000
    with ReplayClock(path) as clock:
        assert not clock.info.simclock
        assert clock.now_ns() == base + 5
        assert clock.step_ns() == 1
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        clock.advance(3)
        assert clock.now_ns() == base + 8
        clock.advance(100)
        with pytest.raises(SimclockRuntimeError, match=r"has no persisted random draws"):
            clock.random_source()
    assert got == [
        Message("/a", base + 5, 0, {"x": 1}),
        Message("/b", base + 5, 1, RawPayload("protobuf", "pkg.Pose", b"\x01\x02")),
        Message("/c", base + 5, 2, RawPayload("cbor", "", b"\xa0")),
        Message("/b", base + 7, 3, RawPayload("protobuf", "pkg.Pose", b"\x03")),
        Message("/a", base + 9, 4, {"x": 3}),
        Message("/a", base + 9, 5, [2]),
    ]


def test_foreign_seek_keeps_sequences(tmp_path: Path) -> None:
    path = tmp_path / "foreign.mcap"
    _foreign(path, chunked=True)
    base = 1_700_000_000_000_000_000
    with ReplayClock(path, topics=["/a"]) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        clock.seek(base + 6)
        clock.advance(10)
    assert got == [Message("/a", base + 9, 4, {"x": 3}), Message("/a", base + 9, 5, [2])]


def test_demo_style_recording_replays_clock_channel_is_not_a_bus_message(
    tmp_path: Path,
) -> None:
    # `simclock run` (make demo) records /clock at every physics step: clock_period_ns.
    path = tmp_path / "demo.mcap"
    live, fingerprint, _ = record(path, clock_period_ns=2)
    with path.open("rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None and summary.statistics is not None
    counts = {
        summary.channels[cid].topic: n
        for cid, n in summary.statistics.channel_message_counts.items()
    }
    assert counts["/clock"] == 21  # 0, 2, ..., 40
    got = _replay_all(path)
    assert got == live
    assert simclock.trace_fingerprint(got) == fingerprint


# -- bad files -------------------------------------------------------------------------


def test_not_mcap_and_missing_files_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"hello, not mcap")
    with pytest.raises(
        RecordingError,
        match=r"^.*bad.mcap: offset 0: not an MCAP file \(no MCAP magic at the start\)$",
    ):
        ReplayClock(bad)
    bad.write_bytes(b"")
    with pytest.raises(RecordingError, match=r"offset 0: not an MCAP file"):
        ReplayClock(bad)
    with pytest.raises(SimclockValueError, match=r"^.*nope.mcap: no such file; pass the path"):
        ReplayClock(tmp_path / "nope.mcap")


@pytest.mark.parametrize("keep", [0.3, 0.6, 0.95, -1])
def test_truncated_recording_is_refused_before_anything_is_delivered(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path, keep: float
) -> None:
    path, _, _, _ = recorded
    data = path.read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: int(len(data) * keep)] if keep > 0 else data[:-1])
    with pytest.raises(
        RecordingError,
        match=r"^.*cut.mcap: offset \d+: no MCAP magic at the end of the file: truncated or "
        r"not closed \(simclock recover can save the complete chunks\)$",
    ):
        ReplayClock(cut)


def test_crc_mismatch_names_the_chunk_and_delivers_nothing_from_it(tmp_path: Path) -> None:
    path = tmp_path / "plain.mcap"
    record(path, compression="none")
    data = bytearray(path.read_bytes())
    at = data.index(b'"go"')
    data[at + 1] = ord("G")
    bad = tmp_path / "flip.mcap"
    bad.write_bytes(bytes(data))
    with ReplayClock(bad) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        with pytest.raises(
            RecordingError,
            match=r"^.*flip.mcap: offset \d+: chunk CRC mismatch \(records \d+, computed \d+\); "
            r"damaged$",
        ):
            clock.advance(40)
        assert got == []  # one chunk: nothing from it was delivered
        with pytest.raises(RecordingError, match=r"chunk CRC mismatch"):
            clock.advance(1)  # the failure sticks
        with pytest.raises(RecordingError, match=r"chunk CRC mismatch"):
            clock.next_event_ns()  # it answered None, as if the recording had ended
        assert clock.now_ns() == 0


def test_corrupt_summary_is_refused_at_open(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    # The summary (channels, chunk indexes) decides what replay reads: a damaged draws
    # channel topic used to make draws() yield nothing and a bus topic be renamed.
    path, _, _, _ = recorded
    for old, new in ((b"/simclock/draws/odom", b"/simclock/draws/odox"), (b"/cmd", b"/cmX")):
        data = bytearray(path.read_bytes())
        at = data.rindex(old)  # the summary's Channel record is the last copy
        data[at : at + len(old)] = new
        bad = tmp_path / "summary.mcap"
        bad.write_bytes(bytes(data))
        with pytest.raises(
            RecordingError,
            match=r"^.*summary.mcap: offset \d+: summary section CRC mismatch \(footer at offset "
            r"\d+ records \d+, computed \d+ over offsets \d+\.\.\d+\); the file is damaged$",
        ):
            ReplayClock(bad)


def test_corrupt_zstd_chunk_is_refused(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    path, _, _, _ = recorded
    data = bytearray(path.read_bytes())
    at = data.index(b"\x28\xb5\x2f\xfd")  # zstd frame magic inside the first chunk
    for i in range(at + 8, at + 40):
        data[i] ^= 0x55
    bad = tmp_path / "zstd.mcap"
    bad.write_bytes(bytes(data))
    with (
        ReplayClock(bad) as clock,
        pytest.raises(
            RecordingError,
            match=r"^.*zstd.mcap: offset \d+: chunk does not decompress \(ZstdError: ",
        ),
    ):
        clock.advance(40)


def test_out_of_order_message_in_a_simclock_recording_is_refused(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    path, live, _, _ = recorded

    def swap(msgs: list[McapMessage]) -> list[McapMessage]:
        bus_idx = [i for i, m in enumerate(msgs) if m.channel_id != 1 and b"sequence" in m.data]
        i, j = bus_idx[5], bus_idx[6]
        msgs[i], msgs[j] = msgs[j], msgs[i]
        return msgs

    bad = tmp_path / "swap.mcap"
    rewrite(path, bad, swap)
    with ReplayClock(bad) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        with pytest.raises(
            RecordingError,
            match=r"^.*swap.mcap: offset \d+: message sequence=\d+ at \d+ ns is out of "
            r"order \(previous: sequence=\d+ at \d+ ns, start 0 ns\); a simclock recording must "
            r"be in total order \(stamp, sequence\)$",
        ):
            clock.advance(40)
    assert got == []  # the bad chunk and the one before it were held back
    # The unmodified copy replays: the rewriting itself is faithful.
    same = tmp_path / "same.mcap"
    rewrite(path, same)
    assert _replay_all(same) == live


def test_altered_payload_fails_the_fingerprint_check(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    path, _, fingerprint, _ = recorded
    bad = tmp_path / "alter.mcap"
    rewrite(path, bad, replace_in_data(b'"go"', b'"GO"'))
    with (
        ReplayClock(bad) as clock,
        pytest.raises(
            RecordingError,
            match=rf"^.*alter.mcap: offset \d+: the replayed trace has fingerprint "
            rf"[0-9a-f]{{64}} but the metadata records {fingerprint}; the file was altered$",
        ),
    ):
        clock.advance(40)


def test_the_last_chunk_waits_for_the_end_of_file_checks(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    # Nothing checked this: a reader delivering each chunk at once passed every test.
    from mcap.records import Chunk
    from mcap.stream_reader import StreamReader, breakup_chunk

    path, live, _, _ = recorded

    def alter_last(msgs: list[McapMessage]) -> list[McapMessage]:
        # The last bus message (envelopes start with {"payload":) gets another payload.
        i = max(i for i, m in enumerate(msgs) if m.data.startswith(b'{"payload":'))
        m = msgs[i]
        data = b'{"payload":"altered","sequence":%d}' % live[-1].sequence
        msgs[i] = McapMessage(m.channel_id, m.log_time, data, m.publish_time, m.sequence)
        return msgs

    bad = tmp_path / "last.mcap"
    rewrite(path, bad, alter_last)
    with bad.open("rb") as f:
        chunks = [r for r in StreamReader(f, emit_chunks=True).records if isinstance(r, Chunk)]
    in_last = [
        m
        for m in breakup_chunk(chunks[-1])
        if isinstance(m, McapMessage) and m.data.startswith(b'{"payload":')
    ]
    assert len(chunks) >= 2 and in_last
    got: list[Message] = []
    with ReplayClock(bad) as clock:
        clock.bus.subscribe(None, got.append)
        with pytest.raises(
            RecordingError, match=r"^.*last.mcap: offset \d+: the replayed trace has finger"
        ):
            clock.advance(clock.end_ns())
    assert got == live[: len(live) - len(in_last)]


@pytest.mark.parametrize("field", ["sequence", "publish_time"])
def test_C_MCAP_1_mcap_sequence_or_publish_time_off_the_envelope_is_refused(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path, field: str
) -> None:
    # Neither is part of the fingerprint: only this check sees them (it was untested).
    path, live, _, _ = recorded
    target = live[3]

    def shift(msgs: list[McapMessage]) -> list[McapMessage]:
        out = []
        for m in msgs:
            if m.data.endswith(b',"sequence":%d}' % target.sequence):
                seq = m.sequence + 1 if field == "sequence" else m.sequence
                pt = m.publish_time + 1 if field == "publish_time" else m.publish_time
                out.append(McapMessage(m.channel_id, m.log_time, m.data, pt, seq))
            else:
                out.append(m)
        return out

    bad = tmp_path / "shift.mcap"
    rewrite(path, bad, shift)
    seq = target.sequence + (field == "sequence")
    pt = target.stamp_ns + (field == "publish_time")
    with (
        ReplayClock(bad) as clock,
        pytest.raises(
            RecordingError,
            match=rf"^.*shift.mcap: offset \d+: message at {target.stamp_ns} ns has MCAP "
            rf"sequence {seq}, publish_time {pt} but envelope sequence {target.sequence}; the "
            r"file is damaged$",
        ),
    ):
        clock.advance(clock.end_ns())


def test_C_MCAP_1_a_negative_envelope_sequence_is_a_damaged_file(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    """A bus sequence is an int >= 0: -1 with the MCAP sequence that matches it (2**32 - 1)
    is refused at the message, with its offset, and nothing is delivered before it."""
    path, live, _, _ = recorded
    # The first message of a later stamp, so the order check alone would let -1 through.
    target = next(m for m, prev in zip(live[1:], live, strict=False) if m.stamp_ns > prev.stamp_ns)

    def negative(msgs: list[McapMessage]) -> list[McapMessage]:
        tail = b',"sequence":%d}' % target.sequence
        return [
            McapMessage(m.channel_id, m.log_time, m.data[: -len(tail)] + b',"sequence":-1}',
                        m.publish_time, 2**32 - 1)
            if m.data.endswith(tail) else m
            for m in msgs
        ]  # fmt: skip

    bad = tmp_path / "negative.mcap"
    rewrite(path, bad, negative)
    got: list[Message] = []
    with (
        simclock.RecordingReader(bad) as reader,
        pytest.raises(
            RecordingError,
            match=rf"^.*negative.mcap: offset \d+: message at {target.stamp_ns} ns has MCAP "
            rf"sequence {2**32 - 1}, publish_time {target.stamp_ns} but envelope sequence -1; the "
            r"file is damaged$",
        ),
    ):
        got.extend(reader.messages())
    assert got == [], got  # the refused chunk (the file's first) is held until it passes


def test_missing_message_fails_the_count_check(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    path, live, _, _ = recorded
    bad = tmp_path / "drop.mcap"
    rewrite(path, bad, lambda msgs: [m for m in msgs if b'"go"' not in m.data])
    with (
        ReplayClock(bad) as clock,
        pytest.raises(
            RecordingError,
            match=rf"^.*drop.mcap: offset \d+: {len(live) - 1} bus messages in the chunks but "
            rf"the metadata records {len(live)}; the file is damaged$",
        ),
    ):
        clock.advance(40)


def test_incomplete_recording_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "inc.mcap"
    bus = Bus()
    rec = Recorder(path, bus, seed=1)
    bus.publish("/a", object(), stamp_ns=0)
    with pytest.raises(SimclockRuntimeError):
        rec.close()
    with pytest.raises(
        RecordingError,
        match=r"^.*inc.mcap: offset \d+: the recording is incomplete \(the Recorder reported: "
        r"message "
        r"sequence=0 on '/a' at 0 ns was not recorded: .*\); fix the run and record it again$",
    ):
        ReplayClock(path)


def test_unsupported_format_is_refused(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    path, _, _, _ = recorded
    bad = tmp_path / "v9.mcap"
    rewrite(
        path,
        bad,
        metadata=lambda n, m: {**m, "format": "simclock-recording/9"} if n == "simclock" else m,
    )
    with pytest.raises(
        RecordingError,
        match=r"^.*v9.mcap: offset \d+: simclock metadata is invalid: format is "
        r"'simclock-recording/9', this version reads 'simclock-recording/2'; replay it with the "
        r"simclock version that wrote it$",
    ):
        ReplayClock(bad)


# -- streaming ---------------------------------------------------------------------------


def _big(path: Path, n: int) -> None:
    bus = Bus()
    with Recorder(path, bus, seed=0, chunk_size=16 * 1024) as rec:
        for i in range(n):
            rec.record(Message(f"/t{i % 3}", i // 2, i, {"i": i, "v": [0.5, 1.5]}))


def test_replay_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    import tracemalloc

    peaks = []
    for n in (3_000, 12_000):
        path = tmp_path / f"{n}.mcap"
        _big(path, n)
        count = 0

        def sink(_m: Message) -> None:
            nonlocal count
            count += 1

        with ReplayClock(path) as clock:
            clock.bus.subscribe(None, sink)
            tracemalloc.start()
            clock.advance(clock.end_ns())
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        assert count == n
    # Four times the messages, (nearly) the same peak: a few chunks are held, not the file.
    assert peaks[1] < 1.3 * peaks[0]


def test_replay_clock_is_a_simclock(recorded: tuple[Path, list[Message], str, list[Any]]) -> None:
    path, _, _, _ = recorded
    with ReplayClock(path) as clock:
        assert isinstance(clock, simclock.SimClock)
        assert isinstance(clock.random_source(), simclock.RandomSource)
        assert clock.info.seed == 7
        assert clock.path == str(path)
        with pytest.raises(SimclockTypeError, match=r"^dt_ns must be an int of nanoseconds"):
            clock.advance(1.0)  # type: ignore[arg-type]
        assert clock.now_ns() == 0
    with pytest.raises(SimclockRuntimeError, match=r"^bus is already bound to a clock"):
        ReplayClock(path, bus=HeapSimClock(0).bus)
    with pytest.raises(SimclockTypeError, match=r"^callbacks must be a bool, got 1$"):
        ReplayClock(path, callbacks=1)  # type: ignore[arg-type]
    # A directory is read as a rosbag2 bag (C-ROS-2): without metadata.yaml it is none.
    with pytest.raises(
        simclock.BagError,
        match=rf"^{re.escape(str(path.parent))}: a directory without metadata\.yaml, so not a "
        r"rosbag2 bag; pass a bag directory \(ros2 bag record writes one\) or an \.mcap file$",
    ):
        ReplayClock(path.parent)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=10,
)


@given(
    st.lists(
        st.tuples(
            st.integers(0, 30),  # when the callback runs
            st.integers(0, 4),  # extra delay of the stamp (0: now, else a future stamp)
            st.sampled_from(["/a", "/b", "/a/c", EVENTS_TOPIC]),
            _JSON,
            st.booleans(),  # the callback raises after publishing
        ),
        max_size=25,
    ),
    st.integers(0, 2**32),
)
def test_C_REP_4_any_run_round_trips(
    events: list[tuple[int, int, str, Any, bool]], seed: int
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "prop.mcap"
        bus = Bus()
        live: list[Message] = []
        fp = simclock.Fingerprinter()
        with Recorder(path, bus, seed=seed, chunk_size=512):
            clock = HeapSimClock(seed, bus=bus)
            bus.subscribe(None, live.append)
            bus.subscribe(None, fp)
            for at, delay, topic, payload, fail in events:

                def cb(
                    delay: int = delay,
                    topic: str = topic,
                    payload: Any = payload,
                    fail: bool = fail,
                ) -> None:
                    value = (
                        Event(EventKind.PACING_LAG, clock.now_ns(), {"p": payload})
                        if (topic == EVENTS_TOPIC)
                        else payload
                    )
                    bus.publish(topic, value, stamp_ns=clock.now_ns() + delay)
                    if fail:
                        raise ValueError("fail")

                clock.schedule(at, cb)
            clock.advance(40)
        got = _replay_all(path)
        assert got == live
        assert simclock.trace_fingerprint(got) == fp.hexdigest()


def test_large_unchunked_foreign_files_in_order_are_streamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import simclock.recording._foreign as foreign_module

    # The first pass over a large unchunked file decides: in log-time order, it streams.
    streamed: list[bool] = []
    real_scan = foreign_module.scan

    def spy(path: str, stream: Any) -> Any:
        found = real_scan(path, stream)
        streamed.append(found.in_order)
        return found

    monkeypatch.setattr(foreign_module, "SORT_IN_MEMORY_BYTES", 0)
    monkeypatch.setattr(foreign_module, "scan", spy)
    ordered = tmp_path / "ordered.mcap"
    with ordered.open("wb") as f:
        w = Writer(f, use_chunking=False)
        w.start()
        a = w.register_channel("/a", "json", 0)
        b = w.register_channel("/b", "json", 0)
        for t, ch, data in [(3, a, b"1"), (3, b, b"2"), (4, b, b"3"), (4, a, b"4")]:
            w.add_message(ch, t, data, t)
        w.finish()  # type: ignore[no-untyped-call]
    assert _replay_all(ordered) == [
        Message("/a", 3, 0, 1),
        Message("/b", 3, 1, 2),
        Message("/b", 4, 2, 3),
        Message("/a", 4, 3, 4),
    ]
    assert streamed == [True]
    # Out of order (base+9 before base+7): the reader's in-memory sort, same result as ever.
    unordered = tmp_path / "unordered.mcap"
    _foreign(unordered, chunked=False)
    got = _replay_all(unordered)
    assert [m.stamp_ns % 100 for m in got] == [5, 5, 5, 7, 9, 9]
    assert streamed == [True, False]


@pytest.mark.parametrize("sort_limit", [0, 2**30])
def test_unchunked_foreign_file_with_a_data_crc_mismatch_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sort_limit: int
) -> None:
    # Without chunks the data-section CRC is the only check; the official SeekingReader
    # falls back to a reader that skips it, which replayed a flipped payload silently.
    import simclock.recording._foreign as foreign_module

    monkeypatch.setattr(foreign_module, "SORT_IN_MEMORY_BYTES", sort_limit)
    path = tmp_path / "crc.mcap"
    with path.open("wb") as f:
        w = Writer(f, use_chunking=False, enable_data_crcs=True)
        w.start()
        a = w.register_channel("/a", "json", 0)
        for t in range(5):
            w.add_message(a, t, b'{"x":%d}' % t, t)
        w.finish()  # type: ignore[no-untyped-call]
    assert [m.payload for m in _replay_all(path)] == [{"x": t} for t in range(5)]
    data = bytearray(path.read_bytes())
    at = data.index(b'{"x":3}')
    data[at + 5] = ord("7")
    path.write_bytes(bytes(data))
    got: list[Message] = []
    with ReplayClock(path) as clock:
        clock.bus.subscribe(None, got.append)
        with pytest.raises(
            RecordingError,
            match=r"^.*crc.mcap: offset \d+: CRCValidationError: crc validation "
            r"failed in DataEnd, expected: \d+, calculated: \d+; the file is damaged$",
        ):
            clock.advance(10)
    assert got == []


def test_C_REP_4_a_simclock_recording_rewritten_unchunked_still_replays(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    # Another tool may rewrite the file without chunks (metadata kept): it used to be
    # refused as "0 bus messages in the chunks"; persisted draws vanished the same way.
    path, live, fingerprint, draws = recorded
    plain = tmp_path / "plain.mcap"
    rewrite(path, plain, chunked=False)
    with ReplayClock(plain) as clock:
        assert clock.info.simclock and clock.info.chunk_count == 0
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        clock.advance(clock.end_ns())
        assert _redo_draws(clock.random_source()) == draws
    assert got == live
    assert simclock.trace_fingerprint(got) == fingerprint
    with ReplayClock(plain) as clock:
        clock.bus.subscribe(None, got.append)
        got.clear()
        clock.seek(14)
        clock.advance(6)
    assert got == [m for m in live if 14 <= m.stamp_ns <= 20]
    # Without chunks, the data-section CRC (when there is one) and the fingerprint are
    # checked over the whole file before anything is delivered.
    for data_crcs, error in [
        (
            True,
            r"offset \d+: unchunked data section: CRCValidationError: crc validation failed in "
            r"DataEnd, "
            r"expected: \d+, calculated: \d+",
        ),
        (
            False,
            r"offset \d+: the replayed trace has fingerprint [0-9a-f]{64} but the metadata records "
            rf"{fingerprint}; the file was altered",
        ),
    ]:
        rewrite(path, plain, chunked=False, data_crcs=data_crcs)
        data = bytearray(plain.read_bytes())
        at = data.rindex(b'"go"')
        data[at + 1] = ord("G")
        plain.write_bytes(bytes(data))
        got.clear()
        with ReplayClock(plain) as clock:
            clock.bus.subscribe(None, got.append)
            with pytest.raises(RecordingError, match=rf"^.*plain.mcap: {error}$"):
                clock.advance(clock.end_ns())
        assert got == []


def test_a_refused_replay_clock_leaves_the_given_bus_unbound(tmp_path: Path) -> None:
    # A foreign file without statistics is read at construction (its start is its first
    # message); a damaged one raised after the bus was bound to the dead clock.
    path = tmp_path / "nostats.mcap"
    with path.open("wb") as f:
        w = Writer(f, use_chunking=False, use_statistics=False, enable_data_crcs=True)
        w.start()
        a = w.register_channel("/a", "json", 0)
        for t in (5, 6):
            w.add_message(a, t, b'{"x":%d}' % t, t)
        w.finish()  # type: ignore[no-untyped-call]
    with ReplayClock(path) as clock:
        assert clock.now_ns() == 5
    data = bytearray(path.read_bytes())
    at = data.index(b'{"x":6}')
    data[at + 5] = ord("7")
    path.write_bytes(bytes(data))
    bus = Bus()
    with pytest.raises(RecordingError, match=r"^.*nostats.mcap: offset \d+: CRCValidationError"):
        ReplayClock(path, bus=bus)
    assert bus.clock is None
    heap = HeapSimClock(0, bus=bus)  # the bus is still free
    assert bus.clock is heap


def test_unknown_channel_kind_in_a_simclock_recording_is_refused(
    recorded: tuple[Path, list[Message], str, list[Any]], tmp_path: Path
) -> None:
    path, _, _, _ = recorded
    bad = tmp_path / "kind.mcap"
    rewrite(
        path,
        bad,
        channel_metadata=lambda topic, m: {**m, "simclock.kind": "blob"} if topic == "/imu" else m,
    )
    with pytest.raises(
        RecordingError,
        match=r"^.*kind.mcap: offset \d+: channel \d+ \('/imu'\) has unknown kind 'blob'$",
    ):
        ReplayClock(bad)


class _Stop(BaseException):
    """Not an Exception: propagates out of delivery (C-ERR-2)."""


def test_C_ERR_2_base_exception_in_a_subscriber_keeps_the_replay_consistent(
    recorded: tuple[Path, list[Message], str, list[Any]],
) -> None:
    path, live, _, _ = recorded
    got: list[Message] = []

    def sink(m: Message) -> None:
        got.append(m)
        if m.sequence == 3:
            raise _Stop

    with ReplayClock(path) as clock:
        clock.bus.subscribe(None, sink)
        with pytest.raises(_Stop):
            clock.advance(40)
        assert clock.now_ns() == live[3].stamp_ns
        clock.advance(40 - clock.now_ns())
    assert got == live  # nothing lost, nothing repeated
