"""``export_ros2``: a simclock recording as a rosbag2 directory (C-ROS-1).

The bag is ``DIR/metadata.yaml`` (rosbag2 metadata version 8, the form both
Humble and Jazzy read) and one MCAP file ``DIR/<name>_0.mcap`` with header
profile ``ros2``. Every channel is ``cdr`` with a ``ros2msg`` schema (types:
`._ros2types`) and ``offered_qos_profiles`` in its metadata.

What is kept:

* every record of the recording, in its file order, which is the total
  order ``(stamp, sequence)`` (C-MCAP-1): bus messages, ``/clock`` (bytes and
  MCAP sequence unchanged) and persisted draws, with ``log_time``,
  ``publish_time`` and MCAP ``sequence`` unchanged, so a reader that breaks
  ties by file position sees the recorded order, and one that sorts by
  ``(stamp, sequence)`` field does too;
* the ``simclock`` and ``simclock.user`` metadata records, byte for byte
  (seed, fingerprint, run metadata, their digest still valid), plus a
  ``rosbag2`` record with the bag's metadata as ROS 2's MCAP storage writes
  it; ``metadata.yaml`` repeats seed and fingerprint under ``custom_data``.

The recording is read and checked completely (fingerprint included) before
anything is written; the bag is written into a temporary directory next to
``DIR`` and renamed into place, so a refused or failed export leaves no
``DIR`` behind. Complexity: two passes over the recording, memory bounded
by one chunk.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import IO, Any

import yaml
from mcap.records import Channel
from mcap.records import Message as McapMessage
from mcap.writer import CompressionType, Writer

from simclock.core._bus import Event
from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import safe_repr
from simclock.recording._fingerprint import RawPayload
from simclock.recording._format import (
    CLOCK_SCHEMA_NAME,
    KIND_KEY,
    LIBRARY_PREFIX,
    METADATA_NAME,
    USER_METADATA_NAME,
    package_version,
)
from simclock.recording._raw import RecordingError, records_in_file_order
from simclock.recording._reader import RecordingReader
from simclock.recording._ros2types import (
    DRAW_TYPE,
    EVENT_TYPE,
    MESSAGE_TYPE,
    QOS_PROFILES,
    SAMPLE_TYPE,
    SCHEMAS,
    encode_bus,
    encode_draw,
    is_sample,
)

__all__ = ["BAG_METADATA_VERSION", "ROS2_PROFILE", "export_ros2"]

ROS2_PROFILE = "ros2"
BAG_METADATA_VERSION = 8
_CHUNK_SIZE = 1 << 20


class _Dumper(yaml.SafeDumper):
    """YAML as ROS 2 writes it: multi-line strings (the QoS profiles) as ``|-`` blocks."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


def _check_path(value: object, name: str) -> str:
    if not isinstance(value, str | os.PathLike):
        raise SimclockTypeError(f"{name} must be a str or os.PathLike, got {safe_repr(value)}")
    return os.fspath(value)


def _topic_types(reader: RecordingReader) -> dict[str, str]:
    """The ROS 2 type of every bus topic, from one checked pass over the trace.

    Reading every message also checks the whole recording (chunk CRCs,
    order, count and fingerprint, C-REP-6) before the export writes a byte.
    """
    types: dict[str, str] = {}
    for message in reader.messages():
        payload = message.payload
        have = types.get(message.topic)
        if isinstance(payload, Event):
            types[message.topic] = EVENT_TYPE
        elif isinstance(payload, RawPayload):
            types[message.topic] = MESSAGE_TYPE
        elif have != MESSAGE_TYPE:
            types[message.topic] = SAMPLE_TYPE if is_sample(payload) else MESSAGE_TYPE
    return types


def _records(path: str, stream: IO[bytes]) -> Iterator[Any]:
    """Every record in file order, chunks split by simclock's own chunk reader (CRCs checked)."""
    try:
        for _where, _in_chunk, record in records_in_file_order(path, stream):
            yield record
    except RecordingError as exc:  # checked in the first pass: only a file changed meanwhile
        raise RecordingError(f"{exc} (it changed while exported)") from None


def export_ros2(recording: str | os.PathLike[str], directory: str | os.PathLike[str]) -> str:
    """Write the simclock recording ``recording`` as a rosbag2 directory ``directory`` (C-ROS-1).

    Returns the directory's path. ``directory`` must not exist (a bag is
    never merged into another; ``SimclockValueError``); its parent must.
    ``recording`` must be a recording written by simclock (a foreign MCAP file
    or a ROS 2 bag is refused: ROS tools read those already). A damaged
    recording is refused with [`RecordingError`][simclock.RecordingError] before
    anything is written. See the module docstring for what the bag holds.
    """
    src = _check_path(recording, "recording")
    dst = _check_path(directory, "directory")
    if os.path.basename(os.path.normpath(dst)) in ("", ".", ".."):
        raise SimclockValueError(
            f"directory must name a new directory for the bag, got {safe_repr(dst)}; write "
            "e.g. directory='run_bag'"
        )
    if os.path.lexists(dst):
        raise SimclockValueError(
            f"directory {dst!r} exists already; pass the path of a new directory for the bag"
        )
    parent = os.path.dirname(os.path.abspath(dst))
    if not os.path.isdir(parent):
        raise SimclockValueError(
            f"directory {dst!r} cannot be created: {parent!r} is not a directory"
        )
    with RecordingReader(src) as reader:
        if reader.is_bag:
            raise SimclockValueError(
                f"{src}: already a ROS 2 bag; ROS 2 tools read it as it is (export ros2 "
                "converts recordings written by simclock)"
            )
        if not reader.is_simclock:
            raise SimclockValueError(
                f"{src}: not a recording written by simclock ({reader.info.library or 'no writer'}"
                "); export ros2 converts simclock recordings, ROS 2 tools read other MCAP files "
                "and bags as they are"
            )
        types = _topic_types(reader)
        tmp = tempfile.mkdtemp(prefix=".simclock-export-", dir=parent)
        try:
            name = os.path.basename(os.path.normpath(dst))
            file_name = f"{name}_0.mcap"
            _write_bag(reader, types, os.path.join(tmp, file_name), file_name, tmp)
            os.chmod(tmp, 0o755)  # mkdtemp's 0o700 would hide the bag from other users
            os.rename(tmp, dst)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return dst


def _write_bag(
    reader: RecordingReader, types: dict[str, str], mcap_path: str, file_name: str, tmp: str
) -> None:
    src = reader.path
    meta = reader._own_metadata_records()
    channels: dict[int, Channel] = {}
    out_channel: dict[int, int] = {}
    schema_ids: dict[str, int] = {}
    counts: dict[int, int] = {}
    topic_of: dict[int, tuple[str, str]] = {}
    first: int | None = None
    last = 0
    library = f"{LIBRARY_PREFIX}{package_version('simclock')} mcap-python/{package_version('mcap')}"
    with open(mcap_path, "xb") as f, open(src, "rb") as stream:
        writer = Writer(f, chunk_size=_CHUNK_SIZE, compression=CompressionType.ZSTD)
        writer.start(profile=ROS2_PROFILE, library=library)

        def channel_for(record: McapMessage) -> tuple[int, str]:
            cid = record.channel_id
            have = out_channel.get(cid)
            channel = channels[cid]
            kind = channel.metadata.get(KIND_KEY, "")
            type_name = {"clock": CLOCK_SCHEMA_NAME, "draws": DRAW_TYPE}.get(kind) or types.get(
                channel.topic, MESSAGE_TYPE
            )
            if have is None:
                if type_name not in schema_ids:
                    schema_ids[type_name] = writer.register_schema(
                        type_name, "ros2msg", SCHEMAS[type_name].encode()
                    )
                have = out_channel[cid] = writer.register_channel(
                    channel.topic,
                    "cdr",
                    schema_ids[type_name],
                    {"offered_qos_profiles": QOS_PROFILES},
                )
                counts[have] = 0
                topic_of[have] = (channel.topic, type_name)
            return have, kind

        for record in _records(src, stream):
            if type(record) is Channel:
                channels[record.id] = record
                continue
            if type(record) is not McapMessage:
                continue
            out, kind = channel_for(record)
            stamp = record.log_time
            if kind == "clock":
                data = record.data
            elif kind == "draws":
                data = encode_draw(stamp, json.loads(record.data))
            else:
                envelope = json.loads(record.data)
                payload = envelope["payload"]
                if kind == "event":
                    payload = Event.from_json(payload)
                elif kind == "raw":
                    payload = RawPayload(
                        payload["encoding"], payload["schema"], bytes.fromhex(payload["data"])
                    )
                data = encode_bus(topic_of[out][1], stamp, envelope["sequence"], payload)
            writer.add_message(out, stamp, data, record.publish_time, record.sequence)
            counts[out] += 1
            first = stamp if first is None else first
            last = stamp
        start = first if first is not None else 0
        info = _bag_metadata(file_name, start, last - start, counts, topic_of, meta)
        text = yaml.dump(info, Dumper=_Dumper, sort_keys=False)
        for record_name in (METADATA_NAME, USER_METADATA_NAME):
            if record_name in meta:
                writer.add_metadata(record_name, dict(meta[record_name]))
        inner = yaml.dump(info["rosbag2_bagfile_information"], Dumper=_Dumper, sort_keys=False)
        writer.add_metadata("rosbag2", {"serialized_metadata": inner})
        writer.finish()  # type: ignore[no-untyped-call]
    with open(os.path.join(tmp, "metadata.yaml"), "x", encoding="utf-8") as meta_file:
        meta_file.write(text)


def _bag_metadata(
    file_name: str,
    start: int,
    duration: int,
    counts: dict[int, int],
    topic_of: dict[int, tuple[str, str]],
    meta: dict[str, dict[str, str]],
) -> dict[str, Any]:
    """The content of ``metadata.yaml`` (rosbag2 metadata version 8)."""
    total = sum(counts.values())
    own = meta.get(METADATA_NAME, {})
    custom = {
        f"simclock.{key}": own[key]
        for key in ("seed", "fingerprint", "fingerprint_algorithm", "contract_version", "format")
        if key in own
    }
    return {
        "rosbag2_bagfile_information": {
            "version": BAG_METADATA_VERSION,
            "storage_identifier": "mcap",
            "duration": {"nanoseconds": duration},
            "starting_time": {"nanoseconds_since_epoch": start},
            "message_count": total,
            "topics_with_message_count": [
                {
                    "topic_metadata": {
                        "name": topic_of[cid][0],
                        "type": topic_of[cid][1],
                        "serialization_format": "cdr",
                        "offered_qos_profiles": QOS_PROFILES,
                        "type_description_hash": "",
                    },
                    "message_count": n,
                }
                for cid, n in counts.items()
            ],
            "compression_format": "",
            "compression_mode": "",
            "relative_file_paths": [file_name],
            "files": [
                {
                    "path": file_name,
                    "starting_time": {"nanoseconds_since_epoch": start},
                    "duration": {"nanoseconds": duration},
                    "message_count": total,
                }
            ],
            "custom_data": custom,
            "ros_distro": "",
        }
    }
