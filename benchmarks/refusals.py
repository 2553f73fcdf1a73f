"""What a refusal costs: every hostile value the public API refuses, timed (issue 14).

Not a test (wall time depends on the machine and its load; the tests count
work instead, ``tests/test_public_api_hostile.py::test_refusals_cost_the_same_*``).
Every row of ``tests/hostile_api.py`` has each parameter replaced in turn by
each value of ``HOSTILE``; the calls that are refused (``TypeError``,
``ValueError``, ``RuntimeError``) are timed, best of ``--repeat``, setup
excluded. Printed: how many refusals, their median, 99th percentile and
maximum, and the slowest ones, each also as a ratio to two peers measured in
the same run: ``int("x")`` (the stdlib's own cheapest refusal) and
``pathlib.Path('/a' * 50000)`` (the stdlib's own work on the longest hostile
value, which any path-taking entry does before it can refuse). The issue's
bar is "no refusal takes more than a few milliseconds".

Run: ``.venv/bin/python benchmarks/refusals.py [--repeat 3] [--top 10]``.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _common import markdown_table
from hostile_api import CASES, HOSTILE, KNOWN_OPEN, Case, bind, is_huge_int, parameters


def time_refusal(case: Case, param: str, value: object, repeat: int) -> float | None:
    """Best wall time in seconds of refusing ``param=value``; None if the value is accepted."""
    best = float("inf")
    for _ in range(repeat):
        ctx = case.setup()
        fn = case.target(ctx)
        positional, keywords = bind(case, parameters(fn), {**case.valid(ctx), param: value})
        start = time.perf_counter()
        try:
            result = fn(*positional, **keywords)
        except (TypeError, ValueError, RuntimeError):
            best = min(best, time.perf_counter() - start)
            continue
        if case.cleanup is not None:
            case.cleanup(ctx, result)
        return None
    return best


def peer(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat * 10):
        start = time.perf_counter()
        with contextlib.suppress(ValueError):
            fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--top", type=int, default=10)
    opts = parser.parse_args()
    os.chdir(tempfile.mkdtemp(prefix="simclock-refusals-"))  # path-like values litter here
    load = os.getloadavg()
    rows: list[tuple[float, str]] = []
    for case in CASES:
        if case.name in KNOWN_OPEN:
            continue
        fn = case.target(case.setup())
        names = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in case.skip
        ]
        for param in names:
            for label, value in HOSTILE:
                if param in case.accepts_huge and is_huge_int(value):
                    continue
                seconds = time_refusal(case, param, value, opts.repeat)
                if seconds is not None:
                    rows.append((seconds, f"{case.name}({param}={label})"))
    int_peer = peer(lambda: int("x"), opts.repeat)
    long_text = "/a" * 50_000
    path_peer = peer(lambda: Path(long_text), opts.repeat)
    times = sorted(t for t, _ in rows)
    us = 1e6
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores shared)")
    print(
        f"{len(times)} refusals: median {statistics.median(times) * us:.1f} us, "
        f"p99 {times[int(0.99 * (len(times) - 1))] * us:.1f} us, max {times[-1] * us:.1f} us"
    )
    print(f"peers: int('x') {int_peer * us:.2f} us, Path('/a' * 50000) {path_peer * us:.1f} us\n")
    top = sorted(rows, reverse=True)[: opts.top]
    print(
        markdown_table(
            ["refusal", "us", "x int('x')", "x Path(long)"],
            [
                (name, f"{t * us:.1f}", f"{t / int_peer:.0f}", f"{t / path_peer:.2f}")
                for t, name in top
            ],
        )
    )


if __name__ == "__main__":
    main()
