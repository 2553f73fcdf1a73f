"""C-REP-6: no single-bit flip anywhere in a simclock recording goes unnoticed.

Every bit of a small recording's header, metadata records, summary section and
footer (and a sample of the data section's bits) is flipped in turn; replay must
then either observe exactly what the intact file gives (trace, info, user
metadata, persisted draws, fingerprint) or refuse the file with a
``RecordingError`` naming the file and a byte offset. The identity of a
simclock recording is checked too: it is never replayed as a foreign file.
"""

from __future__ import annotations

import io
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from mcap.reader import SeekingReader

from simclock import Bus, HeapSimClock, Recorder, RecordingError, RecordingReader, ReplayClock

_REFUSAL = r"^{path}: offset \d+: .+$"


def _small_recording(path: Path) -> None:
    bus = Bus()
    with Recorder(
        path, bus, seed=3, record_draws=True, metadata={"scenario": "flip"}, compression="zstd"
    ) as rec:
        clock = HeapSimClock(3, bus=bus, draw_observer=rec.draw_observer)
        noise = clock.random_source().child("n")
        clock.schedule_periodic(4, lambda: bus.publish("/a", {"x": noise.uniform(0.0, 1.0)}))
        clock.schedule(6, lambda: bus.publish("/b", [1, 2]))
        clock.advance(12)


def _observe(path: Path) -> Any:
    try:
        with ReplayClock(path) as clock:
            got: list[Any] = []
            clock.bus.subscribe(None, got.append)
            clock.advance(clock.end_ns() - clock.now_ns())
            info = clock.info
        with RecordingReader(path) as reader:
            draws = {label: list(reader.draws(label)) for label in info.draw_labels}
        return ("replayed", got, info, draws)
    except RecordingError as exc:
        return ("refused", str(exc))


def _regions(data: bytes) -> dict[str, range]:
    """Byte ranges of the header, the metadata records, the summary and the footer."""
    reader = SeekingReader(io.BytesIO(data))
    summary = reader.get_summary()
    assert summary is not None
    footer_at = len(data) - 8 - 29
    (summary_start,) = struct.unpack_from("<Q", data, footer_at + 9)
    (header_len,) = struct.unpack_from("<Q", data, 9)
    out = {
        "magic+header": range(0, 8 + 9 + header_len),
        "summary": range(summary_start, footer_at),
        "footer+magic": range(footer_at, len(data)),
    }
    for index in summary.metadata_indexes:
        out[f"metadata {index.name}"] = range(index.offset, index.offset + index.length)
    chunks = [(c.chunk_start_offset, c.chunk_length) for c in summary.chunk_indexes]
    out["data sample"] = range(chunks[0][0], chunks[-1][0] + chunks[-1][1])
    return out


def test_C_REP_6_every_bit_flip_is_harmless_or_refused_with_the_offset(tmp_path: Path) -> None:
    src = tmp_path / "intact.mcap"
    _small_recording(src)
    data = src.read_bytes()
    flipped = tmp_path / "flip.mcap"
    flipped.write_bytes(data)
    intact = _observe(flipped)
    assert intact[0] == "replayed" and len(intact[1]) == 5 and intact[3]["/n"]
    pattern = _REFUSAL.format(path=str(flipped).replace(".", r"\."))
    counts: dict[str, list[int]] = {}
    for name, where in _regions(data).items():
        step = 11 if name == "data sample" else 1  # every 11th bit of the chunks: a sample
        harmless = refused = 0
        for bit in range(where.start * 8, where.stop * 8, step):
            copy = bytearray(data)
            copy[bit // 8] ^= 1 << (bit % 8)
            flipped.write_bytes(bytes(copy))
            seen = _observe(flipped)
            if seen[0] == "refused":
                assert re.match(pattern, seen[1]), (name, bit, seen[1])
                refused += 1
            else:
                assert seen == intact, (name, bit)
                harmless += 1
        counts[name] = [harmless, refused]
    # Where a flip changes what replay would show, it is refused: most bits are.
    for name in ("summary", "metadata simclock", "metadata simclock.user", "footer+magic"):
        assert counts[name][1] > 0.9 * sum(counts[name]), (name, counts)


def test_C_REP_6_a_simclock_recording_is_never_read_as_a_foreign_file(tmp_path: Path) -> None:
    # A flip in the metadata record's name made the file be replayed as a foreign one:
    # envelopes as raw payloads, /clock and the draw channels as bus messages, no error.
    src = tmp_path / "run.mcap"
    _small_recording(src)
    data = src.read_bytes()
    renamed = tmp_path / "renamed.mcap"
    summary = SeekingReader(io.BytesIO(data)).get_summary()
    assert summary is not None
    (index,) = [m for m in summary.metadata_indexes if m.name == "simclock"]
    name_at = index.offset + 1 + 8 + 4  # opcode, record length, name length
    assert data[name_at : name_at + 8] == b"simclock"
    renamed.write_bytes(data[: name_at + 7] + b"K" + data[name_at + 8 :])
    assert renamed.read_bytes() != data
    with pytest.raises(RecordingError, match=r"^.*renamed\.mcap: offset \d+: "):
        ReplayClock(renamed)
    # The header profile says simclock; a foreign profile with simclock metadata is refused too.
    at = data.index(b"\x08\x00\x00\x00simclock", 8)
    assert at < 40  # the header's profile, not a metadata name
    other = tmp_path / "profile.mcap"
    other.write_bytes(data[:at] + b"\x08\x00\x00\x00simclocX" + data[at + 12 :])
    with pytest.raises(
        RecordingError,
        match=r"^.*profile\.mcap: offset \d+: the header profile is 'simclocX' but the file has a "
        r"'simclock' metadata record; a simclock recording has both \(the file is damaged\)$",
    ):
        ReplayClock(other)
