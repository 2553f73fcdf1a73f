"""Replay a recording as a clock (SPEC §5, C-REP-1..4).

:class:`RecordingReader` streams the bus messages of an MCAP file in the
recorded total order; :class:`ReplayClock` is a :class:`~simclock.SimClock`
whose ``advance`` hands those messages to its :attr:`~ReplayClock.bus`.

Two read paths:

* **simclock recordings** (metadata record ``simclock`` with format
  ``simclock-recording/1``): the Recorder wrote the messages in total order,
  so the chunks are read one after the other in file order, each message's
  ``(stamp, sequence)`` is checked to be strictly greater than the previous
  one, and the JSON envelopes of a chunk are decoded in one ``json.loads``
  call. No priority queue is needed, which is why this beats the official
  reader's log-time-ordered iteration. Each chunk's CRC is checked before any
  of its messages is delivered; the MCAP ``sequence`` must equal the envelope
  sequence mod 2**32; when the whole file is read, the message count and the
  fingerprint (C-X-FP, recomputed from the stored canonical payload text) must
  match the metadata. Any violation raises :class:`RecordingError` naming the
  file and the chunk offset / message.
* **other writers' files**: the official reader's log-time-ordered iteration
  (ties by file position, like every MCAP reader), with CRCs checked. ``json``
  channels are decoded with ``json.loads``; every other encoding is delivered
  as :class:`~simclock.RawPayload` (encoding, schema name, bytes). Foreign
  files have no bus sequence: messages get ``sequence`` 0, 1, 2, … in replay
  order (the MCAP ``sequence`` field is per publisher and often 0).

Memory: the simclock path and chunked foreign files hold one chunk (plus, for
foreign files, the chunks overlapping it in time) at a time, so memory does not
grow with the file. Unchunked foreign files have no index to order them by:
above ``SORT_IN_MEMORY_BYTES`` (64 MiB) a first pass checks that they are in
log-time order and they are then streamed in file order; smaller ones, and
unchunked files out of order, are sorted in memory by the official reader.
"""

from __future__ import annotations

import hashlib
import heapq
import io
import itertools
import json
import os
import struct
import threading
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import IO, Any

import numpy as np
from mcap.data_stream import ReadDataStream
from mcap.exceptions import McapError
from mcap.opcode import Opcode
from mcap.reader import NonSeekingReader, SeekingReader
from mcap.records import Chunk, Schema
from mcap.records import Message as McapMessage
from mcap.stream_reader import StreamReader, breakup_chunk
from mcap.summary import Summary

from simclock.core._bus import Bus, Event, Message
from simclock.core._errors import (
    SimclockError,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
)
from simclock.core._failure import publish_callback_failure
from simclock.core._names import check_callable
from simclock.core._protocols import Callback, Handle, PeriodicStats
from simclock.core._random import _check_size, normalise_label
from simclock.core._timeint import check_positive_ns, check_time_ns
from simclock.recording._closing import Closing
from simclock.recording._fingerprint import RawPayload, canonical_json, topic_token
from simclock.recording._recorder import (
    FORMAT,
    KIND_KEY,
    METADATA_NAME,
    USER_METADATA_NAME,
    draws_topic,
)

__all__ = [
    "RecordingError",
    "RecordingInfo",
    "RecordingReader",
    "ReplayClock",
    "ReplayRandomSource",
]

_MAGIC = b"\x89MCAP0\r\n"
_U32 = 0xFFFFFFFF
_BUS_KINDS = ("json", "event", "raw")
_OTHER_KINDS = ("clock", "draws")  # written by the Recorder, not bus messages
# Errors the mcap package raises for malformed input (it has no single root).
_READ_ERRORS = (McapError, struct.error, ValueError, EOFError, OSError, KeyError, IndexError)


class RecordingError(SimclockValueError):
    """The file is not a valid recording: not MCAP, truncated, corrupt or out of order.

    The message names the file and where (byte offset, chunk, message) the
    problem is. Replay never goes on silently past such a problem.
    """


@dataclass(frozen=True, slots=True)
class RecordingInfo:
    """What a recording says about itself (``simclock info``).

    ``simclock`` is True for files written by :class:`~simclock.Recorder`;
    ``seed``, ``fingerprint`` and ``draw_labels`` are only known for those.
    ``topic_counts`` counts bus messages per topic (for foreign files: every
    channel's messages per topic). Times are ns.
    """

    path: str
    simclock: bool
    library: str
    seed: int | None
    fingerprint: str | None
    start_ns: int
    end_ns: int
    step_ns: int
    message_count: int
    topic_counts: Mapping[str, int]
    draw_labels: tuple[str, ...]
    chunk_count: int
    compression: str
    metadata: Mapping[str, str] = field(default_factory=dict)
    user_metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def duration_ns(self) -> int:
        """``end_ns - start_ns``."""
        return self.end_ns - self.start_ns


def _error(path: str, text: str) -> RecordingError:
    return RecordingError(f"{path}: {text}")


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_FOOTER_SIZE = 1 + 8 + 8 + 8 + 4  # opcode, length, summary_start, summary_offset_start, crc


def _check_summary_crc(path: str, stream: IO[bytes], size: int) -> None:
    """Check the footer's summary CRC (0 means the writer stored none).

    The official reader does not check it, but the summary decides which
    channels, chunks and draws replay reads, so a damaged one must not pass.
    The CRC covers the summary section and the footer up to the CRC field.
    """
    footer_at = size - len(_MAGIC) - _FOOTER_SIZE
    if footer_at < len(_MAGIC):
        raise McapError(f"file of {size} bytes is too short for a footer")
    stream.seek(footer_at)
    footer = stream.read(_FOOTER_SIZE)
    if footer[0] != Opcode.FOOTER:
        raise McapError(f"expected a Footer record at offset {footer_at}, found opcode {footer[0]}")
    summary_start, _offsets, expected = struct.unpack_from("<QQI", footer, 9)
    if expected == 0:
        return
    begin = summary_start or footer_at
    end = footer_at + _FOOTER_SIZE - 4
    if not len(_MAGIC) <= begin <= footer_at:
        raise McapError(f"footer summary_start {summary_start} is outside the file")
    stream.seek(begin)
    crc = 0
    left = end - begin
    while left > 0:
        block = stream.read(min(left, 1 << 20))
        if not block:
            raise McapError(f"file ends inside the summary section at offset {end - left}")
        crc = zlib.crc32(block, crc)
        left -= len(block)
    if crc != expected:
        raise _error(
            path,
            f"summary section CRC mismatch (footer records {expected}, computed {crc} over "
            f"offsets {begin}..{end}); the file is damaged",
        )


class RecordingReader(Closing):
    """Stream the bus messages of an MCAP recording in total order (SPEC §5).

    ``RecordingReader(path, topics=None)`` opens and checks the file's
    envelope (magic, footer, summary, metadata) at once, so a truncated file or
    a file that is not MCAP is refused before anything is delivered.
    ``messages(start_ns=None)`` is a generator of :class:`~simclock.Message`
    (see the module docstring for the checks made while streaming);
    ``draws(label)`` yields the persisted draws of one random stream in draw
    order. Close with :meth:`close` or a ``with`` block.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, topics: Iterable[str] | None = None
    ) -> None:
        if not isinstance(path, str | os.PathLike):
            raise SimclockTypeError(f"path must be a str or os.PathLike, got {path!r}")
        self.path = os.fspath(path)
        self._topics = _check_topics(topics)
        self._files: list[IO[bytes]] = []
        self._closed = False
        self._whole_file_checked = False
        self._lock = threading.Lock()
        try:
            stream = self._open("RecordingReader()")
        except FileNotFoundError:
            raise SimclockValueError(
                f"{self.path}: no such file; pass the path of an .mcap recording"
            ) from None
        except OSError as exc:
            raise _error(self.path, f"cannot be read ({_describe(exc)})") from None
        try:
            self._load(stream)
        except BaseException:
            self.close()
            raise

    # -- opening ----------------------------------------------------------------

    def _open(self, what: str) -> IO[bytes]:
        self.check_open(what)
        stream = open(self.path, "rb")  # noqa: SIM115 - closed in close()
        with self._lock:
            self._files.append(stream)
        return stream

    def _load(self, stream: IO[bytes]) -> None:
        path = self.path
        size = stream.seek(0, io.SEEK_END)
        stream.seek(0)
        if stream.read(len(_MAGIC)) != _MAGIC:
            raise _error(path, "not an MCAP file (no MCAP magic at offset 0)")
        stream.seek(0)
        try:
            reader = SeekingReader(stream, validate_crcs=True)
            header = reader.get_header()
        except _READ_ERRORS as exc:
            raise _error(path, f"unreadable MCAP header at offset 8 ({_describe(exc)})") from None
        try:
            stream.seek(size - len(_MAGIC))
            if stream.read(len(_MAGIC)) != _MAGIC:
                raise McapError("no MCAP magic at the end of the file")
            _check_summary_crc(path, stream, size)
            summary = reader.get_summary()
            metadata = list(reader.iter_metadata())
        except RecordingError:
            raise
        except _READ_ERRORS as exc:
            raise _error(
                path,
                f"truncated or corrupt: no valid footer/summary in the last bytes before offset "
                f"{size} ({_describe(exc)}); the recording was not closed or was cut",
            ) from None
        self._reader = reader
        self._stream = stream
        self._summary: Summary | None = summary
        self._library = header.library
        meta: dict[str, dict[str, str]] = {m.name: dict(m.metadata) for m in metadata}
        self._meta = meta.get(METADATA_NAME, {})
        self._own = bool(self._meta)
        if self._own and self._meta.get("format") != FORMAT:
            raise _error(
                path,
                f"simclock metadata has format {self._meta.get('format')!r}, this version "
                f"reads {FORMAT!r}; replay it with the simclock version that wrote it",
            )
        if self._own and self._meta.get("error"):
            raise _error(
                path,
                f"the recording is incomplete (the Recorder reported: {self._meta['error']}); "
                "fix the run and record it again",
            )
        if self._own and (summary is None or summary.statistics is None):
            raise _error(path, "simclock recording without a summary section; the file is damaged")
        self._channel_kind: dict[int, str] = {}
        self._channel_topic: dict[int, str] = {}
        if summary is not None:
            for cid, channel in summary.channels.items():
                self._channel_topic[cid] = channel.topic
                self._channel_kind[cid] = channel.metadata.get(KIND_KEY, "") if self._own else ""
        self.info = self._make_info(summary, meta.get(USER_METADATA_NAME, {}))

    def _make_info(self, summary: Summary | None, user: dict[str, str]) -> RecordingInfo:
        stats = summary.statistics if summary is not None else None
        chunks = summary.chunk_indexes if summary is not None else []
        compression = ",".join(sorted({c.compression or "none" for c in chunks})) or "unchunked"
        if self._own:
            m = self._meta
            try:
                counts = {str(k): int(v) for k, v in json.loads(m["topics"]).items()}
                labels = tuple(str(x) for x in json.loads(m["draw_labels"]))
                return RecordingInfo(
                    path=self.path,
                    simclock=True,
                    library=self._library,
                    seed=int(m["seed"]),
                    fingerprint=m["fingerprint"],
                    start_ns=int(m["start_ns"]),
                    end_ns=int(m["end_ns"]),
                    step_ns=int(m["step_ns"]),
                    message_count=int(m["message_count"]),
                    topic_counts=counts,
                    draw_labels=labels if m.get("record_draws") == "true" else (),
                    chunk_count=len(chunks),
                    compression=compression,
                    metadata=dict(m),
                    user_metadata=user,
                )
            except (KeyError, ValueError, TypeError, AttributeError) as exc:
                raise _error(
                    self.path, f"simclock metadata is malformed ({_describe(exc)})"
                ) from None
        counts = {}
        if stats is not None and summary is not None:
            for cid, n in stats.channel_message_counts.items():
                topic = summary.channels[cid].topic if cid in summary.channels else f"#{cid}"
                counts[topic] = counts.get(topic, 0) + n
        start = stats.message_start_time if stats is not None else 0
        end = stats.message_end_time if stats is not None else 0
        return RecordingInfo(
            path=self.path,
            simclock=False,
            library=self._library,
            seed=None,
            fingerprint=None,
            start_ns=start,
            end_ns=end,
            step_ns=1,
            message_count=stats.message_count if stats is not None else -1,
            topic_counts=counts,
            draw_labels=(),
            chunk_count=len(chunks),
            compression=compression,
            user_metadata=user,
        )

    # -- public -------------------------------------------------------------------

    @property
    def is_simclock(self) -> bool:
        """True for files written by :class:`~simclock.Recorder`."""
        return self._own

    def check_open(self, what: str) -> None:
        """``SimclockRuntimeError`` naming ``what`` once :meth:`close` has run."""
        if self._closed:
            raise SimclockRuntimeError(
                f"{what} on a closed recording {self.path!r}; open a new ReplayClock"
            )

    def close(self) -> None:
        """Close every file handle this reader opened (idempotent)."""
        with self._lock:
            self._closed = True
            files, self._files = self._files, []
        for f in files:
            f.close()

    def messages(self, start_ns: int | None = None) -> Iterator[Message]:
        """Bus messages with ``stamp >= start_ns`` in recorded total order (C-REP-1).

        Raises :class:`RecordingError` where the file is found bad; every
        message yielded before that came from a chunk that passed its checks.
        """
        start = None if start_ns is None else check_time_ns(start_ns, "start_ns")
        self.check_open("messages()")
        if self._own:
            return self._own_messages(start)
        return self._foreign_messages(start)

    def draws(self, label: str) -> Iterator[dict[str, Any]]:
        """The persisted draws of stream ``label``, in draw order (C-REP-3).

        Streams the chunks that hold the label's channel, one at a time, with
        its own file handle (so it can run alongside :meth:`messages`).
        """
        topic = draws_topic(label)
        summary = self._summary
        ids = [cid for cid, t in self._channel_topic.items() if t == topic]
        if summary is None or len(ids) != 1:
            raise _error(
                self.path,
                f"the metadata lists persisted draws of label {label!r} but the file has "
                + (f"no channel {topic!r}" if not ids else f"{len(ids)} channels {topic!r}")
                + "; the file is damaged",
            )
        cid = ids[0]
        stream = self._open("draws()")
        expected = 0
        if not summary.chunk_indexes:
            for _group in self._record_groups(stream):
                pass  # unchunked: the whole file is checked before the first draw
        for where, records in self._record_groups(stream, channel=cid):
            for msg in records:
                if type(msg) is not McapMessage or msg.channel_id != cid:
                    continue
                try:
                    draw = json.loads(msg.data)
                    ok = (
                        isinstance(draw, dict)
                        and draw.keys() == _DRAW_KEYS
                        and draw["index"] == expected
                        and isinstance(draw["args"], list)
                    )
                except ValueError:
                    ok = False
                if not ok:
                    raise _error(
                        self.path,
                        f"{where}: draw {expected} of label {label!r} "
                        f"(log_time {msg.log_time}) is malformed or out of order: "
                        f"{msg.data[:80]!r}",
                    )
                expected += 1
                yield draw
        stats = summary.statistics
        recorded = stats.channel_message_counts.get(cid) if stats is not None else None
        if recorded is not None and recorded != expected:
            raise _error(
                self.path,
                f"{expected} draws of label {label!r} in the file but the summary counts "
                f"{recorded}; the file is damaged",
            )

    # -- simclock recordings ----------------------------------------------------------

    def _record_groups(
        self, stream: IO[bytes], *, start: int | None = None, channel: int | None = None
    ) -> Iterator[tuple[str, list[Any]]]:
        """``(where, records)`` of a simclock recording, in file order.

        Chunked: one group per chunk, its CRC checked, skipping chunks that end
        before ``start`` or (per the chunk index) hold nothing of ``channel``.
        Unchunked (another tool rewrote the file): groups of
        ``_UNCHUNKED_GROUP`` messages; the data-section CRC is checked only
        when the whole file has been read, so callers read it once before
        delivering anything.
        """
        summary = self._summary
        assert summary is not None
        chunks = sorted(summary.chunk_indexes, key=lambda c: c.chunk_start_offset)
        for chunk_index in chunks:
            offset = chunk_index.chunk_start_offset
            if start is not None and chunk_index.message_end_time < start:
                continue
            offsets = chunk_index.message_index_offsets
            if channel is not None and offsets and channel not in offsets:
                continue
            where = f"chunk at offset {offset}"
            try:
                records = self._read_chunk(offset, stream)
            except Exception as exc:  # the mcap package has no single root; zstandard.ZstdError
                raise _error(self.path, f"{where}: {_describe(exc)}") from None
            yield where, records
        if chunks:
            return
        stream.seek(0)
        group: list[Any] = []
        first = 0
        try:
            for record in StreamReader(stream, validate_crcs=True).records:
                if type(record) is McapMessage:
                    group.append(record)
                    if len(group) == _UNCHUNKED_GROUP:
                        yield f"unchunked messages {first}..{first + len(group) - 1}", group
                        first += len(group)
                        group = []
        except Exception as exc:  # the mcap package has no single root
            raise _error(self.path, f"unchunked data section: {_describe(exc)}") from None
        if group:
            yield f"unchunked messages {first}..{first + len(group) - 1}", group

    def _read_chunk(self, offset: int, stream: IO[bytes] | None = None) -> list[Any]:
        """The records of the Chunk at ``offset``, its CRC checked (official record readers)."""
        stream = self._stream if stream is None else stream
        stream.seek(offset)
        data = ReadDataStream(stream)
        opcode = data.read1()
        if opcode != Opcode.CHUNK:
            raise McapError(
                f"expected a Chunk record (opcode {Opcode.CHUNK}), found opcode {opcode}"
            )
        data.read8()
        chunk = Chunk.read(data)
        return breakup_chunk(chunk, validate_crc=True)

    def _own_messages(self, start: int | None) -> Iterator[Message]:
        summary = self._summary
        assert summary is not None
        if not summary.chunk_indexes and not self._whole_file_checked:
            # Unchunked: no chunk CRC to check a group before it is delivered, so the
            # whole file (data CRC, order, count, fingerprint) is checked first, once.
            for _message in self._checked_own_messages(None):
                pass
            self._whole_file_checked = True
        yield from self._checked_own_messages(start)

    def _checked_own_messages(self, start: int | None) -> Iterator[Message]:
        path = self.path
        summary = self._summary
        assert summary is not None and summary.statistics is not None
        kinds = self._channel_kind
        topics_by_id = self._channel_topic
        wanted = self._topics
        chunks = sorted(summary.chunk_indexes, key=lambda c: c.chunk_start_offset)
        if summary.statistics.chunk_count != len(chunks):
            raise _error(
                path,
                f"the summary lists {len(chunks)} chunk indexes but its statistics count "
                f"{summary.statistics.chunk_count} chunks; the file is damaged",
            )
        full = start is None
        fingerprint = hashlib.sha256()
        # b" <topic> <kind> " per channel: the middle of a fingerprint line (C-X-FP).
        line_infix = {
            cid: f" {topic_token(topics_by_id[cid])} {kind} ".encode()
            for cid, kind in kinds.items()
        }
        # Channels whose JSON payload is decoded back to an object (the rest stay JSON).
        decode_by_channel = {
            cid: _DECODE_KIND[kind] for cid, kind in kinds.items() if kind in _DECODE_KIND
        }
        # A message before the recording's start would make replay time go back.
        last_stamp = self.info.start_ns
        last_seq = -1
        count = 0
        held: list[Message] = []
        loads = json.loads
        for where, records in self._record_groups(self._stream, start=start):
            batch: list[McapMessage] = []
            for record in records:
                if type(record) is McapMessage:
                    kind = kinds.get(record.channel_id)
                    if kind in _BUS_KINDS:
                        batch.append(record)
                    elif kind not in _OTHER_KINDS:
                        raise _error(
                            path,
                            f"{where}: message on channel id "
                            f"{record.channel_id} of unknown kind {kind!r}; a simclock "
                            f"recording has only {[*_BUS_KINDS, *_OTHER_KINDS]} channels",
                        )
            if not batch:
                continue
            try:
                envelopes = loads(b"[" + b",".join([r.data for r in batch]) + b"]")
            except ValueError:
                envelopes = []
                for i, r in enumerate(batch):
                    try:
                        envelopes.append(loads(r.data))
                    except ValueError as exc:
                        raise _error(
                            path,
                            f"{where}, message {i} (log_time {r.log_time}) "
                            f"is not valid JSON ({exc})",
                        ) from None
            out: list[Message] = []
            lines: list[bytes] = []
            for record, envelope in zip(batch, envelopes, strict=True):
                stamp = record.log_time
                try:
                    seq = envelope["sequence"]
                    payload = envelope["payload"]
                except (KeyError, TypeError):
                    raise _error(
                        path,
                        f"{where}: message at {stamp} ns is not a simclock "
                        f"envelope: {record.data[:80]!r}",
                    ) from None
                if (
                    type(seq) is not int
                    or record.sequence != seq & _U32
                    or record.publish_time != stamp
                ):
                    raise _error(
                        path,
                        f"{where}: message at {stamp} ns has MCAP sequence "
                        f"{record.sequence}, publish_time {record.publish_time} but envelope "
                        f"sequence {seq!r}; the file is damaged",
                    )
                if stamp < last_stamp or (stamp == last_stamp and seq <= last_seq):
                    raise _error(
                        path,
                        f"{where}: message sequence={seq} at {stamp} ns is "
                        f"out of order (previous: sequence={last_seq} at {last_stamp} ns, "
                        f"start {self.info.start_ns} ns); a simclock recording must be in "
                        "total order (stamp, sequence)",
                    )
                last_stamp = stamp
                last_seq = seq
                cid = record.channel_id
                if full:
                    data = record.data
                    # The envelope is '{"payload":' + canonical payload + ',"sequence":N}'.
                    lines.append(
                        b"%d %d%s%s\n"
                        % (stamp, seq, line_infix[cid], data[11 : data.rindex(b',"sequence":')])
                    )
                elif stamp < start:  # type: ignore[operator]
                    continue
                topic = topics_by_id[cid]
                if wanted is not None and topic not in wanted:
                    continue
                decode = decode_by_channel.get(cid)
                if decode is not None:
                    try:
                        payload = decode(payload)
                    except (SimclockError, KeyError, TypeError, ValueError) as exc:
                        raise _error(
                            path,
                            f"{where}: {kinds[cid]} sequence={seq}: {_describe(exc)}",
                        ) from None
                out.append(Message(topic, stamp, seq, payload))
            count += len(batch)
            if full:
                fingerprint.update(b"".join(lines))
            # Invariant: a chunk's messages are delivered only after the whole chunk and
            # the one before it passed every check; the last chunk also waits for the
            # end-of-file checks below.
            yield from held
            held = out
        if full:
            expected = self.info.message_count
            if count != expected:
                raise _error(
                    path,
                    f"{count} bus messages in the chunks but the metadata records {expected}; "
                    "the file is damaged",
                )
            if fingerprint.hexdigest() != self.info.fingerprint:
                raise _error(
                    path,
                    f"the replayed trace has fingerprint {fingerprint.hexdigest()} but the "
                    f"metadata records {self.info.fingerprint}; the file was altered",
                )
        yield from held

    # -- other writers' files -----------------------------------------------------------

    def _foreign_messages(self, start: int | None) -> Iterator[Message]:
        path = self.path
        wanted = self._topics
        stream = self._open("messages()")
        source: Iterator[tuple[Schema | None, Any, McapMessage]]
        decoders: dict[int, Any] = {}
        ordinal = itertools.count()
        index = -1
        try:
            summary = self._summary
            if summary is not None and summary.chunk_indexes:
                source = SeekingReader(stream, validate_crcs=True).iter_messages(
                    log_time_order=True, starting_at=start
                )
            else:
                # Unchunked: the data-section CRC is the only check, and SeekingReader
                # falls back to a reader that skips it. In log-time order (checked, with
                # the CRC, by a first pass) the file order is every reader's order (ties
                # by position) and it streams; otherwise the reader sorts in memory,
                # reading (and checking) everything before the first message.
                in_order = self._unchunked_in_log_time_order(stream)
                stream.seek(0)
                source = NonSeekingReader(stream, validate_crcs=True).iter_messages(
                    log_time_order=not in_order, starting_at=start
                )
            for schema, channel, record in source:
                index = next(ordinal)
                if wanted is not None and channel.topic not in wanted:
                    continue
                decode = decoders.get(channel.id)
                if decode is None:
                    decode = _foreign_decoder(channel.message_encoding, schema)
                    decoders[channel.id] = decode
                try:
                    payload = decode(record.data)
                except ValueError as exc:
                    raise _error(
                        path,
                        f"message {index} (channel {channel.topic!r}, log_time {record.log_time}) "
                        f"is not valid {channel.message_encoding} ({exc})",
                    ) from None
                yield Message(channel.topic, record.log_time, index, payload)
        except RecordingError:
            raise
        except Exception as exc:  # the mcap package has no single root; zstandard.ZstdError
            where = "before the first message" if index < 0 else f"after message {index}"
            raise _error(path, f"{where}: {_describe(exc)}; the file is damaged") from None
        finally:
            stream.close()

    @staticmethod
    def _unchunked_in_log_time_order(stream: IO[bytes]) -> bool:
        """True for a large unchunked file whose messages are in log-time order.

        Without chunk indexes the official reader sorts every message in
        memory. Above :data:`SORT_IN_MEMORY_BYTES` one extra pass checks the
        order and the data-section CRC; when the order holds, the file is
        streamed instead. Smaller files and files out of order keep the
        reader's in-memory sort. A damaged file raises the reader's error.
        """
        if stream.seek(0, io.SEEK_END) <= SORT_IN_MEMORY_BYTES:
            return False
        stream.seek(0)
        last = -1
        in_order = True
        for record in StreamReader(stream, validate_crcs=True).records:
            if in_order and type(record) is McapMessage:
                in_order = record.log_time >= last
                last = record.log_time
        return in_order


_DRAW_KEYS = frozenset({"args", "index", "method", "value"})
_UNCHUNKED_GROUP = 4096
"""Messages per group when a simclock recording without chunks is streamed."""

SORT_IN_MEMORY_BYTES = 64 * 2**20
"""Unchunked foreign files up to this size are sorted in memory by the official reader."""


def _raw_from_json(data: Any) -> RawPayload:
    """Inverse of :meth:`RawPayload.to_json` (a ``raw`` channel of a simclock recording)."""
    if not isinstance(data, dict) or set(data) != {"data", "encoding", "schema"}:
        raise SimclockValueError(f"not a RawPayload: {data!r}")
    encoding, schema, hexdata = data["encoding"], data["schema"], data["data"]
    if not (isinstance(encoding, str) and isinstance(schema, str) and isinstance(hexdata, str)):
        raise SimclockValueError(f"not a RawPayload: {data!r}")
    return RawPayload(encoding, schema, bytes.fromhex(hexdata))


_DECODE_KIND = {"event": Event.from_json, "raw": _raw_from_json}


def _foreign_decoder(encoding: str, schema: Schema | None) -> Any:
    if encoding == "json":
        return json.loads
    return partial(RawPayload, encoding, schema.name if schema is not None else "")


def _check_topics(topics: Iterable[str] | None) -> frozenset[str] | None:
    if topics is None:
        return None
    if isinstance(topics, str) or not isinstance(topics, Iterable):
        raise SimclockTypeError(
            f"topics must be an iterable of topic names or None, got {topics!r}; "
            "write topics=['/a'] for one topic"
        )
    out = frozenset(topics)
    for topic in out:
        if not isinstance(topic, str):
            raise SimclockTypeError(f"topics must hold str, got {topic!r}")
    return out


# -- random draws ---------------------------------------------------------------------


class _DrawLog:
    """Per-label cursors over the persisted draws of one recording (C-REP-3)."""

    def __init__(self, reader: RecordingReader, labels: tuple[str, ...]) -> None:
        self._reader = reader
        self._labels = frozenset(labels)
        self._cursors: dict[str, Iterator[dict[str, Any]]] = {}
        self._taken: dict[str, int] = {}
        self._peeked: dict[str, dict[str, Any]] = {}
        # A label whose log was found damaged keeps raising that error.
        self._failed: dict[str, RecordingError] = {}

    def take(self, label: str, method: str, args: tuple[Any, ...]) -> Any:
        self._reader.check_open("draws()")
        if label not in self._labels:
            raise SimclockRuntimeError(
                f"no draws were recorded for label {label!r} (recorded labels: "
                f"{sorted(self._labels)}); replay must draw from the same streams as the "
                "recorded run"
            )
        failure = self._failed.get(label)
        if failure is not None:
            raise failure
        cursor = self._cursors.get(label)
        if cursor is None:
            cursor = self._cursors[label] = self._reader.draws(label)
        n = self._taken.get(label, 0)
        # A refused draw changes nothing: the draw is only consumed once it matched.
        try:
            draw = self._peeked.pop(label, None) or next(cursor, None)
        except RecordingError as exc:
            self._failed[label] = exc
            raise
        if draw is None:
            raise SimclockRuntimeError(
                f"the recorded draws of label {label!r} ran out after {n} draws; the replayed "
                "code draws more than the recorded run did"
            )
        asked = canonical_json(list(args), "draw arguments")
        recorded = canonical_json(draw.get("args"), "draw arguments")
        if draw.get("method") != method or asked != recorded:
            self._peeked[label] = draw
            raise SimclockRuntimeError(
                f"draw {n} of label {label!r}: asked {method}{asked} but the recording has "
                f"{draw.get('method')}{recorded}; replay must make the same draws as the "
                "recorded run"
            )
        self._taken[label] = n + 1
        value = draw["value"]
        if isinstance(value, dict):
            return np.asarray(value["data"], dtype=value["dtype"]).reshape(value["shape"])
        return value


class ReplayRandomSource:
    """A :class:`~simclock.RandomSource` that returns the recorded draws (C-REP-3).

    Each draw must match the recorded one of the same label (method and
    arguments), in order; otherwise, and when the recorded draws run out,
    ``SimclockRuntimeError``. ``numpy_rng()`` is refused: draws made on the
    Generator directly were never recorded.
    """

    __slots__ = ("_label", "_log", "_seed")

    def __init__(self, log: _DrawLog, seed: int, label: str = "/") -> None:
        self._log = log
        self._seed = seed
        self._label = label

    @property
    def seed(self) -> int:
        """The recorded run's root seed."""
        return self._seed

    @property
    def label(self) -> str:
        """The absolute label path, ``/`` for the root."""
        return self._label

    def __repr__(self) -> str:
        return f"ReplayRandomSource(seed={self._seed}, label={self._label!r})"

    def child(self, label: str) -> ReplayRandomSource:
        """The replayed stream at ``self.label + '/' + label`` (C-RNG-3 label rules)."""
        return ReplayRandomSource(self._log, self._seed, normalise_label(self._label, label))

    def uniform(self, a: float, b: float) -> float:
        """The next recorded ``uniform(a, b)`` draw of this label."""
        return float(self._log.take(self._label, "uniform", (a, b)))

    def normal(self, mu: float, sigma: float, size: int | tuple[int, ...] | None = None) -> Any:
        """The next recorded ``normal`` draw of this label."""
        return self._log.take(self._label, "normal", (mu, sigma, _check_size(size)))

    def integers(self, low: int, high: int, size: int | tuple[int, ...] | None = None) -> Any:
        """The next recorded ``integers`` draw of this label."""
        return self._log.take(self._label, "integers", (low, high, _check_size(size)))

    def numpy_rng(self) -> np.random.Generator:
        """Refused: direct Generator draws are not recorded, so they cannot be replayed."""
        raise SimclockRuntimeError(
            "numpy_rng() cannot be replayed: draws made on the Generator directly are not "
            "recorded; use uniform/normal/integers on the source"
        )


# -- the clock ---------------------------------------------------------------------------

_PENDING = 0
_RUNNING = 1
_DONE = 2
_CANCELLED_RUNNING = 3


class _Entry:
    __slots__ = ("cb", "failed", "fired", "k", "period", "phase", "skipped", "state")

    def __init__(self, cb: Callback, period: int = 0, phase: int = 0, k: int = 0) -> None:
        self.cb = cb
        self.period = period
        self.phase = phase
        self.k = k
        self.state = _PENDING
        self.fired = 0
        self.failed = 0
        self.skipped = 0


def _noop() -> None:
    """Cancel of a callback that replay never runs (C-REP-2)."""


class ReplayClock(Closing):
    """A :class:`~simclock.SimClock` that replays a recording (SPEC §5, C-REP-1..4).

    ``ReplayClock(path, *, callbacks=False, topics=None, bus=None)``.

    * ``now_ns()`` starts at the recording's start time (``start_ns`` of a
      simclock recording, the first log time of a foreign file) and never
      decreases (C-TIME-2).
    * ``advance(dt)`` delivers to ``bus`` subscribers every recorded message
      with stamp in ``(now, now+dt]`` in recorded total order; the first
      ``advance`` (also after :meth:`seek`) includes the current instant
      (C-REP-1). While a message is delivered ``now_ns()`` is its stamp.
      ``advance`` from inside a subscriber or callback raises
      ``RuntimeError`` (C-ADV-4).
    * ``schedule``/``schedule_periodic`` validate their arguments like
      HeapSimClock and return a Handle, but the callback runs only when the
      clock was created with ``callbacks=True`` (C-REP-2). Then entries fire
      in ``(at_ns, seq)`` order with HeapSimClock's rules (C-TIE-1, C-PER-1..3,
      C-ERR-1/2); at an instant shared with recorded messages the recorded
      messages are delivered first. The bus's own deferred deliveries always
      run: they are not control callbacks.
    * ``random_source()`` raises ``SimclockRuntimeError`` unless the draws
      were persisted (``Recorder(record_draws=True)``); then it returns a
      :class:`ReplayRandomSource` handing back exactly the recorded draws per
      label (C-REP-3).
    * ``seek(t)`` jumps forward to ``t`` without delivering the messages
      before ``t`` (whole chunks are skipped unread); ``t < now`` is a
      ``ValueError``. Control callbacks due before ``t`` do not run: one-shot
      entries are dropped, periodic ones resume at their first grid point
      ``>= t`` and count the dropped firings as ``skipped``.
    * ``topics`` restricts delivery to those topics (the rest is still read
      and checked).

    A recording problem found while streaming raises :class:`RecordingError`
    from ``advance``; the clock then stays at the last delivered stamp and
    every later ``advance``, ``seek`` and ``next_event_ns`` raises the
    same error. Messages published on the replay bus during replay take
    sequences from that bus's own counter.
    Complexity: O(1) amortised per delivered message; memory independent of
    the file's length.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        callbacks: bool = False,
        topics: Iterable[str] | None = None,
        bus: Bus | None = None,
    ) -> None:
        if not isinstance(callbacks, bool):
            raise SimclockTypeError(f"callbacks must be a bool, got {callbacks!r}")
        if bus is not None and not isinstance(bus, Bus):
            raise SimclockTypeError(f"bus must be a simclock.Bus or None, got {bus!r}")
        if bus is not None and bus.clock is not None:
            raise SimclockRuntimeError(
                "bus is already bound to a clock; pass a new Bus() or None to ReplayClock"
            )
        self._reader = RecordingReader(path, topics=topics)
        self.info = self._reader.info
        self._callbacks = callbacks
        self._now = self.info.start_ns
        self._step = max(1, self.info.step_ns)
        self._it: Iterator[Message] = self._reader.messages()
        self._next: Message | None = None
        self._primed = False
        self._failure: BaseException | None = None
        self._heap: list[tuple[int, int, _Entry]] = []
        self._dead = 0
        self._seq = itertools.count()
        self._running = False
        self._random: ReplayRandomSource | None = None
        if not self.info.simclock and self.info.message_count < 0:
            # Unchunked foreign file without statistics: the start is the first message.
            try:
                self._prime()
            except BaseException:
                self._reader.close()
                raise
            if self._next is not None:
                self._now = self._next.stamp_ns
        # Bound last: a refused construction leaves the caller's bus free.
        self.bus = bus if bus is not None else Bus()
        self.bus.bind(self)

    # -- reading ----------------------------------------------------------------

    @property
    def path(self) -> str:
        """The recording's path."""
        return self._reader.path

    def now_ns(self) -> int:
        """Current replay time in ns; never decreases (C-TIME-1, C-TIME-2)."""
        return self._now

    def step_ns(self) -> int:
        """The recorded clock's ``step_ns`` (1 for foreign files) (C-STEP-1)."""
        return self._step

    def end_ns(self) -> int:
        """The recording's end time (the recorded clock's final ``now``)."""
        return self.info.end_ns

    def next_event_ns(self) -> int | None:
        """Stamp of the next recorded message or live callback, or ``None`` (C-X-PEEK)."""
        self._reader.check_open("next_event_ns()")
        if self._failure is not None:
            raise self._failure
        self._prime()
        heap = self._heap
        while heap and heap[0][2].state != _PENDING:
            heapq.heappop(heap)
            self._dead -= 1
        times: list[int] = []
        if self._next is not None:
            times.append(self._next.stamp_ns)
        if heap:
            times.append(heap[0][0])
        return min(times) if times else None

    def random_source(self) -> ReplayRandomSource:
        """The replayed root stream (C-REP-3); refused unless draws were persisted."""
        self._reader.check_open("random_source()")
        if self._random is None:
            info = self.info
            if not info.simclock or info.metadata.get("record_draws") != "true":
                raise SimclockRuntimeError(
                    f"recording {self.path!r} has no persisted random draws, so replay cannot "
                    "produce random numbers; record with Recorder(..., record_draws=True)"
                )
            assert info.seed is not None
            self._random = ReplayRandomSource(_DrawLog(self._reader, info.draw_labels), info.seed)
        return self._random

    def close(self) -> None:
        """Close the recording's file handles (idempotent).

        Afterwards ``advance``, ``seek``, ``next_event_ns``, ``random_source``
        and draws from a replayed stream raise ``SimclockRuntimeError`` and
        change nothing; ``now_ns`` still answers.
        """
        self._reader.close()

    # -- scheduling -----------------------------------------------------------------

    def _is_bus_delivery(self, cb: Callback) -> bool:
        return getattr(cb, "__self__", None) is self.bus and getattr(cb, "__func__", None) is (
            Bus.flush
        )

    def _push(self, at: int, entry: _Entry) -> Handle:
        heapq.heappush(self._heap, (at, next(self._seq), entry))
        return Handle(cancel=partial(self._cancel, entry), stats=partial(self._stats, entry))

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """Run ``cb`` at ``at_ns`` if callbacks are enabled (C-SCH-1, C-REP-2)."""
        at = check_time_ns(at_ns, "at_ns")
        check_callable(cb)
        if at < self._now:
            raise SimclockValueError(
                f"at_ns={at} is in the past (now is {self._now} ns); schedule at or after now"
            )
        if not self._callbacks and not self._is_bus_delivery(cb):
            return Handle(cancel=_noop)
        return self._push(at, _Entry(cb))

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """Run ``cb`` at ``phase + k*period`` if callbacks are enabled (C-PER-1..3, C-REP-2)."""
        period = check_positive_ns(period_ns, "period_ns")
        phase = check_time_ns(phase_ns, "phase_ns")
        check_callable(cb)
        if not self._callbacks:
            return Handle(cancel=_noop)
        now = self._now
        k0 = 0 if phase >= now else -((phase - now) // period)
        return self._push(phase + k0 * period, _Entry(cb, period, phase, k0))

    def _cancel(self, entry: _Entry) -> None:
        if entry.state == _PENDING:
            entry.state = _DONE
            self._dead += 1
            heap = self._heap
            if len(heap) > 2 * (len(heap) - self._dead) + 64:
                heap[:] = [item for item in heap if item[2].state == _PENDING]
                heapq.heapify(heap)
                self._dead = 0
        elif entry.state == _RUNNING:
            entry.state = _CANCELLED_RUNNING

    @staticmethod
    def _stats(entry: _Entry) -> PeriodicStats:
        return PeriodicStats(fired=entry.fired, failed=entry.failed, skipped=entry.skipped)

    # -- running ----------------------------------------------------------------

    def _prime(self) -> None:
        if not self._primed:
            self._primed = True
            self._next = self._pull()

    def _pull(self) -> Message | None:
        try:
            return next(self._it, None)
        except BaseException as exc:
            self._failure = exc
            raise

    def _check_idle(self, what: str) -> None:
        self._reader.check_open(what)
        if self._running:
            raise SimclockRuntimeError(
                f"{what} called from inside a callback or subscriber at now={self._now} ns; "
                "schedule the work with schedule() instead"
            )
        if self._failure is not None:
            raise self._failure

    def advance(self, dt_ns: int) -> None:
        """Deliver recorded messages and run due callbacks up to ``now + dt`` (C-REP-1).

        See the class docstring for the order; ``now`` is the target afterwards.
        """
        dt = check_time_ns(dt_ns, "dt_ns")
        self._check_idle(f"advance(dt_ns={dt})")
        target = self._now + dt
        heap = self._heap
        deliver = self.bus.deliver
        it = self._it
        self._running = True
        try:
            self._prime()
            nxt = self._next
            while True:
                # Fast path: recorded messages up to the next callback.
                while nxt is not None and nxt.stamp_ns <= target:
                    if heap and heap[0][0] < nxt.stamp_ns:
                        break
                    self._now = nxt.stamp_ns
                    try:
                        deliver(nxt)
                    finally:
                        # Also after a BaseException from a subscriber (C-ERR-2): that
                        # message counts as delivered, the rest stays pending.
                        try:
                            nxt = next(it, None)
                        except BaseException as exc:
                            self._failure = exc
                            self._next = None
                            raise
                        self._next = nxt
                if heap and heap[0][0] <= target:
                    self._fire_one()
                    continue
                break
            self._now = target
        finally:
            self._running = False

    def _fire_one(self) -> None:
        at, _seq, entry = heapq.heappop(self._heap)
        if entry.state != _PENDING:
            self._dead -= 1
            return
        self._now = at
        entry.state = _RUNNING
        try:
            entry.cb()
        except Exception as exc:  # C-ERR-1
            entry.failed += 1
            publish_callback_failure(self.bus, at, entry.cb, exc)
        finally:
            entry.fired += 1
            if entry.period == 0 or entry.state == _CANCELLED_RUNNING:
                entry.state = _DONE
            else:
                entry.state = _PENDING
                entry.k += 1
                heapq.heappush(
                    self._heap, (entry.phase + entry.k * entry.period, next(self._seq), entry)
                )

    def seek(self, t_ns: int) -> None:
        """Jump to ``t_ns`` without delivering the recorded messages before it.

        ``t_ns < now`` is a ``ValueError`` (time never goes back); the
        messages at ``t_ns`` are delivered by the next ``advance``. Control
        callbacks due before ``t_ns`` are skipped (see the class docstring).
        """
        t = check_time_ns(t_ns, "t_ns")
        self._check_idle(f"seek(t_ns={t})")
        if t < self._now:
            raise SimclockValueError(
                f"t_ns={t} is before now={self._now} ns; replay time never goes back, open a "
                "new ReplayClock to start over"
            )
        self._prime()
        if self._next is not None and self._next.stamp_ns < t:
            if self.info.simclock:
                # Sequences are stored: restart at the first chunk that reaches t.
                self._it = self._reader.messages(start_ns=t)
                self._primed = False
                self._next = None
            else:
                # Foreign sequences are positions in replay order: keep counting.
                while self._next is not None and self._next.stamp_ns < t:
                    self._next = self._pull()
        heap = self._heap
        moved: list[_Entry] = []
        while heap and heap[0][0] < t:
            _at, _seq, entry = heapq.heappop(heap)
            if entry.state != _PENDING:
                self._dead -= 1
                continue
            if entry.period == 0:
                entry.state = _DONE
                entry.skipped += 1
                continue
            k = -((entry.phase - t) // entry.period)
            entry.skipped += k - entry.k
            entry.k = k
            moved.append(entry)
        for entry in moved:
            heapq.heappush(heap, (entry.phase + entry.k * entry.period, next(self._seq), entry))
        self._now = t
