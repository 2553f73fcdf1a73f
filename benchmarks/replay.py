"""Recording and replay throughput against the official ``mcap`` reader/writer (issue 6).

In one process and one run:

* **replay, simclock recording**: ``ReplayClock`` delivering every message of a
  Recorder file to one subscriber, vs the official reader iterating the same
  file in log-time order (``iter_messages(log_time_order=True)``) and decoding
  each JSON message (what a reader user needs to get the payloads). Target
  >= 1.2x.
* **replay, foreign file**: the same messages written by a bare ``mcap``
  Writer (chunked, plain JSON, no sequence): ``ReplayClock`` vs the same reader
  loop. Target >= 0.8x.
* **record**: ``Recorder.record`` (canonical JSON envelope, fingerprint,
  ``/clock`` at each new stamp) vs a bare ``mcap`` Writer loop
  (``json.dumps`` + ``add_message``) writing the same messages. Target >= 0.7x.
* **memory**: peak RSS of a fresh process replaying a 100 000-message and a
  1 000 000-message file: a Recorder file and an unchunked foreign file
  (``--quick`` skips it).

Ratios are throughput ratios (higher is better for simclock); best of 3 with
the GC off during each timed call. Usage: ``python benchmarks/replay.py
[--messages N] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcap.reader import make_reader
from mcap.writer import Writer

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, markdown_table

from simclock import Bus, Message, Recorder, ReplayClock

TOPICS = ("/imu", "/odom", "/joint_states", "/cmd")
PER_STAMP = len(TOPICS)  # a 1 kHz loop publishing on four topics
STEP_NS = 1_000_000


def make_messages(n: int) -> list[Message]:
    """``n`` bus messages: four topics per 1 ms step, small robotics-like payloads."""
    out = []
    for i in range(n):
        stamp = (i // PER_STAMP) * STEP_NS
        k = i % PER_STAMP
        payload: Any
        if k == 0:
            payload = {"acc": [0.01 * i, -9.81, 0.5], "gyro": [0.1, 0.2, 0.3], "t": stamp}
        elif k == 1:
            payload = {"x": 0.001 * i, "y": 2.0, "yaw": 0.25, "v": 1.5}
        elif k == 2:
            payload = {"position": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "name": "arm"}
        else:
            payload = [i, 0.5]
        out.append(Message(TOPICS[k], stamp, i, payload))
    return out


def record(path: Path, messages: list[Message]) -> None:
    """Write ``messages`` with the Recorder (as a bus subscriber would)."""
    with Recorder(path, Bus(), seed=0) as rec:
        for message in messages:
            rec.record(message)


def bare_write(path: Path, messages: list[Message], *, chunked: bool = True) -> None:
    """Write the same messages with a bare mcap Writer loop."""
    with path.open("wb") as f:
        writer = Writer(f, use_chunking=chunked)
        writer.start()
        schema = writer.register_schema("any", "jsonschema", b"{}")
        channels = {t: writer.register_channel(t, "json", schema) for t in TOPICS}
        dumps = json.dumps
        for m in messages:
            writer.add_message(
                channels[m.topic], m.stamp_ns, dumps(m.payload).encode(), m.stamp_ns, m.sequence
            )
        writer.finish()  # type: ignore[no-untyped-call]


def replay(path: Path) -> int:
    """Deliver every message of ``path`` to one subscriber; return the count."""
    count = 0

    def sink(_m: Message) -> None:
        nonlocal count
        count += 1

    with ReplayClock(path) as clock:
        clock.bus.subscribe(None, sink)
        clock.advance(clock.end_ns() - clock.now_ns())
    return count


def reader_loop(path: Path) -> int:
    """The official reader in log-time order, decoding each JSON message."""
    count = 0
    loads = json.loads
    with path.open("rb") as f:
        for _schema, channel, message in make_reader(f).iter_messages(log_time_order=True):
            if channel.message_encoding == "json":
                loads(message.data)
                count += 1
    return count


def peak_rss_kib(path: Path) -> int:
    """Peak RSS (KiB) of a fresh process that replays ``path``.

    Read from ``VmHWM`` in ``/proc/self/status``, the high-water mark of the
    process's own memory: ``ru_maxrss`` would also count the parent's RSS at
    fork time, since Linux carries it across ``exec``.
    """
    code = (
        "import sys; sys.path.insert(0, sys.argv[2]);"
        "from replay import replay; from pathlib import Path;"
        "n = replay(Path(sys.argv[1]));"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0];"
        "print(n, hwm.split()[1])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), str(Path(__file__).resolve().parent)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.split()[1])


def main() -> int:
    """Run every comparison and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="skip the 1 000 000-message RSS run")
    args = parser.parse_args()
    n = args.messages
    messages = make_messages(n)
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        own = Path(tmp) / "own.mcap"
        foreign = Path(tmp) / "foreign.mcap"
        t_rec = best_of(lambda: record(own, messages))
        t_bare = best_of(lambda: bare_write(foreign, messages))
        assert replay(own) == n and reader_loop(foreign) == n
        t_own = best_of(lambda: replay(own))
        t_own_reader = best_of(lambda: reader_loop(own))
        t_foreign = best_of(lambda: replay(foreign))
        t_foreign_reader = best_of(lambda: reader_loop(foreign))

        def rate(t: float) -> str:
            return f"{n / t / 1000:.0f} k msg/s"

        rows.append(
            (
                "replay, simclock recording",
                rate(t_own),
                rate(t_own_reader),
                f"{t_own_reader / t_own:.2f}x",
            )
        )
        rows.append(
            (
                "replay, foreign file",
                rate(t_foreign),
                rate(t_foreign_reader),
                f"{t_foreign_reader / t_foreign:.2f}x",
            )
        )
        rows.append(("record", rate(t_rec), rate(t_bare), f"{t_bare / t_rec:.2f}x"))
        print(f"{n} messages, {len(TOPICS)} topics, {PER_STAMP} messages per stamp; best of 3")
        print(
            markdown_table(("comparison", "simclock", "mcap baseline", "simclock / baseline"), rows)
        )
        if not args.quick:
            print()
            mem_rows = []
            del messages
            for kind in ("simclock recording", "foreign, unchunked"):
                for size in (100_000, 1_000_000):
                    path = Path(tmp) / f"rss{size}.mcap"
                    if kind == "simclock recording":
                        record(path, make_messages(size))
                    else:
                        bare_write(path, make_messages(size), chunked=False)
                    mem_rows.append(
                        (
                            kind,
                            f"{size:,}",
                            f"{path.stat().st_size / 2**20:.1f} MiB",
                            f"{peak_rss_kib(path) / 1024:.1f} MiB",
                        )
                    )
                    path.unlink()
            header = ("file", "messages replayed", "file size", "peak RSS")
            print(markdown_table(header, mem_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
