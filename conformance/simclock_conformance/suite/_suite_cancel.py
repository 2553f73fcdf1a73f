"""The cancellation clauses of the suite: C-CAN (cancel never raises, stops, costs bounded memory).

A mixin of :class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import cast

from simclock.lowlevel import Handle, describe_exception
from simclock_conformance.kit._harness import Rig
from simclock_conformance.kit._suite_support import _boom, _expect, _expect_trace

__all__ = ["CancelClauses"]

_TOMBSTONE_SLACK = 1024
"""C-CAN-4: tombstones <= 2*live + 1024 after every public call."""


class CancelClauses:
    """C-CAN-1..4: what ``Handle.cancel()`` does, from anywhere, at any time."""

    # -- C-CAN -------------------------------------------------------------

    def test_C_CAN_1_cancel_never_raises_from_anywhere(self, rig: Rig) -> None:
        clock = rig.clock
        handles: dict[str, Handle] = {}
        results: list[str] = []

        def cancel_twice(name: str) -> None:
            for _ in range(2):
                # What cancel() returns is not part of the contract (a bool is fine).
                try:
                    cast(Callable[[], object], handles[name].cancel)()
                except Exception as exc:
                    results.append(f"cancel({name}) raised {describe_exception(exc)}")

        def own() -> None:
            rig.trace.append(("own", clock.now_ns()))
            cancel_twice("own")

        def other() -> None:
            rig.trace.append(("other", clock.now_ns()))
            cancel_twice("victim")

        handles["early"] = clock.schedule(5, rig.rec("early"))
        cancel_twice("early")
        handles["own"] = clock.schedule_periodic(3, own, 1)
        handles["other"] = clock.schedule(4, other)
        handles["victim"] = clock.schedule(4, rig.rec("victim"))
        handles["fired"] = clock.schedule(2, rig.rec("fired"))
        clock.advance(3)
        cancel_twice("fired")
        clock.advance(10)
        for name in handles:
            cancel_twice(name)
        assert results == [], "C-CAN-1: expected cancel() never to raise; " + "; ".join(results)
        failures = [(e.at_ns, e.details.get("error_type")) for e in rig.failures()]
        _expect_trace(failures, [], "C-CAN-1", "failure events (at_ns, error_type)")
        _expect_trace(
            rig.trace,
            [("own", 1), ("fired", 2), ("other", 4)],
            "C-CAN-1",
            "firings around the cancels",
        )

    def test_C_CAN_2_periodic_cancelled_in_own_callback_stops(self, rig: Rig) -> None:
        clock = rig.clock
        handles: list[Handle] = []
        count = [0]

        def tick() -> None:
            count[0] += 1
            rig.trace.append(("tick", clock.now_ns()))
            if count[0] == 3:
                handles[0].cancel()

        handles.append(clock.schedule_periodic(2, tick, 1))
        clock.advance(100)
        _expect_trace(
            rig.trace,
            [("tick", 1), ("tick", 3), ("tick", 5)],
            "C-CAN-2",
            "firings of a periodic cancelled in its third callback",
        )

    def test_C_CAN_2_cancel_at_same_instant_and_between_advances(self, rig: Rig) -> None:
        clock = rig.clock
        handles: dict[str, Handle] = {}

        def killer() -> None:
            rig.trace.append(("killer", clock.now_ns()))
            handles["victim"].cancel()
            handles["periodic"].cancel()

        clock.schedule(6, killer)
        handles["victim"] = clock.schedule(6, rig.rec("victim"))
        handles["periodic"] = clock.schedule_periodic(3, rig.rec("periodic"))
        handles["never"] = clock.schedule(1, rig.rec("never"))
        handles["never"].cancel()
        handles["outside"] = clock.schedule_periodic(4, rig.rec("outside"), 2)
        clock.advance(5)
        handles["outside"].cancel()
        clock.advance(20)
        expected = [("periodic", 0), ("outside", 2), ("periodic", 3), ("killer", 6)]
        _expect_trace(rig.trace, expected, "C-CAN-2", "firings around the cancels")

    def test_C_CAN_3_cancel_after_firing_is_a_no_op(self, rig: Rig) -> None:
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
            if started:
                tracemalloc.stop()
        budget = allowed * per_entry + 64 * 1024
        assert grown <= budget, (
            f"C-CAN-4: memory grew by {growth} bytes over two windows of {churn} "
            f"schedule/cancel pairs with "
            f"{len(live)} live entries; {allowed} tombstones (2*live + 1024) of about "
            f"{per_entry} bytes each allow {budget}: tombstones are not compacted"
        )
