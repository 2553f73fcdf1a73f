"""The recording's MCAP writer: ``mcap.writer.Writer``'s bytes, the message records packed here.

`McapWriter` writes a whole MCAP file, byte for byte what the official
``mcap.writer.Writer(stream, chunk_size=..., compression=..., enable_data_crcs=...)``
(every other option at its default) writes for the same calls in the same
order (C-MCAP-1): ``start``, ``register_schema``, ``register_channel``,
``add_metadata``, ``add_message``, ``finish``. It is the one place where
simclock writes MCAP records itself, and only the ones written per message or
per chunk: the Message records, the Chunk records (compressed by the same
function the official Writer calls, with the CRC of the uncompressed data),
the Message Index records after each chunk, and the counts and times the
Chunk Index and Statistics records carry. The Header, Schema, Channel,
Metadata, Data End, summary (schemas and channels repeated, Statistics, Chunk
Index, Attachment Index and Metadata Index groups, Summary Offsets) and
Footer records are the official package's own record classes written by its
own ``RecordBuilder``, laid out as its Writer lays them out.
``tests/test_recording_records.py`` compares whole files with the official
Writer's for random runs (Hypothesis) and reads them with the official reader.

Why: the official Writer spends about 20 Python calls per message (a record
object, a dozen small stream writes, an index entry). Here a message is one
``struct`` pack and two appends to the chunk's buffer, and the module is
compiled with the core (C-NATIVE-1): the pure build runs the same source.

`TraceRecords` is the recorder's per-message work in one object: the order
check, the envelope, the record, the fingerprint line (C-X-FP), the counts
and the ``/clock`` ticks due before the message (C-MCAP-3). The Recorder
(``simclock.recording``) owns the API, the errors and the channels; it hands
this object the layouts it defines (envelope, fingerprint line, ``/clock``
encoding). This module imports nothing from simclock.

Differences from the official Writer, none of which changes a byte: no
attachments (the Recorder writes none), no ``flush`` (it is never called),
and the stream's offsets are counted from its position at ``start``, not read
with ``tell()`` per chunk.
"""

from __future__ import annotations

import hashlib
import math
import struct
import zlib
from collections.abc import Callable
from typing import IO, Any, Final, final

__all__ = ["COMPRESSIONS", "LineHash", "LineSink", "McapWriter", "TopicSink", "TraceRecords"]

MAGIC: Final = b"\x89MCAP0\r\n"
"""The 8 bytes that open and close an MCAP file."""

_MESSAGE: Final = struct.Struct("<BQHIQQ")
"""A Message record's opcode, length, channel id, sequence, log time and publish time."""
_OP_MESSAGE: Final = 0x05
_OP_CHUNK: Final = 0x06
_OP_MESSAGE_INDEX: Final = 0x07
_OP_FOOTER: Final = 0x02
_CHUNK_HEAD: Final = struct.Struct("<BQQQQI")
"""A Chunk record up to its compression: opcode, length, start, end, size, CRC."""
_INDEX_HEAD: Final = struct.Struct("<BQHI")
"""A Message Index record's opcode, length, channel id and byte length of its entries."""
_U32: Final = struct.Struct("<I")
_U64: Final = struct.Struct("<Q")
_FOOTER_CRC: Final = struct.Struct("<BQQQ")

# mcap, zstandard and lz4 are imported when a file is written, not with the core
# (``import simclock`` loads the clock core alone).


def _zstd(data: bytes) -> bytes:
    import zstandard

    out: bytes = zstandard.compress(data)
    return out


def _lz4(data: bytes) -> bytes:
    import lz4.frame

    out: bytes = lz4.frame.compress(data)
    return out


COMPRESSIONS: Final[dict[str, Callable[[bytes], bytes] | None]] = {
    "zstd": _zstd,
    "lz4": _lz4,
    "": None,
}
"""The chunk compressions by the name a Chunk record carries: the official Writer's calls."""


@final
class McapWriter:
    """An MCAP file written as ``mcap.writer.Writer`` writes it (see the module docstring).

    ``compression`` is the name in the Chunk records: ``"zstd"``, ``"lz4"`` or
    ``""`` (none); ``data_crcs`` is the Writer's ``enable_data_crcs`` (the
    Data End record's CRC). The arguments are trusted: the Recorder checks them.
    """

    def __init__(
        self, stream: IO[bytes], chunk_size: int, compression: str, data_crcs: bool
    ) -> None:
        import mcap.data_stream
        import mcap.records

        # The official package's record classes and builder: what the other records use.
        self.records: Any = mcap.records
        self.builder: Any = mcap.data_stream.RecordBuilder
        self.stream = stream
        self.chunk_size = chunk_size
        self.compression = compression
        self.compress = COMPRESSIONS[compression]
        self.data_crcs = data_crcs
        self.data_crc = 0
        self.position = 0
        """Offset of the next byte written, from the stream's position at ``start``."""
        self.base = 0
        # The chunk being built: its records (joined when it is written) and their length,
        # one [log time, offset, ...] list per channel in the order of their first message
        # in it, its message count and times.
        self.parts: list[bytes] = []
        self.chunk_len = 0
        self.indexes: dict[int, list[int]] = {}
        self.chunk_messages = 0
        self.chunk_start = 0
        self.chunk_end = 0
        # Statistics, added up per chunk: per channel in the order of its first message,
        # like the Writer's (a channel's first chunk, then its place in that chunk).
        self.message_count = 0
        self.message_start = 0
        self.message_end = 0
        self.channel_counts: dict[int, int] = {}
        self.chunk_count = 0
        self.schemas: list[Any] = []
        self.channels: list[Any] = []
        self.metadata_indexes: list[Any] = []
        self.chunk_indexes: list[Any] = []

    # -- records written through the official package's classes --------------------------

    def _emit(self, data: bytes) -> None:
        """Write ``data`` to the stream: part of the data section (its CRC) until ``finish``."""
        if self.data_crcs:
            self.data_crc = zlib.crc32(data, self.data_crc)
        self.stream.write(data)
        self.position += len(data)

    def start(self, profile: str, library: str) -> None:
        """The magic and the Header record."""
        self.base = self.stream.tell()
        self._emit(MAGIC)
        builder = self.builder()
        self.records.Header(profile, library).write(builder)
        self._emit(builder.end())

    def register_schema(self, name: str, encoding: str, data: bytes) -> int:
        """A Schema record in the current chunk; its id (1, 2, ...)."""
        schema = self.records.Schema(
            id=len(self.schemas) + 1, data=data, encoding=encoding, name=name
        )
        self.schemas.append(schema)
        self._to_chunk(schema)
        return len(self.schemas)

    def register_channel(
        self, topic: str, message_encoding: str, schema_id: int, metadata: dict[str, str]
    ) -> int:
        """A Channel record in the current chunk; its id (1, 2, ...)."""
        channel = self.records.Channel(
            id=len(self.channels) + 1,
            topic=topic,
            message_encoding=message_encoding,
            schema_id=schema_id,
            metadata=metadata,
        )
        self.channels.append(channel)
        self._to_chunk(channel)
        return len(self.channels)

    def _to_chunk(self, record: Any) -> None:
        builder = self.builder()
        record.write(builder)
        data: bytes = builder.end()
        self.parts.append(data)
        self.chunk_len += len(data)
        if self.chunk_len > self.chunk_size:
            self.finish_chunk()

    def add_metadata(self, name: str, data: dict[str, str]) -> None:
        """A Metadata record, written at once (between chunks, as the Writer does)."""
        builder = self.builder()
        self.records.Metadata(name=name, metadata=data).write(builder)
        record: bytes = builder.end()
        self.metadata_indexes.append(
            self.records.MetadataIndex(
                offset=self.base + self.position, length=len(record), name=name
            )
        )
        self._emit(record)

    # -- records packed here ----------------------------------------------------------

    def add_message(
        self, channel_id: int, log_time: int, data: bytes, publish_time: int, sequence: int
    ) -> None:
        """One Message record in the current chunk (the chunk is written once over its size)."""
        if self.chunk_messages == 0 or log_time < self.chunk_start:
            self.chunk_start = log_time
        self.chunk_end = max(self.chunk_end, log_time)
        index = self.indexes.get(channel_id)
        if index is None:
            index = self.indexes[channel_id] = []
        offset = self.chunk_len
        index.append(log_time)
        index.append(offset)
        self.chunk_messages += 1
        parts = self.parts
        parts.append(
            _MESSAGE.pack(_OP_MESSAGE, 22 + len(data), channel_id, sequence, log_time, publish_time)
        )
        parts.append(data)
        offset += 31 + len(data)
        self.chunk_len = offset
        if offset > self.chunk_size:
            self.finish_chunk()

    def finish_chunk(self) -> None:
        """Write the chunk, then its Message Index records; nothing if it has no message.

        As the Writer: a chunk holding only Schema or Channel records is kept
        until a message comes (and is lost if none does: the summary repeats them).
        """
        if self.chunk_messages == 0:
            return
        if self.message_count == 0 or self.chunk_start < self.message_start:
            self.message_start = self.chunk_start
        self.message_end = max(self.message_end, self.chunk_end)
        self.message_count += self.chunk_messages
        counts = self.channel_counts
        for channel_id, entries in self.indexes.items():
            counts[channel_id] = counts.get(channel_id, 0) + len(entries) // 2
        self.chunk_count += 1
        data = b"".join(self.parts)
        compress = self.compress
        packed = data if compress is None else compress(data)
        name = self.compression.encode()
        start = self.base + self.position
        head = b"".join(
            [
                _CHUNK_HEAD.pack(
                    _OP_CHUNK,
                    8 + 8 + 8 + 4 + 4 + len(name) + 8 + len(packed),
                    self.chunk_start,
                    self.chunk_end,
                    len(data),
                    zlib.crc32(data),
                ),
                _U32.pack(len(name)),
                name,
                _U64.pack(len(packed)),
            ]
        )
        # One write per record, as the Writer: a process killed mid-run leaves the file
        # at a record's end (in a buffered stream), and one copy of the records, not two.
        self._emit(b"".join([head, packed]))
        index_start = self.base + self.position
        offsets: dict[int, int] = {}
        indexes = bytearray()
        for channel_id, entries in self.indexes.items():
            offsets[channel_id] = index_start + len(indexes)
            indexes += _INDEX_HEAD.pack(
                _OP_MESSAGE_INDEX, 2 + 4 + 8 * len(entries), channel_id, 8 * len(entries)
            )
            indexes += struct.pack(f"<{len(entries)}Q", *entries)
        self._emit(bytes(indexes))
        self.chunk_indexes.append(
            self.records.ChunkIndex(
                message_start_time=self.chunk_start,
                message_end_time=self.chunk_end,
                chunk_start_offset=start,
                chunk_length=len(head) + len(packed),
                message_index_offsets=offsets,
                message_index_length=len(indexes),
                compression=self.compression,
                compressed_size=len(packed),
                uncompressed_size=len(data),
            )
        )
        self.parts = []
        self.chunk_len = 0
        self.indexes = {}
        self.chunk_messages = 0
        self.chunk_start = 0
        self.chunk_end = 0

    def finish(self) -> None:
        """The last chunk, Data End, the summary, the Footer and the closing magic.

        Does not close the stream (nor does the official Writer).
        """
        self.finish_chunk()
        builder = self.builder()
        self.records.DataEnd(self.data_crc).write(builder)
        self._emit(builder.end())
        summary_start = self.base + self.position
        summary = self.builder()
        offsets: list[Any] = []
        statistics = self.records.Statistics(
            attachment_count=0,
            channel_count=len(self.channels),
            channel_message_counts=self.channel_counts,
            chunk_count=self.chunk_count,
            message_count=self.message_count,
            metadata_count=len(self.metadata_indexes),
            message_start_time=self.message_start,
            message_end_time=self.message_end,
            schema_count=len(self.schemas),
        )
        groups: list[tuple[int, list[Any]]] = [
            (0x03, self.schemas),
            (0x04, self.channels),
            (0x0B, [statistics]),
            (0x08, self.chunk_indexes),
            (0x0A, []),  # attachment indexes: none, the group's offset is still written
            (0x0D, self.metadata_indexes),
        ]
        for opcode, records in groups:
            group_start: int = summary.count
            for record in records:
                record.write(summary)
            offsets.append(
                self.records.SummaryOffset(
                    group_opcode=opcode,
                    group_start=summary_start + group_start,
                    group_length=summary.count - group_start,
                )
            )
        offset_start = summary_start + summary.count
        for offset in offsets:
            offset.write(summary)
        data: bytes = summary.end()
        crc = zlib.crc32(data)
        crc = zlib.crc32(
            _FOOTER_CRC.pack(_OP_FOOTER, 8 + 8 + 4, summary_start if data else 0, offset_start),
            crc,
        )
        self.stream.write(data)
        self.position += len(data)
        footer = self.builder()
        self.records.Footer(
            summary_start=summary_start if data else 0,
            summary_offset_start=offset_start,
            summary_crc=crc,
        ).write(footer)
        self._emit(footer.end())
        self.stream.write(MAGIC)
        self.position += len(MAGIC)


_CLOCK: Final = struct.Struct("<4siI")
"""``rosgraph_msgs/msg/Clock`` in CDR: its 4-byte header, int32 sec, uint32 nanosec."""
_NS_PER_S: Final = 1_000_000_000
_U32_MASK: Final = 0xFFFFFFFF
_LINE_BATCH: Final = 512
"""Fingerprint lines are made and hashed in batches of this many (the same SHA-256)."""


def same_json(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` are known to have the same JSON text (False: not known).

    Equal floats of the same sign have the same repr (a NaN is never equal);
    ``0.0`` and ``-0.0``, ``1`` and ``1.0`` or ``True`` are never the same.
    """
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is tuple:
        n = len(a)
        if n != len(b):
            return False
        for i in range(n):  # noqa: SIM110 (not all() over a generator: mypyc makes it an object)
            if not same_json(a[i], b[i]):
                return False
        return True
    if kind is float:
        return bool(a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
    if kind is int or kind is str:
        return bool(a == b)
    return False


def draw_value_json(value: Any, ndarray: Any, float64: Any) -> bytes | None:
    """A draw value's canonical JSON for a finite float, an int or a 1-D float64 array.

    ``None`` for anything else (the generic encoder's job). ``ndarray`` is
    numpy's array type and ``float64`` its native float64 dtype (this module
    does not import numpy).
    """
    kind = type(value)
    if kind is float:
        return repr(value).encode() if value - value == 0.0 else None
    if kind is int:
        return repr(value).encode()
    if kind is ndarray and value.ndim == 1 and value.dtype is float64:
        data = value.tolist()
        # A finite sum means every value is finite (a NaN or an infinity makes it NaN or
        # infinite; an overflowing sum of finite values only sends them the generic way).
        if not math.isfinite(sum(data)):
            return None
        # A list's repr is its floats' reprs joined by ", " (a float's repr has no space).
        return b'{"data":%s,"dtype":"float64","shape":[%d]}' % (
            repr(data).replace(", ", ",").encode(),
            len(data),
        )
    return None


@final
class DrawState:
    """A label's last draw template: method, arguments, the text around index and value, channel."""

    def __init__(self, method: str, args: Any, head: bytes, middle: bytes, channel: int) -> None:
        self.method = method
        self.args = args
        self.head = head
        self.middle = middle
        self.channel = channel


@final
class LineHash:
    """SHA-256 of a trace's lines (C-X-FP), made and hashed in batches: every line, in order.

    A line is ``line % (stamp, seq, infix, payload)`` (`add_fields`, made later,
    in one pass per batch) or given whole (`add`). ``count`` is the number of
    lines added. The caller holds its lock around each call.
    """

    def __init__(self, line: bytes) -> None:
        self.line = line
        self.hash = hashlib.sha256()
        self.pending: list[tuple[int, int, bytes, bytes]] = []
        self.count = 0

    def add_fields(self, stamp: int, seq: int, infix: bytes, payload: bytes) -> None:
        """One more line, from its fields."""
        pending = self.pending
        pending.append((stamp, seq, infix, payload))
        self.count += 1
        if len(pending) >= _LINE_BATCH:
            self.flush()

    def add(self, text: bytes) -> None:
        """One more line, made by the caller."""
        self.flush()
        self.hash.update(text)
        self.count += 1

    def flush(self) -> None:
        """Make and hash the lines kept so far."""
        pending = self.pending
        if pending:
            line = self.line
            self.hash.update(b"".join([line % fields for fields in pending]))
            self.pending = []

    def hexdigest(self) -> str:
        """SHA-256 of every line so far, in order (64 lower-case hex digits)."""
        self.flush()
        out: str = self.hash.hexdigest()
        return out


@final
class LineSink:
    """A `Fingerprinter`'s trace sink for one topic (``Bus.sender``): ``sink(stamp, seq, encoded)``.

    Adds the line of ``(stamp, seq, infix, encoded)`` to ``lines`` under ``lock``.
    """

    def __init__(self, lines: LineHash, lock: Any, infix: bytes) -> None:
        self.lines = lines
        self.lock = lock
        # Bound once: a method call on the lock looks its method up every time.
        self.acquire: Callable[[], Any] = lock.acquire
        self.release: Callable[[], Any] = lock.release
        self.infix = infix

    def __call__(self, stamp: int, seq: int, encoded: bytes) -> None:
        self.acquire()  # not `with`: half the cost, once per message
        try:
            self.lines.add_fields(stamp, seq, self.infix, encoded)
        finally:
            self.release()


@final
class TraceRecords:
    """The recorder's per-message work and state, in one object (C-MCAP-1, C-MCAP-3, C-X-FP).

    For each bus message the Recorder accepts: the ``/clock`` ticks due
    before it, its record (``envelope % (payload, sequence)`` on its channel,
    the MCAP sequence its low 32 bits), its fingerprint line
    (``line % (stamp, sequence, infix, payload)``, hashed in batches: the
    digest is that of every line in order), the counts and the last
    ``(stamp, sequence)``. The checks, the channels and the errors are the
    Recorder's; ``lock`` is its lock, held around every call here.

    ``period`` is the ``/clock`` grid (0: ``/clock`` at the start and at each
    new time); a tick past ``max_clock_ns`` is not written but handed to
    ``overflow(at)`` (the Recorder keeps it as the file's error). A write
    error (``OSError``) in a sink is raised as ``write_failed(exc)``.
    """

    def __init__(
        self,
        writer: McapWriter,
        lock: Any,
        start: int,
        period: int,
        clock_channel: int,
        clock_header: bytes,
        max_clock_ns: int,
        tick_sequence: int,
        envelope: bytes,
        line: bytes,
        overflow: Callable[[int], None],
        write_failed: Callable[[OSError], Exception],
    ) -> None:
        self.writer = writer
        self.lock = lock
        # Bound once: a method call on the lock looks its method up every time.
        self.acquire: Callable[[], Any] = lock.acquire
        self.release: Callable[[], Any] = lock.release
        self.start = start
        self.period = period
        self.clock_channel = clock_channel
        self.clock_header = clock_header
        self.max_clock_ns = max_clock_ns
        self.tick_sequence = tick_sequence
        self.envelope = envelope
        self.line = line
        self.overflow = overflow
        self.write_failed = write_failed
        self.closed = False
        self.lines = LineHash(line)
        self.count = 0
        """Bus messages written."""
        self.counts: dict[str, int] = {}
        """Bus messages written per topic."""
        # Invariant: (last_stamp, last_seq) is the last bus message written; every record
        # written so far has log_time <= last_log_time.
        self.last_stamp = start  # nothing before the start: replay begins there
        self.last_seq = -1
        self.last_log_time = start
        self.clock_last = -1
        """Time of the last ``/clock`` written, -1 before the first."""
        self.bus_clock = False
        """True once a bus message on ``/clock`` was recorded: the recorder adds no ticks."""
        self.json_channels: dict[str, tuple[int, bytes]] = {}
        """Topic -> (channel, fingerprint infix) of the topics whose channel carries kind json."""
        # Persisted draws (C-REP-3): the next index per label, the template of each
        # label's last draw, and what draw() hands the draws it does not write itself.
        self.draw_index: dict[str, int] = {}
        self.draw_states: dict[str, DrawState] = {}
        self.bus: Any = None
        self.ndarray: Any = None
        self.float64: Any = None
        self.slow_draw: Callable[[str, str, Any, Any], None] | None = None

    def hexdigest(self) -> str:
        """SHA-256 of every fingerprint line so far, in order."""
        return self.lines.hexdigest()

    def write_clock(self, at: int) -> None:
        """One ``/clock`` tick at ``at`` (none at or before the last one)."""
        if at <= self.clock_last:
            return
        if at > self.max_clock_ns:
            self.overflow(at)
        else:
            sec = at // _NS_PER_S
            data = _CLOCK.pack(self.clock_header, sec, at - sec * _NS_PER_S)
            self.writer.add_message(self.clock_channel, at, data, at, self.tick_sequence)
        self.clock_last = at
        self.last_log_time = at

    def clock_to(self, at: int) -> None:
        """The ``/clock`` ticks due up to ``at``: every grid point, or the start and ``at``."""
        if self.bus_clock:
            return  # the bus publishes /clock itself (a Session): one producer
        period = self.period
        if period == 0:
            if self.clock_last < 0 and at > self.start:
                self.write_clock(self.start)
            self.write_clock(at)
            return
        last = self.clock_last
        # The first grid point not yet written: >= start, > last.
        first = self.start if last < 0 else last + 1
        t = -(-first // period) * period
        while t <= at:
            self.write_clock(t)
            t += period

    def append(
        self, channel: int, stamp: int, seq: int, topic: str, data: bytes, infix: bytes, line: bytes
    ) -> None:
        """Write one checked bus message: its record ``data``, its line (payload JSON ``line``)."""
        if stamp > self.clock_last:
            self.clock_to(stamp)
        self.writer.add_message(channel, stamp, data, stamp, seq & _U32_MASK)
        self.lines.add_fields(stamp, seq, infix, line)
        self.count += 1
        counts = self.counts
        counts[topic] = counts.get(topic, 0) + 1
        self.last_stamp = stamp
        self.last_seq = seq
        self.last_log_time = stamp

    def draw(self, label: str, method: str, args: Any, value: Any) -> None:
        """The draw observer: a draw written from its label's template, else ``slow_draw``.

        The same record as the Recorder's own path (``slow_draw``), which takes
        every draw this one cannot: a label's first draw, other arguments, a
        value that is not a finite float, an int or a 1-D float64 array.
        """
        state = self.draw_states.get(label)
        value_json = None
        if state is not None and state.method == method and same_json(state.args, args):
            value_json = draw_value_json(value, self.ndarray, self.float64)
        slow = self.slow_draw
        if value_json is None or state is None:
            if slow is not None:
                slow(label, method, args, value)
            return
        self.acquire()  # not `with`: half the cost, once per draw
        try:
            if self.closed:
                return
            clock = self.bus.clock
            at = self.last_log_time
            if clock is not None:
                at = max(at, clock.now_ns())
            if at > self.clock_last:
                try:
                    self.clock_to(at)
                except OSError as exc:
                    raise self.write_failed(exc) from None
            index = self.draw_index.get(label, 0)
            data = b"%s%d%s%s}" % (state.head, index, state.middle, value_json)
            try:
                self.writer.add_message(state.channel, at, data, at, index & _U32_MASK)
            except OSError as exc:
                self.write_failed(exc)  # kept as the recording's error
                return  # the run's draw is not broken
            self.draw_index[label] = index + 1
            self.last_log_time = at
        finally:
            self.release()

    def write_draw(self, channel: int, at: int, data: bytes, index: int) -> None:
        """A persisted draw's record at ``at`` (not before the last record; ticks written)."""
        self.writer.add_message(channel, at, data, at, index & _U32_MASK)
        self.last_log_time = at

    def take(self, sink: TopicSink, stamp: int, seq: int, encoded: bytes) -> bool:
        """The sink's message written if it passes the Recorder's checks, else False.

        False (nothing written) when the Recorder is closed, the stamp is before
        the start or out of total order, or the topic has no json channel yet:
        the Recorder's ``record`` then handles the message as it always does.
        """
        if self.closed or stamp < self.start:
            return False
        last = self.last_stamp
        if stamp < last or (stamp == last and seq <= self.last_seq):
            return False
        channel = sink.channel
        if channel == 0:
            known = self.json_channels.get(sink.topic)
            if known is None:
                return False
            channel, sink.infix = known
            sink.channel = channel
        self.append(
            channel, stamp, seq, sink.topic, self.envelope % (encoded, seq), sink.infix, encoded
        )
        return True


@final
class TopicSink:
    """The Recorder's trace sink for one topic (``Bus.sender``): ``sink(stamp, seq, encoded)``.

    Under the Recorder's lock, `TraceRecords.take`; what it does not take
    goes to ``fallback`` (the Recorder's ``record`` with the message built),
    outside the lock, which writes or refuses it as it always does.
    """

    def __init__(
        self, trace: TraceRecords, topic: str, fallback: Callable[[int, int, bytes], None]
    ) -> None:
        self.trace = trace
        self.topic = topic
        self.fallback = fallback
        self.channel = 0
        self.infix = b""

    def __call__(self, stamp: int, seq: int, encoded: bytes) -> None:
        trace = self.trace
        trace.acquire()  # not `with`: half the cost, once per message
        try:
            took = trace.take(self, stamp, seq, encoded)
        except OSError as exc:
            raise trace.write_failed(exc) from None
        finally:
            trace.release()
        if not took:
            self.fallback(stamp, seq, encoded)
