"""Read ROS 2 bags: a rosbag2 directory or one ``ros2``-profile MCAP file (C-ROS-2).

A **rosbag2 directory** is read through its ``metadata.yaml``: every file
in ``relative_file_paths`` is opened (and checked like any MCAP file, see
`._reader`) and their messages are merged in log-time order, ties in
the order the files are listed and then in file order (C-REP-5). Messages
compressed one by one (``compression_mode: message``, zstd) are
decompressed. A single ``.mcap`` file with the header profile ``ros2`` is
read as a bag of that one file.

Refused in one line (`BagError`), each saying what to do: a missing
or unreadable ``metadata.yaml``, sqlite3 storage (``.db3``), whole-file
compression (``compression_mode: file``), a compression other than zstd,
files listed but missing.

Two ways of reading, chosen per bag:

* **simclock export** (`simclock.export_ros2`): the ``simclock``
  metadata record is there with a valid digest, the writer is simclock and
  every channel is one an export writes (``simclock_msgs`` types and
  ``rosgraph_msgs/msg/Clock``, exact definitions). The bus trace comes back
  exactly: each message's stamp, bus sequence and payload from its fields,
  ``/clock`` ticks skipped as in a recording, draws served per label; a full
  read checks order, count and fingerprint against the metadata, and a
  difference is a `RecordingError` (the file was altered).
* **foreign** (any other bag): every message, sequences 0, 1, 2 ... in the
  merged order, ``json`` channels decoded, ``simclock_msgs`` bus types
  decoded back to their payloads, anything else a
  `RawPayload` of the (decompressed) CDR bytes.
  ``RecordingInfo.note`` says what a copy of a simclock recording lost.
"""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import yaml
import zstandard
from mcap.records import Channel, Schema
from mcap.records import Message as McapMessage

from simclock.core._bus import Message
from simclock.core._errors import SimclockValueError
from simclock.core._names import describe_exception
from simclock.recording._fingerprint import Fingerprinter, RawPayload
from simclock.recording._format import (
    CLOCK_TOPIC,
    DRAWS_TOPIC_PREFIX,
    LIBRARY_PREFIX,
    RECORDER_TICK,
    U32,
    RecordingMetadata,
    clock_payload_of,
    draws_topic,
)
from simclock.recording._raw import refuse
from simclock.recording._ros2types import (
    BUS_TYPES,
    DRAW_TYPE,
    SCHEMAS,
    decode_bus,
    decode_draw,
)
from simclock.recording._source import RecordingInfo

__all__ = ["METADATA_FILE", "BagError", "BagSource", "Part", "SimclockRecord", "read_metadata"]

METADATA_FILE: Final = "metadata.yaml"
_CLOCK_TYPE: Final = "rosgraph_msgs/msg/Clock"


class BagError(SimclockValueError):
    """A ROS 2 bag simclock cannot read: the message says what it is and what to do (C-ROS-2)."""


@dataclass(frozen=True, slots=True)
class SimclockRecord:
    """The ``simclock`` metadata record found in a bag's file, checked (digest valid)."""

    offset: int
    meta: RecordingMetadata
    record: Mapping[str, str]


class Part(Protocol):
    """One MCAP file of a bag, opened and checked (a ``RecordingReader`` of the file)."""

    path: str
    info: RecordingInfo
    _library: str
    _ros2_record: SimclockRecord | None

    def _part_records(self, start: int | None) -> Iterator[tuple[int, McapMessage]]:
        """Every message record with ``log_time >= start``, log-time order."""

    def _part_channel(self, cid: int, where: int | None) -> tuple[Channel, Schema | None]:
        """A message's channel and schema."""

    def _part_counts(self) -> tuple[dict[str, int], int, int, int]:
        """``(per topic, total, first log time, last log time)``."""

    def _part_channels(self) -> list[tuple[Channel, Schema | None]]:
        """Every channel of the file with its schema."""

    def close(self) -> None:
        """Close the file."""


def _bag_error(path: str, text: str) -> BagError:
    return BagError(f"{path}: {text}")


def read_metadata(directory: str) -> tuple[list[str], str]:
    """``(MCAP file paths, compression_mode)`` of a rosbag2 directory, or `BagError`."""
    meta_path = os.path.join(directory, METADATA_FILE)
    try:
        with open(meta_path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise _bag_error(
            directory,
            f"a directory without {METADATA_FILE}, so not a rosbag2 bag; pass a bag directory "
            "(ros2 bag record writes one) or an .mcap file",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _bag_error(meta_path, f"cannot be read ({describe_exception(exc)})") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first = " ".join(str(exc).split())[:200]
        raise _bag_error(
            meta_path, f"is not valid YAML ({first}); restore the bag's original"
        ) from None
    info = doc.get("rosbag2_bagfile_information") if isinstance(doc, dict) else None
    if not isinstance(info, dict):
        raise _bag_error(
            meta_path, "has no rosbag2_bagfile_information map; it is not rosbag2 metadata"
        )
    storage = info.get("storage_identifier")
    files = info.get("relative_file_paths")
    if storage == "sqlite3":
        raise _bag_error(
            directory,
            "a rosbag2 bag in sqlite3 storage (.db3), which simclock does not read; convert it "
            "to MCAP storage (ros2 bag convert, storage_id: mcap) and replay the result",
        )
    if storage != "mcap":
        raise _bag_error(
            directory,
            f"a rosbag2 bag in storage {storage!r}; simclock reads MCAP storage only, convert "
            "it with ros2 bag convert (storage_id: mcap)",
        )
    mode = str(info.get("compression_mode") or "").lower()
    fmt = str(info.get("compression_format") or "").lower()
    if mode == "file":
        raise _bag_error(
            directory,
            f"a file-compressed bag (compression_mode: file, {fmt or 'no format'}), which "
            "simclock does not read; decompress it with ros2 bag convert (no compression, or "
            "compression_mode: message) and replay the result",
        )
    if mode not in ("", "none", "message"):
        raise _bag_error(directory, f"unknown compression_mode {mode!r} in {METADATA_FILE}")
    if mode == "message" and fmt != "zstd":
        raise _bag_error(
            directory,
            f"messages compressed with {fmt!r}; simclock decompresses zstd only, convert the "
            "bag with ros2 bag convert",
        )
    if not isinstance(files, list) or not files or not all(isinstance(p, str) for p in files):
        raise _bag_error(meta_path, f"relative_file_paths must list the bag's files, got {files!r}")
    # Older bags list paths relative to the bag's parent: the file's name is what counts.
    paths = [os.path.join(directory, os.path.basename(p)) for p in files]
    missing = [os.path.basename(p) for p in paths if not os.path.isfile(p)]
    if missing:
        raise _bag_error(
            directory,
            f"{METADATA_FILE} lists {len(missing)} file(s) that are missing: "
            f"{', '.join(missing)}; copy the whole bag directory, or remove the missing names "
            "from relative_file_paths",
        )
    return paths, "" if mode == "none" else mode


def _fields(definition: str) -> list[str]:
    """The field lines of a ``ros2msg`` definition: comments and blank lines dropped."""
    lines = (line.split("#", 1)[0].strip() for line in definition.splitlines())
    return [" ".join(line.split()) for line in lines if line]


def _export_channel(channel: Channel, schema: Schema | None) -> str | None:
    """The type name when ``channel`` is one an export writes (exact definition), else None."""
    if schema is None or channel.message_encoding != "cdr" or schema.encoding != "ros2msg":
        return None
    text = SCHEMAS.get(schema.name)
    if text is None:
        return None
    if schema.data != text.encode():
        # Another writer may regenerate the definition (rosbags drops the comments):
        # the same fields in the same order are the same type.
        try:
            same = _fields(schema.data.decode()) == _fields(text)
        except UnicodeDecodeError:
            same = False
        if not same:
            return None
    if schema.name == _CLOCK_TYPE and channel.topic != CLOCK_TOPIC:
        return None
    return schema.name


class BagSource:
    """The messages (and draws) of a ROS 2 bag; see the module docstring.

    ``parts`` are the bag's files, opened and checked, in the order
    ``metadata.yaml`` lists them; ``compressed`` is True for
    ``compression_mode: message``. The source closes the parts.
    """

    def __init__(
        self,
        path: str,
        parts: Sequence[Part],
        *,
        compressed: bool,
        topics: frozenset[str] | None,
        container: str,
    ) -> None:
        self.path = path
        self.parts = list(parts)
        self._compressed = compressed
        self._wanted = topics
        self._types: list[dict[int, str | None]] = []
        for part in self.parts:
            self._types.append(
                {ch.id: _export_channel(ch, schema) for ch, schema in part._part_channels()}
            )
        self.record = self._simclock_record()
        self.container = container

    # -- the Source protocol (._source) ------------------------------------------------

    def info(self) -> RecordingInfo:
        """The bag's info: a simclock export's from its metadata (draws checked), else counted.

        Chunks and compressions are those of every file; messages compressed one by
        one add ``" + zstd per message"``.
        """
        parts = self.parts
        counts, total, first, last = self.topic_counts()
        chunks = sum(p.info.chunk_count for p in parts)
        compression = ",".join(
            sorted({c for p in parts for c in p.info.compression.split(",") if c != "unchunked"})
        )
        compression = (compression or "unchunked") + (
            " + zstd per message" if self._compressed else ""
        )
        libraries = ", ".join(dict.fromkeys(p._library for p in parts))
        found = self.record
        if found is None:
            return RecordingInfo(
                path=self.path, simclock=False, library=libraries, seed=None, fingerprint=None,
                start_ns=first, end_ns=last, step_ns=1, message_count=total, topic_counts=counts,
                draw_labels=(), chunk_count=chunks, compression=compression,
                container=self.container, note=self.note(),
            )  # fmt: skip
        meta = found.meta
        labels = self.draw_labels()
        if meta.record_draws and set(meta.draw_labels) - set(labels):
            missing = sorted(set(meta.draw_labels) - set(labels))
            raise refuse(
                parts[0].path, found.offset, f"the metadata lists persisted draws of "
                f"{missing} but the bag has no such draws channel; the bag is damaged",
            )  # fmt: skip
        return RecordingInfo(
            path=self.path, simclock=True, library=libraries, seed=meta.seed,
            fingerprint=meta.fingerprint, start_ns=meta.start_ns, end_ns=meta.end_ns,
            step_ns=meta.step_ns, message_count=meta.message_count,
            topic_counts=dict(meta.topics),
            draw_labels=meta.draw_labels if meta.record_draws else (),
            chunk_count=chunks, compression=compression, metadata=found.record,
            user_metadata=meta.user, recovered=meta.recovered, container=self.container,
        )  # fmt: skip

    # -- what the bag is ------------------------------------------------------------

    def _simclock_record(self) -> SimclockRecord | None:
        """The simclock record when the bag is an intact simclock export, else None."""
        found = [p._ros2_record for p in self.parts if p._ros2_record is not None]
        if len(found) != 1 or not all(p._library.startswith(LIBRARY_PREFIX) for p in self.parts):
            return None
        if not all(t is not None for types in self._types for t in types.values()):
            return None
        return found[0]

    def note(self) -> str:
        """What a foreign bag lost of a simclock recording (``""`` for any other bag)."""
        if self.record is not None:
            return ""
        found = [p._ros2_record for p in self.parts if p._ros2_record is not None]
        writers = ", ".join(sorted({p._library or "an unnamed writer" for p in self.parts}))
        if found:
            seed = found[0].meta.seed
            return (
                f"a simclock recording (seed {seed}) rewritten by {writers}: replayed as a "
                "foreign file, so its bus sequences, fingerprint check and persisted draws "
                "are not used"
            )
        ours = any(t in BUS_TYPES for types in self._types for t in types.values())
        if ours:
            return (
                f"simclock messages without simclock metadata (written by {writers}, e.g. a "
                "copy by another tool): replayed as a foreign file; the seed, fingerprint, "
                "bus sequences and persisted draws are lost"
            )
        return ""

    def topic_counts(self) -> tuple[dict[str, int], int, int, int]:
        """Messages per topic, total, first and last log time over every file."""
        counts: dict[str, int] = {}
        total = 0
        first: int | None = None
        last = 0
        for part in self.parts:
            c, n, f, la = part._part_counts()
            for topic, k in c.items():
                counts[topic] = counts.get(topic, 0) + k
            if n:
                total += n
                first = f if first is None else min(first, f)
                last = max(last, la)
        return counts, total, first or 0, last

    def close(self) -> None:
        """Close every file of the bag."""
        for part in self.parts:
            part.close()

    # -- merged records ---------------------------------------------------------------

    def _merged(self, start: int | None) -> Iterator[tuple[int, int, McapMessage]]:
        """``(part index, offset, record)`` in log-time order, ties in part then file order."""
        streams = [_keyed(i, part._part_records(start)) for i, part in enumerate(self.parts)]
        # heapq.merge is stable: equal log times come from the earlier file first.
        for _t, i, where, record in heapq.merge(*streams, key=lambda item: item[0]):
            yield i, where, record

    def _data(self, i: int, where: int, record: McapMessage) -> bytes:
        if not self._compressed:
            return record.data
        try:
            return zstandard.ZstdDecompressor().decompressobj().decompress(record.data)
        except zstandard.ZstdError as exc:
            raise refuse(
                self.parts[i].path,
                where,
                f"message at log_time {record.log_time} is not zstd-compressed as the bag's "
                f"compression_mode: message says ({describe_exception(exc)}); the file is damaged",
            ) from None

    def messages(self, start: int | None) -> Iterator[Message]:
        """Bus messages with ``stamp >= start`` (see the module docstring for the two modes)."""
        if self.record is not None:
            return self._simclock_messages(start)
        return self._foreign_messages(start)

    def _foreign_messages(self, start: int | None) -> Iterator[Message]:
        wanted = self._wanted
        decoders: dict[tuple[int, int], Callable[[bytes], Any]] = {}
        for index, (i, where, record) in enumerate(self._merged(start)):
            part = self.parts[i]
            channel, schema = part._part_channel(record.channel_id, where)
            if wanted is not None and channel.topic not in wanted:
                continue
            key = (i, record.channel_id)
            decode = decoders.get(key)
            if decode is None:
                decode = decoders[key] = self._foreign_decoder(
                    channel, schema, self._types[i].get(channel.id)
                )
            data = self._data(i, where, record)
            try:
                payload = decode(data)
            except (ValueError, KeyError, TypeError) as exc:
                raise refuse(
                    part.path,
                    where,
                    f"message {index} (channel {channel.topic!r}, log_time {record.log_time}) "
                    f"is not valid {channel.message_encoding} ({exc})",
                ) from None
            yield Message(channel.topic, record.log_time, index, payload)

    @staticmethod
    def _foreign_decoder(
        channel: Channel, schema: Schema | None, ours: str | None
    ) -> Callable[[bytes], Any]:
        if channel.message_encoding == "json":
            return json.loads
        if ours in BUS_TYPES:
            return lambda data: decode_bus(ours, data)[2]
        name = schema.name if schema is not None else ""
        return lambda data: RawPayload(channel.message_encoding, name, data)

    def _simclock_messages(self, start: int | None) -> Iterator[Message]:
        record = self.record
        assert record is not None
        meta = record.meta
        wanted = self._wanted
        full = start is None
        fingerprint = Fingerprinter()
        bus_clock = CLOCK_TOPIC in meta.topics
        last_stamp, last_seq, count = meta.start_ns, -1, 0
        for i, where, rec in self._merged(start):
            part = self.parts[i]
            type_name = self._types[i][rec.channel_id]
            channel, _schema = part._part_channel(rec.channel_id, where)
            if type_name == DRAW_TYPE:
                continue
            data = self._data(i, where, rec)
            try:
                if type_name == _CLOCK_TYPE:
                    if not bus_clock or rec.sequence == RECORDER_TICK:
                        continue
                    stamp = rec.log_time
                    seq = _unwrap(rec.sequence, last_seq)
                    payload: Any = clock_payload_of(data)
                else:
                    assert type_name is not None
                    stamp, seq, payload = decode_bus(type_name, data)
            except (ValueError, KeyError, TypeError) as exc:
                raise refuse(
                    part.path,
                    where,
                    f"message on {channel.topic!r} at log_time {rec.log_time}: {exc}; the file "
                    "is damaged",
                ) from None
            if stamp != rec.log_time or (stamp, seq) <= (last_stamp, last_seq):
                raise refuse(
                    part.path,
                    where,
                    f"message sequence={seq} stamp {stamp} ns on {channel.topic!r} (log_time "
                    f"{rec.log_time}) is out of the total order (previous: sequence={last_seq} "
                    f"at {last_stamp} ns); the file is damaged",
                )
            last_stamp, last_seq = stamp, seq
            count += 1
            message = Message(channel.topic, stamp, seq, payload)
            if full:
                fingerprint(message)
            if wanted is None or channel.topic in wanted:
                yield message
        if full:
            where_meta = f"{self.parts[0].path}"
            if count != meta.message_count:
                raise refuse(
                    where_meta,
                    record.offset,
                    f"{count} bus messages in the bag but its simclock metadata records "
                    f"{meta.message_count}; the bag was altered",
                )
            got = fingerprint.hexdigest()
            if got != meta.fingerprint:
                raise refuse(
                    where_meta,
                    record.offset,
                    f"the replayed trace has fingerprint {got} but the metadata records "
                    f"{meta.fingerprint}; the bag was altered",
                )

    def draws(self, label: str) -> Iterator[dict[str, Any]]:
        """The persisted draws of stream ``label`` in draw order (C-REP-3)."""
        topic = draws_topic(label)
        expected = 0
        for i, where, rec in self._merged(None):
            if self._types[i][rec.channel_id] != DRAW_TYPE:
                continue
            channel, _schema = self.parts[i]._part_channel(rec.channel_id, where)
            if channel.topic != topic:
                continue
            try:
                draw = decode_draw(self._data(i, where, rec))
            except ValueError as exc:
                raise refuse(self.parts[i].path, where, f"draw of {label!r}: {exc}") from None
            if draw["index"] != expected:
                raise refuse(
                    self.parts[i].path,
                    where,
                    f"draw {draw['index']} of label {label!r} where draw {expected} was due; "
                    "the file is damaged",
                )
            expected += 1
            yield draw

    def draw_labels(self) -> tuple[str, ...]:
        """The labels whose draws the bag holds."""
        labels = set()
        for i, part in enumerate(self.parts):
            for channel, _schema in part._part_channels():
                if self._types[i].get(channel.id) == DRAW_TYPE:
                    rest = channel.topic[len(DRAWS_TOPIC_PREFIX) :]
                    labels.add(rest or "/")
        return tuple(sorted(labels))


def _keyed(
    i: int, records: Iterator[tuple[int, McapMessage]]
) -> Iterator[tuple[int, int, int, McapMessage]]:
    """``(log_time, part index, offset, record)``: the merge key first."""
    for where, record in records:
        yield record.log_time, i, where, record


def _unwrap(low: int, last_seq: int) -> int:
    """The full bus sequence whose low 32 bits are ``low``, nearest after ``last_seq``."""
    base = max(last_seq, 0)
    step = (low - base) % (U32 + 1)
    if step > U32 // 2:
        step -= U32 + 1
    return base + step if base + step >= 0 else base + step + U32 + 1
