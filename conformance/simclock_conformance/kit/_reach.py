"""How far one test may take a backend's clock: a declared horizon and far starts (C-CONF-4).

Most backends pay nothing for a quiet stretch of time, and the suite's
far-time programs advance them across up to ``2**64`` ns. A backend whose
every crossed instant costs real work (a physics clock runs one engine step
per boundary) cannot: ``2**64`` ns on a 1 ms grid is ~1.8e16 steps. Such a
backend **declares a horizon** on its factory,

.. code-block:: python

    def make_clock(seed, bus, start_ns=0): ...   # C-TIME-1: a clock may start elsewhere
    make_clock.horizon_ns = 2**16                # the most one test may advance it

and the suite then runs every far-time program near its far instants: the
clock is *created* at a far start (``factory(seed, bus, start_ns=S)``)
instead of being advanced there, and a program spanning more than the
horizon runs as several windows of its stops: a new window begins at every
gap between stops wider than ``horizon // 64`` and wherever the window would
otherwise exceed the horizon, and each runs on a fresh clock started one ns
before its first stop (never before the previous window's last stop).
Every clause is still exercised at full magnitude (entries at ``2**53 + 1``,
``2**63 ± 1``, ``2**64 - 1``; ties and peeks there; refusal beyond
``2**64 - 1``); what is not exercised is a single advance longer than the
horizon, the long advances of C-CONF-4.

The verdict says so (C-CONF-1): each test that ran in this reduced form
reports ``limited`` with what it left out, and a run with a limited test is
INCOMPLETE, never CONFORMING, however well the backend did. Without a
declared horizon nothing here changes a test: the programs run as written,
from 0, with every long advance.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from simclock import Bus
from simclock_conformance.kit._args import quote, typed
from simclock_conformance.kit._harness import (
    BackendTypeError,
    BackendValueError,
    Factory,
    Rig,
    make_rig,
)

__all__ = [
    "HORIZON_ATTRIBUTE",
    "LIMITED",
    "LIMITED_PROPERTY",
    "MIN_HORIZON_NS",
    "Every",
    "FarRun",
    "Push",
    "Reach",
    "advance_to",
    "reach_of",
    "rig_started",
]

HORIZON_ATTRIBUTE = "horizon_ns"
"""The factory attribute a backend declares its horizon with (an int of ns)."""

MIN_HORIZON_NS = 2**16
"""The shortest horizon the suite accepts: every reduced program still fits in it."""

MAX_NS = 2**64 - 1
"""The last instant of the contract: a horizon this long or longer is no limit."""

LIMITED = "limited"
"""Outcome of a test that passed in its reduced, horizon-bound form (counts as incomplete)."""

LIMITED_PROPERTY = "simclock-limited"
"""The pytest user property a limited test records its reason under."""


@dataclass(frozen=True)
class Every:
    """A periodic of a far program: ``schedule_periodic(period, rec(name), phase)``."""

    name: str
    period: int
    phase: int = 0


Push = tuple[str, int] | Every
"""One step of a far program's set-up: a one-shot ``(name, at_ns)`` or an :class:`Every`."""


@dataclass
class FarRun:
    """What a far program observed: firings, ``now_ns()`` and ``next_event_ns()`` at each stop."""

    trace: list[tuple[str, int]] = field(default_factory=list)
    nows: list[int] = field(default_factory=list)
    peeks: list[int | None] = field(default_factory=list)


def _takes_start(factory: Factory) -> bool:
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    param = params.get("start_ns")
    return param is not None and param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD)


def reach_of(factory: Factory, record: Callable[[str], None] | None = None) -> Reach:
    """The :class:`Reach` of ``factory``: its declared horizon and whether it takes a start.

    Raises :class:`~simclock_conformance.BackendTypeError` for a horizon that is not an
    ``int``, and :class:`~simclock_conformance.BackendValueError` for one below
    :data:`MIN_HORIZON_NS` or one that comes without a ``start_ns`` parameter
    (the far programs could then not run at all). A horizon of at least
    ``2**64 - 1`` ns holds every program: it is unlimited (``None``).
    :func:`~simclock_conformance.check_factory` calls this, so ``run()``, the CLI and
    the plugin refuse a bad horizon before running anything.
    """
    horizon = getattr(factory, HORIZON_ATTRIBUTE, None)
    starts = _takes_start(factory)
    if horizon is not None:
        if type(horizon) is not int:
            raise BackendTypeError(
                f"the factory's {HORIZON_ATTRIBUTE} must be an int >= 2**16 "
                f"({MIN_HORIZON_NS}), got {typed(horizon)}"
            )
        if horizon < MIN_HORIZON_NS:
            raise BackendValueError(
                f"the factory's {HORIZON_ATTRIBUTE} must be an int >= 2**16 "
                f"({MIN_HORIZON_NS}), got {quote(horizon)}"
            )
        if horizon >= MAX_NS:
            horizon = None  # every program fits: no far starts, no windows
        elif not starts:
            raise BackendValueError(
                f"the factory declares {HORIZON_ATTRIBUTE}={quote(horizon)} but takes no "
                "start_ns; a horizon needs FACTORY(seed, bus, start_ns=...) to reach far times"
            )
    return Reach(factory, horizon, starts, record)


@dataclass(frozen=True)
class Reach:
    """A factory with its declared horizon (``None``: unlimited) and its far-start ability.

    ``record`` receives the reason each time a test runs a reduced form; the
    suite passes one that marks the test ``limited`` in the report.
    """

    factory: Factory
    horizon: int | None = None
    starts: bool = False
    record: Callable[[str], None] | None = None

    def fits(self, span: int, what: str) -> bool:
        """True when a program spanning ``span`` ns fits; else record why it is reduced."""
        if self.horizon is None or span <= self.horizon:
            return True
        if self.record is not None:
            self.record(
                f"{LIMITED}: {what} spans {span} ns, beyond the backend's declared horizon of "
                f"{self.horizon} ns; it ran within the horizon from far starts "
                "(advances longer than the horizon were not exercised, C-CONF-4)"
            )
        return False

    def rig_at(self, start: int, seed: int = 0) -> Rig:
        """A fresh clock whose ``now_ns()`` is ``start``.

        Unlimited: made at 0 and advanced there (an empty long advance, part of
        what is tested). With a horizon: made there, ``factory(seed, bus,
        start_ns=start)``, and the test is recorded as limited when ``start``
        lies beyond the horizon.
        """
        if self.fits(start, f"a start at {start}"):
            rig = make_rig(self.factory, seed)
            if start:
                advance_to(rig.clock, start)
            return rig
        return rig_started(self.factory, seed, start)

    def scaled(self, value: int, parts: int, what: str) -> int:
        """``value``, or the largest ``v <= value`` with ``parts * v`` inside the horizon."""
        if self.fits(parts * value, what):
            return value
        assert self.horizon is not None
        return max(1, min(value, (self.horizon - 2) // parts))

    def run_far(self, pushes: Sequence[Push], stops: Sequence[int], what: str) -> FarRun:
        """Make the entries ``pushes`` (in order) and advance to each of ``stops`` (sorted).

        One clock from 0 when the program fits the horizon (always, without
        one). Otherwise the stops are cut into windows: a new one at every gap
        wider than ``horizon // 64`` and wherever the window would exceed the
        horizon. Each window gets a fresh clock started one ns before its first
        stop (never before the previous window's last stop: at the latest, one
        ns after it), holding the one-shots not yet due and every periodic
        (whose first firing is the first grid point at or after the start,
        C-PER-1), so the windows together fire exactly what the whole program
        fires, provided every periodic firing is one of ``stops``.
        """
        stops = list(stops)
        out = FarRun()
        if not stops:
            return out
        windows: list[list[int]] = []
        whole = self.fits(stops[-1], what)
        if whole:
            windows.append(stops)
        else:
            assert self.horizon is not None
            # A new window at every gap wider than 1/64 of the horizon: a program's
            # cost is then its number of stops times that, not times the horizon.
            gap = self.horizon // 64
            for stop in stops:
                if (
                    windows
                    and stop - windows[-1][-1] <= gap
                    and stop - windows[-1][0] < self.horizon - 1
                ):
                    windows[-1].append(stop)
                else:
                    windows.append([stop])
        done = -1
        for window in windows:
            start = 0 if whole else max(done + 1, window[0] - 1)
            rig = make_rig(self.factory, 0) if start == 0 else rig_started(self.factory, 0, start)
            clock = rig.clock
            peek = getattr(clock, "next_event_ns", None)
            for push in pushes:
                if isinstance(push, Every):
                    clock.schedule_periodic(push.period, rig.rec(push.name), push.phase)
                elif push[1] > done:
                    clock.schedule(push[1], rig.rec(push[0]))
            for stop in window:
                advance_to(clock, stop)
                out.nows.append(clock.now_ns())
                out.peeks.append(peek() if callable(peek) else None)
            out.trace += rig.trace
            done = window[-1]
        return out


def _exact_clause(target: int) -> str:
    """The clause an inexact ``now_ns()`` at ``target`` breaks: C-TIME-4 from 2**53 on."""
    return "C-TIME-4" if target > 2**53 else "C-ADV-1"


def advance_to(clock: Any, target: int, clause: str | None = None) -> None:
    """``clock.advance(target - now)``, checking ``now_ns()`` before and after (C-ADV-1).

    A backend whose ``now_ns()`` is past ``target`` before the advance, or is
    not ``target`` after it (float seconds rounding up, a wrapped time), fails
    ``clause`` with both times, before the suite computes anything from them.
    By default the clause is C-TIME-4 for a target past 2**53, else C-ADV-1.
    """
    clause = clause or _exact_clause(target)
    now = clock.now_ns()
    if now > target:
        raise AssertionError(
            f"{clause}: now_ns() is {now} ns, past the next stop {target} ns; expected at most "
            f"{target} ns (an earlier advance left now_ns() beyond its target?)"
        )
    clock.advance(target - now)
    after = clock.now_ns()
    if after != target:
        raise AssertionError(
            f"{clause}: advance to {target} ns left now_ns() at {after} ns; expected {target} ns"
        )


def rig_started(factory: Factory, seed: int, start: int) -> Rig:
    """``make_rig`` for ``factory(seed, bus, start_ns=start)``."""

    def at_start(seed_: int, bus: Bus) -> Any:
        return factory(seed_, bus, start_ns=start)  # type: ignore[call-arg]

    rig = make_rig(at_start, seed)
    now = rig.clock.now_ns()
    if now != start:
        raise AssertionError(
            f"C-TIME-1: factory(seed, bus, start_ns={start}) made a clock at now_ns()={now}"
        )
    return rig
