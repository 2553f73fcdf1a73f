"""Shared helpers for the benchmark scripts (not tests; run by ``make bench``).

Benchmarks compare peers *in one process and one run* and report ratios, so
machine speed cancels out; absolute figures are printed for context only.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence

__all__ = ["best_of", "markdown_table"]


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best wall time in seconds of ``repeat`` calls of ``fn``, with GC off during each call."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
