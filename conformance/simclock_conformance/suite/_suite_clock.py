"""Conformance tests of SPEC §1-§3, C-X-PEEK, C-X-RATE and C-X-STATS for any SimClock backend.

Every test is named ``test_<CLAUSE>_...`` (C-TIE-1 -> ``test_C_TIE_1_...``) and
talks to the backend only through the public protocols. The tests live in one
mixin per clause family (``_suite_time``, ``_suite_schedule``, ``_suite_cancel``,
``_suite_errors``, ``_suite_det``, ``_suite_bus``, ``_suite_ext``,
``_suite_machine``, and ``_suite_programs``: the wire profile's clause
programs, run in process as ``serve`` runs them); :class:`ClockConformance`
composes them with the fixtures they use. Subclass it and override the
``clock_factory`` fixture to run the suite on your backend from your own tests;
``TestClockBackend`` is what the pytest plugin and ``python -m
simclock_conformance`` collect.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from simclock_conformance.kit._harness import Factory, Rig, load_factory, make_rig
from simclock_conformance.kit._harness import factory_spec as derive_spec
from simclock_conformance.kit._reach import LIMITED_PROPERTY, Reach, reach_of
from simclock_conformance.kit._suite_support import hypothesis_settings
from simclock_conformance.suite._suite_bus import BusClauses
from simclock_conformance.suite._suite_cancel import CancelClauses
from simclock_conformance.suite._suite_det import DeterminismClauses
from simclock_conformance.suite._suite_errors import ErrorClauses
from simclock_conformance.suite._suite_ext import ExtensionClauses
from simclock_conformance.suite._suite_machine import MachineClauses
from simclock_conformance.suite._suite_programs import ProgramClauses
from simclock_conformance.suite._suite_schedule import ScheduleClauses
from simclock_conformance.suite._suite_time import TimeClauses

__all__ = ["ClockConformance", "TestClockBackend", "hypothesis_settings"]


class ClockConformance(
    ProgramClauses,
    MachineClauses,
    ExtensionClauses,
    BusClauses,
    DeterminismClauses,
    ErrorClauses,
    CancelClauses,
    ScheduleClauses,
    TimeClauses,
):
    """The clause tests of a SimClock backend (SPEC §1-§3, C-X-PEEK, C-X-RATE, §14).

    Override ``clock_factory`` (a fixture returning ``FACTORY(seed, bus) ->
    SimClock``) in a subclass named ``Test...``. ``factory_spec`` must name the
    same factory as ``MODULE:FACTORY`` for the cross-process determinism tests;
    by default it is derived from the factory when that is importable.
    """

    __conformance_suite__ = True
    """Marks the suite base: the report names tests a subclass overrides (C-CONF-1)."""

    # -- fixtures ---------------------------------------------------------

    @pytest.fixture
    def clock_factory(self, request: pytest.FixtureRequest) -> Factory:
        """The backend under test; by default from ``--simclock-backend MODULE:FACTORY``."""
        spec = request.config.getoption("simclock_backend", default=None)
        if not spec:
            pytest.skip("no backend: pass --simclock-backend MODULE:FACTORY")
        return load_factory(str(spec))

    @pytest.fixture
    def factory_spec(self, request: pytest.FixtureRequest, clock_factory: Factory) -> str | None:
        """``MODULE:FACTORY`` re-importable in a subprocess, or None."""
        derived = derive_spec(clock_factory)
        if derived is not None:
            return derived
        spec = request.config.getoption("simclock_backend", default=None)
        return str(spec) if spec else None

    @pytest.fixture
    def profile(self, request: pytest.FixtureRequest) -> str:
        """``ci`` (default) or ``thorough``, from ``--simclock-profile``."""
        value = request.config.getoption("simclock_profile", default=None)
        return str(value) if value else "ci"

    @pytest.fixture
    def rig(self, clock_factory: Factory) -> Rig:
        """A fresh clock made with seed 0, its bus and its events."""
        return make_rig(clock_factory, 0)

    @pytest.fixture
    def reach(
        self, clock_factory: Factory, record_property: Callable[[str, object], None]
    ) -> Reach:
        """How far one test may take this backend (its declared horizon, C-CONF-4).

        A test that must run a reduced form records why; the report then calls
        it ``limited`` and the verdict INCOMPLETE (C-CONF-1).
        """
        return reach_of(clock_factory, partial(record_property, LIMITED_PROPERTY))

    @pytest.fixture
    def make(self, clock_factory: Factory) -> Callable[[int], Rig]:
        """Make more fresh clocks: ``make(seed)``."""
        return partial(make_rig, clock_factory)


class TestClockBackend(ClockConformance):
    """What the plugin collects: the backend named by ``--simclock-backend``."""
