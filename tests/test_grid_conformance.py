"""GridClock runs the backend-agnostic conformance suite (SPEC §1-§3, §14).

With a 1 ns grid every time is a boundary, so every clause of SPEC §1 must
hold exactly as for HeapSimClock; the quantisation clauses (C-GRID-*) are
tested in tests/test_grid.py. On a 1 ns grid every periodic and rate schedule
is delegated to the inner HeapSimClock (quantisation is the identity), so the
state-machine comparison here checks that delegation and the grid's own
``schedule``/``advance`` checks; the quantised periodics (re-pushed by
GridClock itself) are checked in tests/test_grid.py (C-GRID-2, C-PER-2,
C-CAN-2, C-ERR-1..2, C-ADV-5 with a 3 ns grid).
"""

from __future__ import annotations

import pytest

from conformance import ClockConformance, Factory
from simclock import Bus, GridClock


def grid_factory(seed: int, bus: Bus) -> GridClock:
    """``GridClock(seed, 1, bus=bus)``: the default policy, strict."""
    return GridClock(seed, 1, bus=bus)


class TestGridClockConformance(ClockConformance):
    """The suite on a strict 1 ns grid."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return grid_factory
