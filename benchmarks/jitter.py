"""Lateness and drift of periodic threads on the real clock (not a test; SPEC §4 C-SYS-2/3).

Three ways to run a callback every ``period``, each for ``--seconds`` on its own
thread while the main thread sleeps:

- ``periodic_thread``: ``simclock.schedule_periodic_thread`` (absolute deadlines,
  sleep then calibrated spin, missed deadlines skipped and counted);
- ``periodic_thread fifo``: the same with ``priority=50`` (the worker alone under
  ``SCHED_FIFO``); skipped with a note when the OS refuses (needs root or
  ``CAP_SYS_NICE``);
- ``periodic_thread spin=0``: the same thread without the spin (isolates what
  spinning buys and costs);
- ``naive_sleep``: ``while True: time.sleep(period); cb()``;
- ``sleep_to_deadline``: absolute deadlines ``start + k*period`` with
  ``time.sleep(deadline - now)`` and no spin (a late tick is fired at once,
  so misses come out as a burst).

Lateness is "when the callback started" minus "its nominal deadline" (the
naive loop's k-th tick is due at ``start + k*period``), recorded in a
``simclock.LatenessHistogram`` for all three (percentiles at most 1.6 % high,
max exact). Drift is the number of grid points the method lost: deadlines
passed by the end (``elapsed // period + 1``) minus those it handled (fired,
plus skipped for the periodic thread). CPU is process CPU time over wall time
(the main thread sleeps, so it is the worker's share of one core).

Usage::

    .venv/bin/python benchmarks/jitter.py                  # 5 s per run, 1 kHz and 200 Hz
    .venv/bin/python benchmarks/jitter.py --seconds 1      # quicker
    .venv/bin/python benchmarks/jitter.py --plot docs/jitter_hist.png
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import markdown_table

import simclock

NS_PER_S = 1_000_000_000
METHODS = (
    "periodic_thread",
    "periodic_thread fifo",
    "periodic_thread spin=0",
    "sleep_to_deadline",
    "naive_sleep",
)


@dataclass
class Result:
    method: str
    rate_hz: int
    fired: int
    skipped: int
    expected: int
    cpu: float
    hist: simclock.LatenessHistogram

    @property
    def drift(self) -> int:
        return self.expected - (self.fired + self.skipped)


def _histogram_from_buckets(
    buckets: tuple[tuple[int, int, int], ...], max_ns: int | None, count: int
) -> simclock.LatenessHistogram:
    """Rebuild a histogram from JitterStats buckets (each value at its bucket's low bound)."""
    hist = simclock.LatenessHistogram()
    for low, _high, n in buckets:
        for _ in range(n):
            hist.add(low)
    # The exact max is known; keep it exact in the rebuilt copy.
    if max_ns is not None and count:
        hist.max_ns = max_ns
    return hist


def run_periodic_thread(
    period: int, seconds: float, priority: int | None = None, spin_ns: int | None = None
) -> tuple[int, int, int, simclock.JitterStats]:
    clock = simclock.MonotonicClock(0)
    start = clock.now_ns()
    handle = simclock.schedule_periodic_thread(
        period, lambda: None, clock, priority=priority, spin_ns=spin_ns
    )
    time.sleep(seconds)
    end = clock.now_ns()
    handle.cancel()
    stats = handle.jitter()
    return start, end, stats.fired + stats.skipped, stats


def _run_worker(body: Callable[[threading.Event], None], seconds: float) -> None:
    stop = threading.Event()
    worker = threading.Thread(target=body, args=(stop,))
    worker.start()
    time.sleep(seconds)
    stop.set()
    worker.join()


def run_naive(period: int, seconds: float) -> tuple[int, int, simclock.LatenessHistogram]:
    hist = simclock.LatenessHistogram()
    bounds: list[int] = []

    def body(stop: threading.Event) -> None:
        start = time.monotonic_ns()
        bounds.append(start)
        k = 0
        while not stop.is_set():
            time.sleep(period / NS_PER_S)
            k += 1
            hist.add(max(0, time.monotonic_ns() - (start + k * period)))
        bounds.append(time.monotonic_ns())

    _run_worker(body, seconds)
    return bounds[0], bounds[1], hist


def run_sleep_to_deadline(
    period: int, seconds: float
) -> tuple[int, int, simclock.LatenessHistogram]:
    hist = simclock.LatenessHistogram()
    bounds: list[int] = []

    def body(stop: threading.Event) -> None:
        start = time.monotonic_ns()
        bounds.append(start)
        k = 0
        while not stop.is_set():
            deadline = start + k * period
            remaining = deadline - time.monotonic_ns()
            if remaining > 0:
                time.sleep(remaining / NS_PER_S)
            hist.add(max(0, time.monotonic_ns() - deadline))
            k += 1
        bounds.append(time.monotonic_ns())

    _run_worker(body, seconds)
    return bounds[0], bounds[1], hist


def measure(method: str, rate_hz: int, seconds: float) -> Result:
    period = NS_PER_S // rate_hz
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    if method.startswith("periodic_thread"):
        priority = 50 if method == "periodic_thread fifo" else None
        spin = 0 if method == "periodic_thread spin=0" else None
        start, end, _handled, stats = run_periodic_thread(period, seconds, priority, spin)
        hist = _histogram_from_buckets(stats.buckets, stats.max_ns, stats.fired)
        fired, skipped = stats.fired, stats.skipped
    elif method == "naive_sleep":
        start, end, hist = run_naive(period, seconds)
        fired, skipped = hist.count, 0
    else:
        start, end, hist = run_sleep_to_deadline(period, seconds)
        fired, skipped = hist.count, 0
    cpu = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    # Grid points 0..(end-start)//period had passed when the run stopped; the
    # last one may still have been in flight, so a drift of 1 is the stop, not drift.
    expected = (end - start) // period + 1
    return Result(method, rate_hz, fired, skipped, expected, cpu, hist)


def _us(ns: int | None) -> str:
    return "-" if ns is None else f"{ns / 1000:,.1f}"


def plot(results: list[Result], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rates = sorted({r.rate_hz for r in results}, reverse=True)
    fig, axes = plt.subplots(1, len(rates), figsize=(6 * len(rates), 4), squeeze=False)
    edges = np.logspace(-1, 6, 71)  # 0.1 µs .. 1 s, 10 bins per decade
    for ax, rate in zip(axes[0], rates, strict=True):
        for r in (r for r in results if r.rate_hz == rate):
            buckets = r.hist.buckets()
            values = np.array([max(low, 100) / 1000 for low, _, _ in buckets])
            weights = np.array([n for _, _, n in buckets], dtype=float)
            ax.hist(
                values,
                bins=edges,
                weights=weights / max(1, r.hist.count),
                histtype="step",
                linewidth=1.5,
                label=r.method,
            )
        ax.axvline(100, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("lateness (µs, log)")
        ax.set_ylabel("fraction of firings")
        ax.set_title(f"{rate} Hz")
        ax.legend(fontsize=8)
    fig.suptitle("Periodic-thread lateness (dotted: 100 µs target)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each run (5)")
    parser.add_argument("--rates", type=int, nargs="+", default=[1000, 200], help="Hz")
    parser.add_argument("--plot", type=Path, default=None, help="write a lateness histogram PNG")
    parser.add_argument(
        "--methods", nargs="+", choices=METHODS, default=list(METHODS), help="subset to run"
    )
    args = parser.parse_args(argv)

    methods = list(args.methods)
    if "periodic_thread fifo" in methods:
        try:
            run_periodic_thread(10**6, 0.001, priority=50)
        except simclock.SimclockRuntimeError as exc:
            print(f"periodic_thread fifo skipped: {exc}\n")
            methods.remove("periodic_thread fifo")
    results = [measure(m, rate, args.seconds) for rate in args.rates for m in methods]
    load = os.getloadavg()
    print(
        f"{args.seconds:g} s per run; load average {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f} "
        f"on {os.cpu_count()} CPUs\n"
    )
    rows = [
        [
            r.method,
            r.rate_hz,
            r.fired,
            r.skipped,
            r.expected,
            r.drift,
            _us(r.hist.percentile_ns(50)),
            _us(r.hist.percentile_ns(99)),
            _us(r.hist.max_ns if r.hist.count else None),
            f"{100 * r.cpu:.0f} %",
        ]
        for r in results
    ]
    header = [
        "method",
        "Hz",
        "fired",
        "skipped",
        "deadlines",
        "drift",
        "p50 µs",
        "p99 µs",
        "max µs",
        "CPU",
    ]
    print(markdown_table(header, rows))
    for r in results:
        if r.method in ("periodic_thread", "periodic_thread fifo") and r.rate_hz == 1000:
            p99 = r.hist.percentile_ns(99)
            met = p99 is not None and p99 <= 100_000 and r.drift <= 1
            verdict = "met" if met else "NOT met"
            print(f"\n{r.method}, 1 kHz target (p99 <= 100 µs, no drift): {verdict}")
    if args.plot is not None:
        plot(results, args.plot)
        print(f"histogram written to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
