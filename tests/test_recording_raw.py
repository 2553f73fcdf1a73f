"""C-REP-5, C-REP-6, C-REP-7: one module reads raw MCAP records, and it reads them right.

``simclock.recording._raw`` is the only place that parses MCAP bytes (records,
chunks, the summary, a file cut short); the readers of simclock recordings,
foreign files and ROS 2 bags are `Source` objects over it. A change of
chunking touches the writer and that module: a scan of the package's source
fails naming file and line where anything else reads raw records. The unit
tests read files of several chunks, without chunks, cut short and damaged,
with the exact refusals.
"""

from __future__ import annotations

import ast
import io
import re
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcap.opcode import Opcode
from mcap.records import Chunk, Header
from mcap.records import Message as McapMessage
from mcap.writer import CompressionType, Writer

import simclock
from simclock import Bus, Recorder, RecordingError, export_ros2, open_recording
from simclock.recording._bag import BagSource
from simclock.recording._foreign import ForeignSource
from simclock.recording._own import OwnSource
from simclock.recording._raw import (
    check_footer,
    cut_chunk_start,
    parse_record,
    read_chunk,
    read_summary,
    record_at,
    records_in_file_order,
    unchunked_message_groups,
)
from simclock.recording._source import Source

PACKAGE = Path(simclock.__file__).resolve().parent
RAW = PACKAGE / "recording" / "_raw.py"

# What parses MCAP bytes: mcap's readers and low-level stream, record opcodes, and the
# chunk decompressors.
_RAW_MODULES = (
    "mcap.reader",
    "mcap.stream_reader",
    "mcap.data_stream",
    "mcap.opcode",
    "lz4",
    "zstandard",
)
_RAW_CALLS = frozenset(
    {
        "StreamReader",
        "SeekingReader",
        "NonSeekingReader",
        "make_reader",
        "breakup_chunk",
        "ReadDataStream",
        "ZstdDecompressor",
        "decompressobj",
        "decompress",
        "unpack_from",
    }
)
# Bytes that look alike but are no MCAP record: rosbag2 compresses each message's
# payload on its own (compression_mode: message), and a /clock payload is CDR.
_NOT_MCAP = {
    "recording/_bag.py": {"zstandard", "ZstdDecompressor", "decompressobj", "decompress"},
    "recording/_format.py": {"unpack_from"},
    # The recorder's writer: it compresses chunks and builds records with the official
    # RecordBuilder, and reads nothing (its bytes are compared with the official Writer's).
    "core/_mcap_records.py": {"lz4", "zstandard", "mcap.data_stream"},
}


def _raw_reads(name: str, source: str) -> list[str]:
    """``"<name>:<line>: <what>"`` for every raw MCAP read in ``source`` (the module ``name``)."""
    allowed = _NOT_MCAP.get(name, set())
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                modules = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            hits = [
                module
                for module in modules
                for m in _RAW_MODULES
                if (module == m or module.startswith(m + ".")) and m not in allowed
            ]
            if hits:
                found.append((node.lineno, f"imports {hits[0]}"))
        elif isinstance(node, ast.Call):
            func = node.func
            called = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else None
            )
            if called in _RAW_CALLS and called not in allowed:
                found.append((node.lineno, f"calls {called}"))
    return [f"{name}:{line}: {what}" for line, what in sorted(found)]


def test_C_REP_6_every_raw_mcap_read_goes_through_raw() -> None:
    """A change of chunking touches the writer and ``_raw``: nothing else parses MCAP bytes."""
    found: list[str] = []
    modules = sorted(p for p in PACKAGE.rglob("*.py") if p != RAW)
    assert len(modules) > 50
    for path in modules:
        name = path.relative_to(PACKAGE).as_posix()
        found += _raw_reads(name, path.read_text(encoding="utf-8"))
    assert found == []
    # _raw itself is what the scan looks for: it must see it there.
    assert len(_raw_reads("recording/_raw.py", RAW.read_text(encoding="utf-8"))) >= 8


def test_C_REP_6_the_raw_read_scan_names_file_and_line() -> None:
    source = (
        "import io\n"
        "from mcap.stream_reader import StreamReader\n"
        "import zstandard\n"
        "from mcap import reader\n"
        "records = StreamReader(io.BytesIO(b'')).records\n"
        "data = zstandard.decompress(b'', 0)\n"
        "head = data.unpack_from(b'')\n"
    )
    assert _raw_reads("sim/x.py", source) == [
        "sim/x.py:2: imports mcap.stream_reader",
        "sim/x.py:3: imports zstandard",
        "sim/x.py:4: imports mcap.reader",
        "sim/x.py:5: calls StreamReader",
        "sim/x.py:6: calls decompress",
        "sim/x.py:7: calls unpack_from",
    ]
    # What is allowed for one module is not for another.
    assert _raw_reads("recording/_bag.py", source) == [
        "recording/_bag.py:2: imports mcap.stream_reader",
        "recording/_bag.py:4: imports mcap.reader",
        "recording/_bag.py:5: calls StreamReader",
        "recording/_bag.py:7: calls unpack_from",
    ]


# -- the raw reader on real files -----------------------------------------------------------


def _write(path: Path, n: int, *, chunk_size: int | None, compression: CompressionType) -> None:
    """A foreign file of ``n`` messages on /a, in chunks of ``chunk_size`` bytes (None: none)."""
    with path.open("wb") as f:
        writer = Writer(
            f,
            use_chunking=chunk_size is not None,
            chunk_size=chunk_size or 1024,
            compression=compression,
        )
        writer.start(profile="x", library="test")
        channel = writer.register_channel("/a", "json", 0, {})
        for k in range(n):
            writer.add_message(channel, 10 * k, b'{"k": %d}' % k, 10 * k, k)
        writer.finish()  # type: ignore[no-untyped-call]


def _fields(records: list[Any]) -> list[tuple[int, int, int, bytes]]:
    """``(channel, log_time, sequence, data)`` of the Message records among ``records``."""
    return [
        (r.channel_id, r.log_time, r.sequence, r.data)
        for r in records
        if isinstance(r, McapMessage)
    ]


def _expected(n: int) -> list[tuple[int, int, int, bytes]]:
    return [(1, 10 * k, k, b'{"k": %d}' % k) for k in range(n)]


def _chunk_layout(data: bytes, offset: int) -> tuple[int, int, int]:
    """``(stored CRC, data start, data length)`` of the Chunk record at ``offset``."""
    crc, name_len = struct.unpack_from("<II", data, offset + 1 + 8 + 8 + 8 + 8)
    at = offset + 1 + 8 + 8 + 8 + 8 + 4 + 4 + name_len
    (length,) = struct.unpack_from("<Q", data, at)
    return crc, at + 8, length


@pytest.mark.parametrize(
    ("compression", "compression_name"),
    [(CompressionType.ZSTD, "zstd"), (CompressionType.LZ4, "lz4")],
)
def test_C_REP_5_raw_reader_splits_a_file_of_several_chunks(
    tmp_path: Path, compression: CompressionType, compression_name: str
) -> None:
    path = tmp_path / "chunks.mcap"
    _write(path, 300, chunk_size=512, compression=compression)
    name = str(path)
    with path.open("rb") as stream:
        size = path.stat().st_size
        footer = check_footer(name, stream, size, need_crc=False)
        summary = read_summary(name, stream, footer.summary_start)
        assert summary is not None
        chunks = sorted(summary.chunk_indexes, key=lambda c: c.chunk_start_offset)
        assert len(chunks) >= 5
        assert {c.compression for c in chunks} == {compression_name}
        # File order, chunks split, every record named by its chunk's offset.
        seen = list(records_in_file_order(name, stream))
        inner = [(where, record) for where, in_chunk, record in seen if in_chunk]
        assert _fields([r for _w, r in inner]) == _expected(300)
        assert sorted({where for where, _r in inner}) == [c.chunk_start_offset for c in chunks]
        # The Header is read with the magic before it: named at offset 0.
        assert isinstance(seen[0][2], Header) and seen[0][:2] == (0, False)
        # One chunk at a time, as the indexed readers read them.
        got: list[Any] = []
        for index in chunks:
            chunk = read_chunk(
                name, stream, index.chunk_start_offset, need_crc=True, limit=footer.summary_start
            )
            assert (chunk.offset, chunk.end) == (
                index.chunk_start_offset,
                index.chunk_start_offset + index.chunk_length,
            )
            assert (chunk.start_time, chunk.end_time) == (
                index.message_start_time,
                index.message_end_time,
            )
            got += chunk.records
        assert _fields(got) == _expected(300)


def test_C_REP_5_raw_reader_reads_an_unchunked_file(tmp_path: Path) -> None:
    path = tmp_path / "flat.mcap"
    _write(path, 5, chunk_size=None, compression=CompressionType.NONE)
    name = str(path)
    with path.open("rb") as stream:
        footer = check_footer(name, stream, path.stat().st_size, need_crc=False)
        summary = read_summary(name, stream, footer.summary_start)
        assert summary is not None and summary.chunk_indexes == []
        seen = list(records_in_file_order(name, stream))
        messages = [
            (where, record) for where, _c, record in seen if isinstance(record, McapMessage)
        ]
        assert not any(in_chunk for _w, in_chunk, _r in seen)
        assert _fields([r for _w, r in messages]) == _expected(5)
        # Each message named by its own offset: one record after the other.
        offsets = [where for where, _r in messages]
        data = path.read_bytes()
        assert [data[w] for w in offsets] == [Opcode.MESSAGE] * 5
        assert offsets == sorted(set(offsets))
        groups = list(unchunked_message_groups(name, stream, 2))
        assert [len(g) for _w, g in groups] == [2, 2, 1]
        assert _fields([r for _w, g in groups for r in g]) == _expected(5)


@pytest.fixture
def plain_chunks(tmp_path: Path) -> Iterator[tuple[Path, bytes, list[int]]]:
    """A file of uncompressed chunks, its bytes and its chunk offsets."""
    path = tmp_path / "plain.mcap"
    _write(path, 200, chunk_size=512, compression=CompressionType.NONE)
    data = path.read_bytes()
    with path.open("rb") as stream:
        footer = check_footer(str(path), stream, len(data), need_crc=False)
        summary = read_summary(str(path), stream, footer.summary_start)
    assert summary is not None
    offsets = sorted(c.chunk_start_offset for c in summary.chunk_indexes)
    assert len(offsets) >= 4
    yield path, data, offsets


def _damage_second_chunk(path: Path, data: bytes, offsets: list[int]) -> str:
    """Change one byte of a message in the second chunk; the exact refusal it gets."""
    second = offsets[1]
    crc, start, length = _chunk_layout(data, second)
    damaged = bytearray(data)
    at = damaged.index(b'"k"', start)
    damaged[at + 1] = ord("j")
    path.write_bytes(bytes(damaged))
    computed = zlib.crc32(bytes(damaged[start : start + length]))
    return (
        f"{path}: offset {second}: chunk CRC mismatch (records {crc}, computed {computed}); damaged"
    )


def test_C_REP_6_a_damaged_chunk_is_refused_at_its_offset(
    plain_chunks: tuple[Path, bytes, list[int]],
) -> None:
    path, data, offsets = plain_chunks
    expected = f"^{re.escape(_damage_second_chunk(path, data, offsets))}$"
    with path.open("rb") as stream:
        with pytest.raises(RecordingError, match=expected):
            read_chunk(str(path), stream, offsets[1])
        # In file order: the first chunk's messages come out, then the refusal.
        got: list[Any] = []
        with pytest.raises(RecordingError, match=expected):
            for _where, _in_chunk, record in records_in_file_order(str(path), stream):
                got.append(record)
        first = read_chunk(str(path), stream, offsets[0]).records
        assert _fields(got) == _fields(first) != []


def test_C_DEV_2_the_timeline_reads_through_raw_and_refuses_a_damaged_chunk(
    plain_chunks: tuple[Path, bytes, list[int]],
) -> None:
    from simclock.sim._timeline import load_samples

    path, data, offsets = plain_chunks
    why = _damage_second_chunk(path, data, offsets)
    with pytest.raises(
        ValueError,
        match=rf"^{re.escape(repr(str(path)))} is not a readable MCAP recording "
        rf"\({re.escape(why)}\); record one with simclock run SCENARIO --out run\.mcap$",
    ):
        load_samples(path)


def test_C_REP_6_raw_chunk_refusals_are_exact(
    plain_chunks: tuple[Path, bytes, list[int]],
) -> None:
    path, data, offsets = plain_chunks
    name = str(path)
    where = re.escape(name)
    first = offsets[0]
    with path.open("rb") as stream:
        with pytest.raises(
            RecordingError,
            match=rf"^{where}: offset 8: expected a Chunk record, found opcode 1$",
        ):
            read_chunk(name, stream, 8)
        (length,) = struct.unpack_from("<Q", data, first + 1)
        with pytest.raises(
            RecordingError,
            match=rf"^{where}: offset {first}: Chunk record length {length} runs past offset "
            rf"{first + 10}$",
        ):
            read_chunk(name, stream, first, limit=first + 10)
    # A compression name MCAP does not define: refused as such, not as a CRC mismatch.
    name_at = first + 1 + 8 * 4 + 4
    (name_len,) = struct.unpack_from("<I", data, name_at)
    assert name_len == 0  # uncompressed: the name is empty; give it one of four bytes
    renamed = data[:name_at] + struct.pack("<I", 4) + b"zstx" + data[name_at + 4 :]
    record_len = struct.unpack_from("<Q", data, first + 1)[0] + 4
    renamed = renamed[: first + 1] + struct.pack("<Q", record_len) + renamed[first + 9 :]
    path.write_bytes(renamed)
    with (
        path.open("rb") as stream,
        pytest.raises(
            RecordingError,
            match=rf"^{where}: offset {first}: chunk compression 'zstx' is unknown \(MCAP defines "
            r"'', 'zstd' and 'lz4'\)$",
        ),
    ):
        read_chunk(name, stream, first)


def test_C_REP_7_raw_reads_of_a_file_cut_inside_a_chunk(
    plain_chunks: tuple[Path, bytes, list[int]],
) -> None:
    path, data, offsets = plain_chunks
    where = re.escape(str(path))
    cut_at = offsets[2] + 100
    cut = data[:cut_at]
    stream = io.BytesIO(cut)
    stream.seek(offsets[1])
    got = record_at(stream, len(cut), offsets[1])
    assert got is not None
    opcode, end, body = got
    second = read_chunk(str(path), io.BytesIO(data), offsets[1])
    assert (opcode, end, len(body)) == (Opcode.CHUNK, second.end, second.end - offsets[1] - 9)
    record = parse_record(str(path), opcode, body, offsets[1])
    assert isinstance(record, Chunk)
    assert record.message_start_time == second.start_time
    # The third chunk is cut: no record, but its head still names its first log time.
    stream.seek(offsets[2])
    assert record_at(stream, len(cut), offsets[2]) is None
    third = read_chunk(str(path), io.BytesIO(data), offsets[2])
    assert cut_chunk_start(stream, offsets[2]) == third.start_time > second.start_time
    assert cut_chunk_start(stream, offsets[0] - 1) is None  # not a Chunk record there
    with pytest.raises(
        RecordingError,
        match=rf"^{where}: offset 8: unreadable record \(error: unpack requires a buffer of 4 "
        r"bytes\)$",
    ):
        parse_record(str(path), Opcode.HEADER, b"\x05\x00", 8)


# -- the Source protocol ------------------------------------------------------------------

# mypy checks that each kind of reader is a Source.
SOURCES: tuple[type[Source], ...] = (OwnSource, ForeignSource, BagSource)


def test_C_REP_5_each_kind_of_input_is_read_through_its_source(tmp_path: Path) -> None:
    own = tmp_path / "own.mcap"
    bus = Bus()
    with Recorder(own, bus, seed=3, chunk_size=1024):
        for k in range(50):
            bus.publish("/a", {"k": k}, stamp_ns=k)
    foreign = tmp_path / "foreign.mcap"
    _write(foreign, 20, chunk_size=256, compression=CompressionType.ZSTD)
    bag = Path(export_ros2(own, tmp_path / "bag"))
    for path, kind in ((own, OwnSource), (foreign, ForeignSource), (bag, BagSource)):
        with open_recording(path) as reader:
            source = reader._source
            assert type(source) is kind and source.path == str(path)
            assert source.info() == reader.info
            assert [m.stamp_ns for m in source.messages(None)] == [
                m.stamp_ns for m in reader.messages()
            ]
        assert reader._source is source  # closed through it
    assert {cls.__name__ for cls in SOURCES} == {"OwnSource", "ForeignSource", "BagSource"}
