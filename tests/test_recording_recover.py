"""C-REP-7: ``simclock recover`` saves every complete chunk of a recording killed mid-run.

A subprocess records a deterministic run and is SIGKILLed at several moments
(before the first chunk, after a few chunks, after many). The chunks the
official reader can read completely from the cut file are the ones that must
be saved: the recovered file replays exactly those bus messages (a prefix of
the full run), with the run's seed, user metadata and draws, a fingerprint
over what was kept, and a report of what was lost in its metadata.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcap.records import Channel
from mcap.records import Message as McapMessage
from mcap.stream_reader import StreamReader

from simclock import (
    Bus,
    HeapSimClock,
    Message,
    Recorder,
    RecordingError,
    RecoveryReport,
    ReplayClock,
    trace_fingerprint,
)
from simclock.cli._main import main
from simclock.recording import recover

_CHILD = """
import os
import sys
import time
from simclock import Bus, HeapSimClock, Recorder

def run(out, steps, announce):
    bus = Bus()
    rec = Recorder(out, bus, seed=5, record_draws=True, chunk_size=2048,
                   metadata={"run": "kill"})
    clock = HeapSimClock(5, bus=bus, draw_observer=rec.draw_observer)
    noise = clock.random_source().child("n")
    clock.schedule_periodic(
        10, lambda: bus.publish("/a", {"k": clock.now_ns(), "x": noise.uniform(0.0, 1.0)})
    )
    announce("started")
    if os.environ.get("PAUSE_AFTER_START"):
        time.sleep(60)  # killed here: nothing but the header and the start record
    for k in range(1, steps + 1):
        clock.advance(1000)
        announce(str(k))
    rec.close()

if __name__ == "__main__":
    run(sys.argv[1], 10_000, lambda line: print(line, flush=True))
"""


def _complete_chunk_messages(path: Path) -> list[tuple[str, int, Any]]:
    """Bus messages of every chunk the official reader reads completely from ``path``."""
    channels: dict[int, Channel] = {}
    out: list[tuple[str, int, Any]] = []
    with path.open("rb") as f:
        try:
            for record in StreamReader(f, validate_crcs=True).records:
                if isinstance(record, Channel):
                    channels[record.id] = record
                elif isinstance(record, McapMessage):
                    channel = channels[record.channel_id]
                    if channel.metadata.get("simclock.kind") == "json":
                        env = json.loads(record.data)
                        out.append((channel.topic, record.log_time, env["sequence"]))
        except Exception:
            pass
    return out


def _kill_at(tmp_path: Path, moment: str) -> Path:
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    cut = tmp_path / f"cut-{moment}.mcap"
    env = {**os.environ, "PAUSE_AFTER_START": "1" if moment == "started" else ""}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(cut)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == moment:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return cut


def _live(steps: int, tmp_path: Path) -> tuple[list[Message], list[float]]:
    namespace: dict[str, Any] = {}
    exec(compile(_CHILD, "child", "exec"), namespace)
    bus_messages: list[Message] = []
    real_bus = Bus

    class Spy(real_bus):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.subscribe(None, bus_messages.append)

    namespace["Bus"] = Spy
    namespace["run"].__globals__["Bus"] = Spy
    namespace["run"](str(tmp_path / "full.mcap"), steps, lambda _line: None)
    draws = [m.payload["x"] for m in bus_messages if m.topic == "/a"]
    return bus_messages, draws


@pytest.mark.parametrize("moment", ["started", "3", "17"])
def test_C_REP_7_recover_keeps_every_complete_chunk_of_a_killed_recording(
    tmp_path: Path, moment: str
) -> None:
    cut = _kill_at(tmp_path, moment)
    with pytest.raises(RecordingError, match=r"^.*cut-.*\.mcap: offset \d+: "):
        ReplayClock(cut)
    expected = _complete_chunk_messages(cut)
    out = tmp_path / "recovered.mcap"
    report = recover(cut, out)
    # One count for recover and info: the bus messages (the fingerprinted trace).
    assert report.kept_messages == len(expected)
    live, draws = _live(40, tmp_path)
    with ReplayClock(out) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        clock.advance(clock.end_ns() - clock.now_ns())
        info = clock.info
        kept_draws = [clock.random_source().child("n").uniform(0.0, 1.0) for _ in got]
    assert [(m.topic, m.stamp_ns, m.sequence) for m in got] == expected
    assert got == live[: len(got)]  # a prefix of the run, payloads and all
    assert kept_draws == draws[: len(got)]
    assert info.seed == 5 and dict(info.user_metadata) == {"run": "kill"}
    assert info.fingerprint == trace_fingerprint(got)
    recovered = json.loads(info.recovered)
    assert recovered["kept_messages"] == report.kept_messages == info.message_count == len(got)
    assert recovered["kept_draws"] == report.kept_draws
    assert recovered["kept_chunks"] == report.kept_chunks
    assert report.kept_until_ns == (got[-1].stamp_ns if got else None)
    # One draw per message, and at most one more whose message was cut off.
    assert len(got) <= report.kept_draws <= len(got) + 1
    assert recovered["source"] == cut.name
    if moment == "started":
        assert got == [] and report.kept_chunks == 0
    else:
        assert len(got) >= 100  # the kill came after whole chunks were written


def test_C_REP_7_cli_recover_prints_one_line_and_info_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = _kill_at(tmp_path, "5")
    out = tmp_path / "saved.mcap"
    assert main(["recover", str(cut), "-o", str(out)]) == 0
    line = capsys.readouterr().out
    with ReplayClock(out) as clock:
        info = clock.info
    report = json.loads(info.recovered)
    n, draws, chunks = info.message_count, report["kept_draws"], report["kept_chunks"]
    assert line == (
        f"recovered {out}: kept {n} bus messages and {draws} draws up to {info.end_ns} ns from "
        f"{chunks} complete chunks of {cut.name}; every complete chunk kept; messages the writer "
        f"never wrote to the file cannot be counted ({report['reason']})\n"
    )
    assert main(["info", str(out)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert (
        f"messages:    {n} bus messages (the fingerprinted trace; draws and /clock ticks not "
        f"counted), in 1 chunk (zstd)"
    ) in shown
    assert f"recovered:   {info.recovered}" in shown
    assert main(["recover", str(tmp_path / "child.py"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"simclock recover: error: {tmp_path / 'child.py'}: offset 0: not an MCAP file (no MCAP "
        "magic at the start); nothing to recover\n"
    )


def test_C_REP_7_recover_of_a_complete_recording_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "whole.mcap"
    bus = Bus()
    live: list[Message] = []
    bus.subscribe(None, live.append)
    with Recorder(path, bus, seed=1) as rec:
        clock = HeapSimClock(1, bus=bus)
        clock.schedule_periodic(3, lambda: bus.publish("/t", clock.now_ns()))
        clock.advance(30)
    out = tmp_path / "again.mcap"
    report = recover(path, out)
    assert report.reason == "the file was complete" and report.lost_bytes == 0
    with ReplayClock(out) as replay:
        got: list[Message] = []
        replay.bus.subscribe(None, got.append)
        replay.advance(replay.end_ns())
        assert replay.info.fingerprint == rec.fingerprint()
    assert got == live


@pytest.mark.parametrize("simclock_file", [True, False], ids=["simclock", "foreign"])
def test_C_REP_7_recover_writes_each_chunk_before_reading_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simclock_file: bool
) -> None:
    """Memory: at most one chunk's records are held; each is written as it is read."""
    from mcap.writer import CompressionType, Writer

    from simclock.recording import _recover

    cut = tmp_path / "cut.mcap"
    if simclock_file:
        live = tmp_path / "live.mcap"
        bus = Bus()
        rec = Recorder(live, bus, seed=5, chunk_size=2048)
        for k in range(3000):
            bus.publish("/a", {"k": k}, stamp_ns=k)
        rec.close()
        data = live.read_bytes()
    else:
        with (tmp_path / "foreign.mcap").open("wb") as f:
            writer = Writer(f, compression=CompressionType.ZSTD, chunk_size=2048)
            writer.start(profile="x", library="test")
            channel = writer.register_channel("/a", "json", 0, {})
            for k in range(3000):
                writer.add_message(channel, k, b'{"k": %d}' % k, k, k)
            writer.finish()  # type: ignore[no-untyped-call]
        data = (tmp_path / "foreign.mcap").read_bytes()
    cut.write_bytes(data[: len(data) * 3 // 4])
    events: list[tuple[str, int]] = []
    real_split = _recover.split_chunk  # type: ignore[attr-defined]

    def split(*args: Any) -> Any:
        records = real_split(*args)
        events.append(("read", sum(isinstance(r, McapMessage) for r in records)))
        return records

    monkeypatch.setattr(_recover, "split_chunk", split)
    target = Recorder if simclock_file else Writer
    method = "record" if simclock_file else "add_message"
    real_write = getattr(target, method)

    def write(self: Any, *args: Any, **kwargs: Any) -> Any:
        events.append(("write", 1))
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(target, method, write)
    report = recover(cut, tmp_path / "out.mcap")
    reads = [n for kind, n in events if kind == "read"]
    assert len(reads) == report.kept_chunks >= 10
    assert sum(n for kind, n in events if kind == "write") == report.kept_messages
    # Between two chunk reads, at most the previous chunk's messages are written: each
    # chunk is written before the next is read, so the writes are spread over the reads.
    held = 0
    for kind, n in events:
        if kind == "read":
            held = n
        else:
            held -= 1
            assert held >= 0
    first_write = events.index(("write", 1))
    assert first_write < len(events) // 10


@pytest.mark.parametrize(
    ("lost", "reason", "tail"),
    [
        ((0, 0, None), "the file was complete", "lost nothing (the file was complete)"),
        (
            (0, 0, None),
            "the file ends at offset 900 without a footer",
            "every complete chunk kept; messages the writer never wrote to the file cannot be "
            "counted (the file ends at offset 900 without a footer)",
        ),
        (
            (1, 120, 40),
            "the file is cut inside the record at offset 900",
            "lost 120 bytes (1 chunk), messages from 40 ns on; messages the writer never wrote "
            "to the file cannot be counted (the file is cut inside the record at offset 900)",
        ),
        (
            (2, 300, 20),
            "the file was complete",
            "lost 300 bytes (2 chunks), messages from 20 ns on (the file was complete)",
        ),
    ],
)
def test_C_REP_7_recover_says_lost_nothing_only_of_a_complete_file(
    lost: tuple[int, int, int | None], reason: str, tail: str
) -> None:
    """A file never closed may have had messages in its writer's memory: no count of them exists."""
    lost_chunks, lost_bytes, lost_from_ns = lost
    report = RecoveryReport(
        "/runs/cut.mcap", "saved.mcap", True, 3, 30, lost_chunks, lost_bytes, 29,
        lost_from_ns, reason, kept_draws=31,
    )  # fmt: skip
    assert report.summary() == (
        "recovered saved.mcap: kept 30 bus messages and 31 draws up to 29 ns from 3 complete "
        f"chunks of cut.mcap; {tail}"
    )
