"""The core's lazy-deletion priority queue: live items and tombstones ordered by ``(at, seq)``.

`LazyHeap` owns everything about lazy cancellation (C-CAN-4), as trio's
``Deadlines`` does for cancel scopes: the binary heap, the sequence counter that
makes keys unique (C-TIE-1), the tombstone count, compaction and its
``_check()``. A cancelled item stays in the heap as a tombstone until it
reaches the root (where `LazyHeap.pop_due` and `LazyHeap.peek`
drop it silently) or until tombstones outnumber live items, when the heap is
rebuilt in place. Callers never see a tombstone and never index the list.

What it orders are the core's entries (`simclock.core._entry`): their key
``(at, seq)``, set by `LazyHeap.push`, and their ``state``, whose only
meaning here is *0 = live, anything else = dead*. An entry knows its queue
only as the small `EntryQueue` interface it
reports its cancellation to, so this module imports the entries and nothing
imports it back.

Contract: `pop_due` returns live items in strictly increasing
``(at, seq)`` order whatever the push order; ``seq`` is unique per queue, so
equal times leave in push order and the comparison never reaches an item's
payload. ``push``/``pop_due`` are O(log n), ``peek`` amortised O(log n),
``tombstoned`` O(1) amortised (compaction is O(n), at most once per n
cancels), ``_check`` O(n).

Two representations behind one interface, chosen when this module is loaded
(C-NATIVE-1):

* compiled by mypyc (the default build), the list holds the items themselves
  and the sifts below compare their native ``at``/``seq`` ints: no tuple per
  push, no rich comparison, no allocation when a periodic entry is re-pushed.
  This is what puts the compiled core ahead of a bare ``heapq`` loop of
  ``(at, seq, cb)`` tuples (``benchmarks/scheduler.py``).
* as pure Python, a sift written in Python would be ~2.5x slower than
  ``heapq``'s C one, so `LazyHeap` is bound to `_TupleHeap`,
  the same queue over ``heapq`` and ``(at, seq, item)`` tuples.
"""

from __future__ import annotations

import heapq
import types
from typing import Any, Final, final

from mypy_extensions import i64

from simclock.core._entry import EntryQueue, _Entry

__all__ = ["COMPILED", "LazyHeap"]

# Positions are i64: native machine ints when compiled (a list never has 2**63 items).


def _sift_up(heap: list[_Entry], start: i64, pos: i64, item: _Entry) -> None:
    """Put ``item`` in slot ``pos``, moving larger-keyed parents down, never above ``start``.

    (C-ADV-1, C-TIE-1: the ``(at, seq)`` order firings follow; C-X-PEEK reads its root.)
    """
    at = item.at
    seq = item.seq
    while pos > start:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        parent_at = parent.at
        if at < parent_at or (at == parent_at and seq < parent.seq):
            heap[pos] = parent
            pos = parent_pos
        else:
            break
    heap[pos] = item


def _sift_leafward(heap: list[_Entry], pos: i64, item: _Entry) -> None:
    """Fill the hole at ``pos`` with ``item``, re-establishing the heap below (``heapq._siftup``).

    Bottom-up: the smaller child moves up until a leaf is reached, then
    ``item`` sifts up from there; fewer comparisons on average than stopping
    early, since an item taken from the end usually belongs near the leaves.
    Each slot is read once. (C-ADV-1, C-TIE-1: the ``(at, seq)`` order firings
    follow; C-X-PEEK reads its root.)
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
    _sift_up(heap, start, pos, item)


def _heapify(heap: list[_Entry]) -> None:
    """Re-establish the heap order of ``heap`` in place, bottom-up (C-ADV-1, C-TIE-1)."""
    pos: i64 = len(heap) // 2 - 1
    while pos >= 0:
        _sift_leafward(heap, pos, heap[pos])
        pos -= 1


def _check_heap(items: list[_Entry], dead: int, next_seq: int, threshold: int) -> None:
    """The invariants of a `LazyHeap` whose items, in heap-array order, are ``items``."""
    keys = [(item.at, item.seq) for item in items]
    for i in range(1, len(keys)):
        assert keys[(i - 1) // 2] < keys[i], "heap order violated"
    seqs = [item.seq for item in items]
    assert len(seqs) == len(set(seqs)), "duplicate seq in heap"
    assert all(seq < next_seq for seq in seqs), "seq from the future"
    assert len({id(item) for item in items}) == len(items), "item pushed twice"
    counted = sum(1 for item in items if item.state)
    assert counted == dead, f"tombstone count {dead} != {counted}"
    assert len(items) <= 2 * (len(items) - dead) + threshold, "tombstones unbounded"


@final
class LazyHeap(EntryQueue):
    """A min-heap of entries with lazy deletion (C-CAN-4); ``LazyHeap(compact_threshold)``.

    A caller cancels an item by setting its ``state`` to non-zero and calling
    `tombstoned` once; the item then leaves silently. The bound
    ``size <= 2 * live + threshold`` holds after every method (``tombstoned``
    and `restore_bound` compact when it would not).
    """

    def __init__(self, threshold: int) -> None:
        # Invariant: items is a binary heap keyed (at, seq); seqs are unique and
        # every seq is below next_seq.
        # Invariant: dead == number of items whose state is not 0.
        # Invariant: len(items) <= 2 * (len(items) - dead) + threshold between calls.
        self.items: list[_Entry] = []
        self.dead = 0
        self.next_seq = 0
        self.threshold = threshold

    def push(self, item: _Entry, at: int) -> None:
        """Put live ``item`` in the heap at ``at`` with the next ``seq`` (C-TIE-1). O(log n)."""
        seq = self.next_seq
        self.next_seq = seq + 1
        item.at = at
        item.seq = seq
        heap = self.items
        heap.append(item)
        _sift_up(heap, 0, len(heap) - 1, item)

    def pop_due(self, limit: int) -> _Entry | None:
        """Remove and return the first live item if its ``at <= limit``, else ``None``.

        Tombstones reaching the root on the way leave and are uncounted. One call
        per firing (test and pop together) keeps the pure build at one Python
        call per entry. O(log n) per item removed. (C-ADV-1: the first due item in
        ``(at, seq)`` order; C-CAN-2: a tombstone never fires; C-CAN-4: its count.)
        """
        heap = self.items
        while heap:
            first = heap[0]
            if first.at > limit:
                return None
            last = heap.pop()
            if heap:
                _sift_leafward(heap, 0, last)
            if first.state:
                self.dead -= 1
                continue
            return first
        return None

    def peek(self) -> _Entry | None:
        """The first live item, left in place (tombstones at the root leave), or ``None``.

        (C-X-PEEK; C-CAN-2: a tombstone is never the answer; C-CAN-4: its count.)
        """
        heap = self.items
        while heap:
            first = heap[0]
            if not first.state:
                return first
            last = heap.pop()
            if heap:
                _sift_leafward(heap, 0, last)
            self.dead -= 1
        return None

    def tombstoned(self) -> None:
        """Count one item just made dead in place; compact if tombstones outnumber live items.

        (C-CAN-4: the bound after a cancel.)
        """
        self.dead += 1
        heap = self.items
        if len(heap) > 2 * (len(heap) - self.dead) + self.threshold:
            self.compact()

    def restore_bound(self) -> None:
        """Re-establish the size bound after live items left (a firing or a skip) (C-CAN-4).

        Firing live items lowers the live count while far-future tombstones stay,
        so the bound must be checked there too, not only when an item is cancelled.
        """
        heap = self.items
        if len(heap) > 2 * (len(heap) - self.dead) + self.threshold:
            self.compact()

    def compact(self) -> None:
        """Drop every tombstone, in place (a running firing loop holds this object). O(n).

        (C-CAN-4; the order kept is C-ADV-1's and C-TIE-1's.)
        """
        heap = self.items
        heap[:] = [item for item in heap if not item.state]
        _heapify(heap)
        self.dead = 0

    def live(self) -> int:
        """Live items in the heap."""
        return len(self.items) - self.dead

    def size(self) -> int:
        """Entries physically in the heap, tombstones included: ``heap_size()`` (C-CAN-4)."""
        return len(self.items)

    def live_items(self) -> list[_Entry]:
        """The live items, in heap-array order (for checks, O(n))."""
        return [item for item in self.items if not item.state]

    def _check(self) -> None:
        """Assert every invariant of the queue (the state machine calls it after each step)."""
        _check_heap(list(self.items), self.dead, self.next_seq, self.threshold)


# -- the pure build: heapq over (at, seq, item) tuples ---------------------------


class _TupleHeap(EntryQueue):
    """`LazyHeap` as pure Python over ``heapq`` (the same methods, the same rules)."""

    __slots__ = ("dead", "items", "next_seq", "threshold")

    def __init__(self, threshold: int) -> None:
        self.items: list[Any] = []
        self.dead = 0
        self.next_seq = 0
        self.threshold = threshold

    def push(self, item: _Entry, at: int) -> None:
        """Put live ``item`` in the heap at ``at`` with the next ``seq`` (C-TIE-1)."""
        seq = self.next_seq
        self.next_seq = seq + 1
        item.at = at
        item.seq = seq
        heapq.heappush(self.items, (at, seq, item))

    def pop_due(self, limit: int) -> _Entry | None:
        """The first live item if due, else ``None`` (C-ADV-1, C-CAN-2, C-CAN-4)."""
        heap = self.items
        while heap and heap[0][0] <= limit:
            item: _Entry = heapq.heappop(heap)[2]
            if item.state:
                self.dead -= 1
                continue
            return item
        return None

    def peek(self) -> _Entry | None:
        """The first live item, left in place, or ``None`` (C-X-PEEK, C-CAN-2, C-CAN-4)."""
        heap = self.items
        while heap:
            item: _Entry = heap[0][2]
            if not item.state:
                return item
            heapq.heappop(heap)
            self.dead -= 1
        return None

    def tombstoned(self) -> None:
        """Count one item just made dead; compact past the bound (C-CAN-4)."""
        self.dead += 1
        heap = self.items
        if len(heap) > 2 * (len(heap) - self.dead) + self.threshold:
            self.compact()

    def restore_bound(self) -> None:
        """Re-establish the size bound after live items left (C-CAN-4)."""
        heap = self.items
        if len(heap) > 2 * (len(heap) - self.dead) + self.threshold:
            self.compact()

    def compact(self) -> None:
        """Drop every tombstone, in place (C-CAN-4; the order kept is C-ADV-1's and C-TIE-1's)."""
        heap = self.items
        heap[:] = [entry for entry in heap if not entry[2].state]
        heapq.heapify(heap)
        self.dead = 0

    def live(self) -> int:
        return len(self.items) - self.dead

    def size(self) -> int:
        """Entries physically in the heap, tombstones included: ``heap_size()`` (C-CAN-4)."""
        return len(self.items)

    def live_items(self) -> list[_Entry]:
        return [entry[2] for entry in self.items if not entry[2].state]

    def _check(self) -> None:
        for at, seq, item in self.items:
            assert (item.at, item.seq) == (at, seq), "tuple key differs from the item's key"
        _check_heap([entry[2] for entry in self.items], self.dead, self.next_seq, self.threshold)


def _is_compiled() -> bool:
    """True when this module runs as mypyc-compiled code (its functions are not ``function``)."""
    return not isinstance(_is_compiled, types.FunctionType)


COMPILED: Final = _is_compiled()
"""Whether this module (and so the heap representation) is the compiled one."""

if not COMPILED:
    # The pure build: interpreted callers bind LazyHeap at import time and get the
    # heapq one. Compiled callers construct the native class directly.
    globals()["LazyHeap"] = _TupleHeap
