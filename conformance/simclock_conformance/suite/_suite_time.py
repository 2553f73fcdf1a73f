"""The time clauses of the suite: C-TIME (integer ns, exact to 2**64-1), C-ADV, C-STEP.

A mixin of :class:`~simclock_conformance.ClockConformance`: its tests use the
suite's fixtures (``rig``, ``reach``, ``clock_factory``, ``profile``).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from simclock.lowlevel import Handle
from simclock_conformance._machine import private_hypothesis_home
from simclock_conformance.kit._harness import Factory, Rig, make_rig
from simclock_conformance.kit._reach import Every, Push, Reach, advance_to
from simclock_conformance.kit._suite_support import (
    MAX_NS,
    _boom,
    _expect,
    _expect_trace,
    _np_int,
    _refused,
    hypothesis_settings,
)

__all__ = ["TimeClauses"]

_NOT_TIME_INTS: tuple[object, ...] = (
    1.0,
    0.5,
    True,
    Decimal(1),
    Fraction(1),
    "1",
    np.float64(1.0),
    None,
)


class TimeClauses:
    """C-TIME-1..4, C-ADV-1..5, C-STEP-1: what ``now_ns()`` and ``advance`` do."""

    # -- C-TIME ------------------------------------------------------------

    def test_C_TIME_1_now_is_int_and_starts_at_zero(self, rig: Rig) -> None:
        clock = rig.clock
        # (who read it, now_ns()): a callback's reading is also its entry's time
        # (C-ADV-2), so a wrong one is reported as a firing at another time.
        seen: list[tuple[str, object]] = [("now", clock.now_ns())]
        clock.schedule(_np_int(np.int64, 20), lambda: seen.append(("at20", clock.now_ns())))
        clock.schedule_periodic(
            _np_int(np.int32, 15),
            lambda: seen.append(("p", clock.now_ns())),
            _np_int(np.int64, 1),
        )
        clock.advance(5)
        seen.append(("now", clock.now_ns()))
        clock.advance(_np_int(np.int64, 7))
        seen.append(("now", clock.now_ns()))
        clock.advance(_np_int(np.uint16, 10))
        seen.append(("now", clock.now_ns()))
        want = [("now", 0), ("p", 1), ("now", 5), ("now", 12), ("p", 16), ("at20", 20)]
        _expect_trace(seen, [*want, ("now", 22)], "C-TIME-1", "now_ns() values")
        types = [type(v).__name__ for _, v in seen]
        _expect_trace(types, ["int"] * len(seen), "C-TIME-1", "types of now_ns()")

    def test_C_TIME_2_now_never_decreases(self, rig: Rig) -> None:
        clock = rig.clock
        seen = [clock.now_ns()]

        def look() -> None:
            seen.append(clock.now_ns())

        def spawn() -> None:
            seen.append(clock.now_ns())
            clock.schedule(clock.now_ns(), look)
            clock.schedule(clock.now_ns() + 2, look)

        def fail() -> None:
            seen.append(clock.now_ns())
            raise ValueError("fail")

        clock.schedule(3, spawn)
        clock.schedule(3, fail)
        clock.schedule(9, look)
        clock.schedule_periodic(4, look, 2)
        for dt in (0, 2, 1, 0, 5, 30):
            clock.advance(dt)
            seen.append(clock.now_ns())
            with _refused(ValueError, "C-TIME-2", "advance(-1)"):
                clock.advance(-1)
            with _refused(ValueError, "C-TIME-2", "schedule(now - 1)"):
                clock.schedule(clock.now_ns() - 1, look)
            seen.append(clock.now_ns())
        back = next((i for i in range(1, len(seen)) if seen[i] < seen[i - 1]), None)
        assert back is None, (
            f"C-TIME-2: now_ns() went back from {seen[back - 1]} to {seen[back]} "
            f"(item {back} of {seen}); expected never to decrease"
        )
        _expect(clock.now_ns(), 38, "C-TIME-2", "now_ns() after advancing to 38")

    def test_C_TIME_3_non_time_ints_are_refused(self, rig: Rig) -> None:
        clock = rig.clock
        clock.advance(10)
        fired: list[int] = []

        def cb() -> None:
            fired.append(clock.now_ns())

        calls: list[tuple[str, Callable[[Any], object]]] = [
            ("advance", clock.advance),
            ("schedule at_ns", lambda v: clock.schedule(v, cb)),
            ("schedule_periodic period_ns", lambda v: clock.schedule_periodic(v, cb)),
            ("schedule_periodic phase_ns", lambda v: clock.schedule_periodic(5, cb, v)),
        ]
        accepted = []
        for name, call in calls:
            for value in (*_NOT_TIME_INTS, 20.0):
                try:
                    call(value)
                except TypeError:
                    continue
                except Exception as exc:
                    accepted.append(
                        f"{name}({value!r}): expected TypeError, observed {type(exc).__name__}"
                    )
                else:
                    accepted.append(f"{name}({value!r}): expected TypeError, observed accepted")
        assert not accepted, "C-TIME-3: " + "; ".join(accepted)
        _expect(clock.now_ns(), 10, "C-TIME-3", "now_ns() after the refused calls")
        clock.advance(100)
        _expect_trace(fired, [], "C-TIME-3", "firings of the refused calls (at now_ns())")

    def test_C_TIME_3_negative_refused_numpy_ints_accepted(self, rig: Rig) -> None:
        clock = rig.clock
        trace = rig.trace
        for call in (
            lambda: clock.advance(-1),
            lambda: clock.schedule_periodic(-5, rig.rec("bad")),
            lambda: clock.schedule_periodic(5, rig.rec("bad"), -1),
        ):
            with _refused(ValueError, "C-TIME-3", "a negative time"):
                call()
        clock.schedule(_np_int(np.int64, 4), rig.rec("a"))
        clock.schedule(_np_int(np.uint8, 4), rig.rec("b"))
        clock.schedule_periodic(_np_int(np.int16, 3), rig.rec("p"), _np_int(np.int64, 2))
        clock.advance(_np_int(np.int64, 6))
        _expect_trace(
            trace,
            [("p", 2), ("a", 4), ("b", 4), ("p", 5)],
            "C-TIME-3",
            "firings of entries made with numpy ints",
        )
        _expect(clock.now_ns(), 6, "C-TIME-3", "now_ns() after advance(numpy.int64(6))")

    def test_C_TIME_4_exact_up_to_2_64_minus_1(self, reach: Reach) -> None:
        times = [2**53 + 1, 2**53 + 3, 2**60 + 1, 2**63 - 1, 2**63 + 1, MAX_NS - 1, MAX_NS]
        period, phase = 2**62 + 1, 2**53 + 1
        pushes: list[Push] = [(f"t{at}", at) for at in times]
        pushes += [("tie", 2**60 + 1), Every("p", period, phase)]
        grid = [phase + k * period for k in range(4) if phase + k * period <= MAX_NS]
        expected = sorted(
            [(f"t{at}", at) for at in times] + [("tie", 2**60 + 1)] + [("p", t) for t in grid],
            key=lambda x: x[1],
        )
        stops = sorted({*times, *grid})
        run = reach.run_far(pushes, stops, "the program up to 2**64-1")
        _expect_trace(run.nows, stops, "C-TIME-4", "now_ns() at the stops")
        _expect_trace(
            run.trace,
            expected,
            "C-TIME-4",
            "firings (times above 2**53 must not be rounded, above 2**63 not wrapped)",
        )

    def test_C_TIME_4_beyond_2_64_exact_or_refused(self, reach: Reach) -> None:
        rig = reach.rig_at(MAX_NS - 2)
        clock = rig.clock
        clock.schedule(MAX_NS, rig.rec("max"))
        try:
            clock.schedule(MAX_NS + 1, rig.rec("beyond"))
        except ValueError:
            accepted = False
        else:
            accepted = True
        _expect(
            clock.now_ns(),
            MAX_NS - 2,
            "C-TIME-4",
            f"now_ns() after schedule(2**64) was {'accepted' if accepted else 'refused'}",
        )
        advance_to(clock, MAX_NS, "C-TIME-4")
        _expect_trace(rig.trace, [("max", MAX_NS)], "C-TIME-4", "firings up to 2**64-1")
        try:
            clock.advance(1)
        except ValueError:
            _expect(clock.now_ns(), MAX_NS, "C-TIME-4", "now_ns() after a refused advance(1)")
            assert not accepted, (
                "C-TIME-4: schedule at 2**64 was accepted but advance there refused; "
                "expected both accepted (exact) or both refused"
            )
            return
        _expect(clock.now_ns(), MAX_NS + 1, "C-TIME-4", "now_ns() after advance(1) at 2**64-1")
        want = [("max", MAX_NS), *([("beyond", MAX_NS + 1)] if accepted else [])]
        _expect_trace(rig.trace, want, "C-TIME-4", "firings up to 2**64 (wrapped at 2**64?)")

    def test_C_TIME_4_random_far_times_fire_exactly(self, reach: Reach, profile: str) -> None:
        # No shrinking: a failing example is already small and shows its times,
        # and shrinking lists of 64-bit ints costs seconds per failing backend.
        @settings(
            hypothesis_settings(profile),
            phases=[Phase.explicit, Phase.reuse, Phase.generate],
        )
        @given(
            st.lists(st.integers(0, MAX_NS), min_size=1, max_size=12),
            st.lists(st.integers(0, 11), max_size=12),
        )
        def check(times: list[int], ties: list[int]) -> None:
            ats = [*times, *(times[i % len(times)] for i in ties)]
            pushes = [(str(n), at) for n, at in enumerate(ats)]
            trace = reach.run_far(pushes, sorted(set(ats)), "a random far program").trace
            expected = sorted(pushes, key=lambda x: x[1])
            _expect_trace(trace, expected, "C-TIME-4", f"firings of entries at {ats}")

        with private_hypothesis_home():
            check()

    # -- C-ADV -------------------------------------------------------------

    def test_C_ADV_1_fires_due_entries_in_order_then_sets_target(self, rig: Rig) -> None:
        clock = rig.clock
        for name, at in (("a", 5), ("b", 3), ("c", 5), ("d", 10), ("e", 11), ("f", 0)):
            clock.schedule(at, rig.rec(name))
        clock.advance(10)
        expected = [("f", 0), ("b", 3), ("a", 5), ("c", 5), ("d", 10)]
        _expect_trace(rig.trace, expected, "C-ADV-1", "firings of advance(10)")
        _expect(clock.now_ns(), 10, "C-ADV-1", "now_ns() after advance(10)")
        clock.advance(0)
        _expect_trace(rig.trace, expected, "C-ADV-1", "firings after advance(0) at 10")
        clock.advance(1)
        _expect_trace(rig.trace, [*expected, ("e", 11)], "C-ADV-1", "firings after advance(1)")

    def test_C_ADV_1_advance_zero_fires_what_is_due_now(self, rig: Rig) -> None:
        clock = rig.clock
        clock.schedule(0, rig.rec("at0"))
        clock.advance(0)
        _expect_trace(rig.trace, [("at0", 0)], "C-ADV-1", "firings of advance(0) at 0")
        clock.advance(4)
        clock.schedule(4, rig.rec("at4"))
        clock.schedule_periodic(2, rig.rec("p"), 4)
        clock.advance(0)
        expected = [("at0", 0), ("at4", 4), ("p", 4)]
        _expect_trace(rig.trace, expected, "C-ADV-1", "firings after advance(0) at 4")
        _expect(clock.now_ns(), 4, "C-ADV-1", "now_ns() after advance(0) at 4")

    def test_C_ADV_2_now_during_callback_is_entry_time(self, rig: Rig) -> None:
        clock = rig.clock
        clock.schedule(3, rig.rec("a"))
        clock.schedule(7, rig.rec("b"))
        clock.schedule_periodic(4, rig.rec("p"), 1)
        clock.advance(20)
        expected = [("p", 1), ("a", 3), ("p", 5), ("b", 7), ("p", 9), ("p", 13), ("p", 17)]
        _expect_trace(rig.trace, expected, "C-ADV-2", "now_ns() seen by the callbacks")

    def test_C_ADV_3_entries_pushed_by_callbacks_fire_in_same_advance(self, rig: Rig) -> None:
        clock = rig.clock

        def spawner() -> None:
            rig.trace.append(("spawner", clock.now_ns()))
            clock.schedule(2, rig.rec("same-instant"))
            clock.schedule(5, rig.rec("later"))
            clock.schedule(10, rig.rec("at-target"))
            clock.schedule(11, rig.rec("after-target"))
            clock.schedule_periodic(3, rig.rec("p"))

        clock.schedule(2, spawner)
        clock.advance(10)
        expected = [
            ("spawner", 2),
            ("same-instant", 2),
            ("p", 3),
            ("later", 5),
            ("p", 6),
            ("p", 9),
            ("at-target", 10),
        ]
        _expect_trace(rig.trace, expected, "C-ADV-3", "firings of advance(10)")
        clock.advance(1)
        _expect_trace(
            rig.trace, [*expected, ("after-target", 11)], "C-ADV-3", "firings after advance(1)"
        )

    def test_C_ADV_4_nested_advance_raises_and_changes_nothing(self, rig: Rig) -> None:
        clock = rig.clock
        outcome: list[str] = []

        def nested() -> None:
            for dt in (5, 0):
                try:
                    clock.advance(dt)
                except RuntimeError:
                    outcome.append(f"refused({dt}) now={clock.now_ns()}")
                else:
                    outcome.append(f"allowed({dt}) now={clock.now_ns()}")

        clock.schedule(2, nested)
        clock.schedule(2, rig.rec("same"))
        clock.schedule(3, rig.rec("next"))
        clock.advance(4)
        _expect_trace(
            outcome,
            ["refused(5) now=2", "refused(0) now=2"],
            "C-ADV-4",
            "advance(5) and advance(0) from a callback at 2 (RuntimeError: refused)",
        )
        _expect_trace(rig.trace, [("same", 2), ("next", 3)], "C-ADV-4", "firings of advance(4)")
        _expect(clock.now_ns(), 4, "C-ADV-4", "now_ns() after advance(4)")
        failures = [(e.at_ns, e.details.get("error_type")) for e in rig.failures()]
        _expect_trace(
            failures, [], "C-ADV-4", "failure events (a refused nested call is not a failure)"
        )

    def test_C_ADV_5_splitting_time_changes_nothing(
        self, clock_factory: Factory, profile: str
    ) -> None:
        def run(steps: list[int]) -> tuple[list[tuple[str, int]], list[tuple[int, str]], int]:
            rig = make_rig(clock_factory, 0)
            clock = rig.clock
            handles: dict[str, Handle] = {}

            def spawner() -> None:
                rig.trace.append(("spawner", clock.now_ns()))
                clock.schedule(clock.now_ns(), rig.rec("child-now"))
                clock.schedule(clock.now_ns() + 2, rig.rec("child+2"))

            def stopper() -> None:
                rig.trace.append(("stopper", clock.now_ns()))
                handles["p4"].cancel()

            handles["p4"] = clock.schedule_periodic(4, rig.rec("p4"), 1)
            clock.schedule_periodic(6, rig.rec("p6"))
            clock.schedule(5, rig.rec("a"))
            clock.schedule(5, rig.rec("b"))
            clock.schedule(7, spawner)
            clock.schedule(13, _boom)
            clock.schedule(30, stopper)
            for dt in steps:
                clock.advance(dt)
            fails = [(e.at_ns, str(e.details.get("error_message"))) for e in rig.failures()]
            return rig.trace, fails, clock.now_ns()

        @settings(hypothesis_settings(profile))
        @given(st.lists(st.integers(0, 15), max_size=8))
        def check(steps: list[int]) -> None:
            total = sum(steps)
            split = run(steps)
            whole = run([total] if steps else [])
            # Expected: what the one advance gave.
            what = f"advance steps {steps} against one advance({total})"
            _expect_trace(split[0], whole[0], "C-ADV-5", f"firings of {what}")
            _expect_trace(split[1], whole[1], "C-ADV-5", f"failures (at_ns, message) of {what}")
            _expect(split[2], whole[2], "C-ADV-5", f"now_ns() after {what}")

        with private_hypothesis_home():
            check()

    # -- C-STEP ------------------------------------------------------------

    def test_C_STEP_1_step_is_positive_int(self, rig: Rig) -> None:
        step = rig.clock.step_ns()
        assert type(step) is int, (
            f"C-STEP-1: step_ns() returned a {type(step).__name__}; expected an int"
        )
        assert step > 0, f"C-STEP-1: step_ns() returned {step}; expected an int > 0"
        rig.clock.advance(3)
        _expect(rig.clock.step_ns(), step, "C-STEP-1", "step_ns() after advance(3)")
