"""C-ROS-1 (and C-MCAP-3): ``simclock export ros2`` writes a bag that tools we did not write read.

The bags are read by the independent ``rosbags`` library (Humble and Jazzy
typestores) and by ``mcap``'s own reader with ``mcap-ros2-support``'s
decoder; simclock reads them back and ``simclock diff`` compares.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from ros2_bags import mixed, payload_of, pendulum, rosbags_messages, trace, typestore_for
from rosbags.typesys import Stores
from test_replay_helpers import replace_in_data, rewrite

import simclock
from simclock import RecordingReader, ReplayClock, SimclockValueError, export_ros2
from simclock.cli import main

STORES = [Stores.ROS2_HUMBLE, Stores.ROS2_JAZZY]
CLOCK = "rosgraph_msgs/msg/Clock"
SAMPLE = "simclock_msgs/msg/Sample"
MESSAGE = "simclock_msgs/msg/Message"
DRAW = "simclock_msgs/msg/Draw"
EVENT = "simclock_msgs/msg/Event"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The pendulum recording and its export."""
    directory = tmp_path_factory.mktemp("ros2_export")
    src = pendulum(directory)
    return src, Path(export_ros2(src, directory / "pendulum_bag"))


@pytest.fixture(scope="module")
def mixed_recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("ros2_mixed")
    src = mixed(directory)
    return src, Path(export_ros2(src, directory / "mixed_bag"))


def _refused_leaving_nothing(src: Path, tmp_path: Path, message: str) -> None:
    """``export_ros2(src, ...)`` raises `RecordingError` matching ``message`` and leaves
    ``tmp_path`` holding only ``src`` (no bag, no temporary directory)."""
    with pytest.raises(simclock.RecordingError, match=message):
        export_ros2(src, tmp_path / "bag")
    assert sorted(os.listdir(tmp_path)) == [src.name]


def _native_clock(path: Path) -> list[tuple[int, int, int]]:
    """``(log_time, sec, nanosec)`` of the recording's /clock, read with the official reader."""
    with path.open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        return [
            (d.message.log_time, d.decoded_message.clock.sec, d.decoded_message.clock.nanosec)
            for d in reader.iter_decoded_messages(topics=["/clock"], log_time_order=False)
        ]


def test_C_ROS_1_bag_layout_and_metadata(recorded: tuple[Path, Path]) -> None:
    src, bag = recorded
    assert sorted(os.listdir(bag)) == ["metadata.yaml", "pendulum_bag_0.mcap"]
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    with RecordingReader(src) as reader:
        native = reader.info
    n_clock = len(_native_clock(src))
    topics = {
        t["topic_metadata"]["name"]: (
            t["topic_metadata"]["type"],
            t["topic_metadata"]["serialization_format"],
            t["message_count"],
        )
        for t in info["topics_with_message_count"]
    }
    assert topics == {
        "/clock": (CLOCK, "cdr", n_clock),
        "/sensors/encoder0": (SAMPLE, "cdr", 5001),
        "/sensors/imu0": (SAMPLE, "cdr", 1429),
        "/controllers/pd": (MESSAGE, "cdr", 2501),
        "/simclock/draws/sensors/imu0/noise": (DRAW, "cdr", 1429),
    }
    assert (info["version"], info["storage_identifier"], info["relative_file_paths"]) == (
        8,
        "mcap",
        ["pendulum_bag_0.mcap"],
    )
    assert (info["compression_mode"], info["message_count"]) == ("", n_clock + 8931 + 1429)
    assert info["starting_time"] == {"nanoseconds_since_epoch": 0}
    assert info["duration"] == {"nanoseconds": 10_000_000_000}
    assert info["custom_data"]["simclock.seed"] == "7"
    assert info["custom_data"]["simclock.fingerprint"] == native.fingerprint


@pytest.mark.parametrize("store", STORES, ids=lambda s: s.name)
def test_C_ROS_1_rosbags_reads_every_message_with_clock_at_log_time(
    recorded: tuple[Path, Path], store: Stores
) -> None:
    src, bag = recorded
    _typestore, connections = typestore_for(bag, store)
    for connection in connections:
        assert connection.ext.serialization_format == "cdr"
        assert connection.msgdef.data  # the definition travels in the file
        assert len(connection.ext.offered_qos_profiles) == 1
    got = rosbags_messages(bag, store)
    clock = [(t, m.clock.sec, m.clock.nanosec) for topic, _ty, t, m in got if topic == "/clock"]
    # C-MCAP-3 / C-EP-2: /clock is session time, equal to the log time, read by a ROS 2 tool.
    assert clock == _native_clock(src)
    assert all(t == sec * 10**9 + ns for t, sec, ns in clock)
    bus = [
        (topic, t, m.sequence, payload_of(ty, m))
        for topic, ty, t, m in got
        if ty in (SAMPLE, MESSAGE, EVENT)
    ]
    assert all(m.stamp.sec * 10**9 + m.stamp.nanosec == t for _to, _ty, t, m in got if _ty != CLOCK)
    # Counts, order (ties included) and payloads of the recording, read by rosbags alone.
    assert bus == [(m.topic, m.stamp_ns, m.sequence, m.payload) for m in trace(src)]
    draws = [m for topic, ty, _t, m in got if ty == DRAW]
    assert [d.index for d in draws] == list(range(1429))
    assert {d.method for d in draws} == {"normal"}


def test_C_ROS_1_mcap_reader_decodes_every_message(recorded: tuple[Path, Path]) -> None:
    _src, bag = recorded
    with (bag / "pendulum_bag_0.mcap").open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        header = reader.get_header()
        summary = reader.get_summary()
        assert summary is not None
        decoded = list(reader.iter_decoded_messages(log_time_order=True))
        names = sorted(m.name for m in reader.iter_metadata())
    assert header.profile == "ros2"
    assert header.library.startswith("simclock/")
    for channel in summary.channels.values():
        schema = summary.schemas[channel.schema_id]
        assert (channel.message_encoding, schema.encoding) == ("cdr", "ros2msg")
        assert channel.metadata["offered_qos_profiles"].startswith("- history: 1\n")
    assert len(decoded) == 5001 + 8931 + 1429
    assert names == ["rosbag2", "simclock", "simclock.user"]


def test_C_ROS_1_diff_reports_the_same_trace(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    src, bag = recorded
    with RecordingReader(src) as reader:
        fp = reader.info.fingerprint
    for other in (bag, bag / "pendulum_bag_0.mcap"):
        assert main(["diff", str(src), str(other), "--no-progress"]) == 0
        assert capsys.readouterr() == (f"identical: fingerprint {fp} (8931 messages)\n", "")


def test_C_ROS_1_replay_of_the_bag_is_the_recording_with_its_draws(
    recorded: tuple[Path, Path],
) -> None:
    src, bag = recorded
    runs = []
    for path in (src, bag):
        with ReplayClock(path) as clock:
            got: list[simclock.Message] = []
            clock.bus.subscribe(None, got.append)
            noise = clock.random_source().child("sensors").child("imu0").child("noise")
            draws = [noise.normal(0.0, 0.02, 3).tolist() for _ in range(5)]
            clock.advance(clock.end_ns())
            runs.append((got, draws, clock.info.seed, clock.info.fingerprint, clock.now_ns()))
    assert runs[0] == runs[1]
    with RecordingReader(bag) as reader:
        info = reader.info
    assert (info.simclock, info.container, info.note, info.draw_labels) == (
        True,
        "rosbag2",
        "",
        ("/sensors/imu0/noise",),
    )
    assert info.user_metadata["scenario"] == "pendulum"


def test_C_ROS_1_ties_events_raw_and_bus_clock_survive_the_export(
    mixed_recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    src, bag = mixed_recorded
    expected = trace(src)
    assert {m.topic for m in expected} >= {"/a", "/b", "/s", "/odd", "/clock", "/raw"}
    assert any(isinstance(m.payload, simclock.Event) for m in expected)
    _ts, connections = typestore_for(bag, Stores.ROS2_JAZZY)
    types = {c.topic: c.msgtype for c in connections}
    assert types == {
        "/clock": CLOCK,
        "/a": MESSAGE,
        "/b": MESSAGE,
        "/s": SAMPLE,
        "/odd": MESSAGE,
        "/raw": MESSAGE,
        "/simclock/events": EVENT,
        "/simclock/draws/noise": DRAW,
    }
    got = rosbags_messages(bag, Stores.ROS2_JAZZY)
    from_rosbags = [
        (topic, t, m.sequence, payload_of(ty, m))
        for topic, ty, t, m in got
        if ty in (SAMPLE, MESSAGE, EVENT)
    ]
    # The bus /clock is a Clock (no sequence field): its place is its position.
    assert from_rosbags == [
        (m.topic, m.stamp_ns, m.sequence, m.payload) for m in expected if m.topic != "/clock"
    ]
    # /clock holds the recorder's ticks and the bus's own /clock messages, as recorded.
    clock = [(t, m.clock.sec, m.clock.nanosec) for _to, ty, t, m in got if ty == CLOCK]
    assert clock == _native_clock(src)
    bus_clock = [(m.stamp_ns, 0, m.stamp_ns) for m in expected if m.topic == "/clock"]
    assert set(bus_clock) <= set(clock)
    assert trace(bag) == expected
    assert main(["diff", str(src), str(bag), "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("identical: fingerprint ")


def test_C_ROS_1_cli_export(tmp_path: Path, recorded: tuple[Path, Path],
                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    src, _bag = recorded
    out = tmp_path / "bag"
    with RecordingReader(src) as reader:
        fp = reader.info.fingerprint
    assert main(["export", "ros2", str(src), "-o", str(out)]) == 0
    assert capsys.readouterr() == (
        f"bag: {out} (rosbag2, MCAP storage, profile ros2)\n"
        "messages: 8931 bus messages on 3 topics, plus /clock and persisted draws\n"
        f"fingerprint: {fp}\n",
        "",
    )
    before = sorted(os.listdir(tmp_path))
    assert main(["export", "ros2", str(src), "-o", str(out)]) == 2
    assert capsys.readouterr() == (
        "",
        f"simclock export: error: directory {str(out)!r} exists already; pass the path of a "
        "new directory for the bag\n",
    )
    assert sorted(os.listdir(tmp_path)) == before


def test_C_ROS_1_export_refusals_leave_nothing_behind(
    tmp_path: Path, recorded: tuple[Path, Path]
) -> None:
    src, bag = recorded
    foreign = tmp_path / "foreign.mcap"
    with foreign.open("wb") as f:
        from mcap.writer import Writer

        w = Writer(f)
        w.start(profile="", library="someone else")
        cid = w.register_channel("/x", "json", 0)
        w.add_message(cid, 1, b"{}", 1)
        w.finish()  # type: ignore[no-untyped-call]
    cases: list[tuple[Path, Path | str, str]] = [
        (foreign, tmp_path / "a", rf"^{re.escape(str(foreign))}: not a recording written by "
         r"simclock \(someone else\); export ros2 converts simclock recordings, ROS 2 tools "
         r"read other MCAP files and bags as they are$"),
        (bag, tmp_path / "b", rf"^{re.escape(str(bag))}: already a ROS 2 bag; ROS 2 tools read "
         r"it as it is \(export ros2 converts recordings written by simclock\)$"),
        (src, tmp_path / "no" / "c", rf"^directory {re.escape(repr(str(tmp_path / 'no' / 'c')))} "
         rf"cannot be created: {re.escape(repr(str(tmp_path / 'no')))} is not a directory$"),
        (src, "", r"^directory must name a new directory for the bag, got ''; write e\.g\. "
         r"directory='run_bag'$"),
    ]  # fmt: skip
    for recording, directory, message in cases:
        with pytest.raises(SimclockValueError, match=message):
            export_ros2(recording, directory)
    assert sorted(os.listdir(tmp_path)) == ["foreign.mcap"]


def test_C_ROS_1_a_damaged_recording_is_refused_and_leaves_nothing_behind(
    tmp_path: Path, recorded: tuple[Path, Path]
) -> None:
    src, _bag = recorded
    data = bytearray(src.read_bytes())
    broken = tmp_path / "broken.mcap"
    data[len(data) // 2] ^= 0xFF  # inside a chunk: its CRC no longer matches
    broken.write_bytes(bytes(data))
    _refused_leaving_nothing(broken, tmp_path, rf"^{re.escape(str(broken))}: offset \d+: ")


def test_C_ROS_1_json_of_the_bag_info(recorded: tuple[Path, Path],
                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    src, bag = recorded
    assert main(["info", str(src), "--json"]) == 0
    native = json.loads(capsys.readouterr().out)
    assert main(["info", str(bag), "--json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    for key in ("seed", "fingerprint", "topics", "message_count", "draw_labels", "metadata",
                "start_ns", "end_ns", "step_ns", "contract_version"):  # fmt: skip
        assert exported[key] == native[key], key
    assert (exported["container"], exported["note"]) == ("rosbag2", "")


def test_C_ROS_1_run_with_ros2_writes_the_bag_and_no_scratch_file(
    tmp_path: Path, recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    src, _bag = recorded
    out = tmp_path / "run_bag"
    toml = str(Path(__file__).resolve().parent.parent / "examples" / "pendulum.toml")
    assert main(["run", toml, "--ros2", str(out), "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    with RecordingReader(src) as reader:
        fp = reader.info.fingerprint
    assert f"ros2 bag: {out} (rosbag2, MCAP storage)" in lines
    assert lines[-1] == f"fingerprint: {fp}"
    assert sorted(os.listdir(tmp_path)) == ["run_bag"]
    assert main(["diff", str(src), str(out), "--no-progress"]) == 0
    assert capsys.readouterr().out == f"identical: fingerprint {fp} (8931 messages)\n"
    assert main(["run", toml, "--ros2", str(out), "--no-progress"]) == 2
    assert capsys.readouterr() == (
        "",
        f"simclock run: error: --ros2 {str(out)!r} exists already; pass the path of a new "
        "directory for the bag\n",
    )


def test_C_ROS_1_a_topic_that_stops_carrying_samples_is_exported_as_message(
    tmp_path: Path,
) -> None:
    """The export takes a topic's type from its first payload and writes again if a later one
    breaks it: ``/s`` carries samples, then one with an int value, so it is a ``Message``."""
    src = tmp_path / "late.mcap"
    bus = simclock.Bus()
    sample = {
        "acquisition_ns": 5, "delivery_ns": 5, "device": "d", "episode": 0,
        "episode_start_ns": 0, "index": 0, "nominal_acquisition_ns": 5,
        "requested_delivery_ns": 5, "values": [0.5],
    }  # fmt: skip
    with simclock.Recorder(src, bus, seed=3) as rec:
        clock = simclock.HeapSimClock(3, bus=bus)
        clock.schedule_periodic(5, lambda: bus.publish("/s", dict(sample, index=clock.now_ns())))
        clock.schedule_periodic(5, lambda: bus.publish("/t", dict(sample, index=clock.now_ns())))
        clock.schedule(48, lambda: bus.publish("/s", dict(sample, values=[1])))  # an int
        clock.advance(60)
    bag = Path(export_ros2(src, tmp_path / "bag"))
    _ts, connections = typestore_for(bag, Stores.ROS2_JAZZY)
    assert {c.topic: c.msgtype for c in connections} == {"/clock": CLOCK, "/s": MESSAGE,
                                                        "/t": SAMPLE}  # fmt: skip
    expected = trace(src)
    assert [m.stamp_ns for m in expected if m.topic == "/s"] == [*range(0, 50, 5), 48, 50, 55, 60]
    assert trace(bag) == expected
    assert rec.fingerprint() == RecordingReader(bag).info.fingerprint
    assert sorted(os.listdir(tmp_path)) == ["bag", "late.mcap"]


def test_C_ROS_1_damage_found_at_the_end_of_the_one_pass_leaves_nothing_behind(
    tmp_path: Path, recorded: tuple[Path, Path]
) -> None:
    """The export writes as it checks: an altered payload (every CRC valid, 4 KiB chunks) is
    found only by the fingerprint, after the last chunk, and the bag never appears."""
    src, _bag = recorded
    with RecordingReader(src) as reader:
        fingerprint = reader.info.fingerprint
    bad = tmp_path / "alter.mcap"
    rewrite(src, bad, replace_in_data(b'"imu0"', b'"IMU0"'))
    _refused_leaving_nothing(
        bad,
        tmp_path,
        rf"^{re.escape(str(bad))}: offset \d+: the replayed trace has fingerprint "
        rf"[0-9a-f]{{64}} but the metadata records {fingerprint}; the file was altered$",
    )


def test_C_ROS_1_an_unchunked_recording_exports_the_same_bag_messages(
    tmp_path: Path, mixed_recorded: tuple[Path, Path]
) -> None:
    """A recording another tool rewrote without chunks is checked whole, then written."""
    src, bag = mixed_recorded
    plain = tmp_path / "plain.mcap"
    rewrite(src, plain, chunked=False)
    out = Path(export_ros2(plain, tmp_path / "bag"))
    assert trace(out) == trace(src)
    # Each read builds its own message classes: compare what they print.
    got, want = (repr(rosbags_messages(b, Stores.ROS2_JAZZY)) for b in (out, bag))
    assert got == want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'"method":', b'"method" '),  # not JSON
        (b'"index":0,', b""),  # a key missing
        (b'"method":"normal"', b'"method":7'),  # not a method name
        (b'"index":0,', b'"index":-1,'),  # not a uint64
    ],
)
def test_C_REP_6_a_malformed_persisted_draw_is_refused_by_the_export_with_its_offset(
    tmp_path: Path, mixed_recorded: tuple[Path, Path], old: bytes, new: bytes
) -> None:
    """Draws are outside the fingerprint: the export checks each one it converts."""
    src, _bag = mixed_recorded
    bad = tmp_path / "bad.mcap"
    rewrite(src, bad, replace_in_data(old, new))
    _refused_leaving_nothing(
        bad,
        tmp_path,
        rf"^{re.escape(str(bad))}: offset \d+: persisted draw at log_time 0 is malformed: "
        r"b'\{\"args\":.*'; the file is damaged$",
    )
