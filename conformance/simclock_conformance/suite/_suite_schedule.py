"""The scheduling clauses of the suite: C-SCH, C-TIE (push order), C-PER (periodic grid).

A mixin of :class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

import dataclasses
from functools import partial

from simclock_conformance.kit._args import quote
from simclock_conformance.kit._harness import Rig
from simclock_conformance.kit._reach import Reach, rig_started
from simclock_conformance.kit._suite_support import _boom, _expect_trace, _refused

__all__ = ["ScheduleClauses"]


class ScheduleClauses:
    """C-SCH-1..2, C-TIE-1, C-PER-1..3: when entries fire and in which order."""

    # -- C-SCH -------------------------------------------------------------

    def test_C_SCH_2_schedule_returns_frozen_handle(self, rig: Rig) -> None:
        """``schedule*`` return frozen dataclass handles.

        In process only: the handle is a Python object; over the wire an entry is a
        name.
        """
        clock = rig.clock
        made = {
            "schedule": clock.schedule(5, rig.rec("a")),
            "schedule_periodic": clock.schedule_periodic(5, rig.rec("p")),
        }
        rate = getattr(clock, "schedule_rate", None)
        if callable(rate):
            made["schedule_rate"] = rate(1000, rig.rec("r"))
        for name, handle in made.items():
            assert dataclasses.is_dataclass(handle) and not isinstance(handle, type), (
                f"C-SCH-2: {name} returned a {type(handle).__name__}; "
                "expected a frozen dataclass instance"
            )
            cancel = getattr(handle, "cancel", None)
            assert callable(cancel), (
                f"C-SCH-2: {name}'s handle.cancel is {quote(cancel)}; expected a method"
            )
            with _refused(
                dataclasses.FrozenInstanceError, "C-SCH-2", f"assigning {name} handle.cancel"
            ):
                handle.cancel = _boom  # type: ignore[misc]

    # -- C-TIE ---------------------------------------------------------------

    def test_C_TIE_1_equal_times_fire_in_push_order(self, rig: Rig) -> None:
        """Entries due at one instant fire in push order.

        In process only: one callback object pushed twice and a ``functools.partial``; a
        wire callback is data, one per entry.
        """
        clock = rig.clock
        trace = rig.trace
        shared = rig.rec("shared")

        def zeta() -> None:
            trace.append(("zeta", clock.now_ns()))

        def alpha() -> None:
            trace.append(("alpha", clock.now_ns()))
            clock.schedule(5, rig.rec("pushed-at-3"))

        clock.schedule(5, zeta)
        clock.schedule(5, shared)
        clock.schedule(3, alpha)
        clock.schedule_periodic(5, rig.rec("periodic"), 5)
        clock.schedule(5, rig.rec("m"))
        clock.schedule(5, shared)
        clock.schedule(5, partial(trace.append, ("partial", 5)))
        clock.schedule(5, rig.rec("a"))
        clock.advance(5)
        expected = [
            ("alpha", 3),
            ("zeta", 5),
            ("shared", 5),
            ("periodic", 5),
            ("m", 5),
            ("shared", 5),
            ("partial", 5),
            ("a", 5),
            ("pushed-at-3", 5),
        ]
        _expect_trace(trace, expected, "C-TIE-1", "firings at equal times (push order)")

    def test_C_TIE_1_far_ties_reached_by_long_advances(self, reach: Reach) -> None:
        """Ties far ahead (past a timer wheel's first levels) still fire in push order.

        In process only: a backend that declares a horizon runs it from a far start
        (``reach``); the program, fixed at start 0, is only reported limited there.
        """
        instants = [5_000, 70_001, 2**40 + 3, 2**63 + 1]
        pushes = [(f"{at}:{round_}", at) for round_ in range(3) for at in instants]
        pushes.append(("late-5000", 5_000))  # pushed after the rounds: fires last
        trace = reach.run_far(pushes, instants, "the far ties").trace
        expected = []
        for at in instants:
            expected += [(f"{at}:{r}", at) for r in range(3)]
            if at == 5_000:
                expected.append(("late-5000", at))
        _expect_trace(trace, expected, "C-TIE-1", "firings of the far ties (push order)")

    # -- C-PER ---------------------------------------------------------------

    def test_C_PER_1_grid_is_exact_for_large_values(self, reach: Reach) -> None:
        """A large grid is exact.

        In process only: a backend that declares a horizon runs it from a far start
        (``reach``); the program, fixed at start 0, is only reported limited there.
        """
        period = reach.scaled(1_000_000_007, 3, "three periods of 1 000 000 007 ns")
        phase = 3 * 10**15 + 11
        rig = reach.rig_at(phase + 2 * period + 1)
        clock = rig.clock
        clock.schedule_periodic(period, rig.rec("p"), phase)
        clock.advance(3 * period)
        expected = [("p", phase + k * period) for k in (3, 4, 5)]
        _expect_trace(rig.trace, expected, "C-PER-1", "firings of the large grid")

    def test_C_PER_3_no_drift_over_many_firings(self, reach: Reach) -> None:
        """20 000 firings stay on the grid.

        In process only: a backend that declares a horizon runs it from a far start
        (``reach``); the program, fixed at start 0, is only reported limited there.
        """
        n = 20_000
        period = reach.scaled(333_333_333, n, "20 000 periods of 333 333 333 ns")
        phase = 10**15 + 7
        # Unlimited (or a horizon holding phase and every period): registered at 0, reached
        # by one long advance; otherwise made at phase, advancing only the n periods.
        start = 0 if reach.fits(phase + n * period, "20 000 periods from 10**15 + 7") else phase
        rig = reach.rig_at(0) if start == 0 else rig_started(reach.factory, 0, start)
        clock = rig.clock
        times: list[int] = []
        clock.schedule_periodic(period, lambda: times.append(clock.now_ns()), phase)
        clock.advance(phase - start)
        for _ in range(4):
            clock.advance(n // 4 * period)
        wrong = [(k, t) for k, t in enumerate(times) if t != phase + k * period]
        program = (
            f"a clock at {start} ns; schedule_periodic({period}, cb, {phase}); "
            f"advance({phase - start}); advance({n // 4 * period}) 4 times"
        )
        assert len(times) == n + 1, (
            f"C-PER-3: {len(times)} firings, expected {n + 1}; program: {program}"
        )
        assert not wrong, (
            f"C-PER-3: {len(wrong)} firings off the grid; first: firing {wrong[0][0]} "
            f"expected at {phase + wrong[0][0] * period} ns, observed at {wrong[0][1]} ns; "
            f"program: {program}"
        )
