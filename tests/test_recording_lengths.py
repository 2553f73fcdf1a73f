"""C-REP-6: a damaged length field is refused with the file and the offset, never allocated.

Every length field of every record of small recordings (simclock's own, with
each chunk compression, and a foreign file with an attachment) is overwritten
with values that do not fit (all ones, 3 GiB, the bytes left plus one, one
more, one less, zero) and the file is read as replay reads it. The fuzz runs
in a child process whose address space is limited to 1 GiB
(``resource.setrlimit(RLIMIT_AS)``): a length trusted before it is checked
against the bytes that remain shows as a ``MemoryError`` there. The length
fields are found by this file's own walk of the MCAP layout (the MCAP
specification's record table), not by the reader under test.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LIMIT_BYTES = 1 << 30

# One MCAP record's fields, per opcode, as the specification lists them:
# "u8"/"u16"/"u32"/"u64" fixed integers, "str" (u32 length + UTF-8), "map"
# (u32 byte length + entries), "b32"/"b64" (u32/u64 length + bytes), "rest".
_LAYOUT: dict[int, tuple[str, ...]] = {
    0x01: ("str", "str"),  # Header: profile, library
    0x02: ("u64", "u64", "u32"),  # Footer
    0x03: ("u16", "str", "str", "b32"),  # Schema
    0x04: ("u16", "u16", "str", "str", "map"),  # Channel
    0x05: ("u16", "u32", "u64", "u64", "rest"),  # Message
    0x06: ("u64", "u64", "u64", "u32", "str", "b64"),  # Chunk
    0x07: ("u16", "map"),  # MessageIndex: channel id, records (u32 byte length)
    0x08: ("u64", "u64", "u64", "u64", "map", "u64", "str", "u64", "u64"),  # ChunkIndex
    0x09: ("u64", "u64", "str", "str", "b64", "u32"),  # Attachment
    0x0A: ("u64", "u64", "u64", "u64", "u64", "str", "str"),  # AttachmentIndex
    0x0B: ("u64", "u16", "u32", "u32", "u32", "u32", "u64", "u64", "map"),  # Statistics
    0x0C: ("str", "map"),  # Metadata
    0x0D: ("u64", "u64", "str"),  # MetadataIndex
    0x0E: ("u8", "u64", "u64"),  # SummaryOffset
    0x0F: ("u32",),  # DataEnd
}
_NAMES = {
    0x01: "Header", 0x02: "Footer", 0x03: "Schema", 0x04: "Channel", 0x05: "Message",
    0x06: "Chunk", 0x07: "MessageIndex", 0x08: "ChunkIndex", 0x09: "Attachment",
    0x0A: "AttachmentIndex", 0x0B: "Statistics", 0x0C: "Metadata", 0x0D: "MetadataIndex",
    0x0E: "SummaryOffset", 0x0F: "DataEnd",
}  # fmt: skip
_WIDTH = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}
# Size fields of a record that say how many bytes something holds (beside the
# length prefixes): a Chunk's uncompressed size, a ChunkIndex's chunk length,
# message index length, compressed and uncompressed sizes, an index's length.
_SIZES: dict[int, tuple[int, ...]] = {0x06: (2,), 0x08: (3, 5, 7, 8), 0x0A: (1, 4), 0x0D: (1,)}


def length_fields(data: bytes) -> Iterator[tuple[str, int, int]]:
    """``(what, offset, width)`` of every length field of the file (chunk contents when plain)."""
    yield from _walk(data, 8, len(data) - 8, "")


def _walk(data: bytes, pos: int, end: int, inside: str) -> Iterator[tuple[str, int, int]]:
    while pos + 9 <= end:
        opcode, length = struct.unpack_from("<BQ", data, pos)
        name = f"{inside}{_NAMES.get(opcode, hex(opcode))}@{pos}"
        yield f"{name} record length", pos + 1, 8
        field = pos + 9
        for index, kind in enumerate(_LAYOUT.get(opcode, ())):
            if kind in _WIDTH:
                if index in _SIZES.get(opcode, ()):
                    yield f"{name} field {index} (size)", field, _WIDTH[kind]
                field += _WIDTH[kind]
            elif kind == "rest":
                break
            else:
                width = 8 if kind == "b64" else 4
                (size,) = struct.unpack_from("<Q" if width == 8 else "<I", data, field)
                yield f"{name} field {index} ({kind} length)", field, width
                if kind == "map" and opcode in (0x04, 0x0C):  # str -> str entries
                    entry = field + 4
                    while entry < field + 4 + size:
                        for _ in range(2):
                            yield f"{name} map entry at {entry} length", entry, 4
                            entry += 4 + struct.unpack_from("<I", data, entry)[0]
                if opcode == 0x06 and index == 5 and data[pos + 9 + 28 : pos + 9 + 32] == b"\0" * 4:
                    body = field + 8  # a plain chunk: its records' length fields too
                    yield from _walk(data, body, body + size, f"{name} > ")
                field += width + size
        pos += 9 + length


def _mutations(value: int, width: int, left: int) -> list[int]:
    top = (1 << (8 * width)) - 1
    wanted = {top, min(3 << 30, top), min(left + 1, top), value + 1, value - 1, 0}
    return sorted(v for v in wanted if 0 <= v <= top and v != value)


def _small_recording(path: Path, compression: str) -> None:
    from simclock import Bus, HeapSimClock, Recorder

    bus = Bus()
    with Recorder(
        path, bus, seed=3, record_draws=True, metadata={"scenario": "len"}, compression=compression
    ) as rec:
        clock = HeapSimClock(3, bus=bus, draw_observer=rec.draw_observer)
        noise = clock.random_source().child("n")
        clock.schedule_periodic(4, lambda: bus.publish("/a", {"x": noise.uniform(0.0, 1.0)}))
        clock.schedule(6, lambda: bus.publish("/b", [1, 2]))
        clock.advance(12)


def _foreign_file(path: Path) -> None:
    from mcap.writer import CompressionType, Writer

    with path.open("wb") as f:
        writer = Writer(f, compression=CompressionType.NONE)
        writer.start(profile="", library="other writer")
        schema = writer.register_schema("S", "jsonschema", b"{}")
        channel = writer.register_channel("/x", "json", schema, {"k": "v"})
        for stamp in range(3):
            writer.add_message(channel, stamp, b'{"n": %d}' % stamp, stamp)
        writer.add_attachment(1, 2, "note.txt", "text/plain", b"hello")
        writer.add_metadata("site", {"room": "lab"})
        writer.finish()  # type: ignore[no-untyped-call]


def _read_all(path: Path) -> str:
    """What replay shows of the file (messages, draws, info); ``RecordingError`` if refused."""
    from dataclasses import replace

    from simclock import RecordingReader, ReplayClock

    with RecordingReader(path) as reader:
        seen: list[Any] = [m.__dict__ if hasattr(m, "__dict__") else m for m in reader.messages()]
        for label in reader.info.draw_labels:
            seen.append(list(reader.draws(label)))
        seen.append(replace(reader.info, path=""))
        simclock = reader.is_simclock
    if simclock:
        with ReplayClock(path) as clock:
            got: list[Any] = []
            clock.bus.subscribe(None, got.append)
            clock.advance(clock.end_ns() - clock.now_ns())
            seen.append(got)
    return repr(seen)


def fuzz(directory: Path) -> dict[str, Any]:
    """Every mutation of every length field of the sample files: what reading each gave."""
    samples = {}
    for compression in ("none", "zstd", "lz4"):
        samples[f"simclock-{compression}"] = directory / f"own-{compression}.mcap"
        _small_recording(samples[f"simclock-{compression}"], compression)
    samples["foreign"] = directory / "foreign.mcap"
    _foreign_file(samples["foreign"])
    intact = {sample: _read_all(path) for sample, path in samples.items()}
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))
    from simclock import RecordingError

    results: list[dict[str, Any]] = []
    for sample, path in samples.items():
        data = path.read_bytes()
        damaged = directory / f"damaged-{sample}.mcap"
        for what, at, width in length_fields(data):
            fmt = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}[width]
            (value,) = struct.unpack_from(fmt, data, at)
            for new in _mutations(value, width, len(data) - at - width):
                copy = bytearray(data)
                struct.pack_into(fmt, copy, at, new)
                damaged.write_bytes(bytes(copy))
                case = {"sample": sample, "field": what, "value": new}
                try:
                    same = _read_all(damaged) == intact[sample]
                    case["outcome"] = "read as intact" if same else "read differently"
                except RecordingError as exc:
                    case["outcome"] = "RecordingError"
                    case["message"] = str(exc)
                except MemoryError:
                    case["outcome"] = "MemoryError"
                except Exception as exc:  # reported, then failed on by the test
                    case["outcome"] = f"{type(exc).__name__}: {exc}"
                results.append(case)
    return {"path": str(directory), "cases": results}


def test_C_REP_6_every_damaged_length_is_refused_within_1_GiB(tmp_path: Path) -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    code = (
        "import json, sys; from pathlib import Path; import test_recording_lengths as t; "
        "print(json.dumps(t.fuzz(Path(sys.argv[1]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        cwd=Path(__file__).parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cases = json.loads(done.stdout)["cases"]
    by_sample: dict[str, int] = {}
    for case in cases:
        by_sample[case["sample"]] = by_sample.get(case["sample"], 0) + 1
    assert set(by_sample) == {"simclock-none", "simclock-zstd", "simclock-lz4", "foreign"}
    assert min(by_sample.values()) > 100, by_sample
    # A simclock recording: every damaged length is refused, naming the file and offset.
    own = [c for c in cases if c["sample"] != "foreign"]
    bad = [c for c in own if c["outcome"] != "RecordingError"]
    assert bad == [], f"{len(bad)} of {len(own)} cases not refused: {bad[:20]}"
    # A foreign file: refused the same way, or (a record replay never reads: an
    # attachment, a message index, bytes MCAP lets a reader skip) read as intact.
    # A shorter library name leaves bytes after the Header's last field: MCAP lets a
    # reader skip those (fields a newer writer added), so another library is read.
    foreign = [c for c in cases if c["sample"] == "foreign"]
    bad = [
        c
        for c in foreign
        if c["outcome"] not in ("RecordingError", "read as intact")
        and not (c["field"] == "Header@8 field 1 (str length)" and c["value"] < 12)
    ]
    assert bad == [], bad[:20]
    refused = [c for c in cases if c["outcome"] == "RecordingError"]
    assert len(refused) > 0.95 * len(cases)
    pattern = re.compile(rf"^{re.escape(str(tmp_path))}/damaged-[a-z0-9-]+\.mcap: offset \d+: .+$")
    for case in refused:
        assert pattern.match(case["message"]), case
        assert case["message"].startswith(f"{tmp_path}/damaged-{case['sample']}.mcap: "), case


if __name__ == "__main__":  # pragma: no cover - a manual run: print every case
    out = fuzz(Path(sys.argv[1]))
    for c in out["cases"]:
        if c["outcome"] not in ("RecordingError", "read as intact"):
            print(c)
    print(len(out["cases"]), "cases")
