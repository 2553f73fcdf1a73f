"""The Hypothesis state machine: a backend and ``simclock_oracles.ReferenceClock`` side by side.

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

Times cover the whole range (C-CONF-4, C-TIME-4): delays and periods are drawn
small (ties, interleavings), medium (past a timer wheel's first level) and up
to ``2**64 - 1``; entries are placed at anchors (``2**53``, ``2**60``,
``2**63``, ``2**64 - 1``, ...) and just beyond ``2**64 - 1``, alone or in dense
bursts at one instant; ``leap`` advances across the quiet stretch to just
before, at or after the next pending entry, so far ties are reached by long
advances without firing a short periodic billions of times. Above
``2**64 - 1`` a backend may refuse with ``ValueError`` (then nothing may
change); below it, refusing a valid time is a C-TIME-4 failure.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
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

from simclock.lowlevel import Handle, describe_exception
from simclock_conformance._harness import Factory, Rig, make_rig
from simclock_oracles import ReferenceClock

__all__ = ["MAX_NS", "private_hypothesis_home", "run_machine"]

MAX_NS = 2**64 - 1
"""The largest time every backend must keep exactly (C-TIME-4: the MCAP limit)."""

ANCHORS = (2**32, 2**53, 2**60, 2**63, MAX_NS - 64)
"""Far instants where float64 rounds, signed 64-bit wraps, or a wheel's top levels live."""

DELAYS: st.SearchStrategy[int] = st.one_of(
    st.integers(0, 40), st.integers(41, 70_000), st.integers(0, MAX_NS)
)
"""Delays from now: ties and interleavings, past a wheel's first levels, the whole range."""

Behaviour = tuple[str, int]
"""``(kind, arg)``: what a callback does after recording its firing."""

BEHAVIOURS: st.SearchStrategy[Behaviour] = st.one_of(
    st.tuples(st.just("plain"), st.just(0)),
    st.tuples(st.just("raise"), st.just(0)),
    st.tuples(st.just("cancel_self"), st.just(0)),
    st.tuples(st.just("spawn"), st.integers(0, 12)),
    st.tuples(st.just("spawn"), st.integers(1025, 70_000)),
    st.tuples(st.just("cancel_other"), st.integers(0, 30)),
    st.tuples(st.just("nested_advance"), st.integers(0, 5)),
    st.tuples(st.just("halt"), st.just(0)),
)


class Boom(Exception):  # noqa: N818  (the name the failure events carry)
    """What a raising callback raises (C-ERR-1); never mistaken for a refused argument."""


class Halt(BaseException):
    """A ``BaseException`` that is not an ``Exception``: must escape ``advance`` (C-ERR-2)."""


@dataclass
class Side:
    """One of the two clocks with everything it has observed."""

    clock: Any
    trace: list[tuple[str, int]] = field(default_factory=list)
    handles: list[Handle | None] = field(default_factory=list)
    spawned: dict[str, int] = field(default_factory=dict)

    def callback(self, ident: str, behaviour: Behaviour) -> Callable[[], None]:
        """The callback of entry ``ident`` on this clock."""
        kind, arg = behaviour
        clock = self.clock

        def fire() -> None:
            now = clock.now_ns()
            self.trace.append((ident, now))
            if kind == "raise":
                raise Boom(f"boom {ident}")
            if kind == "halt":
                raise Halt(ident)
            if kind == "cancel_self" and ident.isdigit():
                _cancel(self.handles[int(ident)])
            elif kind == "cancel_other" and arg < len(self.handles):
                _cancel(self.handles[arg])
            elif kind == "spawn":
                n = self.spawned.get(ident, 0)
                self.spawned[ident] = n + 1
                child = f"{ident}.{n}"
                # Near 2**64 - 1 a child goes at now: a backend may refuse times beyond it.
                at = now + arg if now + arg <= MAX_NS else now
                clock.schedule(at, self.callback(child, ("plain", 0)))
            elif kind == "nested_advance":
                try:
                    clock.advance(arg if now + arg <= MAX_NS else 0)
                except RuntimeError:
                    self.trace.append((f"{ident}:nested-refused", clock.now_ns()))
                else:
                    self.trace.append((f"{ident}:nested-allowed", clock.now_ns()))

        fire.__qualname__ = f"entry_{ident}"
        return fire


def _cancel(handle: Handle | None) -> None:
    if handle is not None:
        handle.cancel()


def _advance(side: Side, dt: int) -> bool:
    """``advance(dt)``; a :class:`Halt` is recorded in the trace. False when halted."""
    try:
        side.clock.advance(dt)
    except Halt as halt:
        side.trace.append((f"halted:{halt}", side.clock.now_ns()))
        return False
    return True


def _refused_beyond(clock: Any, what: str, value: int, call: Callable[[], object]) -> bool:
    """Run ``call``; True when the backend cleanly refused a time above ``2**64 - 1``.

    A ``ValueError`` for a value up to ``2**64 - 1`` is a C-TIME-4 failure.
    """
    try:
        call()
    except ValueError as exc:
        if value <= MAX_NS:
            raise AssertionError(
                f"C-TIME-4: {what} {value} (<= 2**64-1) was refused with "
                f"{describe_exception(exc)}; keep every time up to 2**64-1 exactly"
            ) from exc
        return True
    return False


def _hypothesis_dir() -> Path:
    """The suite's own Hypothesis storage: under the system temp dir, one per user."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = Path(tempfile.gettempdir()) / f"simclock-conformance-hypothesis-{uid}"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


@contextlib.contextmanager
def private_hypothesis_home() -> Iterator[None]:
    """Point Hypothesis's storage away from the working directory (C-CONF-5).

    Hypothesis caches data (e.g. the constants it found in source files) under
    ``.hypothesis/`` in the working directory even without an example
    database; the suite runs inside other projects and must write nothing
    there. The cache is kept in a per-user temporary directory, so later runs
    stay fast; the caller's own setting is restored afterwards.
    """
    from hypothesis import configuration

    previous = vars(configuration).get("__hypothesis_home_directory")
    configuration.set_hypothesis_home_dir(_hypothesis_dir())
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(previous)


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
            # True once the backend accepted a time above 2**64 - 1 (C-TIME-4 allows both).
            self.beyond = False

        def _both(
            self,
            call: Callable[[Side, Callable[[], None]], Handle],
            b: Behaviour,
            value: int = 0,
            what: str = "",
        ) -> int:
            """Make the same entry on both clocks; ``value`` is the time a backend may refuse."""
            ident = str(len(self.backend.handles))
            made: list[Handle] = []
            backend_cb = self.backend.callback(ident, b)

            def on_backend() -> None:
                made.append(call(self.backend, backend_cb))

            if _refused_beyond(self.backend.clock, what, value, on_backend):
                # Refused above 2**64 - 1: neither clock has the entry.
                self.backend.handles.append(None)
                self.oracle.handles.append(None)
                return int(ident)
            if value > MAX_NS:
                self.beyond = True
            self.backend.handles.append(made[0])
            self.oracle.handles.append(call(self.oracle, self.oracle.callback(ident, b)))
            return int(ident)

        def _at(self, at: int, behaviour: Behaviour) -> int:
            return self._both(
                lambda s, cb: s.clock.schedule(at, cb), behaviour, at, "schedule at_ns"
            )

        @rule(target=handles, delay=DELAYS, behaviour=BEHAVIOURS)
        def schedule(self, delay: int, behaviour: Behaviour) -> int:
            return self._at(self.oracle.clock.now_ns() + delay, behaviour)

        @rule(
            target=handles,
            anchor=st.sampled_from(ANCHORS),
            offset=st.integers(-2, 3),
            behaviour=BEHAVIOURS,
        )
        def schedule_far(self, anchor: int, offset: int, behaviour: Behaviour) -> int:
            """An entry at a far anchor (or now, once past it): float64 and wrap-around show."""
            return self._at(max(self.oracle.clock.now_ns(), anchor + offset), behaviour)

        @rule(target=handles, k=st.integers(-1, 2), behaviour=BEHAVIOURS)
        def schedule_beyond(self, k: int, behaviour: Behaviour) -> int:
            """At 2**64 - 2 .. 2**64 + 1: kept exactly, or refused with ValueError above the max."""
            now = self.oracle.clock.now_ns()
            return self._at(max(now, MAX_NS + k), behaviour)

        @rule(
            delay=st.one_of(st.integers(0, 40), st.integers(1025, 2**20), st.integers(0, 2**62)),
            count=st.integers(2, 12),
            behaviour=BEHAVIOURS,
        )
        def burst(self, delay: int, count: int, behaviour: Behaviour) -> None:
            """``count`` entries at one instant, ties that must fire in push order (C-TIE-1)."""
            at = self.oracle.clock.now_ns() + delay
            for _ in range(count):
                self._at(at, behaviour)

        @rule(
            target=handles,
            period=st.one_of(st.integers(1, 25), st.integers(26, 5000), st.integers(2**20, 2**62)),
            phase=st.one_of(st.integers(0, 60), st.sampled_from(ANCHORS[:4])),
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
            _cancel(self.backend.handles[h])
            _cancel(self.oracle.handles[h])

        def _advance_both(self, dt: int) -> None:
            target = self.oracle.clock.now_ns() + dt
            backend = self.backend

            def on_backend() -> None:
                _advance(backend, dt)

            if not _refused_beyond(backend.clock, "advance to target", target, on_backend):
                _advance(self.oracle, dt)

        @rule(dt=st.one_of(st.just(0), st.integers(1, 10), st.integers(11, 120)))
        def advance(self, dt: int) -> None:
            self._advance_both(dt)

        @rule(offset=st.integers(-1, 1), quiet=st.integers(0, 2**62))
        def leap(self, offset: int, quiet: int) -> None:
            """A long advance to just before, at or just after the next entry (C-CONF-4).

            With nothing pending, a quiet stretch of up to ``2**62`` ns.
            """
            now = self.oracle.clock.now_ns()
            upcoming = self.oracle.clock.next_event_ns()
            self._advance_both(quiet if upcoming is None else max(0, upcoming - now + offset))

        @rule(a=st.integers(0, 40), b=st.integers(0, 40))
        def advance_split(self, a: int, b: int) -> None:
            if self.oracle.clock.now_ns() + a + b > MAX_NS:
                return
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
                if op is not None and op > MAX_NS and not self.beyond:
                    return  # a backend that refuses times above 2**64 - 1 may keep them as it likes
                assert bp == op, f"SM-ORACLE: next_event_ns() is {bp}, oracle says {op}"
                assert bp is None or type(bp) is int, (
                    f"C-TIME-1: next_event_ns() returned {type(bp).__name__} {bp!r}, not int"
                )

    return ClockVersusOracle


def run_machine(factory: Factory, machine_settings: settings) -> None:
    """Run the state machine against ``factory``; raise on the first (shrunk) divergence."""
    machine = make_machine(factory)
    with private_hypothesis_home():
        run_state_machine_as_test(machine, settings=machine_settings)
