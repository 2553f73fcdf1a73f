"""The in-repo way to run the conformance suite: subclass it, override one fixture (SPEC §14).

``HeapSimClock`` runs the whole suite here, in the project's own test session.
"""

from __future__ import annotations

import pytest

from conformance import ClockConformance, Factory, Rig, heap_factory, make_rig
from simclock import Bus, Callback, Handle, HeapSimClock, RandomSource


class TestHeapSimClockConformance(ClockConformance):
    """Every clause of SPEC §1-§3, C-X-PEEK and C-X-RATE on the reference backend."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return heap_factory


class _NoHeapSize:
    """HeapSimClock seen through the six protocol methods only (no ``heap_size``)."""

    def __init__(self, seed: int, bus: Bus) -> None:
        self._clock = HeapSimClock(seed, bus=bus)

    def now_ns(self) -> int:
        return self._clock.now_ns()

    def step_ns(self) -> int:
        return self._clock.step_ns()

    def advance(self, dt_ns: int) -> None:
        self._clock.advance(dt_ns)

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        return self._clock.schedule(at_ns, cb)

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        return self._clock.schedule_periodic(period_ns, cb, phase_ns)

    def random_source(self) -> RandomSource:
        return self._clock.random_source()


def test_C_CAN_4_memory_check_passes_heapsimclock_without_heap_size() -> None:
    # Without heap_size() the suite falls back to tracemalloc; the reference
    # backend, which does compact, must pass that path too.
    rig: Rig = make_rig(_NoHeapSize, 0)
    assert not hasattr(rig.clock, "heap_size")
    ClockConformance().test_C_CAN_4_tombstones_are_bounded(rig)
