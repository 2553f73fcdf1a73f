"""A third correct SimClock: a hierarchical timer wheel (SPEC §1), not a heap nor a list.

Level ``L`` has 1024 slots of width ``1024**L`` ns. An entry lives at the
level of the highest 10-bit digit in which its time differs from the wheel's
cursor (a time <= now and <= every pending entry), in the slot named by that
digit; levels are unbounded, so every Python int is exact (C-TIME-4). The
lowest non-empty slot of the lowest non-empty level holds the earliest
entries: at level 0 they all share one time and fire in push order (C-TIE-1);
above it the slot is *cascaded*: the cursor moves to the slot's lower bound
and its entries are re-placed, in order, one or more levels down. Advancing
by 2**60 ns costs one cascade per level, never a walk over the slots.

The queue methods of :class:`SortedListClock` are replaced; validation,
periodic grids, cancellation flags, failure reports and the advance loop
are the sorted-list backend's.
"""

from __future__ import annotations

from collections import deque

from simclock import Bus

from .sorted_list import Item, SortedListClock, Timer

__all__ = ["WheelClock", "factory"]

BITS = 10
SLOTS = 1 << BITS

Entry = tuple[int, int, Timer]
"""``(at_ns, seq, timer)``."""


class WheelClock(SortedListClock):
    """Event clock over a hierarchical timer wheel of 1024 slots per level."""

    def __init__(self, seed: int, bus: Bus | None = None, *, start_ns: int = 0) -> None:
        # Invariant: every pending entry at level L shares all digits above L with
        # _cursor and differs from it in digit L (or equals it, at level 0).
        self._levels: dict[int, dict[int, deque[Entry]]] = {}
        # Invariant: _cursor <= now and <= the time of every pending entry.
        self._cursor = 0
        # Invariant: _count == entries in the wheel, cancelled ones included.
        self._count = 0
        super().__init__(seed, bus, start_ns=start_ns)
        self._cursor = self._now

    def _place(self, entry: Entry) -> None:
        at = entry[0]
        level = 0 if at == self._cursor else ((at ^ self._cursor).bit_length() - 1) // BITS
        slot = (at >> (BITS * level)) & (SLOTS - 1)
        self._levels.setdefault(level, {}).setdefault(slot, deque()).append(entry)

    def _push(self, at: int, timer: Timer) -> None:
        self._place((at, self._next_seq(timer), timer))
        self._count += 1
        timer.queued = True

    def _drop(self, entry: Entry) -> None:
        entry[2].queued = False
        self._count -= 1
        self._dead -= 1

    def _lowest(self) -> tuple[int, int, deque[Entry]] | None:
        """The lowest non-empty slot of the lowest non-empty level, dead entries removed."""
        while self._levels:
            level = min(self._levels)
            slots = self._levels[level]
            if not slots:
                del self._levels[level]
                continue
            slot = min(slots)
            entries = slots[slot]
            live = deque(e for e in entries if not e[2].cancelled)
            for e in entries:
                if e[2].cancelled:
                    self._drop(e)
            if not live:
                del slots[slot]
                continue
            slots[slot] = live
            return level, slot, live
        return None

    def _lower_bound(self, level: int, slot: int) -> int:
        top = BITS * (level + 1)
        return ((self._cursor >> top) << top) | (slot << (BITS * level))

    def _cascade(self, level: int, slot: int, entries: deque[Entry]) -> None:
        """Move the cursor to the slot's lower bound and re-place its entries below."""
        del self._levels[level][slot]
        self._cursor = self._lower_bound(level, slot)
        for entry in entries:
            self._place(entry)

    def _due(self, target: int) -> Item | None:
        while (found := self._lowest()) is not None:
            level, slot, entries = found
            if level > 0:
                if self._lower_bound(level, slot) > target:
                    return None
                self._cascade(level, slot, entries)
                continue
            at, seq, timer = entries[0]
            if at > target:
                return None
            entries.popleft()
            if not entries:
                del self._levels[0][slot]
            self._cursor = at
            self._count -= 1
            return (-at, -seq, timer)
        return None

    def next_event_ns(self) -> int | None:
        """Earliest live entry or None (C-X-PEEK): the minimum of the lowest live slot."""
        found = self._lowest()
        if found is None:
            return None
        return min(e[0] for e in found[2])

    def pending_count(self) -> int:
        """Live queued entries."""
        return self._count - self._dead

    def _drop_dead_tail(self) -> None:
        """Dead entries leave in :meth:`_lowest` and :meth:`_purge`."""

    def _should_purge(self) -> bool:
        return self._dead > (self._count - self._dead) + self.purge_slack

    def _purge(self) -> None:
        for level in list(self._levels):
            slots = self._levels[level]
            for slot in list(slots):
                live = deque(e for e in slots[slot] if not e[2].cancelled)
                for e in slots[slot]:
                    if e[2].cancelled:
                        e[2].queued = False
                if live:
                    slots[slot] = live
                else:
                    del slots[slot]
            if not slots:
                del self._levels[level]
        self._count -= self._dead
        self._dead = 0


def factory(seed: int, bus: Bus) -> WheelClock:
    """``FACTORY(seed, bus)`` for the conformance suite."""
    return WheelClock(seed, bus)
