"""The state-machine clause of the suite: SM-ORACLE (programs agree with the reference).

A mixin of :class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

from simclock_conformance.kit._harness import Factory
from simclock_conformance.kit._reach import Reach
from simclock_conformance.kit._suite_support import hypothesis_settings
from simclock_conformance.machine._horizon import run_machine_within
from simclock_conformance.machine._machine import run_machine

__all__ = ["MachineClauses"]


class MachineClauses:
    """SM-ORACLE: the backend against ``ReferenceClock`` on shrinking random programs."""

    # -- the state machine ---------------------------------------------------

    def test_SM_ORACLE_backend_agrees_with_reference_clock(
        self, clock_factory: Factory, profile: str, reach: Reach
    ) -> None:
        machine_settings = hypothesis_settings(profile, stateful=True)
        if reach.horizon is None:
            run_machine(clock_factory, machine_settings)
        else:
            run_machine_within(reach, machine_settings)
