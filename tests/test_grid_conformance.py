"""GridClock and a Session's clock run the backend-agnostic conformance suite (SPEC §1-§3, §14).

Each backend comes from :mod:`backends.clocks`: a strict 1 ns grid (every
time a boundary), strict 3 ns and 1 ms grids and the clock of a running
``Session`` on a 2 ms grid, the last three seen in units of their step
(:class:`backends.clocks.GridUnits`) so every time the suite uses is on the
grid. The quantisation clauses themselves (C-GRID-*) are tested in
tests/test_grid.py; the oracle state machine on grids in
tests/test_state_machine.py.
"""

from __future__ import annotations

import pytest
from backends.clocks import grid_1, grid_1ms, grid_3, session_2ms

from conformance import ClockConformance, Factory


class TestGridClockConformance(ClockConformance):
    """The suite on a strict 1 ns grid."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return grid_1


class TestGrid3nsConformance(ClockConformance):
    """The suite on a strict 3 ns grid, in units of 3 ns."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return grid_3


class TestGrid1msConformance(ClockConformance):
    """The suite on a strict 1 ms grid, in units of 1 ms."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return grid_1ms


class TestSessionClock2msConformance(ClockConformance):
    """The suite on the clock of a running Session (2 ms grid, in units of 2 ms)."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return session_2ms
