"""The scheduling clauses of the suite: C-SCH, C-TIE (push order), C-PER (periodic grid).

A mixin of :class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

import dataclasses
from functools import partial

from simclock_conformance.kit._args import quote
from simclock_conformance.kit._harness import Rig
from simclock_conformance.kit._reach import Reach, rig_started
from simclock_conformance.kit._suite_support import _boom, _expect, _expect_trace, _refused

__all__ = ["ScheduleClauses"]


class ScheduleClauses:
    """C-SCH-1..2, C-TIE-1, C-PER-1..3: when entries fire and in which order."""

    # -- C-SCH -------------------------------------------------------------

    def test_C_SCH_1_past_refused_now_allowed(self, rig: Rig) -> None:
        clock = rig.clock
        clock.advance(10)
        with _refused(ValueError, "C-SCH-1", "schedule(9) at now=10"):
            clock.schedule(9, rig.rec("past"))
        with _refused(ValueError, "C-SCH-1", "schedule(0) at now=10"):
            clock.schedule(0, rig.rec("past"))
        _expect(clock.now_ns(), 10, "C-SCH-1", "now_ns() after the refused schedules")
        clock.schedule(10, rig.rec("now"))
        clock.advance(0)
        _expect_trace(rig.trace, [("now", 10)], "C-SCH-1", "firings of advance(0) at 10")
        clock.advance(50)
        _expect_trace(
            rig.trace,
            [("now", 10)],
            "C-SCH-1",
            "firings after advance(50) (a refused entry fired?)",
        )

    def test_C_SCH_2_schedule_returns_frozen_handle(self, rig: Rig) -> None:
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
        """Ties far ahead (past a timer wheel's first levels) still fire in push order."""
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

    def test_C_PER_1_arguments_checked_and_refusal_changes_nothing(self, rig: Rig) -> None:
        clock = rig.clock
        for period, phase in ((0, 0), (-3, 0), (5, -1)):
            with _refused(ValueError, "C-PER-1", f"schedule_periodic({period}, cb, {phase})"):
                clock.schedule_periodic(period, rig.rec("bad"), phase)
        clock.advance(50)
        _expect_trace(rig.trace, [], "C-PER-1", "firings of the refused periodics")

    def test_C_PER_1_absolute_grid_first_point_at_or_after_now(self, rig: Rig) -> None:
        clock = rig.clock
        clock.advance(7)
        clock.schedule_periodic(5, rig.rec("p5+3"), 3)  # grid 3, 8, 13: first >= 7 is 8
        clock.schedule_periodic(4, rig.rec("p4+7"), 7)  # phase == now: fires at 7
        clock.schedule_periodic(4, rig.rec("p4+20"), 20)  # phase in the future
        clock.schedule_periodic(10, rig.rec("p10"))  # phase 0: grid 0, 10, 20
        clock.advance(0)
        clock.advance(14)
        expected = [
            ("p4+7", 7),
            ("p5+3", 8),
            ("p10", 10),
            ("p4+7", 11),
            ("p5+3", 13),
            ("p4+7", 15),
            ("p5+3", 18),
            ("p4+7", 19),
            ("p4+20", 20),
            ("p10", 20),
        ]
        _expect_trace(rig.trace, expected, "C-PER-1", "firings of periodics registered at 7")

    def test_C_PER_1_grid_is_exact_for_large_values(self, reach: Reach) -> None:
        period = reach.scaled(1_000_000_007, 3, "three periods of 1 000 000 007 ns")
        phase = 3 * 10**15 + 11
        rig = reach.rig_at(phase + 2 * period + 1)
        clock = rig.clock
        clock.schedule_periodic(period, rig.rec("p"), phase)
        clock.advance(3 * period)
        expected = [("p", phase + k * period) for k in (3, 4, 5)]
        _expect_trace(rig.trace, expected, "C-PER-1", "firings of the large grid")

    def test_C_PER_2_earlier_previous_firing_goes_first(self, rig: Rig) -> None:
        clock = rig.clock
        clock.schedule_periodic(2, rig.rec("p2"))
        clock.schedule_periodic(3, rig.rec("p3"))
        clock.advance(6)
        expected = [("p2", 0), ("p3", 0), ("p2", 2), ("p3", 3), ("p2", 4), ("p3", 6), ("p2", 6)]
        _expect_trace(rig.trace, expected, "C-PER-2", "firings of two periodics")

    def test_C_PER_2_repush_after_callback_even_when_it_raises(self, rig: Rig) -> None:
        clock = rig.clock
        trace = rig.trace

        def raising() -> None:
            trace.append(("raising", clock.now_ns()))
            raise ValueError("periodic failure")

        def planner() -> None:
            trace.append(("planner", clock.now_ns()))
            if clock.now_ns() == 0:
                clock.schedule(5, rig.rec("planned-at-0"))

        clock.schedule_periodic(2, raising)
        clock.schedule(2, rig.rec("one-shot"))
        clock.schedule_periodic(5, planner)
        clock.advance(5)
        expected = [
            ("raising", 0),
            ("planner", 0),
            ("one-shot", 2),
            ("raising", 2),
            ("raising", 4),
            ("planned-at-0", 5),
            ("planner", 5),
        ]
        _expect_trace(trace, expected, "C-PER-2", "firings (a raising periodic is re-armed)")

    def test_C_PER_3_no_drift_over_many_firings(self, reach: Reach) -> None:
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
