"""The state machine within a declared horizon (C-CONF-4; see ``simclock_conformance.kit._reach``).

The same machine as :mod:`simclock_conformance.machine._machine` (every rule, every
check), subclassed: each program first picks a start among ``0`` and the
far anchors, and both clocks are created there (a ``create`` request with
``start_ns``: ``factory(seed, bus, start_ns=...)`` for the backend,
``ReferenceClock(start_ns)`` for the oracle); every advance is then cut so
that one program never advances more than the horizon in all (the
machine's ``BUDGET``).
Entries are still placed as far as ever (and peeked at); only the long
advances that would reach them are left out, and the test says so
(``limited``). Without a budget (a backend that declares no horizon) the
machine runs exactly the programs it always ran.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, run_state_machine_as_test

from simclock_conformance.kit._reach import Reach
from simclock_conformance.machine._machine import make_machine
from simclock_conformance.machine._strategies import ANCHORS, MAX_NS, private_hypothesis_home

__all__ = ["run_machine_within"]


def run_machine_within(reach: Reach, machine_settings: settings) -> None:
    """Run the state machine on ``reach.factory`` within ``reach.horizon`` (must be set)."""
    if reach.horizon is None:
        raise ValueError("run_machine_within needs a Reach with a declared horizon")
    horizon: int = reach.horizon
    reach.fits(MAX_NS, "the state machine (its leaps reach 2**64-1)")
    base = make_machine(reach.factory)

    class WithinHorizon(base):  # type: ignore[valid-type,misc]
        """The machine from a far start, its advances capped at the horizon in all."""

        BUDGET = horizon

        @initialize(start=st.sampled_from((0, *ANCHORS[:4], MAX_NS - horizon)))
        def start_far(self, start: int) -> None:
            """Both clocks start at ``start`` instead of advancing there."""
            if start:
                self.start_at(start)

    with private_hypothesis_home():
        run_state_machine_as_test(WithinHorizon, settings=machine_settings)
