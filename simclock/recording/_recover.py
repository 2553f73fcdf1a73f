"""Recover a recording cut short (crash, SIGKILL, full disk) (C-REP-7).

`recover` reads the damaged file from the start, record by record, and
keeps every record of every complete chunk (and every complete record outside
chunks) up to the point where the file stops making sense: a record that runs
past the end of the file, or one that does not parse. A complete chunk whose
CRC fails or that does not decompress is reported lost and skipped (its
length is still known). Like the ``mcap recover`` command it keeps schemas,
channels, messages, metadata and attachments; beyond it:

* a **simclock recording** is written again through a
  `Recorder` started from the run's start record
  (``simclock.start``, written and flushed when recording begins), so the
  output is a valid simclock recording with the run's seed, versions, user
  metadata and step, a fingerprint over exactly the bus messages kept, the
  persisted draws kept, and ``recovered`` in its metadata: a JSON report of
  what was kept and lost (chunks, bytes, the time range of a cut chunk);
* any other MCAP file is copied with the official writer, with a
  ``simclock.recovered`` metadata record holding the same report.

Memory does not grow with the file: each kept chunk's records are written as
soon as the chunk is read (only the records before the start record wait for
it, a handful).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from mcap.records import (
    Attachment,
    Channel,
    Chunk,
    DataEnd,
    Footer,
    Header,
    Metadata,
    Schema,
)
from mcap.records import Message as McapMessage
from mcap.writer import CompressionType, Writer

from simclock.core._bus import Bus, Event, Message
from simclock.core._errors import SimclockTypeError
from simclock.core._names import describe_exception, safe_repr
from simclock.recording._fingerprint import canonical_json
from simclock.recording._format import (
    CLOCK_TOPIC,
    KIND_KEY,
    LABEL_KEY,
    PROFILE,
    RECORDER_TICK,
    START_METADATA_NAME,
    U32,
    RecordingMetadata,
    clock_payload_of,
    decode_draw_value,
)
from simclock.recording._own import raw_from_json
from simclock.recording._raw import (
    MAGIC,
    RecordingError,
    cut_chunk_start,
    parse_record,
    record_at,
    refuse,
    split_chunk,
)
from simclock.recording._recorder import Recorder

__all__ = ["RecoveryReport", "recover"]


_COMPLETE = "the file was complete"
"""The ``reason`` of a file that ended with its footer: nothing can be missing after it."""


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What [`recover`][simclock.recover] kept and lost (also stored, as JSON, in the output).

    ``kept_messages`` counts what ``simclock info`` counts in the output:
    for a simclock recording its bus messages (the fingerprinted trace; the
    persisted draws are ``kept_draws``, the recorder's own ``/clock`` ticks
    are written again and not counted), for another writer's file every
    message. ``kept_until_ns`` is the stamp of the last of those messages;
    ``kept_chunks``/``lost_chunks`` count chunks of the damaged file.
    """

    source: str
    output: str
    simclock: bool
    kept_chunks: int
    kept_messages: int
    lost_chunks: int
    lost_bytes: int
    kept_until_ns: int | None
    lost_from_ns: int | None
    reason: str
    kept_draws: int = 0

    def to_json(self) -> str:
        """Canonical JSON of the report (the ``recovered`` metadata value)."""
        return canonical_json(
            {
                "kept_chunks": self.kept_chunks,
                "kept_draws": self.kept_draws,
                "kept_messages": self.kept_messages,
                "kept_until_ns": self.kept_until_ns,
                "lost_bytes": self.lost_bytes,
                "lost_chunks": self.lost_chunks,
                "lost_from_ns": self.lost_from_ns,
                "reason": self.reason,
                "source": os.path.basename(self.source),
            }
        )

    def summary(self) -> str:
        """One line for the command line; its counts are ``simclock info``'s for the output.

        It says only what the file can tell: of a file that was not closed, the
        messages its writer still held in memory are in no chunk, so no count
        of them exists; "lost nothing" is said of a complete file only.
        """
        since = "" if self.lost_from_ns is None else f", messages from {self.lost_from_ns} ns on"
        if self.reason == _COMPLETE:
            lost = (
                f"lost {self.lost_bytes} bytes ({_count(self.lost_chunks, 'chunk')}){since}"
                if self.lost_bytes
                else "lost nothing"
            )
        else:
            lost = (
                f"lost {self.lost_bytes} bytes ({_count(self.lost_chunks, 'chunk')}){since}"
                if self.lost_bytes
                else "every complete chunk kept"
            ) + "; messages the writer never wrote to the file cannot be counted"
        kept = (
            f"{_count(self.kept_messages, 'bus message')} and {_count(self.kept_draws, 'draw')}"
            if self.simclock
            else _count(self.kept_messages, "message")
        )
        until = "" if self.kept_until_ns is None else f" up to {self.kept_until_ns} ns"
        return (
            f"recovered {self.output}: kept {kept}{until} from "
            f"{_count(self.kept_chunks, 'complete chunk')} of {os.path.basename(self.source)}; "
            f"{lost} ({self.reason})"
        )


def _count(n: int, noun: str) -> str:
    """``1 chunk``, ``2 chunks``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


@dataclass(slots=True)
class _Scan:
    """What the scan has found so far; final once `_scan` is exhausted."""

    header: Header | None = None
    kept_chunks: int = 0
    lost_chunks: int = 0
    lost_bytes: int = 0
    lost_from_ns: int | None = None
    reason: str = "the file ends where it should"


def _scan(path: str, stream: IO[bytes], size: int, out: _Scan) -> Iterator[Any]:
    """Every kept record (chunks split), in file order, as it is read; ``out`` counts the rest.

    A generator, so a recovery holds one chunk's records at a time, not the file's.
    """
    stream.seek(0)
    if stream.read(len(MAGIC)) != MAGIC:
        raise refuse(path, 0, "not an MCAP file (no MCAP magic at the start); nothing to recover")
    offset = len(MAGIC)
    while True:
        stream.seek(offset)
        got = record_at(stream, size, offset)
        if got is None:
            if offset < size:
                out.lost_bytes = size - offset
                out.reason = f"the file is cut inside the record at offset {offset}"
                cut_from = cut_chunk_start(stream, offset)
                if cut_from is not None:  # a cut Chunk record still names its first log time
                    out.lost_chunks += 1
                    out.lost_from_ns = cut_from
            else:
                out.reason = f"the file ends at offset {offset} without a footer"
            return
        opcode, end, body = got
        try:
            record = parse_record(path, opcode, body, offset)
        except RecordingError as exc:
            out.lost_bytes = size - offset
            out.reason = str(exc)
            return
        if isinstance(record, Header):
            out.header = record
        elif isinstance(record, Chunk):
            try:
                records = split_chunk(path, record, offset)
                out.kept_chunks += 1
            except RecordingError as exc:
                out.lost_chunks += 1
                out.lost_bytes += end - offset
                if out.lost_from_ns is None:
                    out.lost_from_ns = record.message_start_time
                out.reason = str(exc)
            else:
                yield from records  # the loop seeks to its next record itself
        elif isinstance(record, Footer | DataEnd):
            out.reason = _COMPLETE
            return
        elif record is not None:
            yield record
        offset = end


def recover(path: str | os.PathLike[str], output: str | os.PathLike[str]) -> RecoveryReport:
    """Write ``output``: a valid recording of everything complete in ``path`` (C-REP-7).

    Raises [`RecordingError`][simclock.RecordingError] naming the file and offset when
    nothing can be recovered (not MCAP, no header, a simclock recording
    without its start record), ``ValueError`` when ``output`` is ``path`` or
    cannot be written. See the module docstring for what is kept.
    """
    for name, value in (("path", path), ("output", output)):
        if not isinstance(value, str | os.PathLike):
            raise SimclockTypeError(
                f"{name} must be a str or os.PathLike, got {type(value).__name__} "
                f"{safe_repr(value)}"
            )
    src, dst = os.fspath(path), os.fspath(output)
    if os.path.abspath(src) == os.path.abspath(dst):
        raise RecordingError(f"{dst}: output must not be the damaged file; pass another path")
    try:
        stream = open(src, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise refuse(src, None, f"cannot be read ({describe_exception(exc)})") from None
    with stream:
        size = stream.seek(0, os.SEEK_END)
        found = _Scan()
        scan = _scan(src, stream, size, found)
        # Records before the header (none in a valid file) wait for it; then everything
        # kept is written as it is read.
        ahead: list[Any] = []
        while found.header is None:
            record = next(scan, _END)
            if record is _END:
                raise refuse(src, len(MAGIC), "no complete MCAP header; nothing to recover")
            ahead.append(record)
        if found.header.profile == PROFILE:
            origin = _start_record(src, scan, ahead)
            return _rerecord(src, dst, itertools.chain(ahead, scan), found, origin)
        return _copy(src, dst, found, itertools.chain(ahead, scan))


_END = object()


def _start_record(src: str, scan: Iterator[Any], ahead: list[Any]) -> RecordingMetadata:
    """The run's start record: read from ``scan`` into ``ahead`` until it is found.

    The recorder writes it first, so ``ahead`` holds a few records.
    """
    starts = [r for r in ahead if isinstance(r, Metadata) and r.name == START_METADATA_NAME]
    for record in scan if not starts else ():
        ahead.append(record)
        if isinstance(record, Metadata) and record.name == START_METADATA_NAME:
            starts.append(record)
            break
    if not starts:
        raise refuse(
            src, len(MAGIC), f"simclock recording without its {START_METADATA_NAME!r} record "
            "(written by simclock >= recording format 2); nothing to recover",
        )  # fmt: skip
    meta = dict(starts[0].metadata)
    try:
        user = json.loads(meta.pop("user"))
        return RecordingMetadata.from_mcap(meta, user)
    except (KeyError, ValueError, TypeError) as exc:
        raise refuse(src, len(MAGIC), f"the start record is damaged ({exc})") from None


def _rerecord(
    src: str, dst: str, records: Iterator[Any], found: _Scan, origin: RecordingMetadata
) -> RecoveryReport:
    """Feed the kept messages and draws to a new Recorder started like the original."""
    channels: dict[int, Channel] = {}
    rec = Recorder(
        dst, Bus(), seed=origin.seed, metadata=origin.user or None,
        record_draws=origin.record_draws, clock_period_ns=origin.clock_period_ns,
        start_ns=origin.start_ns,
    )  # fmt: skip
    rec._origin = origin
    draws = 0
    until: int | None = None
    last_seq = -1
    try:
        for record in records:
            if not isinstance(record, McapMessage):
                if isinstance(record, Channel):
                    channels[record.id] = record  # Invariant: before its messages (MCAP)
                continue
            channel = channels.get(record.channel_id)
            if channel is None:
                continue
            kind = channel.metadata.get(KIND_KEY, "")
            if kind == "draws" and rec.draw_observer is not None:
                draw = json.loads(record.data)
                args = tuple(decode_draw_value(draw["args"]))
                rec.draw_observer(
                    channel.metadata.get(LABEL_KEY, "/"), draw["method"], args,
                    decode_draw_value(draw["value"]),
                )  # fmt: skip
                draws += 1
                continue
            elif kind == "clock":
                if record.sequence == RECORDER_TICK:
                    continue  # the Recorder writes its own ticks again
                seq = _nearest(last_seq, record.sequence)
                rec.record(
                    Message(CLOCK_TOPIC, record.log_time, seq, clock_payload_of(record.data))
                )
                last_seq = seq
            elif kind in ("json", "event", "raw"):
                envelope = json.loads(record.data)
                payload = envelope["payload"]
                if kind == "event":
                    payload = Event.from_json(payload)
                elif kind == "raw":
                    payload = raw_from_json(payload)
                rec.record(Message(channel.topic, record.log_time, envelope["sequence"], payload))
                last_seq = envelope["sequence"]
            else:
                continue
            until = record.log_time
        # The Recorder's own count: what `simclock info` shows for the output.
        report = RecoveryReport(
            src, dst, True, found.kept_chunks, rec.message_count, found.lost_chunks,
            found.lost_bytes, until, found.lost_from_ns, found.reason, draws,
        )  # fmt: skip
        rec._recovered = report.to_json()
    finally:
        rec.close()
    return report


def _nearest(base: int, low: int) -> int:
    base = max(base, 0)
    step = (low - base) % (U32 + 1)
    if step > U32 // 2:
        step -= U32 + 1
    value = base + step
    return value if value >= 0 else value + U32 + 1


def _copy(src: str, dst: str, found: _Scan, records: Iterator[Any]) -> RecoveryReport:
    """A foreign file: the kept records through the official writer, plus a report record."""
    assert found.header is not None
    kept = 0
    until: int | None = None
    try:
        f = open(dst, "wb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise RecordingError(f"{dst}: cannot be written ({describe_exception(exc)})") from None
    with f:
        writer = Writer(f, compression=CompressionType.ZSTD)
        writer.start(profile=found.header.profile, library=found.header.library)
        schema_ids: dict[int, int] = {}
        channel_ids: dict[int, int] = {}
        for record in records:
            if isinstance(record, Schema) and record.id not in schema_ids:
                schema_ids[record.id] = writer.register_schema(
                    record.name, record.encoding, record.data
                )
            elif isinstance(record, Channel) and record.id not in channel_ids:
                channel_ids[record.id] = writer.register_channel(
                    record.topic, record.message_encoding,
                    schema_ids.get(record.schema_id, 0), dict(record.metadata),
                )  # fmt: skip
            elif isinstance(record, McapMessage) and record.channel_id in channel_ids:
                writer.add_message(
                    channel_ids[record.channel_id], record.log_time, record.data,
                    record.publish_time, record.sequence,
                )  # fmt: skip
                kept += 1
                until = record.log_time if until is None else max(until, record.log_time)
            elif isinstance(record, Metadata):
                writer.add_metadata(record.name, dict(record.metadata))
            elif isinstance(record, Attachment):
                writer.add_attachment(
                    record.create_time, record.log_time, record.name, record.media_type,
                    record.data,
                )  # fmt: skip
        report = RecoveryReport(
            src, dst, False, found.kept_chunks, kept, found.lost_chunks, found.lost_bytes,
            until, found.lost_from_ns, found.reason,
        )  # fmt: skip
        writer.add_metadata("simclock.recovered", {"report": report.to_json()})
        writer.finish()  # type: ignore[no-untyped-call]
    return report
