"""The sampling-record scheduler in integer microseconds (SPEC §12).

Scope: `SamplingEvents` is the smallest form of simclock's ordering
contract. It runs **no callbacks**: ``run_until`` hands back plain records and
the caller decides what to do with them. It reads **no wall clock**: time moves
only when ``run_until`` is called, so ``now_us`` is simulation time. It gives
**no deadline guarantee**: a record says when a sample was due in simulation
time, not when any real hardware would take it. It is a teaching and reference
artefact; `simclock.HeapSimClock` is the full clock.

Errors (SPEC §12, followed to the letter): every refused argument raises
`simclock.SimclockValueError` (a ``ValueError``) whose message is the
bare word the SPEC fixes: ``time_us``, ``past_event``, ``past_stop``,
``sensor_id``, ``millivolts`` or ``token``. Unlike the rest of simclock, a
wrong *type* (``bool``, ``float``, ``str``, ``None``, ``numpy`` integers) is
also a ``ValueError`` here, not a ``TypeError``, because §12 says so; and the
messages do not quote the value, because §12 fixes them word for word. A
refused call changes nothing and consumes no token.

Where §12 is silent, the choices made here:

* ``run_until`` discards every tombstone that is at the root of the heap when
  it looks there, even one whose time is after the stop, so after
  ``run_until`` the root, if any, is always a live entry.
* There is no compaction: §12 keeps a cancelled entry until it reaches the
  root, so a long schedule/cancel churn without ``run_until`` grows the heap.
* ``sensor_id`` must be exactly a ``str`` (a ``str`` subclass is refused like
  any other type), matched in full (a trailing newline is refused).
"""

from __future__ import annotations

import heapq
import re
from typing import TypedDict

from simclock.core._errors import SimclockValueError

__all__ = [
    "MILLIVOLTS_MAX",
    "MILLIVOLTS_MIN",
    "SENSOR_ID_PATTERN",
    "SamplingEvents",
    "SamplingRecord",
]

MILLIVOLTS_MIN = -5000
"""Smallest accepted ``millivolts`` (inclusive, SPEC §12)."""
MILLIVOLTS_MAX = 5000
"""Largest accepted ``millivolts`` (inclusive, SPEC §12)."""
SENSOR_ID_PATTERN = "[A-Za-z][A-Za-z0-9_-]{0,15}"
"""A sensor id matches this in full: an ASCII letter, then up to 15 of ``[A-Za-z0-9_-]``."""

# re.ASCII so that no Unicode letter or digit can slip through a class, whatever
# the pattern grows into; fullmatch so that "S01\n" does not pass as "$" would.
_SENSOR_ID_RE = re.compile(SENSOR_ID_PATTERN, re.ASCII)


class SamplingRecord(TypedDict):
    """One due sample returned by `SamplingEvents.run_until` (a plain ``dict``)."""

    time_us: int
    token: int
    sensor_id: str
    millivolts: int


# A heap item. The token is unique, so tuple comparison is decided by
# (time_us, token) and never reaches the sensor id: ties go by insertion.
_Item = tuple[int, int, str, int]


def _refuse(word: str) -> SimclockValueError:
    return SimclockValueError(word)


def _check_time(value: object) -> int:
    # type() rather than isinstance(): bool is an int subclass, and §12 asks
    # for `type(x) is int`, which also refuses numpy integers.
    if type(value) is not int or value < 0:
        raise _refuse("time_us")
    return value


class SamplingEvents:
    """Deterministic record scheduler in integer microseconds (SPEC §12).

    ``schedule(at_us, sensor_id, millivolts) -> token`` queues a sample;
    ``cancel(token) -> bool`` withdraws it; ``run_until(stop_us)`` returns the
    due samples as records (``time_us``, ``token``, ``sensor_id``,
    ``millivolts``) and moves ``now_us`` to ``stop_us``.

    Order: tokens are 0, 1, 2, ... in insertion order (a refused call takes
    none); records come out by ``(time_us, token)``, so samples due at the same
    time come out in insertion order, never by sensor id.

    Errors: ``SimclockValueError`` with the bare §12 word as message (see the
    module docstring); a refused call changes nothing.

    Complexity: ``schedule`` O(log n); ``cancel`` O(1) (lazy: the entry stays
    in the heap as a tombstone until it reaches the root); ``run_until``
    O((k + d) log n) for k records returned and d tombstones discarded.
    """

    __slots__ = ("_heap", "_live", "_next_token", "_now")

    def __init__(self) -> None:
        self._now = 0
        # Invariant: _heap is a binary min-heap of (time_us, token, sensor_id, millivolts)
        #            items; tokens in it are unique and each < _next_token.
        # Invariant: _live is the set of tokens in _heap that were not cancelled;
        #            the other heap items are tombstones.
        # Invariant: every item in _heap has time_us >= _now (schedule refuses the
        #            past and run_until pops everything due up to the stop).
        # Invariant: a token leaves _live exactly once: by cancel or by being returned.
        self._heap: list[_Item] = []
        self._live: set[int] = set()
        self._next_token = 0

    # -- reading -------------------------------------------------------------

    @property
    def now_us(self) -> int:
        """Current simulation time in µs; starts at 0 and never decreases."""
        return self._now

    @property
    def pending_count(self) -> int:
        """Live (scheduled, not cancelled, not yet returned) entries."""
        return len(self._live)

    @property
    def physical_heap_count(self) -> int:
        """Entries physically in the heap, tombstones included (>= ``pending_count``)."""
        return len(self._heap)

    # -- changing ------------------------------------------------------------

    def schedule(self, at_us: int, sensor_id: str, millivolts: int) -> int:
        """Queue a sample of ``sensor_id`` at ``at_us``; return its token. O(log n).

        Validation order (SPEC §12): ``time_us`` (``at_us`` not a non-negative
        ``int``), then ``past_event`` (``at_us < now_us``; ``at_us == now_us``
        is allowed and is returned by the next ``run_until``), then
        ``sensor_id``, then ``millivolts`` (not an ``int`` in [-5000, 5000],
        ``bool`` refused). The first failing check raises; nothing changes.
        """
        at = _check_time(at_us)
        if at < self._now:
            raise _refuse("past_event")
        if type(sensor_id) is not str or _SENSOR_ID_RE.fullmatch(sensor_id) is None:
            raise _refuse("sensor_id")
        if type(millivolts) is not int or not MILLIVOLTS_MIN <= millivolts <= MILLIVOLTS_MAX:
            raise _refuse("millivolts")
        # The token is taken only after every check passed: a refused call consumes none.
        token = self._next_token
        self._next_token = token + 1
        heapq.heappush(self._heap, (at, token, sensor_id, millivolts))
        self._live.add(token)
        return token

    def cancel(self, token: int) -> bool:
        """Withdraw a live entry; ``True`` if it was live, else ``False``. O(1).

        A token that is not an ``int`` (``bool`` included) or is negative raises
        ``ValueError('token')``. Unknown (never issued), repeated and
        already-returned tokens return ``False``. Lazy (SPEC §12): the entry
        stays in the heap as a tombstone until ``run_until`` finds it at the root.
        """
        if type(token) is not int or token < 0:
            raise _refuse("token")
        if token in self._live:
            self._live.remove(token)
            return True
        return False

    def run_until(self, stop_us: int) -> list[SamplingRecord]:
        """Return every live entry with ``time_us <= stop_us`` by ``(time_us, token)``.

        ``stop_us`` is inclusive. ``ValueError('time_us')`` if ``stop_us`` is
        not a non-negative ``int``, ``ValueError('past_stop')`` if it is before
        ``now_us``; ``stop_us == now_us`` is allowed. Returned entries leave the
        heap, tombstones met at the root are discarded, and ``now_us`` becomes
        ``stop_us`` even when nothing was due. Splitting a run does not change
        it: ``run_until(a)`` then ``run_until(b)`` returns, concatenated, what
        ``run_until(b)`` alone would.
        """
        stop = _check_time(stop_us)
        if stop < self._now:
            raise _refuse("past_stop")
        heap = self._heap
        live = self._live
        out: list[SamplingRecord] = []
        while heap:
            time_us, token, sensor_id, millivolts = heap[0]
            if token in live:
                if time_us > stop:
                    break
                live.remove(token)
                out.append(
                    {
                        "time_us": time_us,
                        "token": token,
                        "sensor_id": sensor_id,
                        "millivolts": millivolts,
                    }
                )
            heapq.heappop(heap)
        self._now = stop
        return out

    # -- checking ------------------------------------------------------------

    def _check(self) -> None:
        """Assert every ``# Invariant:`` above; O(n), for tests only."""
        heap = self._heap
        n = len(heap)
        for i in range(1, n):
            assert heap[(i - 1) // 2] <= heap[i], f"heap order broken at index {i}"
        tokens = [item[1] for item in heap]
        assert len(set(tokens)) == n, "duplicate token in heap"
        assert all(0 <= t < self._next_token for t in tokens), "token never issued"
        assert self._live <= set(tokens), "live token missing from heap"
        assert all(item[0] >= self._now for item in heap), "heap item before now_us"
        assert self.pending_count <= self.physical_heap_count
