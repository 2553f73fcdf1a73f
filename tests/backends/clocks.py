"""The library's own clocks as conformance backends: grids, a Session's clock, MuJoCo.

Every factory is ``FACTORY(seed, bus) -> SimClock``. The suite writes its
times as small integers (``schedule(5, ...)``, ``schedule_periodic(3, ...)``);
on a grid of step ``s > 1`` those are off the grid and a strict ``GridClock``
refuses them (C-GRID-3). :class:`GridUnits` therefore shows a grid clock in
units of its step: suite time ``t`` is the boundary ``t*s``. Every suite time
lands on the grid, and the whole of the grid clock runs underneath: its own
checks, the core entries it pushes, its ``advance`` (with the ``on_step`` hook
or a ``Session``'s phases interleaved), its failure events (republished on the
suite's bus in suite units). A rate is the one place where scaling is not the
identity: ``ceil(k*P)*s != ceil(k*P*s)`` in general; under ``next_boundary``
the quantisation ``ceil(ceil(k*P*s)/s)*s`` is
exactly ``s*ceil(k*P)`` (C-GRID-2), but the first firing is chosen from the
nominal grid (the first nominal time at or after now), which in units of ``s``
is not the suite's first grid point. So :class:`GridUnits` offers no
``schedule_rate``: C-X-RATE is "not applicable" there, and rates on a grid are
checked by ``grid_1`` (no adapter) and by tests/test_state_machine.py with
rates whose period is a multiple of the step.

Short names for the self-check (:data:`CLOCKS`): ``grid_1`` (GridClock on a
1 ns grid, no adapter), ``grid_3``/``grid_1ms`` (GridClock in units of 3 ns
and 1 ms), ``session_1``/``session_2ms`` (the clock of a running ``Session``
with a controller and ``/clock``, in units of its step).
"""

from __future__ import annotations

import operator
from typing import Any

from simclock import (
    EVENTS_TOPIC,
    Bus,
    Callback,
    ControllerSpec,
    Event,
    GridClock,
    Message,
    SeededRandomSource,
    Session,
)
from simclock.lowlevel import Handle

__all__ = [
    "CLOCKS",
    "MUJOCO_HORIZON",
    "GridUnits",
    "grid_1",
    "grid_1ms",
    "grid_3",
    "mujoco_1ms",
    "session_1",
    "session_2ms",
]

MS = 1_000_000


class GridUnits:
    """A :class:`GridClock` seen in units of its step ``s``: suite time ``t`` is ``t*s`` ns.

    The grid clock reports on a private bus; its events are republished on
    ``bus`` (bound to this adapter) with ``at_ns`` in suite units. Arguments
    that are not plain ``int`` are passed through unscaled, so the grid clock
    itself raises the ``TypeError`` the suite expects.
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
            # The grid's events are stamped at boundaries: exact in suite units.
            assert event.at_ns % self.s == 0
            self.bus.publish(EVENTS_TOPIC, Event(event.kind, event.at_ns // self.s, event.details))

    def _scale(self, t: Any) -> Any:
        # Integers of any kind (numpy's too, C-TIME-1) are scaled; bool, float and
        # the rest pass through for the grid clock to refuse.
        if isinstance(t, bool):
            return t
        try:
            return operator.index(t) * self.s
        except TypeError:
            return t

    def now_ns(self) -> int:
        """The grid's now in units of ``s`` (always a boundary between calls)."""
        return self.grid.now_ns() // self.s

    def step_ns(self) -> int:
        """One unit: the grid step."""
        return 1

    def advance(self, dt_ns: int) -> None:
        """``grid.advance(dt*s)``."""
        self.grid.advance(self._scale(dt_ns))

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """``grid.schedule(at*s)`` (strict: a boundary)."""
        return self.grid.schedule(self._scale(at_ns), cb)

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """``grid.schedule_periodic(period*s, cb, phase*s)`` (strict: on the grid)."""
        return self.grid.schedule_periodic(self._scale(period_ns), cb, self._scale(phase_ns))

    def next_event_ns(self) -> int | None:
        """The grid's next entry in units of ``s``."""
        at = self.grid.next_event_ns()
        return None if at is None else -(-at // self.s)

    def pending_count(self) -> int:
        """The grid's live entries."""
        return self.grid.pending_count()

    def random_source(self) -> SeededRandomSource:
        """The grid's root stream."""
        return self.grid.random_source()


def grid_1(seed: int, bus: Bus) -> GridClock:
    """``GridClock(seed, 1, bus=bus)``: every time is a boundary, no adapter."""
    return GridClock(seed, 1, bus=bus)


def grid_3(seed: int, bus: Bus) -> GridUnits:
    """A strict 3 ns grid in units of its step."""
    return GridUnits(GridClock(seed, 3), bus)


def grid_1ms(seed: int, bus: Bus) -> GridUnits:
    """A strict 1 ms grid in units of its step."""
    return GridUnits(GridClock(seed, MS), bus)


def _running_session(seed: int, step: int) -> Session:
    """A started session with ``/clock`` and one controller, both every 10**18 steps.

    Long periods keep the suite's far-future advances cheap; the session's
    phases still run, interleaved with the suite's entries, at every such boundary.
    """
    period = 10**18 * step
    session = Session(GridClock(seed, step), clock_period_ns=period)
    session.add_controller(
        ControllerSpec("probe", period_ns=period, topic="/probe/cmd"), _quiet_controller
    )
    session.start()
    return session


def _quiet_controller(latest: object) -> None:
    return None


def session_1(seed: int, bus: Bus) -> GridUnits:
    """The clock of a running :class:`Session` on a 1 ns grid."""
    return GridUnits(_running_session(seed, 1).clock, bus)


def session_2ms(seed: int, bus: Bus) -> GridUnits:
    """The clock of a running :class:`Session` on a 2 ms grid, in units of its step."""
    return GridUnits(_running_session(seed, 2 * MS).clock, bus)


PENDULUM_1MS = """
<mujoco model="probe">
  <option timestep="0.001"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""
"""A one-joint pendulum stepped every 1 ms."""


def mujoco_1ms(seed: int, bus: Bus, start_ns: int = 0) -> GridUnits:
    """A :class:`MujocoClock` on a 1 ms pendulum, in units of its step (one mj_step per unit).

    ``start_ns`` (suite units) starts it at that boundary: how the suite's
    far-time programs reach ``2**64`` units without ~1.8e16 mj_steps on the way
    (its declared horizon, :data:`MUJOCO_HORIZON`).
    """
    import mujoco

    from simclock import MujocoClock

    model = mujoco.MjModel.from_xml_string(PENDULUM_1MS)
    return GridUnits(MujocoClock(model, seed, start_ns=start_ns * MS), bus)


MUJOCO_HORIZON = 2**16
"""The most one conformance test advances :func:`mujoco_1ms`: 65 536 mj_steps (~0.1 s of CPU).

Every boundary crossed is one real ``mj_step`` (~2 us for the pendulum); the
suite then runs its far-time programs from far starts within this horizon,
and the tests it reduces are reported ``limited`` (verdict INCOMPLETE).
"""
mujoco_1ms.horizon_ns = MUJOCO_HORIZON  # type: ignore[attr-defined]


CLOCKS: dict[str, str] = {
    "grid_1": "backends.clocks:grid_1",
    "grid_3": "backends.clocks:grid_3",
    "grid_1ms": "backends.clocks:grid_1ms",
    "session_1": "backends.clocks:session_1",
    "session_2ms": "backends.clocks:session_2ms",
    "mujoco_1ms": "backends.clocks:mujoco_1ms",
}
"""The library's own clocks, by self-check name -> ``MODULE:FACTORY``."""
