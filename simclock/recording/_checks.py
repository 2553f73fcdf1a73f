"""File-level checks shared by every reader of recordings (C-REP-5, C-REP-6, C-REP-7).

Everything here reads raw MCAP structure (magic, footer, summary CRC, one
Chunk record) and turns what is wrong with the *file* into
`RecordingError` naming the file and the byte offset. Only the errors
that malformed bytes cause are caught (`DAMAGE_ERRORS`: the mcap
package's own errors, ``struct``/``zstandard``/``lz4`` failures, truncation
and text that is not UTF-8); anything else is a bug in simclock or in a
library and propagates as such, never as "the file is damaged".
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
from mcap.records import Channel, Chunk, Schema
from mcap.records import Message as McapMessage
from mcap.stream_reader import CRCValidationError, StreamReader, breakup_chunk

from simclock.core._errors import SimclockValueError
from simclock.core._names import describe_exception

__all__ = [
    "DAMAGE_ERRORS",
    "FOOTER_SIZE",
    "MAGIC",
    "ChunkRecords",
    "RecordingError",
    "check_footer",
    "read_chunk",
    "records_in_file_order",
    "refuse",
    "split_chunk",
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


DAMAGE_ERRORS: Final = (
    McapError,
    CRCValidationError,
    struct.error,
    zstandard.ZstdError,
    _Lz4Error,
    EOFError,
    UnicodeDecodeError,
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
    if limit is not None and record_end > limit:
        raise refuse(path, offset, f"Chunk record length {length} runs past offset {limit}")
    if name_len > 16:
        raise refuse(path, offset + 37, f"chunk compression name of {name_len} bytes; damaged")
    try:
        compression = stream.read(name_len).decode()
        (data_len,) = struct.unpack("<Q", stream.read(8))
    except DAMAGE_ERRORS as exc:
        why = describe_exception(exc)
        raise refuse(path, offset, f"unreadable Chunk header ({why})") from None
    if data_len > length or (limit is not None and offset + 9 + length > limit):
        raise refuse(path, offset, f"chunk data of {data_len} bytes does not fit its record")
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
        if compression == "zstd":
            data = zstandard.decompress(data, size)
        elif compression == "lz4":
            try:
                data = lz4.frame.decompress(data)
            except RuntimeError as exc:  # lz4.frame's only error type for a bad frame
                raise _Lz4Error(str(exc)) from None
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
    stream.seek(0)
    reader = StreamReader(stream, validate_crcs=True, skip_magic=False, emit_chunks=True)
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
