"""How late a periodic thread fires: ``LatenessHistogram`` and ``JitterStats`` (C-SYS-3).

Pure bookkeeping on integers of ns; no clock is read here. The periodic
threads of `simclock.realtime._realtime` record every firing's lateness
in a histogram and hand out `JitterStats` snapshots.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import safe_repr
from simclock.core._timeint import check_time_ns

__all__ = ["JitterStats", "LatenessHistogram", "no_jitter"]


class LatenessHistogram:
    """Counts of non-negative ns values in log-linear buckets (C-SYS-3).

    Values below 128 ns have a bucket each; above, each power of two is split
    into 64 buckets, so a percentile is the upper bound of its bucket and
    over-reports by at most 1/64 (1.6 %) of the value; ``max_ns`` and
    ``mean_ns`` are exact. Memory is O(log(max) * 64) whatever the run length,
    so a thread can record for hours. ``add`` is O(1); ``percentile_ns`` and
    ``buckets`` are O(buckets). Not thread-safe (the periodic thread guards it).
    """

    _SUB_BITS = 6
    _SUB = 1 << _SUB_BITS
    # Values of up to this many bits are counted (2**64 ns is 584 years); the bound
    # keeps bucket_bounds() from building a 2**70-bit int for a hostile index.
    MAX_VALUE_BITS = 1 << 12

    def __init__(self) -> None:
        self._counts: dict[int, int] = {}
        self.count = 0
        self.total_ns = 0
        self.max_ns = 0

    @classmethod
    def _index(cls, value: int) -> int:
        if value < 2 * cls._SUB:
            return value
        shift = value.bit_length() - (cls._SUB_BITS + 1)
        return 2 * cls._SUB + (shift - 1) * cls._SUB + ((value >> shift) - cls._SUB)

    @classmethod
    def bucket_bounds(cls, index: int) -> tuple[int, int]:
        """Inclusive ``(low_ns, high_ns)`` of bucket ``index``.

        ``index`` is an int in ``[0, max_index()]`` (``TypeError``/``ValueError``
        otherwise, before any big number is built).
        """
        if isinstance(index, bool) or not isinstance(index, int):
            raise SimclockTypeError(
                f"index must be an int, got {type(index).__name__} {safe_repr(index)}"
            )
        if not 0 <= index <= cls.max_index():
            raise SimclockValueError(
                f"index must be in [0, {cls.max_index()}], got {safe_repr(index)}"
            )
        if index < 2 * cls._SUB:
            return index, index
        shift, sub = divmod(index - 2 * cls._SUB, cls._SUB)
        shift += 1
        mantissa = sub + cls._SUB
        return mantissa << shift, ((mantissa + 1) << shift) - 1

    @classmethod
    def max_index(cls) -> int:
        """The bucket of the largest value `add` accepts (``2**MAX_VALUE_BITS - 1``)."""
        return cls._index((1 << cls.MAX_VALUE_BITS) - 1)

    def add(self, value_ns: int) -> None:
        """Record one value (int ns, ``0 <= value_ns < 2**MAX_VALUE_BITS``)."""
        if type(value_ns) is not int or value_ns < 0:
            value_ns = check_time_ns(value_ns, "value_ns")
        if value_ns.bit_length() > self.MAX_VALUE_BITS:
            raise SimclockValueError(
                f"value_ns must be below 2**{self.MAX_VALUE_BITS}, got {safe_repr(value_ns)}"
            )
        index = self._index(value_ns)
        self._counts[index] = self._counts.get(index, 0) + 1
        self.count += 1
        self.total_ns += value_ns
        self.max_ns = max(self.max_ns, value_ns)

    @property
    def mean_ns(self) -> int | None:
        """Exact mean rounded down, or ``None`` with no values."""
        return self.total_ns // self.count if self.count else None

    def percentile_ns(self, p: int | float | Fraction) -> int | None:
        """Nearest-rank ``p``-th percentile (``0 < p <= 100``), or ``None`` with no values."""
        if isinstance(p, bool) or not isinstance(p, int | float | Fraction):
            raise SimclockTypeError(
                f"p must be a number in (0, 100], got {type(p).__name__} {safe_repr(p)}"
            )
        # Compared exactly, never through float(): math.isfinite(10**400) overflows.
        if (isinstance(p, float) and math.isnan(p)) or not 0 < p <= 100:
            raise SimclockValueError(f"p must be in (0, 100], got {safe_repr(p)}")
        if not self.count:
            return None
        rank = math.ceil(Fraction(p) * self.count / 100)
        seen = 0
        for index in sorted(self._counts):
            seen += self._counts[index]
            if seen >= rank:
                return min(self.bucket_bounds(index)[1], self.max_ns)
        raise AssertionError("unreachable: rank <= count")  # pragma: no cover

    def buckets(self) -> tuple[tuple[int, int, int], ...]:
        """Non-empty buckets as ``(low_ns, high_ns, count)``, ascending."""
        return tuple((*self.bucket_bounds(i), self._counts[i]) for i in sorted(self._counts))


@dataclass(frozen=True, slots=True)
class JitterStats:
    """A snapshot of a periodic thread's timing (C-SYS-3, C-X-STATS).

    ``lateness`` is how long after its nominal deadline a firing started (its
    callback was called), in ns, always >= 0. ``p50_ns``/``p99_ns`` come from a
    `LatenessHistogram` (at most 1.6 % high), ``max_ns`` and ``mean_ns``
    are exact; all four are ``None`` before the first firing. ``overrun``
    counts firings whose callback returned after the next deadline (which is
    then fired late or skipped). ``deadlines`` is
    ``fired + skipped``: every grid point that has passed and been handled,
    so ``deadlines`` versus elapsed time over period is the drift check.
    ``spin_ns`` is the current calibrated busy-wait stretch. ``unreported``
    counts events that could not be published on the bus.
    ``buckets`` is the histogram: ``(low_ns, high_ns, count)`` tuples.
    """

    fired: int
    failed: int
    skipped: int
    overrun: int
    deadlines: int
    p50_ns: int | None
    p99_ns: int | None
    max_ns: int | None
    mean_ns: int | None
    spin_ns: int
    unreported: int
    buckets: tuple[tuple[int, int, int], ...]


def no_jitter() -> JitterStats:
    """The snapshot of a thread that has not fired: zero counts, no percentiles."""
    return JitterStats(0, 0, 0, 0, 0, None, None, None, None, 0, 0, ())
