"""The suite's optional extension clauses: C-X-PEEK (``next_event_ns``), C-X-RATE.

A backend without the method gets "not applicable" (SPEC §14). A mixin of
:class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

from simclock_conformance.kit._harness import Rig
from simclock_conformance.kit._reach import Reach, advance_to
from simclock_conformance.kit._suite_support import (
    MAX_NS,
    _expect_trace,
    _optional_method,
    _refused,
)

__all__ = ["ExtensionClauses"]


class ExtensionClauses:
    """C-X-PEEK, C-X-RATE: the optional methods, tested when a backend has them."""

    # -- C-X ---------------------------------------------------------------

    def test_C_X_PEEK_exact_for_far_entries(self, rig: Rig, reach: Reach) -> None:
        """The earliest entry's exact time, however far (not a bucket's bound).

        In process only: a backend that declares a horizon runs it from a far start
        (``reach``); the program, fixed at start 0, is only reported limited there.
        """
        clock = rig.clock
        peek: Callable[[], int | None] = _optional_method(clock, "next_event_ns")
        seen = []
        ats = (MAX_NS, 2**63 + 7, 2**40 + 12_345, 70_001, 5_003)
        for at in ats:
            clock.schedule(at, rig.rec(str(at)))
            seen.append(peek())
        if reach.fits(MAX_NS, "advancing to each far entry"):
            for _ in range(5):
                target = peek()
                if type(target) is not int or target < clock.now_ns():
                    break  # a wrong peek: the comparison below shows it against the expected
                advance_to(clock, target)
                seen.append(peek())
        else:
            far = reach.run_far([(str(at), at) for at in ats], sorted(ats), "the far entries")
            seen += far.peeks
        want: list[int | None] = [MAX_NS, 2**63 + 7, 2**40 + 12_345, 70_001, 5_003]
        want += [70_001, 2**40 + 12_345, 2**63 + 7, MAX_NS, None]
        _expect_trace(
            seen, want, "C-X-PEEK", "next_event_ns() after each schedule, then after each advance"
        )

    def test_C_X_RATE_no_drift_over_many_firings(self, rig: Rig) -> None:
        """30 001 firings of 30000/1001 Hz stay on the exact grid.

        In process only: the rate is a ``fractions.Fraction``; over the wire C-X-RATE's
        programs check the exact grid over 1 s.
        """
        clock = rig.clock
        rate = _optional_method(clock, "schedule_rate")
        times: list[int] = []
        hz = Fraction(30000, 1001)
        rate(hz, lambda: times.append(clock.now_ns()), 3)
        for tenth in range(1, 11):
            advance_to(clock, tenth * 100_100_000_000)
        advance_to(clock, 1001 * 10**9 + 3)  # firing 30000 is at exactly 3 ns + 1001 s
        wrong = [(k, t) for k, t in enumerate(times) if t != 3 + -(-k * 10**9 * 1001 // 30000)]
        assert len(times) == 30001, f"C-X-RATE: {len(times)} firings in 1001 s, expected 30001"
        assert not wrong, (
            f"C-X-RATE: {len(wrong)} firings off the exact grid; first: firing {wrong[0][0]} "
            f"expected at {3 + -(-wrong[0][0] * 10**9 * 1001 // 30000)} ns, "
            f"observed at {wrong[0][1]} ns"
        )

    def test_C_X_RATE_refuses_inexact_or_bad_rates(self, rig: Rig) -> None:
        """Floats, bools, Decimals and strings are refused as rates.

        In process only: these are Python types; the program checks the wire's refusals
        (0, negative, not a digit string).
        """
        clock = rig.clock
        rate = _optional_method(clock, "schedule_rate")
        for bad in (30.0, True, Decimal(30), "30"):
            with _refused(TypeError, "C-X-RATE", f"schedule_rate({bad!r})"):
                rate(bad, rig.rec("bad"))
        for non_positive in (0, -5, Fraction(-1, 3)):
            with _refused(ValueError, "C-X-RATE", f"schedule_rate({non_positive!r})"):
                rate(non_positive, rig.rec("bad"))
        clock.advance(10**9)
        _expect_trace(rig.trace, [], "C-X-RATE", "firings of the refused rates")
