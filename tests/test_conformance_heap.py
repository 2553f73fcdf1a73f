"""The in-repo way to run the conformance suite: subclass it, override one fixture (SPEC §14).

``HeapSimClock`` runs the whole suite here, in the project's own test session.
"""

from __future__ import annotations

import pytest
from backends.minimal import ProtocolOnlyClock

from simclock import Bus, HeapSimClock
from simclock_conformance import ClockConformance, Factory, Rig, heap_factory, make_rig


class TestHeapSimClockConformance(ClockConformance):
    """Every clause of SPEC §1-§3, C-X-PEEK and C-X-RATE on the reference backend."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return heap_factory


def _no_heap_size(seed: int, bus: Bus) -> ProtocolOnlyClock:
    """HeapSimClock seen through the six protocol methods only (no ``heap_size``)."""
    return ProtocolOnlyClock(HeapSimClock(seed, bus=bus))


def test_C_CAN_4_memory_check_passes_heapsimclock_without_heap_size() -> None:
    # Without heap_size() the suite falls back to tracemalloc; the reference
    # backend, which does compact, must pass that path too.
    rig: Rig = make_rig(_no_heap_size, 0)
    assert not hasattr(rig.clock, "heap_size")
    ClockConformance().test_C_CAN_4_tombstones_are_bounded(rig)
