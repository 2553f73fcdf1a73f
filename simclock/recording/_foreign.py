"""Read other writers' MCAP files in log-time order (C-REP-5).

Every file the official reader reads replays completely, in log-time order
with ties in file order (the order of the official non-seeking reader's
``log_time_order=True``). The strategy is chosen from what the file contains:

* **indexed**: chunk indexes in the summary. The chunks are merged by
  ``(log_time, chunk offset, position in chunk)``: a chunk is read only
  when no message before its first log time is left, so memory holds the
  chunks that overlap in time, not the file. Channels and schemas come from
  the summary; when the summary does not repeat them (``repeat_channels`` or
  ``repeat_schemas`` off) a first pass over the data section collects them.
* **streamed**: no chunk indexes (unchunked, no summary, or chunked without
  indexes). Records are read in file order; up to
  `SORT_IN_MEMORY_BYTES` (and for files out of log-time order) the
  messages are sorted in memory (stable, so ties stay in file order); above
  it, a first pass checks the order and the data-section CRC and the file
  is then streamed.

What the summary lacks is computed, never assumed: without a Statistics
record a first pass counts the messages per topic and finds the first and
last log time, so ``end_ns`` is the last message's log time (C-REP-5).
Foreign messages have no bus sequence: they get ``sequence`` 0, 1, 2, ... in
replay order. ``json`` channels are decoded with ``json.loads``; every other
encoding is delivered as `RawPayload`.
"""

from __future__ import annotations

import heapq
import json
import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import IO, Any

from mcap.records import Channel, Schema
from mcap.records import Message as McapMessage
from mcap.summary import Summary

from simclock.core._bus import Message
from simclock.recording._fingerprint import RawPayload
from simclock.recording._raw import read_chunk, records_in_file_order, refuse
from simclock.recording._source import RecordingInfo

__all__ = ["SORT_IN_MEMORY_BYTES", "ForeignSource", "Scan"]

SORT_IN_MEMORY_BYTES = 64 * 2**20
"""Unchunked foreign files up to this size are sorted in memory."""

_LOG_TIME = operator.attrgetter("log_time")
_NO_BOUND = (1 << 64, 0)


@dataclass(slots=True)
class Scan:
    """What one pass over a file's data section found."""

    schemas: dict[int, Schema] = field(default_factory=dict)
    channels: dict[int, Channel] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    first: int | None = None
    last: int | None = None
    in_order: bool = True
    loose_messages: int = 0  # messages outside chunks


def scan(path: str, stream: IO[bytes]) -> Scan:
    """One checked pass over the whole file (chunk and data-section CRCs)."""
    out = Scan()
    previous = -1
    counts = out.counts
    for where, in_chunk, record in records_in_file_order(path, stream):
        kind = type(record)
        if kind is McapMessage:
            if record.channel_id not in out.channels:
                raise refuse(
                    path, where, f"a message refers to channel id {record.channel_id}, which no "
                    "Channel record before it defines; the file is damaged",
                )  # fmt: skip
            t = record.log_time
            counts[record.channel_id] = counts.get(record.channel_id, 0) + 1
            if out.first is None or t < out.first:
                out.first = t
            if out.last is None or t > out.last:
                out.last = t
            out.in_order = out.in_order and t >= previous
            previous = t
            out.loose_messages += not in_chunk
        elif kind is Channel:
            out.channels[record.id] = record
        elif kind is Schema:
            out.schemas[record.id] = record
    return out


def _decoder(encoding: str, schema: Schema | None) -> Callable[[bytes], Any]:
    if encoding == "json":
        return json.loads
    return partial(RawPayload, encoding, schema.name if schema is not None else "")


class ForeignSource:
    """Messages of one foreign file (see the module docstring)."""

    def __init__(
        self,
        path: str,
        summary: Summary | None,
        size: int,
        data_end: int,
        topics: frozenset[str] | None,
        open_stream: Callable[[], IO[bytes]],
        *,
        library: str,
        user_metadata: Mapping[str, str],
    ) -> None:
        self.path = path
        self._library = library
        self._user_metadata = dict(user_metadata)
        # Where what the summary says is: the offset named when it is found wrong.
        self._summary_at = data_end if summary is not None else None
        self._summary = summary
        self._size = size
        self._data_end = data_end
        self._wanted = topics
        self._open = open_stream
        self._schemas: dict[int, Schema] = dict(summary.schemas) if summary else {}
        self._channels: dict[int, Channel] = dict(summary.channels) if summary else {}
        stats = summary.statistics if summary is not None else None
        complete = stats is not None and all(
            cid in self._channels for cid in stats.channel_message_counts
        )
        complete = complete and all(
            c.schema_id == 0 or c.schema_id in self._schemas for c in self._channels.values()
        )
        self.indexed = summary is not None and bool(summary.chunk_indexes)
        self.scanned: Scan | None = None
        if not complete:
            stream = open_stream()
            try:
                found = scan(path, stream)
            finally:
                stream.close()
            self.scanned = found
            self._schemas.update(found.schemas)
            self._channels.update(found.channels)
            # Messages outside every chunk are not reachable through the chunk indexes.
            self.indexed = self.indexed and found.loose_messages == 0
        self._check_channels()

    def _check_channels(self) -> None:
        for channel in self._channels.values():
            if channel.schema_id != 0 and channel.schema_id not in self._schemas:
                raise refuse(
                    self.path,
                    self._summary_at or 8,
                    f"channel {channel.id} ({channel.topic!r}) refers to schema id "
                    f"{channel.schema_id}, which no Schema record defines; the file is damaged",
                )

    # -- the Source protocol (._source) ------------------------------------------------

    def info(self) -> RecordingInfo:
        """Counts and times from the summary's statistics, or from the first pass without them."""
        counts, total, first, last = self.topic_counts()
        chunks = self._summary.chunk_indexes if self._summary is not None else []
        return RecordingInfo(
            path=self.path,
            simclock=False,
            library=self._library,
            seed=None,
            fingerprint=None,
            start_ns=first,
            end_ns=last,
            step_ns=1,
            message_count=total,
            topic_counts=counts,
            draw_labels=(),
            chunk_count=len(chunks),
            compression=",".join(sorted({c.compression or "none" for c in chunks})) or "unchunked",
            user_metadata=self._user_metadata,
        )

    def close(self) -> None:
        """Nothing to release: every read opens its own handle and closes it when done."""

    def topic_counts(self) -> tuple[dict[str, int], int, int, int]:
        """``(messages per topic, message count, first log time, last log time)``."""
        found = self.scanned
        counts: dict[str, int] = {}
        if found is not None:
            by_id, total = found.counts, sum(found.counts.values())
            first, last = found.first or 0, found.last or 0
        else:
            assert self._summary is not None and self._summary.statistics is not None
            stats = self._summary.statistics
            by_id, total = stats.channel_message_counts, stats.message_count
            first, last = stats.message_start_time, stats.message_end_time
        for cid, n in by_id.items():
            topic = self._channel(cid, self._summary_at).topic
            counts[topic] = counts.get(topic, 0) + n
        return counts, total, first, last

    def _channel(self, cid: int, where: int | None) -> Channel:
        channel = self._channels.get(cid)
        if channel is None:
            raise refuse(
                self.path,
                where,
                f"a message refers to channel id {cid}, which no Channel record defines; the "
                "file is damaged",
            )
        return channel

    # -- messages ---------------------------------------------------------------------

    def records(self, start: int | None) -> Iterator[tuple[int, McapMessage]]:
        """``(offset, record)`` of every message with ``log_time >= start``, in log-time
        order with ties in file order; every topic (the caller filters)."""
        stream = self._open()
        try:
            if self.indexed:
                yield from self._indexed(stream, start)
            else:
                yield from self._streamed(stream, start)
        finally:
            stream.close()

    def channel_and_schema(self, cid: int, where: int | None) -> tuple[Channel, Schema | None]:
        """The channel of a message and its schema (``None`` for schema id 0)."""
        channel = self._channel(cid, where)
        return channel, self._schemas.get(channel.schema_id)

    def channels(self) -> list[tuple[Channel, Schema | None]]:
        """Every channel known (summary and first pass) with its schema."""
        return [(c, self._schemas.get(c.schema_id)) for c in self._channels.values()]

    def messages(self, start: int | None) -> Iterator[Message]:
        """Messages with ``log_time >= start`` in log-time order, ties in file order."""
        stream = self._open()
        try:
            source = self._indexed(stream, start) if self.indexed else self._streamed(stream, start)
            decoders: dict[int, Callable[[bytes], Any]] = {}
            wanted = self._wanted
            index = -1
            for where, record in source:
                index += 1
                cid = record.channel_id
                decode = decoders.get(cid)
                channel = self._channel(cid, where)
                if wanted is not None and channel.topic not in wanted:
                    continue
                if decode is None:
                    schema = self._schemas.get(channel.schema_id)
                    decode = decoders[cid] = _decoder(channel.message_encoding, schema)
                try:
                    payload = decode(record.data)
                except ValueError as exc:
                    raise refuse(
                        self.path,
                        where,
                        f"message {index} (channel {channel.topic!r}, log_time "
                        f"{record.log_time}) is not valid {channel.message_encoding} ({exc})",
                    ) from None
                yield Message(channel.topic, record.log_time, index, payload)
        finally:
            stream.close()

    def _indexed(self, stream: IO[bytes], start: int | None) -> Iterator[tuple[int, McapMessage]]:
        """Merge the chunks by ``(log_time, chunk offset, position)``: no chunk read early."""
        assert self._summary is not None
        chunks = sorted(
            (
                c
                for c in self._summary.chunk_indexes
                if start is None or c.message_end_time >= start
            ),
            key=lambda c: (c.message_start_time, c.chunk_start_offset),
        )
        n = len(chunks)
        p = 0
        heap: list[tuple[int, int, int, list[McapMessage]]] = []
        pop = heapq.heappop
        push = heapq.heappush
        while True:
            # Read every chunk that may hold a message ordered before the heap's top.
            while p < n and (
                not heap
                or (chunks[p].message_start_time, chunks[p].chunk_start_offset) < heap[0][:2]
            ):
                offset = chunks[p].chunk_start_offset
                p += 1
                records = read_chunk(self.path, stream, offset, limit=self._data_end).records
                msgs = [
                    r
                    for r in records
                    if type(r) is McapMessage and (start is None or r.log_time >= start)
                ]
                msgs.sort(key=_LOG_TIME)  # stable: ties keep their order in the chunk
                if msgs:
                    push(heap, (msgs[0].log_time, offset, 0, msgs))
            if not heap:
                return
            _t, offset, i, msgs = pop(heap)
            bound = heap[0][:2] if heap else _NO_BOUND
            if p < n:
                bound = min(bound, (chunks[p].message_start_time, chunks[p].chunk_start_offset))
            m = len(msgs)
            # Invariant: (log_time, offset) of every message yielded here is below bound.
            while True:
                yield offset, msgs[i]
                i += 1
                if i == m:
                    break
                t = msgs[i].log_time
                if (t, offset) > bound:
                    push(heap, (t, offset, i, msgs))
                    break

    def _streamed(self, stream: IO[bytes], start: int | None) -> Iterator[tuple[int, McapMessage]]:
        """File order when it is log-time order and large; else a stable in-memory sort."""
        in_order = False
        if self._size > SORT_IN_MEMORY_BYTES:
            found = self.scanned if self.scanned is not None else scan(self.path, stream)
            in_order = found.in_order
        held: list[tuple[int, McapMessage]] = []
        for where, _in_chunk, record in records_in_file_order(self.path, stream):
            if type(record) is McapMessage:
                if start is not None and record.log_time < start:
                    continue
                self._channel(record.channel_id, where)
                if in_order:
                    yield where, record
                else:
                    held.append((where, record))
            elif type(record) is Channel:
                self._channels.setdefault(record.id, record)
            elif type(record) is Schema:
                self._schemas.setdefault(record.id, record)
        held.sort(key=lambda item: item[1].log_time)
        yield from held
