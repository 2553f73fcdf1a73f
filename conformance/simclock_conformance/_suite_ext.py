"""The suite's optional extension clauses: C-X-PEEK (``next_event_ns``), C-X-RATE.

A backend without the method gets "not applicable" (SPEC §14). A mixin of
:class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import cast

from simclock_conformance._harness import Rig
from simclock_conformance._reach import Reach
from simclock_conformance._suite_support import MAX_NS, _optional_method, _refused

__all__ = ["ExtensionClauses"]


class ExtensionClauses:
    """C-X-PEEK, C-X-RATE: the optional methods, tested when a backend has them."""

    # -- C-X ---------------------------------------------------------------

    def test_C_X_PEEK_next_event_is_earliest_live_entry(self, rig: Rig) -> None:
        clock = rig.clock
        peek: Callable[[], int | None] = _optional_method(clock, "next_event_ns")
        assert peek() is None, f"C-X-PEEK: empty clock peeks {peek()}"
        ten = clock.schedule(10, rig.rec("ten"))
        clock.schedule(15, rig.rec("fifteen"))
        cancelled = clock.schedule(2, rig.rec("cancelled"))
        periodic = clock.schedule_periodic(7, rig.rec("p"), 3)
        cancelled.cancel()
        seen = [peek()]
        clock.advance(3)
        seen.append(peek())
        ten.cancel()
        seen.append(peek())
        clock.advance(7)
        seen.append(peek())
        periodic.cancel()
        seen.append(peek())
        clock.advance(5)
        seen.append(peek())
        assert seen == [3, 10, 10, 15, 15, None], f"C-X-PEEK: next_event_ns() gave {seen}"
        assert rig.trace == [("p", 3), ("p", 10), ("fifteen", 15)], f"C-X-PEEK: {rig.trace}"

    def test_C_X_PEEK_exact_for_far_entries(self, rig: Rig, reach: Reach) -> None:
        """The earliest entry's exact time, however far (not a bucket's bound)."""
        clock = rig.clock
        peek: Callable[[], int | None] = _optional_method(clock, "next_event_ns")
        seen = []
        ats = (MAX_NS, 2**63 + 7, 2**40 + 12_345, 70_001, 5_003)
        for at in ats:
            clock.schedule(at, rig.rec(str(at)))
            seen.append(peek())
        if reach.fits(MAX_NS, "advancing to each far entry"):
            for _ in range(5):
                clock.advance(cast(int, peek()) - clock.now_ns())
                seen.append(peek())
        else:
            far = reach.run_far([(str(at), at) for at in ats], sorted(ats), "the far entries")
            seen += far.peeks
        want: list[int | None] = [MAX_NS, 2**63 + 7, 2**40 + 12_345, 70_001, 5_003]
        want += [70_001, 2**40 + 12_345, 2**63 + 7, MAX_NS, None]
        assert seen == want, f"C-X-PEEK: next_event_ns() gave {seen}, expected {want}"

    def test_C_X_RATE_exact_ceil_grid(self, rig: Rig) -> None:
        clock = rig.clock
        rate = _optional_method(clock, "schedule_rate")
        times: dict[str, list[int]] = {"30": [], "ntsc": [], "late": []}
        rate(30, lambda: times["30"].append(clock.now_ns()))
        rate(Fraction(30000, 1001), lambda: times["ntsc"].append(clock.now_ns()), 5)
        clock.advance(50_000_000)
        rate(30, lambda: times["late"].append(clock.now_ns()))
        clock.advance(10**9 - 50_000_000)
        want_30 = [-(-k * 10**9 // 30) for k in range(31)]
        assert times["30"] == want_30, f"C-X-RATE: 30 Hz fired at {times['30'][:5]}..."
        assert times["30"][-1] == 10**9, "C-X-RATE: firing 30 of 30 Hz is not at exactly 1 s"
        want_ntsc = [5 + -(-k * 10**9 * 1001 // 30000) for k in range(30)]
        assert times["ntsc"] == want_ntsc, f"C-X-RATE: 30000/1001 Hz fired at {times['ntsc'][:5]}"
        assert times["late"] == want_30[2:], f"C-X-RATE: registered at 50 ms fired {times['late']}"

    def test_C_X_RATE_no_drift_over_many_firings(self, rig: Rig) -> None:
        clock = rig.clock
        rate = _optional_method(clock, "schedule_rate")
        times: list[int] = []
        hz = Fraction(30000, 1001)
        rate(hz, lambda: times.append(clock.now_ns()), 3)
        for _ in range(10):
            clock.advance(100_100_000_000)
        clock.advance(3)  # firing 30000 is at exactly 3 ns + 1001 s
        wrong = [(k, t) for k, t in enumerate(times) if t != 3 + -(-k * 10**9 * 1001 // 30000)]
        assert len(times) == 30001, f"C-X-RATE: {len(times)} firings in 1001 s, expected 30001"
        assert not wrong, f"C-X-RATE: {len(wrong)} firings off the exact grid, first {wrong[0]}"

    def test_C_X_RATE_refuses_inexact_or_bad_rates(self, rig: Rig) -> None:
        clock = rig.clock
        rate = _optional_method(clock, "schedule_rate")
        for bad in (30.0, True, Decimal(30), "30"):
            with _refused(TypeError, "C-X-RATE", f"schedule_rate({bad!r})"):
                rate(bad, rig.rec("bad"))
        for non_positive in (0, -5, Fraction(-1, 3)):
            with _refused(ValueError, "C-X-RATE", f"schedule_rate({non_positive!r})"):
                rate(non_positive, rig.rec("bad"))
        clock.advance(10**9)
        assert rig.trace == [], f"C-X-RATE: a refused rate fired: {rig.trace[:3]}"
