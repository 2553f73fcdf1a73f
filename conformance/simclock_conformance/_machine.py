"""The oracle state machine: a backend and ``simclock_oracles.ReferenceClock`` side by side.

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

:class:`OracleMachine` is the machine itself, public so that a backend's own
tests can subclass it: define :meth:`OracleMachine.new_rig`, add invariants on
the backend's internals (the rules and the oracle comparison are inherited),
and optionally widen a rule's strategies by re-declaring it and calling
``super()``. Class attributes adapt it to a backend: :attr:`~OracleMachine.UNIT`
(a strict grid's step: every generated time is a multiple of it),
:attr:`~OracleMachine.TWINS` (more instances of the backend that take every
split advance unsplit) and :attr:`~OracleMachine.BUDGET` (the most a program
advances in all). The strategies are shared with the wire machine
(:mod:`simclock_conformance._wire_machine`), which sends the same kinds of
programs to a driver as protocol requests.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar

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
from simclock_conformance.kit._harness import Factory, Rig, make_rig
from simclock_conformance.kit._reach import rig_started
from simclock_oracles import ReferenceClock

__all__ = [
    "ADVANCES",
    "ANCHORS",
    "BEHAVIOURS",
    "DELAYS",
    "MAX_NS",
    "PERIODS",
    "PHASES",
    "Entry",
    "Grid",
    "Made",
    "OracleMachine",
    "Side",
    "make_machine",
    "private_hypothesis_home",
    "run_machine",
]

MAX_NS = 2**64 - 1
"""The largest time every backend must keep exactly (C-TIME-4: the MCAP limit)."""

ANCHORS = (2**32, 2**53, 2**60, 2**63, MAX_NS - 64)
"""Far instants where float64 rounds, signed 64-bit wraps, or a wheel's top levels live."""

# -- strategies (shared with the wire machine) --------------------------------

DELAYS: st.SearchStrategy[int] = st.one_of(
    st.integers(0, 40), st.integers(41, 70_000), st.integers(0, MAX_NS)
)
"""Delays from now: ties and interleavings, past a wheel's first levels, the whole range."""

FAR_OFFSETS = st.integers(-2, 3)
"""Offsets around a far anchor: just before, at and just after it."""

BEYOND_OFFSETS = st.integers(-1, 2)
"""Offsets around ``2**64 - 1``: the last two valid times and the first two beyond."""

PERIODS: st.SearchStrategy[int] = st.one_of(
    st.integers(1, 25), st.integers(26, 5000), st.integers(2**20, 2**62)
)
"""Periods: dense ties with one-shots, a wheel's levels, far apart."""

PHASES: st.SearchStrategy[int] = st.one_of(st.integers(0, 60), st.sampled_from(ANCHORS[:4]))
"""Phases: near now, or at a far anchor."""

RATE_NUMERATORS = st.integers(3, 40)
RATE_DENOMINATORS = st.integers(1, 3)
"""A rate's period is ``numerator/denominator`` ns: often not a whole number of ns."""

RATE_PHASES = st.integers(0, 60)
"""Phases of rates."""

ADVANCES: st.SearchStrategy[int] = st.one_of(st.just(0), st.integers(1, 10), st.integers(11, 120))
"""Plain advances: zero, small, a little longer."""

FAR_TIE_DELAYS = st.integers(1025, 1280)
"""Ties just past a 1024-slot first level: far enough to be moved, near enough to reach."""

LEAP_OFFSETS = st.integers(-1, 1)
"""A leap ends just before, at or just after the next entry."""

QUIET = st.integers(0, 2**62)
"""A leap with nothing pending: a quiet stretch of up to ``2**62`` ns."""

SPLIT = st.integers(0, 40)
"""Each half of a split advance (C-ADV-5)."""

Behaviour = tuple[str, int]
"""``(kind, arg)``: what a callback does after recording its firing (see :meth:`Side.callback`)."""

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
"""The suite's behaviours; :meth:`Side.callback` also knows ``halt_once``,
``spawn_next``, ``spawn_periodic`` and ``cancel_any`` for subclasses that draw them."""


class Boom(Exception):  # noqa: N818  (the name the failure events carry)
    """What a raising callback raises (C-ERR-1); never mistaken for a refused argument."""


class Halt(BaseException):
    """A ``BaseException`` that is not an ``Exception``: must escape ``advance`` (C-ERR-2)."""


# -- entries as data ------------------------------------------------------------


@dataclass(frozen=True)
class Grid:
    """Firing times ``phase + ceil(k * spacing)``: a period (int spacing) or a rate (C-X-RATE)."""

    phase: int
    spacing: Fraction

    @classmethod
    def periodic(cls, period: int, phase: int) -> Grid:
        """The grid of ``schedule_periodic(period, cb, phase)`` (C-PER-1)."""
        return cls(phase, Fraction(period))

    @classmethod
    def rate(cls, rate_hz: Fraction, phase: int) -> Grid:
        """The grid of ``schedule_rate(rate_hz, cb, phase)`` (C-X-RATE)."""
        return cls(phase, Fraction(10**9) / rate_hz)

    def time_of(self, k: int) -> int:
        """The ``k``-th point of the grid."""
        return self.phase + math.ceil(k * self.spacing)

    def first_k(self, now: int) -> int:
        """The first k with ``time_of(k) >= now`` (C-PER-1), by a short upward walk."""
        k = max(0, math.floor((now - self.phase) / self.spacing) - 2)
        while self.time_of(k) < now:
            k += 1
        return k


@dataclass(frozen=True)
class Entry:
    """An entry as data: ``op`` is ``schedule``, ``schedule_periodic`` or ``schedule_rate``."""

    op: str
    at_ns: int = 0
    period_ns: int = 0
    rate_hz: int | Fraction = 0
    phase_ns: int = 0

    def make(self, clock: Any, cb: Callable[[], None]) -> Handle:
        """Make this entry on ``clock`` with callback ``cb``."""
        if self.op == "schedule":
            return clock.schedule(self.at_ns, cb)  # type: ignore[no-any-return]
        if self.op == "schedule_periodic":
            return clock.schedule_periodic(self.period_ns, cb, self.phase_ns)  # type: ignore[no-any-return]
        return clock.schedule_rate(self.rate_hz, cb, self.phase_ns)  # type: ignore[no-any-return]

    def grid(self) -> Grid | None:
        """Where a periodic or a rate fires; ``None`` for a one-shot."""
        if self.op == "schedule_periodic":
            return Grid.periodic(self.period_ns, self.phase_ns)
        if self.op == "schedule_rate":
            return Grid.rate(Fraction(self.rate_hz), self.phase_ns)
        return None


@dataclass(frozen=True)
class Made:
    """An entry a clock accepted: its push order, its data, its handle, and ``now`` at the push."""

    seq: int
    entry: Entry
    handle: Handle
    registered_at: int


@dataclass
class Side:
    """One clock with everything it has observed.

    ``handles`` holds the entries the rules made (``None`` where the backend
    refused a time above ``2**64 - 1``); ``made`` every entry the clock
    accepted, children of callbacks too, in push order.
    """

    clock: Any
    unit: int = 1
    trace: list[tuple[str, int]] = field(default_factory=list)
    handles: list[Handle | None] = field(default_factory=list)
    spawned: dict[str, int] = field(default_factory=dict)
    made: dict[str, Made] = field(default_factory=dict)
    fired: dict[str, int] = field(default_factory=dict)

    def make(self, ident: str, entry: Entry, behaviour: Behaviour) -> Handle:
        """Make ``entry`` as entry ``ident`` whose callback does ``behaviour``."""
        registered_at = self.clock.now_ns()
        handle = entry.make(self.clock, self.callback(ident, behaviour, entry))
        self.made[ident] = Made(len(self.made), entry, handle, registered_at)
        return handle

    def callback(
        self, ident: str, behaviour: Behaviour, entry: Entry | None = None
    ) -> Callable[[], None]:
        """The callback of entry ``ident`` on this clock.

        ``behaviour`` is ``(kind, arg)``: ``plain``; ``raise`` (C-ERR-1);
        ``halt`` (C-ERR-2), ``halt_once`` (on its first firing only);
        ``cancel_self``; ``cancel_other`` (rule-made entry ``arg``);
        ``cancel_any`` (entry ``arg`` modulo all made so far); ``spawn`` (a
        one-shot child ``arg`` units later), ``spawn_next`` (a child at this
        periodic's next firing, where C-PER-2 decides who goes first),
        ``spawn_periodic`` (a periodic child of ``arg % 9 + 1`` units);
        ``nested_advance`` (by ``arg`` units: refused, C-ADV-4).
        """
        kind, arg = behaviour
        clock = self.clock
        unit = self.unit

        def fire() -> None:
            now = clock.now_ns()
            self.trace.append((ident, now))
            n = self.fired.get(ident, 0)
            self.fired[ident] = n + 1
            if kind == "raise":
                raise Boom(f"boom {ident}")
            if kind == "halt" or (kind == "halt_once" and n == 0):
                raise Halt(ident)
            if kind == "cancel_self" and ident in self.made:
                self.made[ident].handle.cancel()
            elif kind == "cancel_other" and arg < len(self.handles):
                _cancel(self.handles[arg])
            elif kind == "cancel_any" and self.made:
                list(self.made.values())[arg % len(self.made)].handle.cancel()
            elif kind in ("spawn", "spawn_next", "spawn_periodic"):
                self._spawn(ident, kind, arg, now, entry)
            elif kind == "nested_advance":
                step = arg * unit
                try:
                    clock.advance(step if now + step <= MAX_NS else 0)
                except RuntimeError:
                    self.trace.append((f"{ident}:nested-refused", clock.now_ns()))
                else:
                    self.trace.append((f"{ident}:nested-allowed", clock.now_ns()))

        fire.__qualname__ = f"entry_{ident}"
        return fire

    def _spawn(self, ident: str, kind: str, arg: int, now: int, entry: Entry | None) -> None:
        n = self.spawned.get(ident, 0)
        self.spawned[ident] = n + 1
        child = f"{ident}.{n}"
        if kind == "spawn_periodic":
            period = (arg % 9 + 1) * self.unit
            self.make(child, Entry("schedule_periodic", period_ns=period), ("plain", 0))
            return
        # Near 2**64 - 1 a child goes at now: a backend may refuse times beyond it.
        at = now + arg * self.unit
        grid = entry.grid() if entry is not None and kind == "spawn_next" else None
        if grid is not None:
            made = self.made[ident]
            at = grid.time_of(grid.first_k(made.registered_at) + self.fired[ident])
        self.make(child, Entry("schedule", at_ns=at if at <= MAX_NS else now), ("plain", 0))


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


class OracleMachine(RuleBasedStateMachine):
    """Same program on the backend and on the oracle; every observation must agree.

    A subclass defines :meth:`new_rig` (the backend, listened to by a
    :class:`~simclock_conformance.Rig`) and may add invariants and rules of its
    own. After :meth:`start_at` (called with 0 by ``__init__``) the machine has
    ``rig`` and ``backend`` (a :class:`Side`: the backend clock and what it
    observed), ``twins`` and ``twin_rigs`` (see :attr:`TWINS`) and ``oracle``
    (the :class:`Side` of ``ReferenceClock``).
    """

    UNIT: ClassVar[int] = 1
    """The step of a strict grid: every generated time, period and advance is a multiple of it."""

    TWINS: ClassVar[int] = 0
    """More instances of the backend that receive every call, a split advance unsplit (C-ADV-5)."""

    BUDGET: ClassVar[int | None] = None
    """The most one program advances in all (``None``: no limit); longer advances are cut."""

    handles = Bundle("handles")

    def __init__(self) -> None:
        super().__init__()
        self.budget = self.BUDGET
        self.start_at(0)

    def new_rig(self, start: int) -> Rig:
        """A fresh backend at ``now_ns() == start`` with its bus listened to."""
        raise NotImplementedError(
            f"the oracle machine {type(self).__name__!r} has no new_rig(start): define it in "
            "your subclass of OracleMachine, returning make_rig(factory) for your factory"
        )

    def start_at(self, start: int) -> None:
        """Start every clock afresh at ``start`` (0 when the machine is made)."""
        self.rig = self.new_rig(start)
        self.backend = Side(self.rig.clock, self.UNIT)
        self.twin_rigs = [self.new_rig(start) for _ in range(self.TWINS)]
        self.twins = [Side(rig.clock, self.UNIT) for rig in self.twin_rigs]
        self.oracle = Side(ReferenceClock(start_ns=start) if start else ReferenceClock(), self.UNIT)
        self.has_rate = callable(getattr(self.rig.clock, "schedule_rate", None))
        self.has_peek = callable(getattr(self.rig.clock, "next_event_ns", None))
        # True once the backend accepted a time above 2**64 - 1 (C-TIME-4 allows both).
        self.beyond = False

    @property
    def sides(self) -> list[Side]:
        """The backend, its twins and the oracle."""
        return [self.backend, *self.twins, self.oracle]

    def units(self, n: int) -> int:
        """``n`` grid steps, or ``n`` rounded to the grid where ``n`` steps pass ``2**64 - 1``."""
        unit = self.UNIT
        return n * unit if n <= MAX_NS // unit else n - n % unit

    def on_grid(self, t: int) -> int:
        """The instant ``t`` rounded down to the grid."""
        return t - t % self.UNIT

    def _both(self, entry: Entry, b: Behaviour, value: int = 0, what: str = "") -> int:
        """Make the same entry on every clock; ``value`` is the time a backend may refuse."""
        ident = str(len(self.backend.handles))
        made: list[Handle] = []

        def on_backend() -> None:
            made.append(self.backend.make(ident, entry, b))

        if _refused_beyond(self.backend.clock, what, value, on_backend):
            # Refused above 2**64 - 1: no clock has the entry.
            for side in self.sides:
                side.handles.append(None)
            return int(ident)
        if value > MAX_NS:
            self.beyond = True
        self.backend.handles.append(made[0])
        for side in (*self.twins, self.oracle):
            side.handles.append(side.make(ident, entry, b))
        return int(ident)

    def _at(self, at: int, behaviour: Behaviour) -> int:
        return self._both(Entry("schedule", at_ns=at), behaviour, at, "schedule at_ns")

    def _after(self, delay: int, behaviour: Behaviour) -> int:
        return self._at(self.oracle.clock.now_ns() + self.units(delay), behaviour)

    def _periodic(self, period: int, phase: int, behaviour: Behaviour) -> int:
        entry = Entry("schedule_periodic", period_ns=self.units(period), phase_ns=self.units(phase))
        return self._both(entry, behaviour)

    def _rate(self, rate: int | Fraction, phase: int, behaviour: Behaviour) -> int:
        return self._both(Entry("schedule_rate", rate_hz=rate, phase_ns=phase), behaviour)

    @rule(target=handles, delay=DELAYS, behaviour=BEHAVIOURS)
    def schedule(self, delay: int, behaviour: Behaviour) -> int:
        return self._after(delay, behaviour)

    @rule(
        target=handles,
        anchor=st.sampled_from(ANCHORS),
        offset=FAR_OFFSETS,
        behaviour=BEHAVIOURS,
    )
    def schedule_far(self, anchor: int, offset: int, behaviour: Behaviour) -> int:
        """An entry at a far anchor (or now, once past it): float64 and wrap-around show."""
        at = self.on_grid(anchor + offset * self.UNIT)
        return self._at(max(self.oracle.clock.now_ns(), at), behaviour)

    @rule(target=handles, k=BEYOND_OFFSETS, behaviour=BEHAVIOURS)
    def schedule_beyond(self, k: int, behaviour: Behaviour) -> int:
        """At 2**64 - 2 .. 2**64 + 1: kept exactly, or refused with ValueError above the max."""
        now = self.oracle.clock.now_ns()
        return self._at(max(now, self.on_grid(MAX_NS) + k * self.UNIT), behaviour)

    @rule(
        delay=st.one_of(st.integers(0, 40), st.integers(1025, 2**20), st.integers(0, 2**62)),
        count=st.integers(2, 12),
        behaviour=BEHAVIOURS,
    )
    def burst(self, delay: int, count: int, behaviour: Behaviour) -> None:
        """``count`` entries at one instant, ties that must fire in push order (C-TIE-1)."""
        at = self.oracle.clock.now_ns() + self.units(delay)
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
        now = self.oracle.clock.now_ns()
        at = now + self.units(delay)
        for _ in range(count):
            self._at(at, behaviour)
        self._advance_both(at - now)

    @rule(period=st.integers(1, 25))
    def periodic_cancelling_itself(self, period: int) -> None:
        """A periodic that cancels itself in its first firing fires once (C-CAN-2)."""
        self._periodic(period, 0, ("cancel_self", 0))
        self._advance_both(self.units(3 * period))

    @rule(target=handles, period=PERIODS, phase=PHASES, behaviour=BEHAVIOURS)
    def schedule_periodic(self, period: int, phase: int, behaviour: Behaviour) -> int:
        return self._periodic(period, phase, behaviour)

    @precondition(lambda self: self.has_rate)
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
        for side in self.sides:
            _cancel(side.handles[h])

    def _advance_both(self, dt: int) -> None:
        if self.budget is not None:
            dt = min(dt, self.budget)
            self.budget -= dt
        target = self.oracle.clock.now_ns() + dt
        backend = self.backend

        def on_backend() -> None:
            _advance(backend, dt)

        if not _refused_beyond(backend.clock, "advance to target", target, on_backend):
            for side in (*self.twins, self.oracle):
                _advance(side, dt)

    @rule(dt=ADVANCES)
    def advance(self, dt: int) -> None:
        self._advance_both(self.units(dt))

    @rule(offset=LEAP_OFFSETS, quiet=QUIET)
    def leap(self, offset: int, quiet: int) -> None:
        """A long advance to just before, at or just after the next entry (C-CONF-4).

        With nothing pending, a quiet stretch of up to ``2**62`` ns.
        """
        now = self.oracle.clock.now_ns()
        upcoming = self.oracle.clock.next_event_ns()
        if upcoming is None:
            self._advance_both(self.units(quiet))
        else:
            self._advance_both(max(0, upcoming - now + offset * self.UNIT))

    @rule(a=SPLIT, b=SPLIT)
    def advance_split(self, a: int, b: int) -> None:
        a, b = self.units(a), self.units(b)
        if self.budget is not None:
            if a + b > self.budget:
                return
            self.budget -= a + b
        if self.oracle.clock.now_ns() + a + b > MAX_NS:
            return
        # A halt stops the run where it happened on both clocks (C-ERR-2).
        if _advance(self.backend, a):
            _advance(self.backend, b)
        for side in (*self.twins, self.oracle):
            _advance(side, a + b)

    @invariant()
    def agree(self) -> None:
        for side, rig in ((self.backend, self.rig), *zip(self.twins, self.twin_rigs, strict=True)):
            self._agree(side, rig)

    def _agree(self, b: Side, rig: Rig) -> None:
        o = self.oracle
        assert b.trace == o.trace, "SM-ORACLE: firing traces differ; " + _first_difference(
            b.trace, o.trace
        )
        bf = _failures_of_rig(rig)
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


def make_machine(factory: Factory) -> type[OracleMachine]:
    """The oracle machine bound to ``factory`` (its Hypothesis name: ``ClockVersusOracle``)."""

    class ClockVersusOracle(OracleMachine):
        """Same program on the backend and on the oracle; every observation must agree."""

        def new_rig(self, start: int) -> Rig:
            return make_rig(factory, 0) if start == 0 else rig_started(factory, 0, start)

    return ClockVersusOracle


def run_machine(factory: Factory, machine_settings: settings) -> None:
    """Run the state machine against ``factory``; raise on the first (shrunk) divergence."""
    machine = make_machine(factory)
    with private_hypothesis_home():
        run_state_machine_as_test(machine, settings=machine_settings)
