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

The recording is read once: each chunk is checked (CRC, order, envelopes)
before its records are written, and the end-of-file checks (message count,
fingerprint) pass before the bag is complete. The bag is written into a
temporary directory next to ``DIR`` and renamed into place only then, so a
refused or failed export leaves no ``DIR`` behind. A JSON topic is exported as
``Sample`` when every payload on it is a sample; that is assumed from its first
payload, and a recording that breaks the assumption is written again with the
types decided by a first pass (two passes only then). Complexity: one pass,
memory bounded by two chunks.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any

import yaml
from mcap.records import Message as McapMessage
from mcap.writer import CompressionType, Writer

from simclock.core._bus import Event, Message
from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import safe_repr
from simclock.recording._fingerprint import RawPayload
from simclock.recording._format import (
    CLOCK_SCHEMA_NAME,
    KIND_KEY,
    LIBRARY_PREFIX,
    METADATA_NAME,
    USER_METADATA_NAME,
    envelope_payload,
    package_version,
)
from simclock.recording._own import DRAW_KEYS
from simclock.recording._raw import refuse
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
    encode_json_message,
    is_sample,
)

__all__ = ["BAG_METADATA_VERSION", "ROS2_PROFILE", "export_ros2"]

ROS2_PROFILE = "ros2"
BAG_METADATA_VERSION = 8
_CHUNK_SIZE = 1 << 20
_U64 = 2**64 - 1  # a Draw's index is a uint64


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

    Only for a recording where a topic's first payload is a sample and a later
    one is not (see `_write_bag`): the types are then decided before writing.
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


def _draw_of(path: str, where: int, record: McapMessage) -> dict[str, Any]:
    """A persisted draw's JSON form; `RecordingError` naming its chunk when it is not one.

    Draws are outside the fingerprint, so the trace's checks do not cover them;
    a malformed one is damage, refused with the file and offset (C-REP-6).
    """
    try:
        draw = json.loads(record.data)
    except ValueError:
        draw = None
    if (
        type(draw) is not dict
        or draw.keys() != DRAW_KEYS
        or type(draw["method"]) is not str
        or type(draw["index"]) is not int
        or not 0 <= draw["index"] <= _U64
    ):
        raise refuse(
            path,
            where,
            f"persisted draw at log_time {record.log_time} is malformed: {record.data[:80]!r}; "
            "the file is damaged",
        )
    return draw


class _NotAllSamplesError(Exception):
    """A topic written as ``Sample`` met a payload that is not one (see `_write_bag`)."""


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
        tmp = tempfile.mkdtemp(prefix=".simclock-export-", dir=parent)
        try:
            name = os.path.basename(os.path.normpath(dst))
            file_name = f"{name}_0.mcap"
            mcap_path = os.path.join(tmp, file_name)
            try:
                _write_bag(reader, None, mcap_path, file_name, tmp)
            except _NotAllSamplesError:
                os.remove(mcap_path)
                _write_bag(reader, _topic_types(reader), mcap_path, file_name, tmp)
            os.chmod(tmp, 0o755)  # mkdtemp's 0o700 would hide the bag from other users
            os.rename(tmp, dst)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return dst


def _write_bag(
    reader: RecordingReader,
    types: dict[str, str] | None,
    mcap_path: str,
    file_name: str,
    tmp: str,
) -> None:
    """Write the bag's MCAP file and ``metadata.yaml`` in one checked pass over the recording.

    ``types`` (topic to ROS 2 type) is None on the first try: a JSON topic is
    then ``Sample`` when its first payload is a sample, and a later payload
    that is not raises `_NotAllSamplesError` (the caller writes again with every
    type decided first). The recording's groups arrive checked
    (`OwnSource.checked_groups`); a damaged file raises `RecordingError`
    from the middle of the writing, into the temporary directory.
    """
    meta = reader._own_metadata_records()
    summary = reader.summary
    assert summary is not None  # a simclock recording always has one (checked at open)
    # Per recording channel: (bag channel, kind, ROS 2 type), made at its first message.
    made: dict[int, tuple[int, str, str]] = {}
    schema_ids: dict[str, int] = {}
    counts: dict[int, int] = {}
    topic_of: dict[int, tuple[str, str]] = {}
    first: int | None = None
    last = 0
    check_samples = types is None
    library = f"{LIBRARY_PREFIX}{package_version('simclock')} mcap-python/{package_version('mcap')}"
    with open(mcap_path, "xb") as f:
        writer = Writer(f, chunk_size=_CHUNK_SIZE, compression=CompressionType.ZSTD)
        writer.start(profile=ROS2_PROFILE, library=library)
        add_message = writer.add_message

        def channel_for(cid: int, message: Message | None) -> tuple[int, str, str]:
            """The bag's channel for the recording's channel ``cid``, made at its first message."""
            channel = summary.channels[cid]
            kind = channel.metadata.get(KIND_KEY, "")
            type_name = {"clock": CLOCK_SCHEMA_NAME, "draws": DRAW_TYPE}.get(kind)
            if type_name is None and types is not None:
                type_name = types.get(channel.topic, MESSAGE_TYPE)
            elif type_name is None:
                payload = None if message is None else message.payload
                type_name = (
                    EVENT_TYPE
                    if isinstance(payload, Event)
                    else SAMPLE_TYPE
                    if kind == "json" and is_sample(payload)
                    else MESSAGE_TYPE
                )
            if type_name not in schema_ids:
                schema_ids[type_name] = writer.register_schema(
                    type_name, "ros2msg", SCHEMAS[type_name].encode()
                )
            out = writer.register_channel(
                channel.topic, "cdr", schema_ids[type_name], {"offered_qos_profiles": QOS_PROFILES}
            )
            counts[out] = 0
            topic_of[out] = (channel.topic, type_name)
            made[cid] = (out, kind, type_name)
            return made[cid]

        for where, records, batch, messages, _lines in reader._checked_groups():
            # Invariant: batch is the subsequence of records that are bus messages, and
            # messages[i] is batch[i] checked, so one index walks both.
            i = 0
            n = len(batch)
            for record in records:
                if type(record) is not McapMessage:
                    continue
                message = None
                if i < n and record is batch[i]:
                    message = messages[i]
                    i += 1
                cid = record.channel_id
                out, kind, type_name = made.get(cid) or channel_for(cid, message)
                stamp = record.log_time
                if kind == "clock":
                    data = record.data
                elif kind == "draws":
                    data = encode_draw(stamp, _draw_of(reader.path, where, record))
                else:
                    assert message is not None  # every record of a bus kind is in the batch
                    payload = message.payload
                    if check_samples and type_name == SAMPLE_TYPE and not is_sample(payload):
                        raise _NotAllSamplesError
                    if kind == "json" and type_name == MESSAGE_TYPE:
                        # The stored canonical text, as the replay check read and hashed it.
                        stored = envelope_payload(record.data)
                        data = encode_json_message(stamp, message.sequence, stored)
                    else:
                        data = encode_bus(type_name, stamp, message.sequence, payload)
                add_message(out, stamp, data, record.publish_time, record.sequence)
                counts[out] += 1
                if first is None:
                    first = stamp
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
