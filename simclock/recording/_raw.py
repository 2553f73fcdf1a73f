"""The one reader of raw MCAP records: envelope, records, chunks (C-REP-5, C-REP-6, C-REP-7).

Every byte of an MCAP file that simclock reads is parsed here: the magic,
the footer and the summary CRC, single records at an offset, the summary
section, Chunk records (read, decompressed, CRC-checked and split into their
records, with a fast path for Message records), the records of a whole file
in file order, and the pieces of a file cut short. The readers above
(`._own`, `._foreign`, `._bag`, `._reader`, `._export`, `._recover`, and the
timeline's ``load_samples``) work on the records this module returns; a change
of how chunks are written touches `._recorder` and this module, nothing else
(``tests/test_recording_raw.py`` scans the package for raw reads elsewhere).

What is wrong with the *file* becomes a `RecordingError` naming the file and
the byte offset. Only the errors that malformed bytes cause are caught
(`DAMAGE_ERRORS`: the mcap package's own errors, ``struct``/``zstandard``/``lz4``
failures, truncation and text that is not UTF-8); anything else is a bug in
simclock or in a library and propagates as such, never as "the file is
damaged".
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from typing import IO, Any, Final

import lz4.frame
import zstandard
from mcap.data_stream import ReadDataStream
from mcap.exceptions import McapError
from mcap.opcode import Opcode
from mcap.reader import SeekingReader
from mcap.records import Channel, Chunk, Header, Metadata, Schema
from mcap.records import Message as McapMessage
from mcap.stream_reader import CRCValidationError, StreamReader, breakup_chunk
from mcap.summary import Summary

from simclock.core._errors import SimclockValueError
from simclock.core._names import describe_exception

__all__ = [
    "DAMAGE_ERRORS",
    "FOOTER_SIZE",
    "MAGIC",
    "Bounded",
    "ChunkRecords",
    "Footer",
    "RecordingError",
    "check_data_section",
    "check_footer",
    "cut_chunk_start",
    "parse_record",
    "read_chunk",
    "read_record",
    "read_summary",
    "record_at",
    "records_in_file_order",
    "refuse",
    "split_chunk",
    "unchunked_message_groups",
]

MAGIC: Final = b"\x89MCAP0\r\n"
FOOTER_SIZE: Final = 1 + 8 + 8 + 8 + 4  # opcode, length, summary_start, summary_offset_start, crc
_CHUNK_FIXED = struct.Struct("<QQQQII")  # record length, start, end, size, crc, name length
_COMPRESSIONS: Final = ("", "zstd", "lz4")
_RECORD_HEAD = struct.Struct("<BQ")
_MESSAGE_HEAD = struct.Struct("<HIQQ")  # channel id, sequence, log time, publish time
_OPCODE_MESSAGE: Final = int(Opcode.MESSAGE)
_OPCODE_CHANNEL: Final = int(Opcode.CHANNEL)
_OPCODE_SCHEMA: Final = int(Opcode.SCHEMA)


class _Lz4Error(Exception):
    """lz4.frame reports a malformed frame as a bare ``RuntimeError``; renamed here."""


class LengthError(Exception):
    """A length field asks for more bytes than remain before the end of what holds it."""


DAMAGE_ERRORS: Final = (
    McapError,
    CRCValidationError,
    struct.error,
    zstandard.ZstdError,
    _Lz4Error,
    EOFError,
    UnicodeDecodeError,
    LengthError,
)
"""What malformed MCAP bytes raise while being parsed (the mcap package has no single root)."""


class RecordingError(SimclockValueError):
    """The file is not a valid recording: not MCAP, truncated, corrupt or out of order.

    The message names the file and the byte offset where the problem is
    (C-REP-6). Replay never goes on silently past such a problem.
    """


def refuse(path: str, offset: int | None, text: str) -> RecordingError:
    """``RecordingError("<path>: offset <offset>: <text>")``; the one message layout."""
    where = "" if offset is None else f"offset {offset}: "
    return RecordingError(f"{path}: {where}{text}")


class Bounded:
    """A binary stream whose every read is checked against the bytes that remain (C-REP-6).

    The mcap package reads each length-prefixed field with ``stream.read(n)``,
    ``n`` straight from the file, and a file object allocates ``n`` bytes
    before it reads: a damaged length of gigabytes is a ``MemoryError`` there.
    Wrapped in this class, a read of more than remain before ``end`` raises
    `LengthError` (a `DAMAGE_ERRORS` member) naming the offset, before
    anything is allocated. ``base`` is added to positions in messages (a
    record's bytes read from memory are reported at their offset in the file).
    """

    def __init__(
        self, stream: IO[bytes], end: int, *, base: int = 0, what: str = "the file"
    ) -> None:
        self._stream = stream
        self._end = end
        self._base = base
        self._what = what

    def read(self, size: int = -1) -> bytes:
        """At most ``size`` bytes (all that remain for ``-1``); `LengthError` past the end."""
        pos = self._stream.tell()
        left = self._end - pos
        if size is None or size < 0:
            size = max(left, 0)
        elif size > left:
            raise LengthError(
                f"a field of {size} bytes at offset {self._base + pos} runs past the end of "
                f"{self._what} ({max(left, 0)} bytes left)"
            )
        return self._stream.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        """As ``IO.seek``; the end (``whence=2``) is the bound."""
        if whence == 2:
            return self._stream.seek(self._end + offset)
        return self._stream.seek(offset, whence)

    def tell(self) -> int:
        """As ``IO.tell``."""
        return self._stream.tell()

    def seekable(self) -> bool:
        """True: every stream simclock reads is a file or bytes in memory."""
        return True

    def readable(self) -> bool:
        """True."""
        return True


@dataclass(frozen=True, slots=True)
class Footer:
    """The footer of an MCAP file and where it is."""

    offset: int
    summary_start: int
    summary_offset_start: int
    summary_crc: int


def check_footer(path: str, stream: IO[bytes], size: int, *, need_crc: bool) -> Footer:
    """Check the magic at both ends, the footer and the summary CRC; return the footer.

    The official reader does not check the summary CRC, but the summary
    decides which channels, chunks and draws replay reads, so a damaged one
    must not pass. The CRC covers the summary section and the footer up to
    the CRC field. ``need_crc``: a CRC of 0 ("none stored") is refused
    (simclock recordings always store one, so 0 is damage there).
    """
    stream.seek(0)
    if stream.read(len(MAGIC)) != MAGIC:
        raise refuse(path, 0, "not an MCAP file (no MCAP magic at the start)")
    end_magic = size - len(MAGIC)
    footer_at = end_magic - FOOTER_SIZE
    if footer_at < len(MAGIC):
        raise refuse(
            path, size, f"file of {size} bytes is too short to be a complete MCAP file "
            "(truncated or not closed)",
        )  # fmt: skip
    stream.seek(end_magic)
    if stream.read(len(MAGIC)) != MAGIC:
        raise refuse(
            path,
            end_magic,
            "no MCAP magic at the end of the file: truncated or not closed (simclock "
            "recover can save the complete chunks)",
        )
    stream.seek(footer_at)
    raw = stream.read(FOOTER_SIZE)
    opcode, length, summary_start, offsets, crc = struct.unpack("<BQQQI", raw)
    if opcode != Opcode.FOOTER or length != FOOTER_SIZE - 9:
        raise refuse(path, footer_at, f"no valid Footer record (opcode {opcode}, length {length})")
    footer = Footer(footer_at, summary_start, offsets, crc)
    if not (summary_start == 0 or len(MAGIC) <= summary_start <= footer_at):
        raise refuse(
            path, footer_at + 9, f"footer summary_start {summary_start} is outside the file"
        )
    if not (offsets == 0 or len(MAGIC) <= offsets <= footer_at):
        raise refuse(
            path, footer_at + 17, f"footer summary_offset_start {offsets} is outside the file"
        )
    if crc == 0:
        if need_crc:
            raise refuse(path, footer_at + 25, "the footer stores no summary CRC; damaged")
        return footer
    begin = summary_start or footer_at
    end = footer_at + FOOTER_SIZE - 4
    stream.seek(begin)
    computed = 0
    left = end - begin
    while left > 0:
        block = stream.read(min(left, 1 << 20))
        computed = zlib.crc32(block, computed)
        left -= len(block)
    if computed != crc:
        raise refuse(
            path,
            begin,
            f"summary section CRC mismatch (footer at offset {footer_at} records {crc}, "
            f"computed {computed} over offsets {begin}..{end}); the file is damaged",
        )
    return footer


_RECORD_READERS: Final[dict[int, Any]] = {
    int(Opcode.HEADER): lambda stream, _length: Header.read(stream),
    int(Opcode.METADATA): lambda stream, _length: Metadata.read(stream),
}
"""How `read_record` reads the body of each record it is asked for (the mcap package's classes)."""


def read_record(
    path: str, stream: IO[bytes], offset: int, what: str, *, exact: bool = False
) -> Any:
    """The Header or Metadata record at ``offset`` (``what`` names it in the refusal), or None.

    None when another kind of record is there.
    Its length is checked against the bytes left in the file before its body
    is read, and every length inside it against the bytes left in the record
    (`Bounded`). ``exact``: the fields must fill the record (a simclock
    recording's records have no trailing bytes; MCAP lets other writers add
    fields a reader skips).
    """
    size = stream.seek(0, 2)
    stream.seek(offset)
    head = stream.read(_RECORD_HEAD.size)
    try:
        if len(head) < _RECORD_HEAD.size:
            raise EOFError("the file ends inside the record's opcode and length")
        opcode, length = _RECORD_HEAD.unpack(head)
        end = offset + _RECORD_HEAD.size + length
        if end > size:
            raise LengthError(
                f"record length {length} runs past the end of the file ({size} bytes)"
            )
        read = _RECORD_READERS.get(opcode)
        if read is None:
            return None  # another record than asked for: the caller says what it expected
        body = BytesIO(stream.read(length))
        where = offset + _RECORD_HEAD.size
        bounded: Any = Bounded(body, length, base=where, what=f"the {what} record")
        fields = ReadDataStream(bounded)
        record = read(fields, length)
        if type(record) is Metadata:  # mcap reads entries past a map length that is short
            name_len = len(record.name.encode())
            (map_len,) = struct.unpack_from("<I", body.getbuffer(), 4 + name_len)
            if fields.count != 8 + name_len + map_len:
                raise LengthError(
                    f"the metadata map's length at offset {where + 4 + name_len} says "
                    f"{map_len} bytes, its entries take {fields.count - 8 - name_len}"
                )
        if exact and fields.count != length:
            raise LengthError(
                f"the record's fields end at offset {where + fields.count}, its length says {end}"
            )
        return record
    except (*DAMAGE_ERRORS, StopIteration) as exc:
        raise refuse(
            path, offset, f"unreadable {what} record ({describe_exception(exc)})"
        ) from None


def read_summary(path: str, stream: IO[bytes], start: int) -> Summary | None:
    """The summary section starting at ``start`` (the footer's ``summary_start``; 0: none)."""
    if start == 0:
        return None
    try:
        size = stream.seek(0, 2)
        stream.seek(0)
        bounded: Any = Bounded(stream, size)
        return SeekingReader(bounded).get_summary()
    except DAMAGE_ERRORS as exc:
        raise refuse(
            path, start, f"unreadable summary section ({describe_exception(exc)})"
        ) from None


@dataclass(frozen=True, slots=True)
class ChunkRecords:
    """The records of one Chunk and its header fields."""

    offset: int
    end: int
    start_time: int
    end_time: int
    records: list[Any]


def read_chunk(
    path: str, stream: IO[bytes], offset: int, *, need_crc: bool = False, limit: int | None = None
) -> ChunkRecords:
    """Read, decompress, CRC-check and split the Chunk record at ``offset``.

    Every failure is a `RecordingError` naming ``path`` and the
    offset: a record that is not a Chunk, a length past ``limit`` (the end of
    the data section), an unknown compression (refused as such, never as a
    CRC mismatch), a frame that does not decompress, a CRC mismatch, or a
    CRC of 0 when ``need_crc``.
    """
    stream.seek(offset)
    head = stream.read(1 + _CHUNK_FIXED.size)
    if len(head) < 1 + _CHUNK_FIXED.size or head[0] != Opcode.CHUNK:
        found = f"opcode {head[0]}" if head else "the end of the file"
        raise refuse(path, offset, f"expected a Chunk record, found {found}")
    length, start, end_time, size, crc, name_len = _CHUNK_FIXED.unpack_from(head, 1)
    record_end = offset + 9 + length
    if limit is None:
        limit = stream.seek(0, 2)
        stream.seek(offset + len(head))
    if record_end > limit:
        raise refuse(path, offset, f"Chunk record length {length} runs past offset {limit}")
    if name_len > 16:
        raise refuse(path, offset + 37, f"chunk compression name of {name_len} bytes; damaged")
    try:
        compression = stream.read(name_len).decode()
        (data_len,) = struct.unpack("<Q", stream.read(8))
    except DAMAGE_ERRORS as exc:
        why = describe_exception(exc)
        raise refuse(path, offset, f"unreadable Chunk header ({why})") from None
    room = length - (_CHUNK_FIXED.size - 8 + name_len + 8)
    # Invariant: nothing is read past the record; a simclock chunk's data fills it.
    if data_len > room or (need_crc and data_len != room):
        raise refuse(
            path, offset + 41 + name_len, f"chunk data length {data_len} does not fit its "
            f"record ({room} bytes after the chunk's header fields); damaged",
        )  # fmt: skip
    data = stream.read(data_len)
    if len(data) != data_len:
        raise refuse(path, offset, f"file ends inside the chunk ({len(data)} of {data_len} bytes)")
    chunk = Chunk(
        compression=compression,
        data=data,
        message_end_time=end_time,
        message_start_time=start,
        uncompressed_crc=crc,
        uncompressed_size=size,
    )
    if crc == 0 and need_crc:
        raise refuse(path, offset + 33, "chunk stores no CRC; a simclock chunk always has one")
    records = split_chunk(path, chunk, offset)
    return ChunkRecords(offset, record_end, start, end_time, records)


def split_chunk(path: str, chunk: Chunk, offset: int) -> list[Any]:
    """Decompress ``chunk`` (found at ``offset``), check its CRC, return its records.

    An unknown compression is refused as such (the mcap package would
    report it as a CRC mismatch); a frame that does not decompress, a size
    or CRC mismatch and malformed records are refused naming the offset.
    """
    compression = chunk.compression
    if compression not in _COMPRESSIONS:
        raise refuse(
            path, offset, f"chunk compression {compression!r} is unknown (MCAP defines '', "
            "'zstd' and 'lz4')",
        )  # fmt: skip
    data = chunk.data
    size = chunk.uncompressed_size
    try:
        if compression:
            data = _decompress(compression, data, size)
    except DAMAGE_ERRORS as exc:
        raise refuse(
            path, offset, f"chunk does not decompress ({describe_exception(exc)})"
        ) from None
    if len(data) != size:
        raise refuse(
            path, offset, f"chunk decompresses to {len(data)} bytes, its header says {size}"
        )
    crc = chunk.uncompressed_crc
    computed = zlib.crc32(data)
    if crc not in (0, computed):
        raise refuse(
            path, offset, f"chunk CRC mismatch (records {crc}, computed {computed}); damaged"
        )
    plain = Chunk(
        compression="",
        data=data,
        message_end_time=chunk.message_end_time,
        message_start_time=chunk.message_start_time,
        uncompressed_crc=0,
        uncompressed_size=size,
    )
    try:
        records = _split_records(data)
        return breakup_chunk(plain, validate_crc=False) if records is None else records
    except DAMAGE_ERRORS as exc:
        raise refuse(
            path, offset, f"chunk records are malformed ({describe_exception(exc)})"
        ) from None


def _decompress(compression: str, data: bytes, size: int) -> bytes:
    """The chunk's ``data`` decompressed; ``size`` (the chunk header's) is never allocated.

    A frame that stores its content size must agree with ``size`` before
    anything is decompressed (one damaged size field, in the record or in the
    frame, cannot make the decompressor allocate gigabytes); a frame without
    one grows its output as it decompresses, bounded by what the data holds.
    """
    if compression == "zstd":
        stored = zstandard.frame_content_size(data)
        if stored >= 0 and stored != size:
            raise LengthError(f"its zstd frame holds {stored} bytes, the chunk header says {size}")
        if stored >= 0:
            return zstandard.decompress(data)
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    try:
        stored = int(lz4.frame.get_frame_info(data)["content_size"])
        if stored and stored != size:
            raise LengthError(f"its lz4 frame holds {stored} bytes, the chunk header says {size}")
        out: bytes = lz4.frame.decompress(data)
    except RuntimeError as exc:  # lz4.frame's only error type for a bad frame
        raise _Lz4Error(str(exc)) from None
    return out


def _split_records(data: bytes) -> list[Any] | None:
    """The records of a chunk's data, as ``breakup_chunk`` returns them, or None if malformed.

    ``breakup_chunk`` reads each field through a stream object (a call and a
    ``struct.unpack`` per field); here a Message, nearly every record, is one
    ``unpack_from`` and a slice, and Channel and Schema records are read by
    the mcap package itself. Anything it would read differently (a record
    running past the data, a Message shorter than its fixed fields, a
    Channel or Schema whose fields do not fill its record) gives None, and
    the caller lets ``breakup_chunk`` read the chunk, with its own result or
    error.
    """
    records: list[Any] = []
    append = records.append
    head = _RECORD_HEAD.unpack_from
    message_head = _MESSAGE_HEAD.unpack_from
    message = McapMessage
    size = len(data)
    pos = 0
    while pos < size:
        if pos + 9 > size:
            return None
        opcode, length = head(data, pos)
        body = pos + 9
        end = body + length
        if end > size:
            return None
        if opcode == _OPCODE_MESSAGE:
            if length < 22:
                return None
            channel_id, sequence, log_time, publish_time = message_head(data, body)
            append(message(channel_id, log_time, data[body + 22 : end], publish_time, sequence))
        elif opcode in (_OPCODE_CHANNEL, _OPCODE_SCHEMA):
            stream = ReadDataStream(BytesIO(data[body:end]))
            try:
                record = (Channel if opcode == _OPCODE_CHANNEL else Schema).read(stream)
            except Exception:  # breakup_chunk reads it again and fails its own way
                return None
            if stream.count != length:
                return None
            append(record)
        pos = end
    return records


def records_in_file_order(path: str, stream: IO[bytes]) -> Iterator[tuple[int, bool, Any]]:
    """``(offset, in_chunk, record)`` for every record of the file, chunks split.

    ``offset`` is the record's own offset, or its chunk's for records inside a
    chunk. The data-section CRC is checked when the DataEnd record is reached
    (so a caller that must not deliver unchecked data reads to the end
    first). Damage raises `RecordingError` naming the offset.
    """
    size = stream.seek(0, 2)
    stream.seek(0)
    bounded: Any = Bounded(stream, size)
    reader = StreamReader(bounded, validate_crcs=True, skip_magic=False, emit_chunks=True)
    where = 0
    records = reader.records
    while True:
        try:
            record = next(records, None)
        except DAMAGE_ERRORS as exc:
            raise refuse(path, where, f"{describe_exception(exc)}; the file is damaged") from None
        if record is None:
            return
        if type(record) is Chunk:
            for inner in split_chunk(path, record, where):
                yield where, True, inner
        else:
            yield where, False, record
        where = stream.tell()


def unchunked_message_groups(
    path: str, stream: IO[bytes], group_size: int
) -> Iterator[tuple[int, list[McapMessage]]]:
    """``(offset read up to, messages)`` of a file without chunks, ``group_size`` at a time.

    The data-section CRC is checked when the DataEnd record is reached, so
    only a caller that has read to the end knows the groups were intact.
    Damage is refused as ``unchunked data section: ...`` at the offset read up to.
    """
    size = stream.seek(0, 2)
    stream.seek(0)
    group: list[McapMessage] = []
    bounded: Any = Bounded(stream, size)
    reader = StreamReader(bounded, validate_crcs=True)
    try:
        for record in reader.records:
            if type(record) is McapMessage:
                group.append(record)
                if len(group) == group_size:
                    yield stream.tell(), group
                    group = []
    except DAMAGE_ERRORS as exc:
        raise refuse(
            path, stream.tell(), f"unchunked data section: {describe_exception(exc)}"
        ) from None
    if group:
        yield stream.tell(), group


def check_data_section(
    path: str,
    stream: IO[bytes],
    end: int,
    chunks: dict[int, int],
    indexed: set[int],
) -> None:
    """Walk the data section's records by their lengths, from the Header to ``end`` (C-REP-6).

    A simclock recording's data section is a chain of records that ends with
    a DataEnd record exactly at ``end`` (the summary's start, or the
    footer). Each record's length is checked against the bytes left before
    ``end`` before the walk moves on, without reading the record's body:
    only heads are read (and a MessageIndex's array length, which must fill
    its record). ``chunks`` maps each Chunk's offset to its length as the
    chunk indexes say, ``indexed`` holds the other offsets the summary names
    (metadata records, message indexes): each must be where a record starts.
    A length that was damaged breaks the chain and is refused at its offset.
    """
    pos = len(MAGIC)
    starts: set[int] = set()
    opcode = length = -1
    while pos < end:
        stream.seek(pos)
        head = stream.read(_RECORD_HEAD.size + 6)
        if len(head) < _RECORD_HEAD.size:
            raise refuse(path, pos, "the data section ends inside a record's opcode and length")
        opcode, length = _RECORD_HEAD.unpack_from(head)
        after = pos + _RECORD_HEAD.size + length
        if after > end:
            raise refuse(
                path, pos + 1, f"record length {length} runs past the end of the data section "
                f"(offset {end}); damaged",
            )  # fmt: skip
        if opcode == Opcode.CHUNK and chunks.get(pos) != after - pos:
            raise refuse(
                path, pos + 1, f"Chunk record length {length} differs from the chunk index's "
                f"{chunks.get(pos)}; damaged",
            )  # fmt: skip
        if opcode == Opcode.MESSAGE_INDEX:
            (array,) = struct.unpack_from("<I", head.ljust(15, b"\0"), 11)
            if length < 6 or array != length - 6 or array % 16:
                raise refuse(
                    path, pos + 11, f"MessageIndex array length {array} does not fill its record "
                    f"of {length} bytes; damaged",
                )  # fmt: skip
        starts.add(pos)
        pos = after
    if (opcode, length) != (Opcode.DATA_END, 4):
        raise refuse(path, end, "the data section does not end with a DataEnd record; damaged")
    missing = sorted((set(chunks) | indexed) - starts)
    if missing:
        raise refuse(
            path, missing[0], "the summary indexes a record here but none starts here; damaged"
        )


# -- the pieces of a file cut short (simclock recover) ------------------------------------


def record_at(stream: IO[bytes], size: int, offset: int) -> tuple[int, int, bytes] | None:
    """``(opcode, end offset, body)`` of the record at ``offset`` (``stream`` is there), or None.

    None when the file of ``size`` bytes ends inside the record's head or body.
    """
    head = stream.read(_RECORD_HEAD.size)
    if len(head) < _RECORD_HEAD.size:
        return None
    opcode, length = _RECORD_HEAD.unpack(head)
    end = offset + _RECORD_HEAD.size + length
    if end > size:
        return None
    return opcode, end, stream.read(length)


def parse_record(path: str, opcode: int, body: bytes, offset: int) -> Any:
    """The record of ``opcode`` and ``body`` found at ``offset`` (a Chunk stays whole).

    None for an opcode the mcap package skips; malformed bytes are refused
    as ``unreadable record (...)``.
    """
    record = _RECORD_HEAD.pack(opcode, len(body)) + body
    try:
        reader = StreamReader(BytesIO(record), skip_magic=True, emit_chunks=True)
        return next(reader.records, None)
    except DAMAGE_ERRORS as exc:
        raise refuse(path, offset, f"unreadable record ({describe_exception(exc)})") from None


def cut_chunk_start(stream: IO[bytes], offset: int) -> int | None:
    """The first log time a Chunk record cut short at ``offset`` names, or None if no Chunk."""
    stream.seek(offset)
    head = stream.read(1 + 8 + 8)
    if len(head) == 17 and head[0] == Opcode.CHUNK:
        start: int = struct.unpack_from("<Q", head, 9)[0]
        return start
    return None
