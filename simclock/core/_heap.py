"""The core's priority queue: live and cancelled entries ordered by ``(at, seq)``.

Contract: :func:`pop_due` returns entries in strictly increasing ``(at, seq)``
order, whatever the push order; ``seq`` is unique per clock, so equal times
leave in push order (C-TIE-1) and the comparison never reaches an entry's
callback. :func:`push` and :func:`pop_due` are O(log n), :func:`top` is O(1),
:func:`entries` and :func:`rebuild` are O(n).

Two representations behind one interface, chosen when this module is loaded
(C-NATIVE-1):

* compiled by mypyc (the default build), the list holds the entries
  themselves and the sifts below compare their native ``at``/``seq`` ints:
  no tuple per push, no rich comparison, no allocation when a periodic entry
  is re-pushed. This is what puts the compiled core ahead of a bare ``heapq``
  loop of ``(at, seq, cb)`` tuples (``benchmarks/scheduler.py``).
* as pure Python, a sift written in Python would be ~2.5x slower than
  ``heapq``'s C one, so the same names are bound to ``heapq`` over
  ``(at, seq, entry)`` tuples instead (the representation the core always had).

Callers only use the functions here and ``len(heap)``; they never index the
list, so neither representation leaks. The oracle state machine and the
conformance suite run on both builds (``make test``).
"""

from __future__ import annotations

import heapq
import types
from typing import Any, Final

from mypy_extensions import i64

from simclock.core._entry import _Entry

__all__ = ["entries", "pop_due", "push", "rebuild", "top"]


def push(heap: list[_Entry], entry: _Entry, at: int, seq: int) -> None:
    """Put ``entry`` in the heap with key ``(at, seq)`` (stored on the entry). O(log n)."""
    entry.at = at
    entry.seq = seq
    heap.append(entry)
    _sift_up(heap, 0, len(heap) - 1, entry)


# Positions are i64: native machine ints when compiled (a list never has 2**63 items).


def _sift_up(heap: list[_Entry], start: i64, pos: i64, entry: _Entry) -> None:
    """Put ``entry`` in slot ``pos``, moving smaller-keyed parents down, never above ``start``."""
    at = entry.at
    seq = entry.seq
    while pos > start:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        parent_at = parent.at
        if at < parent_at or (at == parent_at and seq < parent.seq):
            heap[pos] = parent
            pos = parent_pos
        else:
            break
    heap[pos] = entry


def _sift_leafward(heap: list[_Entry], pos: i64, entry: _Entry) -> None:
    """Fill the hole at ``pos`` with ``entry``, re-establishing the heap below (``heapq._siftup``).

    Bottom-up: the smaller child moves up until a leaf is reached, then
    ``entry`` sifts up from there; fewer comparisons on average than stopping
    early, since an entry taken from the end usually belongs near the leaves.
    Each slot is read once.
    """
    end: i64 = len(heap)
    start = pos
    child = 2 * pos + 1
    while child < end:
        smaller = heap[child]
        right = child + 1
        if right < end:
            other = heap[right]
            other_at = other.at
            smaller_at = smaller.at
            if other_at < smaller_at or (other_at == smaller_at and other.seq < smaller.seq):
                child = right
                smaller = other
        heap[pos] = smaller
        pos = child
        child = 2 * pos + 1
    _sift_up(heap, start, pos, entry)


def pop_due(heap: list[_Entry], limit: int) -> _Entry | None:
    """Remove and return the smallest entry if its ``at <= limit``, else ``None``. O(log n).

    One call per firing (test and pop together) keeps the pure build at one
    Python call per entry, as the loop it replaced.
    """
    if not heap:
        return None
    first = heap[0]
    if first.at > limit:
        return None
    last = heap.pop()
    if heap:
        _sift_leafward(heap, 0, last)
    return first


def top(heap: list[_Entry]) -> _Entry:
    """The smallest entry, left in place (the heap must not be empty)."""
    return heap[0]


def entries(heap: list[_Entry]) -> list[_Entry]:
    """Every entry in the heap (live and tombstones), in heap-array order."""
    return list(heap)


def rebuild(heap: list[_Entry], keep: list[_Entry]) -> None:
    """Replace the heap's contents, in place, by ``keep`` (keys already set). O(n).

    In place because a running ``_fire`` holds a reference to the list.
    """
    heap[:] = keep
    pos: i64 = len(heap) // 2 - 1
    while pos >= 0:
        _sift_leafward(heap, pos, heap[pos])
        pos -= 1


# -- the pure build: heapq over (at, seq, entry) tuples ---------------------------


def _tuple_push(heap: list[Any], entry: _Entry, at: int, seq: int) -> None:
    entry.at = at
    entry.seq = seq
    heapq.heappush(heap, (at, seq, entry))


def _tuple_pop_due(heap: list[Any], limit: int) -> _Entry | None:
    if heap and heap[0][0] <= limit:
        entry: _Entry = heapq.heappop(heap)[2]
        return entry
    return None


def _tuple_top(heap: list[Any]) -> _Entry:
    entry: _Entry = heap[0][2]
    return entry


def _tuple_entries(heap: list[Any]) -> list[_Entry]:
    return [item[2] for item in heap]


def _tuple_rebuild(heap: list[Any], keep: list[_Entry]) -> None:
    heap[:] = [(entry.at, entry.seq, entry) for entry in keep]
    heapq.heapify(heap)


def _is_compiled() -> bool:
    """True when this module runs as mypyc-compiled code (its functions are not ``function``)."""
    return not isinstance(_is_compiled, types.FunctionType)


COMPILED: Final = _is_compiled()
"""Whether this module (and so the heap representation) is the compiled one."""

if not COMPILED:
    # The pure build. Compiled callers call the native functions above directly
    # and never see these names; interpreted callers bind them at import time.
    globals().update(
        push=_tuple_push,
        pop_due=_tuple_pop_due,
        top=_tuple_top,
        entries=_tuple_entries,
        rebuild=_tuple_rebuild,
    )
