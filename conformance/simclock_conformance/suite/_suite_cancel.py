"""The cancellation clauses of the suite: C-CAN (cancel never raises, stops, costs bounded memory).

A mixin of :class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

import gc
import tracemalloc

from simclock_conformance.kit._harness import Rig
from simclock_conformance.kit._suite_support import _boom, _expect, _expect_trace

__all__ = ["CancelClauses"]

_TOMBSTONE_SLACK = 1024
"""C-CAN-4: tombstones <= 2*live + 1024 after every public call."""


class CancelClauses:
    """C-CAN-1..4: what ``Handle.cancel()`` does, from anywhere, at any time."""

    # -- C-CAN -------------------------------------------------------------

    def test_C_CAN_3_cancel_after_firing_is_a_no_op(self, rig: Rig) -> None:
        """Cancelling an entry that fired changes nothing.

        In process only: one callback object is shared by three entries; a wire callback
        is data, one per entry (a backend keying entries by callback passes the
        program).
        """
        clock = rig.clock
        shared = rig.rec("shared")
        first = clock.schedule(1, shared)
        clock.schedule(5, shared)
        clock.schedule_periodic(3, shared, 2)
        clock.advance(2)
        _expect_trace(rig.trace, [("shared", 1), ("shared", 2)], "C-CAN-3", "firings of advance(2)")
        peek = getattr(clock, "next_event_ns", None)
        before = peek() if callable(peek) else None
        first.cancel()
        after = peek() if callable(peek) else None
        _expect(after, before, "C-CAN-3", "next_event_ns() after cancelling a fired entry")
        clock.advance(6)
        expected = [("shared", 1), ("shared", 2), ("shared", 5), ("shared", 5), ("shared", 8)]
        _expect_trace(rig.trace, expected, "C-CAN-3", "firings after the no-op cancel")

    def test_C_CAN_4_tombstones_are_bounded(self, rig: Rig) -> None:
        """One bound, measured the same way for every backend: tombstones <= 2*live + 1024.

        The memory that 1024 + 2*live pending entries take is measured first;
        then many schedule/cancel pairs must not grow memory by more than that
        (plus allocator noise), whatever ``heap_size()`` a backend may offer.

        In process only: it measures the backend's memory (tracemalloc); over the wire a
        driver reports its own ``stored`` count.
        """
        clock = rig.clock
        far = 10**12
        live = [clock.schedule(far + i, _boom) for i in range(8)]
        allowed = 2 * len(live) + _TOMBSTONE_SLACK
        churn = 10 * allowed  # a leak of that many tombstones is several times the budget

        def pairs(n: int) -> None:
            for i in range(n):
                clock.schedule(far + i, _boom).cancel()

        started = not tracemalloc.is_tracing()
        if started:
            tracemalloc.start()
        # Everything older than this test is left out of the collections below: they then
        # cost what this test allocated, not the whole process (5 ms, not 90 ms, beside a
        # test runner). Growth is measured on this test's objects either way. A freeze the
        # caller made stays as it was.
        thaw = gc.get_freeze_count() == 0
        gc.freeze()
        try:
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            probe = [clock.schedule(far + i, _boom) for i in range(allowed)]
            gc.collect()
            # What `allowed` pending entries cost, our handles included (an upper bound).
            per_entry = max(64, (tracemalloc.get_traced_memory()[0] - before) // allowed)
            for handle in probe:
                handle.cancel()
            del probe
            pairs(allowed)
            # Two windows: a leak grows memory in both; a one-off allocation of
            # the process (a cache, a list's over-allocation) shows in one only.
            growth = []
            for _ in range(2):
                gc.collect()
                base = tracemalloc.get_traced_memory()[0]
                pairs(churn)
                gc.collect()
                growth.append(tracemalloc.get_traced_memory()[0] - base)
            grown = min(growth)
        finally:
            if thaw:
                gc.unfreeze()
            if started:
                tracemalloc.stop()
        budget = allowed * per_entry + 64 * 1024
        assert grown <= budget, (
            f"C-CAN-4: memory grew by {growth} bytes over two windows of {churn} "
            f"schedule/cancel pairs with "
            f"{len(live)} live entries; {allowed} tombstones (2*live + 1024) of about "
            f"{per_entry} bytes each allow {budget}: tombstones are not compacted"
        )
