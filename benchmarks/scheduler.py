"""Scheduler throughput: HeapSimClock vs a bare heapq loop, SimPy and stdlib ``sched``.

Run: ``.venv/bin/python benchmarks/scheduler.py [--n 200000] [--repeat 3]``
(``make bench`` runs it). Three workloads, identical for every peer, in one
process, so the printed ratios compare like with like:

(a) ``n`` one-shot callbacks at random integer times, then one drain;
(b) 105 periodic timers (periods 1-20 ms) until ``n`` firings;
(c) ``n`` one-shots scheduled, 90 % cancelled, then drained; for HeapSimClock
    the heap size is sampled after every cancel and must stay <= 2*live + 64.

Callbacks do the least possible work (count), so the figures measure the
scheduler, not the callback. ``sched`` has O(n) ``cancel`` (list.remove +
heapify), so on (c) it runs at n/10 and the figure is marked.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import sched
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import simpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, markdown_table

from simclock import HeapSimClock

MS = 1_000_000
PERIODS_MS = [1 + i % 20 for i in range(105)]


def one_shot_times(n: int) -> list[int]:
    """Deterministic random integer times in [0, 10 s)."""
    gen = np.random.Generator(np.random.PCG64(12345))
    return [int(t) for t in gen.integers(0, 10_000 * MS, size=n)]


def periodic_horizon(n: int) -> int:
    """Simulated ns at which the 105 timers have fired about ``n`` times together."""
    per_ns = sum(1 / (p * MS) for p in PERIODS_MS)
    return int(n / per_ns)


def cancel_mask(n: int) -> list[bool]:
    gen = np.random.Generator(np.random.PCG64(777))
    return [bool(x) for x in gen.random(n) < 0.9]


class Counter:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def tick(self) -> None:
        self.n += 1


# ---- (a) one-shots -----------------------------------------------------------


def a_heapsim(times: list[int]) -> int:
    c = Counter()
    clock = HeapSimClock(0)
    schedule, tick = clock.schedule, c.tick
    for t in times:
        schedule(t, tick)
    clock.advance(max(times))
    return c.n


def a_heapq(times: list[int]) -> int:
    c = Counter()
    heap: list[tuple[int, int, Callable[[], None]]] = []
    seq = itertools.count()
    tick = c.tick
    for t in times:
        heapq.heappush(heap, (t, next(seq), tick))
    now = 0
    pop = heapq.heappop
    while heap:
        now, _, cb = pop(heap)
        cb()
    assert now == max(times)
    return c.n


def a_simpy(times: list[int]) -> int:
    c = Counter()
    env = simpy.Environment()

    def cb(_event: object) -> None:
        c.n += 1

    for t in times:
        env.timeout(t).callbacks.append(cb)
    env.run()
    return c.n


def a_sched(times: list[int]) -> int:
    c = Counter()
    now = [0]

    def delay(d: float) -> None:
        now[0] += int(d)

    s = sched.scheduler(lambda: now[0], delay)
    for t in times:
        s.enterabs(t, 0, c.tick)
    s.run()
    return c.n


# ---- (b) periodics -----------------------------------------------------------


def b_heapsim(horizon: int) -> int:
    c = Counter()
    clock = HeapSimClock(0)
    for p in PERIODS_MS:
        clock.schedule_periodic(p * MS, c.tick)
    clock.advance(horizon)
    return c.n


def b_heapq(horizon: int) -> int:
    c = Counter()
    heap: list[tuple[int, int, int, Callable[[], None]]] = []
    seq = itertools.count()
    for p in PERIODS_MS:
        heapq.heappush(heap, (0, next(seq), p * MS, c.tick))
    pop, push = heapq.heappop, heapq.heappush
    while heap[0][0] <= horizon:
        at, _, period, cb = pop(heap)
        cb()
        push(heap, (at + period, next(seq), period, cb))
    return c.n


def b_simpy(horizon: int) -> int:
    c = Counter()
    env = simpy.Environment()

    def proc(period: int):  # type: ignore[no-untyped-def]
        while True:
            c.n += 1
            yield env.timeout(period)

    for p in PERIODS_MS:
        env.process(proc(p * MS))
    env.run(until=horizon + 1)
    return c.n


def b_sched(horizon: int) -> int:
    c = Counter()
    now = [0]

    def delay(d: float) -> None:
        now[0] += int(d)

    s = sched.scheduler(lambda: now[0], delay)

    def make(period: int) -> Callable[[], None]:
        def fire() -> None:
            c.n += 1
            nxt = now[0] + period  # now is this entry's own time: sched advanced to it
            if nxt <= horizon:
                s.enterabs(nxt, 0, fire)

        return fire

    for p in PERIODS_MS:
        s.enterabs(0, 0, make(p * MS))
    s.run()
    return c.n


# ---- (c) 90 % cancelled ---------------------------------------------------------


def c_heapsim(times: list[int], mask: list[bool], peak: list[int] | None = None) -> int:
    c = Counter()
    clock = HeapSimClock(0)
    handles = [clock.schedule(t, c.tick) for t in times]
    for h, cancel in zip(handles, mask, strict=True):
        if cancel:
            h.cancel()
            if peak is not None:
                # The bound the issue asks for, checked after every cancel.
                assert clock.heap_size() <= 2 * clock.pending_count() + 64
                peak[0] = max(peak[0], clock.heap_size() - clock.pending_count())
    clock.advance(max(times))
    return c.n


def c_heapq(times: list[int], mask: list[bool]) -> int:
    c = Counter()
    heap: list[tuple[int, int, list[object]]] = []
    seq = itertools.count()
    entries = []
    for t in times:
        e: list[object] = [True, c.tick]
        entries.append(e)
        heapq.heappush(heap, (t, next(seq), e))
    for e, cancel in zip(entries, mask, strict=True):
        if cancel:
            e[0] = False
    pop = heapq.heappop
    while heap:
        _, _, e = pop(heap)
        if e[0]:
            e[1]()  # type: ignore[operator]
    return c.n


def c_simpy(times: list[int], mask: list[bool]) -> int:
    # SimPy cannot cancel a timeout: the usual idiom is a flag checked on firing.
    c = Counter()
    env = simpy.Environment()
    alive = [True] * len(times)

    def make(i: int) -> Callable[[object], None]:
        def cb(_event: object) -> None:
            if alive[i]:
                c.n += 1

        return cb

    for i, t in enumerate(times):
        env.timeout(t).callbacks.append(make(i))
    for i, cancel in enumerate(mask):
        if cancel:
            alive[i] = False
    env.run()
    return c.n


def c_sched(times: list[int], mask: list[bool]) -> int:
    c = Counter()
    now = [0]

    def delay(d: float) -> None:
        now[0] += int(d)

    s = sched.scheduler(lambda: now[0], delay)
    events = [s.enterabs(t, 0, c.tick) for t in times]
    for ev, cancel in zip(events, mask, strict=True):
        if cancel:
            s.cancel(ev)
    s.run()
    return c.n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, repeat = args.n, args.repeat
    times = one_shot_times(n)
    horizon = periodic_horizon(n)
    mask = cancel_mask(n)
    small = n // 10
    expected_c = sum(1 for m in mask if not m)

    # Same work for every peer: check the counts before timing anything.
    counts_a = {f(times) for f in (a_heapsim, a_heapq, a_simpy, a_sched)}
    counts_b = {f(horizon) for f in (b_heapsim, b_heapq, b_simpy)}
    assert counts_a == {n}, counts_a
    assert len(counts_b) == 1, counts_b
    assert b_sched(horizon) in counts_b
    fired_b = counts_b.pop()
    peak = [0]
    assert c_heapsim(times, mask, peak) == expected_c
    assert {c_heapq(times, mask), c_simpy(times, mask)} == {expected_c}

    rows = []
    workloads: list[tuple[str, int, dict[str, Callable[[], int]]]] = [
        (
            "a one-shots",
            n,
            {
                "heapsim": lambda: a_heapsim(times),
                "heapq": lambda: a_heapq(times),
                "simpy": lambda: a_simpy(times),
                "sched": lambda: a_sched(times),
            },
        ),
        (
            "b periodics",
            fired_b,
            {
                "heapsim": lambda: b_heapsim(horizon),
                "heapq": lambda: b_heapq(horizon),
                "simpy": lambda: b_simpy(horizon),
                "sched": lambda: b_sched(horizon),
            },
        ),
        (
            "c 90% cancelled",
            n,
            {
                "heapsim": lambda: c_heapsim(times, mask),
                "heapq": lambda: c_heapq(times, mask),
                "simpy": lambda: c_simpy(times, mask),
            },
        ),
    ]
    results: dict[str, dict[str, float]] = {}
    for label, size, peers in workloads:
        results[label] = {peer: size / best_of(run, repeat) for peer, run in peers.items()}
    sched_c = best_of(lambda: c_sched(times[:small], mask[:small]), 1)
    results["c 90% cancelled"]["sched"] = small / sched_c

    for label, per in results.items():
        base = per["heapsim"]
        rows.append(
            [
                label,
                *(
                    f"{per[p] / 1e3:,.0f}k"
                    + (" (n/10)" if label.startswith("c") and p == "sched" else "")
                    for p in ("heapsim", "heapq", "simpy", "sched")
                ),
                f"{base / per['heapq']:.2f}x",
                f"{base / per['simpy']:.2f}x",
                f"{base / per['sched']:.2f}x",
            ]
        )
    header = [
        "workload",
        "HeapSimClock ev/s",
        "bare heapq ev/s",
        "SimPy ev/s",
        "sched ev/s",
        "vs heapq",
        "vs SimPy",
        "vs sched",
    ]
    print(
        f"n={n}, periodic firings={fired_b}, repeat={repeat} (best of), "
        f"Python {sys.version.split()[0]}"
    )
    print(markdown_table(header, rows))
    print(
        f"(c) peak tombstones in HeapSimClock heap: {peak[0]} "
        "(bound 2*live+64 held after every cancel)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
