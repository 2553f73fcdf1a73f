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

from fractions import Fraction
from typing import Any

from backends.clocks import GridUnits  # the self-check's adapter (tests/ on the path)

from simclock import EVENTS_TOPIC, Callback, Event, GridClock, Message
from simclock.lowlevel import Handle

__all__ = ["STEP", "QuantisedUnits", "quantised_factory"]

STEP = 3
"""The grid step in ns: one suite nanosecond."""
MAX_RATE_HZ = 10**9
"""Above it a rate passes unscaled, so the grid clock refuses it as the reference does."""


class QuantisedUnits(GridUnits):
    """The self-check's ``GridUnits`` of step :data:`STEP`, its repeating entries off the grid.

    Only the repeating schedules differ (see the module), and the events: an
    entry's time need not be a boundary here, so ``at_ns`` is rounded up to
    suite units, where ``GridUnits`` asserts a boundary.
    """

    def _republish(self, message: Message) -> None:
        event = message.payload
        if isinstance(event, Event):
            self.bus.publish(
                EVENTS_TOPIC, Event(event.kind, -(-event.at_ns // self.s), event.details)
            )

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


def quantised_factory(seed: int, bus: Any) -> QuantisedUnits:
    """The factory the campaign runs every mutant against, after ``heap_factory``."""
    return QuantisedUnits(GridClock(seed, STEP), bus)
