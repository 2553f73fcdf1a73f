"""A second backend for the mutation campaign: a 3 ns ``GridClock`` whose entries are quantised.

``heap_factory`` has a 1 ns step, so the core's rounding of a repeating entry up
to its clock's step (``_Entry.at_k`` with ``quantum > 1``, the ``_QUANTISED``
kind) never runs under it; the self-check's ``grid_3`` schedules on the grid
only (policy ``strict``), so it never runs there either. This factory does:
suite time ``t`` is ``3*t`` ns of a ``GridClock(seed, 3)``, and

- a rate of ``r`` Hz is scheduled as ``r/3`` Hz with policy ``next_boundary``:
  firing ``k`` is at ``3*phase + ceil(3*k*10**9/r)`` ns, rounded up to the next
  multiple of 3, which is ``3*(phase + ceil(k*10**9/r))`` (``ceil(ceil(3x)/3) ==
  ceil(x)``): the reference's time in suite units, reached through the rounding;
- a periodic whose phase is after ``now`` is scheduled with its phase 1 ns
  before its boundary (``3*phase - 1``, policy ``next_boundary``): every firing
  rounds up to ``3*(phase + k*period)``, the reference's time. A phase at or
  before ``now`` stays on the grid (a nominal time 1 ns before ``now`` would be
  skipped where the reference fires at ``now``).

So a correct core is CONFORMING here as under ``heap_factory``
(``python -m simclock_conformance quantised:quantised_factory`` with this
directory on ``PYTHONPATH``), and a mutant of the rounding is not.
"""

from __future__ import annotations

import operator
from fractions import Fraction
from typing import Any

from simclock import EVENTS_TOPIC, Bus, Callback, Event, GridClock, Message, SeededRandomSource
from simclock.lowlevel import Handle

__all__ = ["STEP", "QuantisedUnits", "quantised_factory"]

STEP = 3
"""The grid step in ns: one suite nanosecond."""
MAX_RATE_HZ = 10**9
"""Above it a rate passes unscaled, so the grid clock refuses it as the reference does."""


class QuantisedUnits:
    """A :class:`GridClock` of step :data:`STEP` in units of its step, repeating entries quantised.

    Events of the grid clock are republished on ``bus`` with ``at_ns`` in suite
    units; arguments that are not plain integers pass through unscaled, so the
    grid clock raises the ``TypeError`` the suite expects.
    """

    def __init__(self, grid: GridClock, bus: Bus) -> None:
        self.grid = grid
        self.s = grid.step_ns()
        self.bus = bus
        bus.bind(self)
        grid.bus.subscribe(EVENTS_TOPIC, self._republish)

    def _republish(self, message: Message) -> None:
        event = message.payload
        if isinstance(event, Event):
            self.bus.publish(
                EVENTS_TOPIC, Event(event.kind, -(-event.at_ns // self.s), event.details)
            )

    def _scale(self, t: Any) -> Any:
        if isinstance(t, bool):
            return t
        try:
            return operator.index(t) * self.s
        except TypeError:
            return t

    def now_ns(self) -> int:
        """The grid's now in units of the step (a boundary between calls)."""
        return self.grid.now_ns() // self.s

    def step_ns(self) -> int:
        """One unit: the grid step."""
        return 1

    def advance(self, dt_ns: int) -> None:
        """``grid.advance(dt*s)``."""
        self.grid.advance(self._scale(dt_ns))

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """``grid.schedule(at*s)`` (on the grid)."""
        return self.grid.schedule(self._scale(at_ns), cb)

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """``grid.schedule_periodic(period*s, cb, phase*s - 1)``, on the grid if phase <= now."""
        phase = self._scale(phase_ns)
        period = self._scale(period_ns)
        if type(phase) is int and type(period) is int and period > 0 and phase > self.grid.now_ns():
            return self.grid.schedule_periodic(period, cb, phase - 1, policy="next_boundary")
        return self.grid.schedule_periodic(period, cb, phase)

    def schedule_rate(self, rate_hz: Any, cb: Callback, phase_ns: int = 0) -> Handle:
        """``grid.schedule_rate(rate/s, cb, phase*s)``, quantised to the grid."""
        rate = rate_hz
        usable = isinstance(rate_hz, int | Fraction) and not isinstance(rate_hz, bool)
        if usable and 0 < rate_hz <= MAX_RATE_HZ:
            rate = Fraction(rate_hz) / self.s
        return self.grid.schedule_rate(rate, cb, self._scale(phase_ns), policy="next_boundary")

    def next_event_ns(self) -> int | None:
        """The grid's next entry in units of the step."""
        at = self.grid.next_event_ns()
        return None if at is None else -(-at // self.s)

    def pending_count(self) -> int:
        """The grid's live entries."""
        return self.grid.pending_count()

    def random_source(self) -> SeededRandomSource:
        """The grid's root stream."""
        return self.grid.random_source()


def quantised_factory(seed: int, bus: Bus) -> QuantisedUnits:
    """The factory the campaign runs every mutant against, after ``heap_factory``."""
    return QuantisedUnits(GridClock(seed, STEP), bus)
