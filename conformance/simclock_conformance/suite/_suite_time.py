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

from simclock_conformance.kit._harness import Rig
from simclock_conformance.kit._reach import Every, Push, Reach, advance_to
from simclock_conformance.kit._suite_support import (
    MAX_NS,
    _expect,
    _expect_trace,
    _np_int,
    _refused,
    hypothesis_settings,
)
from simclock_conformance.machine._machine import private_hypothesis_home

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
        """``now_ns()`` is an ``int`` from 0, whatever integer type the arguments are.

        In process only: numpy integer arguments and the exact type ``int`` of
        ``now_ns()``; on the wire both are digit strings.
        """
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

    def test_C_TIME_3_non_time_ints_are_refused(self, rig: Rig) -> None:
        """Floats, bools, Decimals, Fractions, strings and None are refused as times.

        In process only: these are Python types; the program checks the wire's numbers.
        """
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
        """Negative times are refused and numpy integers accepted.

        In process only: numpy integers exist only in process.
        """
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
        """Times up to ``2**64 - 1`` are exact.

        In process only: a backend that declares a horizon runs it from a far start
        (``reach``); the program, fixed at start 0, is only reported limited there.
        """
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
        """Past ``2**64 - 1`` a backend is exact or refuses.

        In process only: a backend that declares a horizon runs it from a far start
        (``reach``); the program, fixed at start 0, is only reported limited there.
        """
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
        """Random far times fire exactly, in order.

        In process only: Hypothesis draws the times; a backend that declares a horizon
        runs it from a far start (``reach``); the program, fixed at start 0, is only
        reported limited there.
        """

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

    def test_C_ADV_3_entries_pushed_by_callbacks_fire_in_same_advance(self, rig: Rig) -> None:
        """Entries pushed by callbacks fire in the same advance.

        In process only: a callback pushes a periodic; a wire callback's actions push
        one-shot entries only.
        """
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

    # -- C-STEP ------------------------------------------------------------
