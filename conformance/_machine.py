"""The Hypothesis state machine: a backend and ``oracles.ReferenceClock`` side by side.

Both clocks receive the same program: ``schedule``, ``schedule_periodic``,
``schedule_rate`` (when the backend has it), ``cancel`` (also twice, and of
entries that already fired), ``advance`` by 0, small and large amounts, and a
split ``advance(a); advance(b)`` on the backend against ``advance(a + b)`` on
the oracle (C-ADV-5). Callbacks record ``(id, now)`` and may schedule a child,
cancel themselves or another entry, try a nested ``advance`` (C-ADV-4),
raise an ``Exception`` (C-ERR-1) or a ``BaseException`` that must escape
``advance`` (C-ERR-2). After every step the traces, the failures (bus events of the
backend against the oracle's ``failures``), ``now_ns`` and, when available,
``next_event_ns`` must be equal. Hypothesis shrinks a divergence to a minimal
program, which the report shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from conformance._harness import Factory, Rig, make_rig
from oracles import ReferenceClock
from simclock import Handle

__all__ = ["run_machine"]

Behaviour = tuple[str, int]
"""``(kind, arg)``: what a callback does after recording its firing."""

BEHAVIOURS: st.SearchStrategy[Behaviour] = st.one_of(
    st.tuples(st.just("plain"), st.just(0)),
    st.tuples(st.just("raise"), st.just(0)),
    st.tuples(st.just("cancel_self"), st.just(0)),
    st.tuples(st.just("spawn"), st.integers(0, 12)),
    st.tuples(st.just("cancel_other"), st.integers(0, 30)),
    st.tuples(st.just("nested_advance"), st.integers(0, 5)),
    st.tuples(st.just("halt"), st.just(0)),
)


class Halt(BaseException):
    """A ``BaseException`` that is not an ``Exception``: must escape ``advance`` (C-ERR-2)."""


@dataclass
class Side:
    """One of the two clocks with everything it has observed."""

    clock: Any
    trace: list[tuple[str, int]] = field(default_factory=list)
    handles: list[Handle] = field(default_factory=list)
    spawned: dict[str, int] = field(default_factory=dict)

    def callback(self, ident: str, behaviour: Behaviour) -> Callable[[], None]:
        """The callback of entry ``ident`` on this clock."""
        kind, arg = behaviour
        clock = self.clock

        def fire() -> None:
            now = clock.now_ns()
            self.trace.append((ident, now))
            if kind == "raise":
                raise ValueError(f"boom {ident}")
            if kind == "halt":
                raise Halt(ident)
            if kind == "cancel_self" and ident.isdigit():
                self.handles[int(ident)].cancel()
            elif kind == "cancel_other" and arg < len(self.handles):
                self.handles[arg].cancel()
            elif kind == "spawn":
                n = self.spawned.get(ident, 0)
                self.spawned[ident] = n + 1
                child = f"{ident}.{n}"
                clock.schedule(now + arg, self.callback(child, ("plain", 0)))
            elif kind == "nested_advance":
                try:
                    clock.advance(arg)
                except RuntimeError:
                    self.trace.append((f"{ident}:nested-refused", clock.now_ns()))
                else:
                    self.trace.append((f"{ident}:nested-allowed", clock.now_ns()))

        fire.__qualname__ = f"entry_{ident}"
        return fire


def _advance(side: Side, dt: int) -> bool:
    """``advance(dt)``; a :class:`Halt` is recorded in the trace. False when halted."""
    try:
        side.clock.advance(dt)
    except Halt as halt:
        side.trace.append((f"halted:{halt}", side.clock.now_ns()))
        return False
    return True


def _failures_of_rig(rig: Rig) -> list[tuple[int, str, str]]:
    return [
        (e.at_ns, str(e.details.get("error_type")), str(e.details.get("error_message")))
        for e in rig.failures()
    ]


def _first_difference(a: list[Any], b: list[Any]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"first difference at index {i}: backend {x!r}, oracle {y!r}"
    return f"lengths differ: backend has {len(a)}, oracle {len(b)}"


def make_machine(factory: Factory) -> type[RuleBasedStateMachine]:
    """A state machine class bound to ``factory``."""

    class ClockVersusOracle(RuleBasedStateMachine):
        """Same program on the backend and on the oracle; every observation must agree."""

        handles = Bundle("handles")

        def __init__(self) -> None:
            super().__init__()
            self.rig = make_rig(factory, 0)
            self.backend = Side(self.rig.clock)
            self.oracle = Side(ReferenceClock())
            self.has_rate = callable(getattr(self.rig.clock, "schedule_rate", None))
            self.has_peek = callable(getattr(self.rig.clock, "next_event_ns", None))

        def _both(self, call: Callable[[Side, Callable[[], None]], Handle], b: Behaviour) -> int:
            ident = str(len(self.backend.handles))
            for side in (self.backend, self.oracle):
                side.handles.append(call(side, side.callback(ident, b)))
            return int(ident)

        @rule(target=handles, delay=st.integers(0, 40), behaviour=BEHAVIOURS)
        def schedule(self, delay: int, behaviour: Behaviour) -> int:
            return self._both(
                lambda s, cb: s.clock.schedule(s.clock.now_ns() + delay, cb), behaviour
            )

        @rule(
            target=handles,
            period=st.integers(1, 25),
            phase=st.integers(0, 60),
            behaviour=BEHAVIOURS,
        )
        def schedule_periodic(self, period: int, phase: int, behaviour: Behaviour) -> int:
            return self._both(lambda s, cb: s.clock.schedule_periodic(period, cb, phase), behaviour)

        @precondition(lambda self: self.has_rate)
        @rule(
            target=handles,
            period_num=st.integers(3, 40),
            period_den=st.integers(1, 3),
            phase=st.integers(0, 60),
            behaviour=BEHAVIOURS,
        )
        def schedule_rate(
            self, period_num: int, period_den: int, phase: int, behaviour: Behaviour
        ) -> int:
            # A period of period_num/period_den ns, often not a whole number of ns.
            rate = Fraction(1_000_000_000 * period_den, period_num)
            return self._both(lambda s, cb: s.clock.schedule_rate(rate, cb, phase), behaviour)

        @rule(h=handles)
        def cancel(self, h: int) -> None:
            self.backend.handles[h].cancel()
            self.oracle.handles[h].cancel()

        @rule(dt=st.one_of(st.just(0), st.integers(1, 10), st.integers(11, 120)))
        def advance(self, dt: int) -> None:
            _advance(self.backend, dt)
            _advance(self.oracle, dt)

        @rule(a=st.integers(0, 40), b=st.integers(0, 40))
        def advance_split(self, a: int, b: int) -> None:
            # A halt stops the run where it happened on both clocks (C-ERR-2).
            if _advance(self.backend, a):
                _advance(self.backend, b)
            _advance(self.oracle, a + b)

        @invariant()
        def agree(self) -> None:
            b, o = self.backend, self.oracle
            assert b.trace == o.trace, "SM-ORACLE: firing traces differ; " + _first_difference(
                b.trace, o.trace
            )
            bf = _failures_of_rig(self.rig)
            of = [(f.at_ns, f.error_type, f.error_message) for f in o.clock.failures]
            assert bf == of, "SM-ORACLE: failure events differ; " + _first_difference(bf, of)
            bn, on = b.clock.now_ns(), o.clock.now_ns()
            assert bn == on, f"SM-ORACLE: now_ns() is {bn}, oracle says {on}"
            if self.has_peek:
                bp, op = b.clock.next_event_ns(), o.clock.next_event_ns()
                assert bp == op, f"SM-ORACLE: next_event_ns() is {bp}, oracle says {op}"

    return ClockVersusOracle


def run_machine(factory: Factory, machine_settings: settings) -> None:
    """Run the state machine against ``factory``; raise on the first (shrunk) divergence."""
    machine = make_machine(factory)
    run_state_machine_as_test(machine, settings=machine_settings)
