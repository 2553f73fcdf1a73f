"""C-REP-6: simclock's chunk splitter gives the official ``breakup_chunk``'s records, or its error.

The fast path parses Message records itself; every chunk it would read
differently is handed to ``breakup_chunk``, so a valid chunk gives the same
records and a malformed one the same refusal.
"""

from __future__ import annotations

import io
import struct

import pytest
from mcap.records import Chunk
from mcap.stream_reader import StreamReader, breakup_chunk
from mcap.writer import CompressionType, Writer

from simclock import RecordingError
from simclock.recording._checks import _split_records, split_chunk


def _chunks() -> list[Chunk]:
    buf = io.BytesIO()
    writer = Writer(buf, compression=CompressionType.NONE, chunk_size=1500)
    writer.start(profile="x", library="test")
    schema = writer.register_schema("s", "jsonschema", b'{"type": "object"}')
    first = writer.register_channel("/a", "json", schema, {"k": "v"})
    for k in range(300):
        if k == 150:
            late = writer.register_channel("/b", "json", 0, {})
        writer.add_message(late if k > 150 else first, k, b'{"k": %d}' % k if k % 7 else b"", k, k)
    writer.finish()  # type: ignore[no-untyped-call]
    buf.seek(0)
    return [r for r in StreamReader(buf, emit_chunks=True).records if isinstance(r, Chunk)]


def test_C_REP_6_split_records_equal_breakup_chunk_on_valid_chunks() -> None:
    chunks = _chunks()
    assert len(chunks) > 5
    for chunk in chunks:
        ours = _split_records(chunk.data)
        assert ours is not None
        theirs = breakup_chunk(chunk)
        assert ours == theirs
        assert [type(r) for r in ours] == [type(r) for r in theirs]
    assert sum(len(split_chunk("f.mcap", c, 0)) for c in chunks) == 300 + 3


@pytest.mark.parametrize("cut", [1, 5, 9, 20], ids=lambda n: f"minus{n}")
def test_C_REP_6_a_malformed_chunk_goes_to_breakup_chunk(cut: int) -> None:
    """A record running past the chunk's data is read by the official reader, error and all."""
    chunk = _chunks()[1]
    data = chunk.data[:-cut]
    assert _split_records(data) is None
    short = Chunk(
        compression="",
        data=data,
        message_end_time=chunk.message_end_time,
        message_start_time=chunk.message_start_time,
        uncompressed_crc=0,
        uncompressed_size=len(data),
    )
    try:
        expected: object = breakup_chunk(short)
    except Exception:
        with pytest.raises(
            RecordingError, match=r"^f\.mcap: offset 7: chunk records are malformed"
        ):
            split_chunk("f.mcap", short, 7)
    else:
        assert split_chunk("f.mcap", short, 7) == expected


def test_C_REP_6_a_message_shorter_than_its_fields_goes_to_breakup_chunk() -> None:
    record = struct.pack("<BQ", 5, 10) + bytes(10)
    assert _split_records(record) is None
