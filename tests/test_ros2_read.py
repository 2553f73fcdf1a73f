"""C-ROS-2: rosbag2 bags as users have them, written by ``rosbags`` (which we did not write).

Every storage and compression mode of rosbags' Writer: MCAP storage with no
compression, zstd chunks (``storage``), per-message zstd (``message``) and
whole-file zstd (``file``); sqlite3 storage with each. What simclock reads it
replays exactly (every message, log-time order, ties in file order, the
CDR bytes as written); what it cannot read is refused in one line.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from mcap.reader import make_reader
from mcap.writer import Writer as McapWriter
from ros2_bags import pendulum, rosbags_messages, trace, typestore_for
from rosbags.interfaces import (
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import CompressionFormat, CompressionMode, Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

import simclock
from simclock import (
    BagError,
    Message,
    RawPayload,
    RecordingError,
    RecordingReader,
    ReplayClock,
    SimclockValueError,
    export_ros2,
)
from simclock.cli import main
from simclock.cli._mcap import format_message

BASE = 1_700_000_000_000_000_000  # epoch stamps, as ros2 bag record writes them
TS = get_typestore(Stores.ROS2_JAZZY)
QOS = [
    Qos(QosHistory.KEEP_LAST, 10, QosReliability.RELIABLE, QosDurability.VOLATILE,
        QosTime(0, 0), QosTime(0, 0), QosLiveliness.AUTOMATIC, QosTime(0, 0), False)
]  # fmt: skip


def _msgs(with_clock: bool = True) -> list[tuple[str, str, int, Any]]:
    """``(topic, type, t, message)`` in write order: 1 kHz /clock, 200 Hz Imu, strings;
    equal stamps across topics (ties), and a string written out of time order."""
    time_t = TS.types["builtin_interfaces/msg/Time"]
    header_t = TS.types["std_msgs/msg/Header"]
    imu_t = TS.types["sensor_msgs/msg/Imu"]
    quaternion_t = TS.types["geometry_msgs/msg/Quaternion"]
    vector3_t = TS.types["geometry_msgs/msg/Vector3"]
    clock_t = TS.types["rosgraph_msgs/msg/Clock"]
    string_t = TS.types["std_msgs/msg/String"]
    out: list[tuple[str, str, int, Any]] = []
    cov = np.zeros(9, dtype=np.float64)
    for k in range(40):
        t = BASE + k * 1_000_000
        stamp = time_t(sec=t // 10**9, nanosec=t % 10**9)
        if with_clock:
            out.append(("/clock", "rosgraph_msgs/msg/Clock", t, clock_t(clock=stamp)))
        if k % 5 == 0:
            imu = imu_t(
                header=header_t(stamp=stamp, frame_id="imu"),
                orientation=quaternion_t(x=0.0, y=0.0, z=0.0, w=1.0),
                orientation_covariance=cov,
                angular_velocity=vector3_t(x=0.1 * k, y=0.0, z=-0.5),
                angular_velocity_covariance=cov,
                linear_acceleration=vector3_t(x=0.0, y=0.0, z=9.81),
                linear_acceleration_covariance=cov,
            )
            out.append(("/imu", "sensor_msgs/msg/Imu", t, imu))
        if k % 10 == 0:
            out.append(("/chatter", "std_msgs/msg/String", t, string_t(data=f"hello {k}")))
    out.append(("/chatter", "std_msgs/msg/String", BASE + 3, string_t(data="late")))
    return out


def _write(path: Path, storage: StoragePlugin, mode: CompressionMode | None,
           msgs: list[tuple[str, str, int, Any]], version: int = 9) -> list[Message]:  # fmt: skip
    """Write ``msgs`` with rosbags' Writer; return the trace simclock must replay."""
    writer = Writer(path, version=version, storage_plugin=storage)  # type: ignore[arg-type]
    if mode is not None:
        writer.set_compression(mode, CompressionFormat.ZSTD)
    connections: dict[str, Any] = {}
    written: list[tuple[str, str, int, bytes]] = []
    with writer:
        for topic, msgtype, t, msg in msgs:
            if topic not in connections:
                connections[topic] = writer.add_connection(
                    topic, msgtype, typestore=TS, offered_qos_profiles=QOS
                )
            data = TS.serialize_cdr(msg, msgtype)
            writer.write(connections[topic], t, data)
            written.append((topic, msgtype, t, bytes(data)))
    # Log-time order; ties keep the order they were written in (sorted is stable).
    ordered = sorted(written, key=lambda w: w[2])
    return [
        Message(topic, t, i, RawPayload("cdr", msgtype, data))
        for i, (topic, msgtype, t, data) in enumerate(ordered)
    ]


def _replay(path: Path, **kwargs: Any) -> list[Message]:
    with ReplayClock(path, **kwargs) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        clock.advance(clock.end_ns() - clock.now_ns())
    return got


READABLE = [
    (StoragePlugin.MCAP, None),
    (StoragePlugin.MCAP, CompressionMode.STORAGE),
    (StoragePlugin.MCAP, CompressionMode.MESSAGE),
]


def _sqlite(bag: Path) -> str:
    return (
        rf"^{re.escape(str(bag))}: a rosbag2 bag in sqlite3 storage \(\.db3\), which simclock "
        r"does not read; convert it to MCAP storage \(ros2 bag convert, storage_id: mcap\) and "
        r"replay the result$"
    )


def _file(bag: Path) -> str:
    return (
        rf"^{re.escape(str(bag))}: a file-compressed bag \(compression_mode: file, zstd\), which "
        r"simclock does not read; decompress it with ros2 bag convert \(no compression, or "
        r"compression_mode: message\) and replay the result$"
    )


REFUSED = [
    (StoragePlugin.MCAP, CompressionMode.FILE, _file),
    (StoragePlugin.SQLITE3, None, _sqlite),
    (StoragePlugin.SQLITE3, CompressionMode.MESSAGE, _sqlite),
    (StoragePlugin.SQLITE3, CompressionMode.FILE, _sqlite),
]


@pytest.mark.parametrize(("storage", "mode"), READABLE, ids=lambda x: getattr(x, "name", "none"))
def test_C_ROS_2_rosbags_bags_replay_exactly(
    tmp_path: Path, storage: StoragePlugin, mode: CompressionMode | None
) -> None:
    bag = tmp_path / "bag"
    expected = _write(bag, storage, mode, _msgs())
    assert _replay(bag) == expected
    assert trace(bag) == expected
    # The bag's one file read alone is the same bag (its rosbag2 record says how the
    # messages are compressed).
    assert _replay(bag / "bag.mcap") == expected
    # advance windows are exact: (now, now + dt], the first one including the start.
    with ReplayClock(bag) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        clock.advance(2_000_000)
        assert got == [m for m in expected if m.stamp_ns <= BASE + 2_000_000]
        assert clock.now_ns() == BASE + 2_000_000
    with RecordingReader(bag) as reader:
        info = reader.info
    assert (info.simclock, info.container, info.note, info.message_count) == (
        False, "rosbag2", "", len(expected)
    )  # fmt: skip
    assert (info.start_ns, info.end_ns) == (BASE, BASE + 39_000_000)
    assert info.topic_counts == {"/clock": 40, "/imu": 8, "/chatter": 5}
    if mode == CompressionMode.MESSAGE:
        # rosbags stores each message compressed: simclock hands back the CDR itself.
        with (bag / "bag.mcap").open("rb") as f:
            stored = [m.data for _s, _c, m in make_reader(f).iter_messages()]
        assert all(s.startswith(b"\x28\xb5\x2f\xfd") for s in stored)  # zstd frames
        assert info.compression == "none + zstd per message"


@pytest.mark.parametrize(("storage", "mode", "message"), REFUSED,
                         ids=lambda x: getattr(x, "name", "none"))  # fmt: skip
def test_C_ROS_2_what_cannot_be_read_is_refused_in_one_line(
    tmp_path: Path, storage: StoragePlugin, mode: CompressionMode | None, message: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    bag = tmp_path / "bag"
    _write(bag, storage, mode, _msgs())
    for opener in (ReplayClock, RecordingReader):
        with pytest.raises(BagError, match=message(bag)):
            opener(bag)
    # The bag's file passed alone is named for what it is, too.
    (file,) = [p for p in bag.iterdir() if p.name != "metadata.yaml"]
    if file.name.endswith(".zstd"):
        alone = (
            rf"^{re.escape(str(file))}: a zstd-compressed file, not MCAP \(a file of a bag with "
            r"compression_mode: file\); decompress it \(zstd -d\) or convert the bag with ros2 "
            r"bag convert$"
        )
    else:
        alone = (
            rf"^{re.escape(str(file))}: a sqlite3 database \(a rosbag2 \.db3 file\), not MCAP; "
            r"convert the bag to MCAP storage \(ros2 bag convert, storage_id: mcap\) and replay "
            r"the result$"
        )
    with pytest.raises(BagError, match=alone):
        RecordingReader(file)
    for command in (["info", str(bag)], ["replay", str(bag)], ["diff", str(bag), str(bag)]):
        assert main(command) == 2
        out, err = capsys.readouterr()
        assert out == ""
        prefix = f"^simclock {command[0]}: error: "
        assert re.match(message(bag).replace("^", prefix), err.rstrip("\n"))
        assert err.count("\n") == 1


def test_C_ROS_2_cli_on_a_bag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = tmp_path / "bag"
    expected = _write(bag, StoragePlugin.MCAP, CompressionMode.MESSAGE, _msgs())
    assert main(["replay", str(bag), "--no-progress"]) == 0
    assert capsys.readouterr() == (
        "".join(format_message(m, False) + "\n" for m in expected),
        "",
    )
    assert main(["replay", str(bag), "--topics", "/chatter", "--no-progress"]) == 0
    assert capsys.readouterr().out == "".join(
        format_message(m, False) + "\n" for m in expected if m.topic == "/chatter"
    )
    assert main(["diff", str(bag), str(bag), "--no-progress"]) == 0
    assert capsys.readouterr() == ("identical: same trace\n", "")
    assert main(["info", str(bag)]) == 0
    out = capsys.readouterr().out
    assert "(ROS 2 bag, not written by simclock)" in out
    assert "messages:    53 messages (every channel), in 1 chunk (none + zstd per message)" in out


def test_C_ROS_2_a_requested_topic_that_is_absent_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = tmp_path / "bag"
    _write(bag, StoragePlugin.MCAP, None, _msgs(with_clock=False))
    message = (
        f"topics: '/clock' not in {bag} (its topics: /chatter, /imu); ask for topics that "
        "simclock info lists"
    )
    with pytest.raises(SimclockValueError, match=f"^{re.escape(message)}$"):
        ReplayClock(bag, topics=["/clock"])
    assert main(["replay", str(bag), "--topics", "/clock", "--no-progress"]) == 2
    assert capsys.readouterr() == ("", f"simclock replay: error: {message}\n")
    # Present topics are still served.
    assert {m.topic for m in _replay(bag, topics=["/imu"])} == {"/imu"}


def _two_file_bag(tmp_path: Path) -> tuple[Path, list[Message]]:
    """A bag of two MCAP files (as ros2 bag record --max-bag-size splits one), equal stamps
    across the files: merged by log time, ties in the order metadata.yaml lists the files."""
    msgs = _msgs()
    first = [m for m in msgs if m[0] != "/imu"]
    second = [m for m in msgs if m[0] == "/imu"]
    a, b = tmp_path / "a", tmp_path / "b"
    ea = _write(a, StoragePlugin.MCAP, None, first)
    eb = _write(b, StoragePlugin.MCAP, None, second)
    shutil.move(b / "b.mcap", a / "b.mcap")
    meta_path = a / "metadata.yaml"
    meta = yaml.safe_load(meta_path.read_text())
    info = meta["rosbag2_bagfile_information"]
    info["relative_file_paths"] = ["a.mcap", "b.mcap"]
    info["topics_with_message_count"] += yaml.safe_load((b / "metadata.yaml").read_text())[
        "rosbag2_bagfile_information"
    ]["topics_with_message_count"]
    meta_path.write_text(yaml.safe_dump(meta))
    merged = sorted([(m.stamp_ns, 0, m) for m in ea] + [(m.stamp_ns, 1, m) for m in eb],
                    key=lambda x: (x[0], x[1]))  # fmt: skip
    expected = [Message(m.topic, m.stamp_ns, i, m.payload) for i, (_t, _f, m) in enumerate(merged)]
    return a, expected


def test_C_ROS_2_every_file_of_a_bag_is_merged_in_log_time_order(tmp_path: Path) -> None:
    bag, expected = _two_file_bag(tmp_path)
    # rosbags reads the same two-file bag: the content is one bag to it too.
    assert len(rosbags_messages(bag, Stores.ROS2_JAZZY)) == len(expected)
    assert _replay(bag) == expected
    # Ties across the files: the first listed file's message comes first.
    assert [m.topic for m in expected if m.stamp_ns == BASE][:3] == ["/clock", "/chatter", "/imu"]
    (bag / "b.mcap").unlink()
    message = (
        f"{bag}: metadata.yaml lists 1 file(s) that are missing: b.mcap; copy the whole bag "
        "directory, or remove the missing names from relative_file_paths"
    )
    with pytest.raises(BagError, match=f"^{re.escape(message)}$"):
        ReplayClock(bag)


def test_C_ROS_2_a_directory_that_is_not_a_bag_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BagError, match=rf"^{re.escape(str(empty))}: a directory without "
                       r"metadata\.yaml, so not a rosbag2 bag; pass a bag directory \(ros2 bag "
                       r"record writes one\) or an \.mcap file$"):  # fmt: skip
        RecordingReader(empty)
    (empty / "metadata.yaml").write_text("rosbag2_bagfile_information: [unclosed\n")
    with pytest.raises(BagError, match=rf"^{re.escape(str(empty / 'metadata.yaml'))}: is not "
                       r"valid YAML \(.*\); restore the bag's original$"):  # fmt: skip
        RecordingReader(empty)
    (empty / "metadata.yaml").write_text("just: text\n")
    no_map = r"rosbag2_bagfile_information map; it is not rosbag2 metadata$"
    with pytest.raises(BagError, match=rf"^{re.escape(str(empty / 'metadata.yaml'))}: has no "
                       + no_map):  # fmt: skip
        RecordingReader(empty)


# -- simclock recordings that went through another tool -------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("ros2_read")
    src = pendulum(directory)
    return src, Path(export_ros2(src, directory / "bag"))


def test_C_ROS_2_a_rosbags_round_trip_is_foreign_with_what_it_lost(
    tmp_path: Path, exported: tuple[Path, Path]
) -> None:
    src, bag = exported
    typestore, _connections = typestore_for(bag, Stores.ROS2_JAZZY)
    copy = tmp_path / "copy"
    with Reader(bag) as reader, Writer(copy, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        out = {
            c.id: w.add_connection(c.topic, c.msgtype, typestore=typestore,
                                   offered_qos_profiles=getattr(c.ext, "offered_qos_profiles", []))
            for c in reader.connections
        }  # fmt: skip
        for c, t, raw in reader.messages():
            w.write(out[c.id], t, raw)
    with RecordingReader(copy) as r:
        info = r.info
        got = list(r.messages())
    assert (info.simclock, info.container, info.seed, info.fingerprint) == (
        False, "rosbag2", None, None
    )  # fmt: skip
    assert info.note == (
        f"simclock messages without simclock metadata (written by {info.library}, e.g. a copy "
        "by another tool): replayed as a foreign file; the seed, fingerprint, bus sequences "
        "and persisted draws are lost"
    )
    assert info.library.startswith("rosbags-")
    # The payloads come back (decoded from simclock_msgs), in the recording's order.
    native = trace(src)
    bus = [m for m in got if not isinstance(m.payload, RawPayload)]
    assert [(m.topic, m.stamp_ns, m.payload) for m in bus if not m.topic.startswith(
        "/simclock/draws")] == [(m.topic, m.stamp_ns, m.payload) for m in native]  # fmt: skip
    with pytest.raises(simclock.SimclockRuntimeError, match=r"no persisted random draws"):
        ReplayClock(copy).random_source()


def test_C_ROS_2_a_ros2_profile_copy_keeping_simclock_metadata_is_foreign_not_damaged(
    tmp_path: Path, exported: tuple[Path, Path]
) -> None:
    src, _bag = exported
    copy = tmp_path / "copy.mcap"
    with src.open("rb") as f, copy.open("wb") as g:
        reader = make_reader(f)
        w = McapWriter(g)
        w.start(profile="ros2", library="a third-party rewriter")
        schemas: dict[int, int] = {}
        channels: dict[int, int] = {}
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            if schema is not None and schema.id not in schemas:
                schemas[schema.id] = w.register_schema(schema.name, schema.encoding, schema.data)
            if channel.id not in channels:
                channels[channel.id] = w.register_channel(
                    channel.topic, channel.message_encoding,
                    schemas[schema.id] if schema is not None else 0, channel.metadata,
                )  # fmt: skip
            w.add_message(channels[channel.id], message.log_time, message.data,
                          message.publish_time, message.sequence)  # fmt: skip
        for record in reader.iter_metadata():
            if record.name in ("simclock", "simclock.user"):
                w.add_metadata(record.name, record.metadata)
        w.finish()  # type: ignore[no-untyped-call]
    with RecordingReader(copy) as r:
        info = r.info
        n = sum(1 for _m in r.messages())
    assert (info.simclock, info.container) == (False, "rosbag2")
    assert info.note == (
        "a simclock recording (seed 7) rewritten by a third-party rewriter: replayed as a "
        "foreign file, so its bus sequences, fingerprint check and persisted draws are not used"
    )
    assert n == info.message_count == 8931 + 5001 + 1429


def test_C_ROS_2_an_altered_export_is_refused_as_altered(
    tmp_path: Path, exported: tuple[Path, Path]
) -> None:
    _src, bag = exported
    copy = tmp_path / "bag"
    shutil.copytree(bag, copy)
    path = copy / "bag_0.mcap"
    data = path.read_bytes()
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        header = reader.get_header()
        items = list(reader.iter_messages(log_time_order=False))
        metadata = list(reader.iter_metadata())
    assert summary is not None
    changed = False
    with path.open("wb") as g:
        w = McapWriter(g)
        w.start(profile=header.profile, library=header.library)
        ids = {}
        for sid, schema in summary.schemas.items():
            ids[sid] = w.register_schema(schema.name, schema.encoding, schema.data)
        cids = {
            cid: w.register_channel(c.topic, c.message_encoding, ids[c.schema_id], c.metadata)
            for cid, c in summary.channels.items()
        }
        for _schema, channel, message in items:
            payload = message.data
            if not changed and channel.topic == "/controllers/pd" and message.log_time > 0:
                payload = payload.replace(b'{"u":', b'{"v":')
                changed = payload != message.data
            w.add_message(cids[channel.id], message.log_time, payload, message.publish_time,
                          message.sequence)  # fmt: skip
        for record in metadata:
            w.add_metadata(record.name, record.metadata)
        w.finish()  # type: ignore[no-untyped-call]
    assert changed and path.read_bytes() != data
    with RecordingReader(copy) as r:
        assert r.info.simclock
        with pytest.raises(RecordingError, match=rf"^{re.escape(str(path))}: offset \d+: the "
                           r"replayed trace has fingerprint [0-9a-f]{64} but the metadata "
                           r"records [0-9a-f]{64}; the bag was altered$"):  # fmt: skip
            for _m in r.messages():
                pass


def test_C_ROS_2_rosbags_reads_a_v8_bag_and_simclock_too(tmp_path: Path) -> None:
    bag = tmp_path / "bag"
    expected = _write(bag, StoragePlugin.MCAP, None, _msgs(), version=8)
    assert _replay(bag) == expected
    assert os.path.exists(bag / "metadata.yaml")
