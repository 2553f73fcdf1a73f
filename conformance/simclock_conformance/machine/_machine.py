"""The oracle state machine (SM-ORACLE): one program of protocol requests, every reply checked.

Each step sends protocol requests (SPEC §18) to the backend and the same
requests to an :class:`~simclock_conformance.protocol._engine.Engine` over
``simclock_oracles.ReferenceClock``; every reply must agree with the
oracle's (:func:`~simclock_conformance.protocol._compare.first_difference`): the
firings and failures of every advance, ``now_ns``, ``next_event_ns`` when
the backend has feature ``peek``, and the C-CAN-4 bound on ``stored``. The
transport (:mod:`~simclock_conformance.machine._transport`) is the protocol
engine ``serve`` puts in front of a Python backend, in this process, or a
driver: the same machine checks both.

The rules: ``schedule``, ``schedule_periodic``, ``schedule_rate`` (with
feature ``rate``), ``cancel`` (also twice, and of entries that already
fired), ``advance`` by 0, small and large amounts, a split
``advance(a); advance(b)`` on the backend against ``advance(a + b)`` on the
oracle (C-ADV-5), entries at far anchors and just beyond ``2**64 - 1``,
bursts of ties, ``leap`` across the quiet stretch to just before, at or
after the next entry, and targeted rules for precise ties random programs
reach rarely: ties just past a wheel's first level reached by one advance
(C-TIE-1), a periodic cancelling itself in its first firing (C-CAN-2), a
periodic's re-push after an entry pushed since its registration (C-PER-2) and
a rate whose period is not a whole number of ns (C-X-RATE). Callbacks are
action lists (C-WIRE-4): record the firing, then schedule a child, cancel
themselves or another entry, try a nested ``advance`` (C-ADV-4), raise
(C-ERR-1) or halt (C-ERR-2). Above ``2**64 - 1`` a backend may refuse with
``ValueError`` (then the oracle is not asked); below it, a refusal is a
difference like any other (C-TIME-4).

What the protocol does not carry, and the in-process tests check instead:
a failure event's ``error_type`` (C-ERR-1's own tests; a subclass can
compare it through :attr:`OracleMachine.rig`), the Python type of
``next_event_ns()``'s value (a reply carries its digits: a numpy integer
passes here, C-TIME-1's own tests refuse it; a ``float`` still differs, as
``"5.0"``), a rate given as a ``Fraction`` of denominator 1 (the engine
passes whole rates as ``int``), and callbacks that schedule periodics or
halt only once (no action does; a periodic's ``spawn_next`` child is one
period after its firing, a rate's ``ceil`` of its spacing).

:class:`OracleMachine` is public so that a backend's own tests can subclass
it: define :meth:`~OracleMachine.new_rig`, add invariants on the clock
objects (:attr:`~OracleMachine.backend`, :attr:`~OracleMachine.twins`,
:attr:`~OracleMachine.oracle`), and widen a rule by re-declaring it and
calling ``super()``. ``UNIT`` (a strict grid's step), ``TWINS`` (more
instances that take every split advance unsplit) and ``BUDGET`` (the most a
program advances in all) adapt it to a backend.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, precondition, rule
from hypothesis.stateful import run_state_machine_as_test as run_as_test

from simclock_conformance.kit._harness import Factory
from simclock_conformance.machine._requests import RequestMachine
from simclock_conformance.machine._strategies import (
    ADVANCES,
    ANCHORS,
    BEHAVIOURS,
    BEYOND_OFFSETS,
    BURST_DELAYS,
    DELAYS,
    FAR_OFFSETS,
    FAR_TIE_DELAYS,
    LEAP_OFFSETS,
    MAX_NS,
    MIXED_TIE_DELAYS,
    PERIODS,
    PHASES,
    QUIET,
    RATE_DENOMINATORS,
    RATE_NUMERATORS,
    RATE_PHASES,
    SPLIT,
    WRAP_MULTIPLES,
    WRAPPED_OFFSETS,
    Behaviour,
    Entry,
    private_hypothesis_home,
)
from simclock_conformance.machine._transport import InProcess, Transport
from simclock_conformance.protocol._backends import PythonBackend

__all__ = ["OracleMachine", "make_machine", "private_hypothesis_home", "run_machine"]


class OracleMachine(RequestMachine):
    """Same requests to the backend and to the oracle; every reply must agree.

    A subclass defines :meth:`new_rig` (the backend, listened to by a
    :class:`~simclock_conformance.Rig`), may add invariants on the clock
    objects (:attr:`backend`, :attr:`twins`, :attr:`oracle`, :attr:`rig`) and
    rules of its own, and may widen a rule by re-declaring it with the same
    name and calling ``super()``'s.
    """

    handles = Bundle("handles")

    @rule(target=handles, delay=DELAYS, behaviour=BEHAVIOURS)
    def schedule(self, delay: int, behaviour: Behaviour) -> int:
        return self._after(delay, behaviour)

    @rule(target=handles, anchor=st.sampled_from(ANCHORS), offset=FAR_OFFSETS, behaviour=BEHAVIOURS)
    def schedule_far(self, anchor: int, offset: int, behaviour: Behaviour) -> int:
        """An entry at a far anchor (or now, once past it): float64 and wrap-around show."""
        return self._at(max(self.now, self.on_grid(anchor + offset * self.UNIT)), behaviour)

    @rule(target=handles, k=BEYOND_OFFSETS, behaviour=BEHAVIOURS)
    def schedule_beyond(self, k: int, behaviour: Behaviour) -> int:
        """At 2**64 - 2 .. 2**64 + 1: kept exactly, or refused with ValueError above the max."""
        return self._at(max(self.now, self.on_grid(MAX_NS) + k * self.UNIT), behaviour)

    @rule(target=handles, k=WRAP_MULTIPLES, offset=WRAPPED_OFFSETS, behaviour=BEHAVIOURS)
    def schedule_wrapped(self, k: int, offset: int, behaviour: Behaviour) -> int:
        """Past ``2**64 - 1`` at ``k * 2**64`` plus a time just behind, at or ahead of now.

        Exact or refused with ValueError (C-TIME-4); a clock that keeps times modulo
        2**64 fires it early when the kept time is ahead of now.
        """
        kept = min(MAX_NS, max(0, self.now + offset * self.UNIT))
        return self._at(self.on_grid(k * 2**64 + kept), behaviour)

    @rule(target=handles, period=PERIODS, offset=WRAPPED_OFFSETS, behaviour=BEHAVIOURS)
    def periodic_wrapped_phase(self, period: int, offset: int, behaviour: Behaviour) -> int:
        """A periodic whose phase is ``2**64`` plus a time near now (C-TIME-4, as above)."""
        phase = self.on_grid(2**64 + min(MAX_NS, max(0, self.now + offset * self.UNIT)))
        entry = Entry("schedule_periodic", period_ns=self.units(period), phase_ns=phase)
        return self._entry(entry, behaviour, phase)

    @rule(delay=MIXED_TIE_DELAYS, period=st.integers(1, 5))
    def mixed_ties(self, delay: int, period: int) -> None:
        """One instant reached by every kind of push, over several advances (C-TIE-1).

        A top-level entry, then a periodic whose grid passes the instant (its
        re-pushes), a callback that pushes a child there during the first
        advance, a second top-level entry after that, then an advance there:
        they fire in push order, whoever pushed them.
        """
        unit = self.UNIT
        now = self.now
        if now + (delay + 2) * unit > MAX_NS or now % unit:
            return
        at = now + delay * unit
        self._at(at, ("plain", 0))
        n = self._periodic(period, (at // unit) % period, ("plain", 0))
        self._at(now + unit, ("spawn", delay - 1))
        self._advance(2 * unit)
        self._at(at, ("plain", 0))
        self._advance(at - self.now)
        self._cancel(f"e{n}")

    @rule(delay=BURST_DELAYS, count=st.integers(2, 12), behaviour=BEHAVIOURS)
    def burst(self, delay: int, count: int, behaviour: Behaviour) -> None:
        """``count`` entries at one instant, ties that must fire in push order (C-TIE-1)."""
        at = self.now + self.units(delay)
        for _ in range(count):
            self._at(at, behaviour)

    @rule(delay=FAR_TIE_DELAYS, count=st.integers(2, 6), behaviour=BEHAVIOURS)
    def far_ties(self, delay: int, count: int, behaviour: Behaviour) -> None:
        """Ties past a timer wheel's first level, reached by one advance (C-TIE-1, C-CONF-4).

        A wheel moves such entries down a level when its cursor reaches their
        slot; push order must survive the move. :meth:`burst` makes the ties
        but leaves reaching them to later steps, which a pending short
        periodic can keep from ever getting there within a program.
        """
        now = self.now
        at = now + self.units(delay)
        for _ in range(count):
            self._at(at, behaviour)
        self._advance(at - now)

    @rule(period=st.integers(1, 25))
    def periodic_cancelling_itself(self, period: int) -> None:
        """A periodic that cancels itself in its first firing fires once (C-CAN-2)."""
        self._periodic(period, 0, ("cancel_self", 0))
        self._advance(self.units(3 * period))

    @rule(period=st.integers(1, 25))
    def periodic_meets_a_later_entry(self, period: int) -> None:
        """A periodic's re-push goes after an entry pushed since its registration (C-PER-2).

        The one-shot is pushed between the periodic's registration and its
        first re-push, at its second firing: the one-shot fires first there.
        Like the next rule, a precise tie that random programs reach rarely.
        """
        n = self._periodic(period, 0, ("plain", 0))
        grid = self.made[f"e{n}"].entry.grid() if f"e{n}" in self.made else None
        if grid is not None:
            second = grid.time_of(grid.first_k(self.now) + 1)
            self._at(second, ("plain", 0))
            self._advance(second - self.now)
        self._cancel(f"e{n}")

    @precondition(lambda self: "rate" in self.transport.features and self.UNIT == 1)
    @rule(halves=st.integers(3, 40))
    def rate_between_nanoseconds(self, halves: int) -> None:
        """A rate whose period is ``halves + 0.5`` ns fires at ``ceil(k * period)`` (C-X-RATE).

        A backend that rounds the period to whole nanoseconds drifts by the
        second firing; run for a few periods, then cancelled.
        """
        n = self._rate(Fraction(2 * 10**9, 2 * halves + 1), self.now, ("plain", 0))
        self._advance(4 * halves + 2)
        self._cancel(f"e{n}")

    @rule(target=handles, period=PERIODS, phase=PHASES, behaviour=BEHAVIOURS)
    def schedule_periodic(self, period: int, phase: int, behaviour: Behaviour) -> int:
        return self._periodic(period, phase, behaviour)

    @precondition(lambda self: "rate" in self.transport.features)
    @rule(
        target=handles,
        period_num=RATE_NUMERATORS,
        period_den=RATE_DENOMINATORS,
        phase=RATE_PHASES,
        behaviour=BEHAVIOURS,
    )
    def schedule_rate(
        self, period_num: int, period_den: int, phase: int, behaviour: Behaviour
    ) -> int:
        # A period of period_num/period_den ns, often not a whole number of ns; on
        # a grid, a whole number of steps (a strict grid takes no other).
        if self.UNIT == 1:
            rate = Fraction(1_000_000_000 * period_den, period_num)
        else:
            rate = Fraction(1_000_000_000, self.UNIT * max(1, period_num // period_den))
        return self._rate(rate, self.units(phase), behaviour)

    @rule(h=handles)
    def cancel(self, h: int) -> None:
        self._cancel(f"e{h}")

    @rule(dt=ADVANCES)
    def advance(self, dt: int) -> None:
        self._advance(self.units(dt))

    @rule(offset=LEAP_OFFSETS, quiet=QUIET)
    def leap(self, offset: int, quiet: int) -> None:
        """A long advance to just before, at or just after the next entry (C-CONF-4).

        With nothing pending, a quiet stretch of up to ``2**62`` ns.
        """
        if self.upcoming is None:
            self._advance(self.units(quiet))
        else:
            self._advance(max(0, self.upcoming - self.now + offset * self.UNIT))

    @rule(a=SPLIT, b=SPLIT)
    def advance_split(self, a: int, b: int) -> None:
        """C-ADV-5: the backend advances by ``a`` then ``b``; twins and the oracle by ``a + b``."""
        self._advance_split(self.units(a), self.units(b))


def make_machine(factory: Factory) -> type[OracleMachine]:
    """The oracle machine on ``factory`` in process (its Hypothesis name: ``ClockVersusOracle``).

    The requests go through the protocol engine ``serve`` runs, over
    ``factory``'s clocks (one backend object, so its features are found once).
    """
    backend = PythonBackend(factory, "in-process")

    class ClockVersusOracle(OracleMachine):
        """Same requests to the backend and to the oracle; every reply must agree."""

        def new_transport(self) -> Transport:
            return InProcess(backend)

    return ClockVersusOracle


def run_machine(factory: Factory, machine_settings: settings) -> None:
    """Run the state machine against ``factory``; raise on the first (shrunk) divergence."""
    with private_hypothesis_home():
        run_as_test(make_machine(factory), settings=machine_settings)
