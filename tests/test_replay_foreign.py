"""C-REP-5: every file the official ``mcap`` writer makes replays completely, in log-time order.

The matrix covers the writer's options (chunked or not; compression none, lz4,
zstd; chunk and message indexes; metadata and attachment indexes; statistics;
summary offsets; repeated channels and schemas; CRCs) over one content with
metadata and attachment records, equal log times across channels, log times
out of order (so chunks overlap in time), a schema-less channel, a non-JSON
channel and ROS 2 CDR, plus empty files. Each file is replayed and compared
with the official non-seeking reader's ``log_time_order=True`` iteration, which
orders by log time with ties in file order; ``end_ns``, message counts and
topic names must be right whatever the summary holds.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from mcap.exceptions import McapError
from mcap.reader import NonSeekingReader
from mcap.writer import CompressionType, IndexType, Writer

from simclock import Message, RawPayload, RecordingError, RecordingReader, ReplayClock
from simclock.recording._format import CLOCK_SCHEMA_NAME, CLOCK_SCHEMA_TEXT, encode_clock

_LAYOUTS = [
    (False, CompressionType.NONE, IndexType.NONE),
    *[
        (True, compression, chunk | message)
        for compression in (CompressionType.NONE, CompressionType.LZ4, CompressionType.ZSTD)
        for chunk in (IndexType.NONE, IndexType.CHUNK)
        for message in (IndexType.NONE, IndexType.MESSAGE)
    ],
]
_SUMMARY_OPTIONS = list(itertools.product([False, True], repeat=5))


def _write(path: Path, layout: tuple[bool, CompressionType, IndexType], options: Any, *,
           empty: bool = False) -> None:  # fmt: skip
    chunked, compression, indexes = layout
    stats, offsets, repeat_channels, repeat_schemas, meta_index = options
    extra = IndexType.METADATA | IndexType.ATTACHMENT if meta_index else IndexType.NONE
    with path.open("wb") as f:
        w = Writer(
            f,
            chunk_size=96,  # many small chunks, overlapping in time below
            compression=compression,
            index_types=indexes | extra,
            repeat_channels=repeat_channels,
            repeat_schemas=repeat_schemas,
            use_chunking=chunked,
            use_statistics=stats,
            use_summary_offsets=offsets,
            enable_crcs=True,
            enable_data_crcs=chunked,
        )
        w.start(profile="", library="official writer matrix")
        point = w.register_schema("Point", "jsonschema", b'{"type":"object"}')
        clock = w.register_schema(CLOCK_SCHEMA_NAME, "ros2msg", CLOCK_SCHEMA_TEXT.encode())
        a = w.register_channel("/a", "json", point)
        b = w.register_channel("/b", "json", 0)  # schema-less
        c = w.register_channel("/cam", "cbor", 0)  # not JSON
        k = w.register_channel("/clock", "cdr", clock)
        w.add_metadata("run", {"who": "matrix"})
        if not empty:
            for i, t in enumerate([5, 5, 10, 3, 10, 20, 15, 15, 1, 30, 30, 25]):
                w.add_message(a, t, json.dumps({"i": i, "t": t}).encode(), t, i)
                w.add_message(b, t, json.dumps([i]).encode(), t, 0)  # equal log time, /b after /a
                if i % 3 == 0:
                    w.add_message(c, t + 1, bytes([i, 0xFF, 0x00]), t + 1, 0)
                    w.add_message(k, t + 2, encode_clock(t + 2), t + 2, 0)
                if i == 6:
                    w.add_attachment(1, 2, "calib.txt", "text/plain", b"fx=1")
        w.add_metadata("more", {"k": "v"})
        w.finish()  # type: ignore[no-untyped-call]


def _official(path: Path) -> list[tuple[str, int, Any]]:
    with path.open("rb") as f:
        out = []
        for schema, channel, message in NonSeekingReader(f, validate_crcs=True).iter_messages(
            log_time_order=True
        ):
            if channel.message_encoding == "json":
                payload: Any = json.loads(message.data)
            else:
                name = schema.name if schema is not None else ""
                payload = RawPayload(channel.message_encoding, name, message.data)
            out.append((channel.topic, message.log_time, payload))
    return out


def _replayed(path: Path) -> tuple[list[Message], Any]:
    got: list[Message] = []
    with ReplayClock(path) as clock:
        clock.bus.subscribe(None, got.append)
        assert clock.now_ns() == clock.info.start_ns
        clock.advance(clock.end_ns() - clock.now_ns())
        info = clock.info
        assert clock.next_event_ns() is None
    return got, info


@pytest.mark.parametrize(
    "layout", _LAYOUTS, ids=lambda lay: f"chunked={lay[0]}-{lay[1].name}-{lay[2]!r}"
)
def test_C_REP_5_every_writer_option_replays_like_the_official_reader(
    tmp_path: Path, layout: tuple[bool, CompressionType, IndexType]
) -> None:
    for options in _SUMMARY_OPTIONS:
        path = tmp_path / "f.mcap"
        _write(path, layout, options)
        expected = _official(path)
        assert len(expected) == 24 + 4 + 4
        got, info = _replayed(path)
        where = f"layout={layout} stats/offsets/repeat_channels/repeat_schemas/meta_index={options}"
        assert [(m.topic, m.stamp_ns, m.payload) for m in got] == expected, where
        assert [m.sequence for m in got] == list(range(len(expected))), where
        assert (info.start_ns, info.end_ns) == (1, 32), where
        assert info.message_count == len(expected), where
        assert dict(info.topic_counts) == {"/a": 12, "/b": 12, "/cam": 4, "/clock": 4}, where
        assert not info.simclock


@pytest.mark.parametrize("chunked", [False, True])
def test_C_REP_5_empty_files_replay_as_empty(tmp_path: Path, chunked: bool) -> None:
    for options in _SUMMARY_OPTIONS:
        path = tmp_path / "empty.mcap"
        _write(path, (chunked, CompressionType.ZSTD, IndexType.ALL), options, empty=True)
        try:
            assert _official(path) == []
        except McapError as exc:
            # The writer leaves an empty chunk's Schema record out when the summary does not
            # repeat it; the official reader refuses the file, and so does replay, by name.
            assert str(exc) == "no schema record found with id 1"
            assert chunked and not options[3]
            with pytest.raises(
                RecordingError,
                match=r"^.*empty.mcap: offset \d+: channel 1 \('/a'\) refers to schema id 1, "
                r"which no Schema record defines; the file is damaged$",
            ):
                _replayed(path)
            continue
        got, info = _replayed(path)
        assert got == []
        assert (info.start_ns, info.end_ns, info.message_count) == (0, 0, 0)


def test_C_REP_5_end_ns_without_statistics_is_the_last_log_time(tmp_path: Path) -> None:
    # The repro: three JSON messages at 5, 10, 15 ns, use_statistics=False. end_ns was 0,
    # so the README's loop delivered what is stamped at 0 (nothing) and `simclock replay` exited 0.
    path = tmp_path / "nostats.mcap"
    with path.open("wb") as f:
        w = Writer(f, use_statistics=False)
        w.start()
        ch = w.register_channel("/x", "json", 0)
        for t in (5, 10, 15):
            w.add_message(ch, t, b'{"t":%d}' % t, t)
        w.finish()  # type: ignore[no-untyped-call]
    with ReplayClock(path) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        assert (clock.now_ns(), clock.end_ns()) == (5, 15)
        clock.advance(clock.end_ns() - clock.now_ns())
    assert got == [Message("/x", t, i, {"t": t}) for i, t in enumerate((5, 10, 15))]


def test_C_REP_5_info_names_topics_when_the_summary_does_not_repeat_channels(
    tmp_path: Path,
) -> None:
    # It showed "#1" and replay refused the file as damaged (KeyError: 1).
    path = tmp_path / "norepeat.mcap"
    _write(path, (True, CompressionType.ZSTD, IndexType.ALL), (True, True, False, False, True))
    with RecordingReader(path) as reader:
        assert dict(reader.info.topic_counts) == {"/a": 12, "/b": 12, "/cam": 4, "/clock": 4}


def test_C_REP_5_cli_replay_of_a_file_without_statistics_prints_every_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from simclock.cli._main import main

    path = tmp_path / "nostats.mcap"
    with path.open("wb") as f:
        w = Writer(f, use_statistics=False)
        w.start()
        ch = w.register_channel("/x", "json", 0)
        for t in (5, 10, 15):
            w.add_message(ch, t, b'{"t":%d}' % t, t)
        w.finish()  # type: ignore[no-untyped-call]
    assert main(["replay", str(path), "--no-progress"]) == 0
    assert capsys.readouterr().out == '5 0 /x {"t":5}\n10 1 /x {"t":10}\n15 2 /x {"t":15}\n'


def test_C_REP_6_an_unknown_compression_or_channel_is_refused_with_its_offset(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ok.mcap"
    _write(path, (True, CompressionType.ZSTD, IndexType.ALL), (True, True, True, True, True))
    data = path.read_bytes()
    at = data.index(b"\x04\x00\x00\x00zstd")  # the first chunk's compression name
    bad = tmp_path / "zstx.mcap"
    bad.write_bytes(data[: at + 4] + b"zstx" + data[at + 8 :])
    with (
        ReplayClock(bad) as clock,
        pytest.raises(
            RecordingError,
            match=r"^.*zstx\.mcap: offset \d+: chunk compression 'zstx' is unknown \(MCAP defines "
            r"'', 'zstd' and 'lz4'\)$",
        ),
    ):
        clock.advance(clock.end_ns())
    orphan = tmp_path / "orphan.mcap"
    with orphan.open("wb") as f:
        w = Writer(f, use_chunking=False)
        w.start()
        ch = w.register_channel("/x", "json", 0)
        w.add_message(ch, 1, b"{}", 1)
        w.add_message(9, 2, b"{}", 2)  # no Channel record with id 9
        w.finish()  # type: ignore[no-untyped-call]
    with (
        pytest.raises(
            RecordingError,
            match=r"^.*orphan\.mcap: offset \d+: a message refers to channel id 9, which no "
            r"Channel record before it defines; the file is damaged$",
        ),
        ReplayClock(orphan) as clock,
    ):
        clock.advance(clock.end_ns())
