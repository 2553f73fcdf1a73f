"""Replay seek cost: ``ReplayClock.seek(t)`` against replaying up to ``t``.

Run: ``python benchmarks/seek.py [--periodics 64] [--repeat 3]``.

A Recorder file holds one message every 10 ms for 100 s (10 001 messages).
A ``ReplayClock(callbacks=True)`` gets ``--periodics`` control callbacks at
1 ms periods (phases spread over the millisecond) and one far one-shot, then
jumps ``D`` seconds forward, for D = 1, 10 and 100 s:

* **seek**: ``seek(start + D)``. Every periodic firing before the target is
  skipped, not run; the cost should not grow with the number of skipped
  firings (``P * D / 1 ms``), only with the number of entries moved;
* **advance** (the hand-written equivalent: replay from the start up to the
  target): ``advance(D - 1)``, which runs every one of those firings and
  delivers every message.

Both start from a fresh clock (construction not timed); best of ``--repeat``
with the GC off. The ratio is advance time / seek time in the same run.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import markdown_table

import simclock
from simclock import Bus, HeapSimClock, Recorder, ReplayClock

MS = 1_000_000
S = 1_000 * MS
SPAN_S = 100
EVERY_NS = 10 * MS


def make_recording(path: Path) -> None:
    """One ``/tick`` message every 10 ms for ``SPAN_S`` seconds, recorded live."""
    bus = Bus()
    with Recorder(path, bus, seed=1):
        clock = HeapSimClock(1, bus=bus)
        clock.schedule_periodic(EVERY_NS, lambda: bus.publish("/tick", clock.now_ns()))
        clock.advance(SPAN_S * S)


def _clock(path: Path, periodics: int) -> tuple[ReplayClock, list[int]]:
    clock = ReplayClock(path, callbacks=True)
    fired = [0]

    def tick() -> None:
        fired[0] += 1

    for i in range(periodics):
        clock.schedule_periodic(MS, tick, phase_ns=(i * MS) // periodics)
    clock.schedule(SPAN_S * S, tick)
    return clock, fired


def _timed(path: Path, periodics: int, distance: int, seek: bool, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        clock, fired = _clock(path, periodics)
        with clock:
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                if seek:
                    clock.seek(clock.now_ns() + distance)
                else:
                    clock.advance(distance - 1)
                best = min(best, time.perf_counter() - start)
            finally:
                gc.enable()
            # Cross-check: a seek runs nothing, an advance runs every periodic firing.
            expected = 0 if seek else periodics * (distance // MS)
            assert fired[0] == expected, (seek, fired[0], expected)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--periodics", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--distances", type=int, nargs="+", default=[1, 10, 100], help="seconds to jump"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "seek.mcap"
        make_recording(path)
        rows = []
        for d in args.distances:
            distance = d * S
            skipped = args.periodics * (distance // MS)
            t_seek = _timed(path, args.periodics, distance, True, args.repeat)
            t_adv = _timed(path, args.periodics, distance, False, max(1, args.repeat // 3))
            rows.append(
                [
                    f"{d} s",
                    f"{skipped:,}",
                    f"{t_seek * 1e3:.2f} ms",
                    f"{t_adv * 1e3:.0f} ms",
                    f"{t_adv / t_seek:,.0f}x",
                ]
            )
    print(
        f"periodics={args.periodics} (1 ms), recording {SPAN_S} s / one message per 10 ms, "
        f"simclock.COMPILED={simclock.COMPILED}, Python {sys.version.split()[0]}"
    )
    print(
        markdown_table(
            ["jump", "firings skipped", "seek", "advance (replay to there)", "advance / seek"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
