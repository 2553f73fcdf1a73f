"""What the oracle state machine draws, and how a callback's behaviour becomes an action list.

Times cover the whole range (C-CONF-4, C-TIME-4): delays and periods are
drawn small (ties, interleavings), medium (past a timer wheel's first level)
and up to ``2**64 - 1``; entries are placed at anchors (``2**53``, ``2**60``,
``2**63``, ``2**64 - 1``, ...) and just beyond ``2**64 - 1``. A callback's
behaviour is ``(kind, arg)``; :func:`actions` turns it into the action list
of C-WIRE-4 that the protocol engine runs when the entry fires.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "ADVANCES",
    "ANCHORS",
    "BEHAVIOURS",
    "DELAYS",
    "KINDS",
    "MAX_NS",
    "MIXED_TIE_DELAYS",
    "PERIODS",
    "PHASES",
    "WRAPPED_OFFSETS",
    "WRAP_MULTIPLES",
    "Behaviour",
    "Entry",
    "Grid",
    "Made",
    "actions",
    "private_hypothesis_home",
]

MAX_NS = 2**64 - 1
"""The largest time every backend must keep exactly (C-TIME-4: the MCAP limit)."""

ANCHORS = (2**32, 2**53, 2**60, 2**63, MAX_NS - 64)
"""Far instants where float64 rounds, signed 64-bit wraps, or a wheel's top levels live."""

DELAYS: st.SearchStrategy[int] = st.one_of(
    st.integers(0, 40), st.integers(41, 70_000), st.integers(0, MAX_NS)
)
"""Delays from now: ties and interleavings, past a wheel's first levels, the whole range."""

FAR_OFFSETS = st.integers(-2, 3)
"""Offsets around a far anchor: just before, at and just after it."""

BEYOND_OFFSETS = st.integers(-1, 2)
"""Offsets around ``2**64 - 1``: the last two valid times and the first two beyond."""

WRAP_MULTIPLES = st.integers(1, 3)
"""Times past ``2**64 - 1`` are ``k * 2**64`` plus a small time (what a 64-bit counter keeps)."""

WRAPPED_OFFSETS = st.integers(-3, 40)
"""Where that kept time lies from now: just behind, at, or ahead (where a wrap fires early)."""

MIXED_TIE_DELAYS = st.integers(6, 30)
"""How far ahead a tie of top-level, callback and re-pushed entries is made (C-TIE-1)."""

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

BURST_DELAYS = st.one_of(st.integers(0, 40), st.integers(1025, 2**20), st.integers(0, 2**62))
"""Where a burst of ties goes: near, past a wheel's first level, far."""

FAR_TIE_DELAYS = st.integers(1025, 1280)
"""Ties just past a 1024-slot first level: far enough to be moved, near enough to reach."""

LEAP_OFFSETS = st.integers(-1, 1)
"""A leap ends just before, at or just after the next entry."""

QUIET = st.integers(0, 2**62)
"""A leap with nothing pending: a quiet stretch of up to ``2**62`` ns."""

SPLIT = st.integers(0, 40)
"""Each half of a split advance (C-ADV-5)."""

Behaviour = tuple[str, int]
"""``(kind, arg)``: what a callback does after its firing is recorded (see :func:`actions`)."""

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
"""The suite's behaviours; :func:`actions` also knows ``spawn_next`` and ``cancel_any``."""

KINDS = (
    "plain",
    "raise",
    "halt",
    "cancel_self",
    "cancel_other",
    "cancel_any",
    "spawn",
    "spawn_next",
    "nested_advance",
)
"""Every behaviour kind :func:`actions` turns into an action list."""

Json = dict[str, Any]


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

    def fields(self) -> Json:
        """The request fields that make this entry (C-WIRE-3)."""
        if self.op == "schedule":
            return {"at_ns": str(self.at_ns)}
        if self.op == "schedule_periodic":
            return {"period_ns": str(self.period_ns), "phase_ns": str(self.phase_ns)}
        rate = Fraction(self.rate_hz)
        return {
            "rate_hz": [str(rate.numerator), str(rate.denominator)],
            "phase_ns": str(self.phase_ns),
        }

    def grid(self) -> Grid | None:
        """Where a periodic or a rate fires; ``None`` for a one-shot."""
        if self.op == "schedule_periodic":
            return Grid.periodic(self.period_ns, self.phase_ns)
        if self.op == "schedule_rate":
            return Grid.rate(Fraction(self.rate_hz), self.phase_ns)
        return None


@dataclass(frozen=True)
class Made:
    """An entry the oracle accepted: its push order, its data and ``now`` at the push."""

    seq: int
    entry: Entry
    registered_at: int


def actions(
    ident: str, entry: Entry, behaviour: Behaviour, unit: int, made: list[str], now: int = 0
) -> list[Json]:
    """The action list (C-WIRE-4) of entry ``ident`` whose callback does ``behaviour``.

    ``plain``; ``raise`` (C-ERR-1); ``halt`` (C-ERR-2); ``cancel_self``;
    ``cancel_other`` (rule-made entry ``e<arg>``, if it exists when the callback
    runs); ``cancel_any`` (entry ``arg`` modulo ``made``, the entries made so
    far, children too); ``spawn`` (a one-shot child ``arg`` units later);
    ``spawn_next`` (a child at this periodic's next firing, where C-PER-2
    decides who goes first); ``nested_advance`` (by ``arg`` units: refused,
    C-ADV-4). An entry made at ``now`` that can fire within ``step`` of
    ``2**64 - 1`` spawns and advances by 0 instead: a backend may refuse times
    beyond it.
    """
    kind, arg = behaviour
    if kind == "plain":
        return []
    if kind == "raise":
        return [{"do": "raise", "message": f"boom {ident}"}]
    if kind == "halt":
        return [{"do": "halt"}]
    if kind == "cancel_self":
        return [{"do": "cancel", "entry": ident}]
    if kind == "cancel_other":
        return [{"do": "cancel", "entry": f"e{arg}"}]
    if kind == "cancel_any":
        return [{"do": "cancel", "entry": made[arg % len(made)]}] if made else []
    step = arg * unit
    if kind == "spawn_next":
        grid = entry.grid()
        step = math.ceil(grid.spacing) if grid is not None else 0
    if _fires_within(entry, step, now):
        step = 0
    if kind in ("spawn", "spawn_next"):
        return [{"do": "schedule", "delay_ns": str(step)}]
    if kind == "nested_advance":
        return [{"do": "advance", "dt_ns": str(step)}]
    raise ValueError(f"behaviour kind must be one of {', '.join(KINDS)}; got {kind!r}")


_REACHABLE = 2**24
"""More firings than a program of the machine makes (one advance records at most ~39 000)."""


def _fires_within(entry: Entry, step: int, now: int) -> bool:
    """Whether ``entry``, made at ``now``, may fire later than ``2**64 - 1 - step`` in a program.

    Its callback's child (or nested advance) ``step`` later would then pass
    ``2**64 - 1``, which a backend may refuse (C-TIME-4); the action list is
    fixed when the entry is made, so such a callback spawns (or advances) by
    0. A periodic whose grid gets there only after more firings than any
    program makes (a short period started far from it) keeps its step.
    """
    if step == 0:
        return False
    grid = entry.grid()
    if grid is None:
        return entry.at_ns + step > MAX_NS
    k = grid.first_k(MAX_NS - step + 1)
    return grid.time_of(k) <= MAX_NS and k - grid.first_k(now) <= _REACHABLE


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
