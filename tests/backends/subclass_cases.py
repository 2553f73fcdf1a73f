"""Subclasses of ``ClockConformance`` that must not be reported CONFORMING (C-CONF-1).

Not collected by the project's own test run (the file name does not start
with ``test_``): ``tests/test_conformance_verdicts.py`` runs it with pytest in
a subprocess and reads the per-class reports from ``--simclock-json``.
"""

from __future__ import annotations

import pytest

from simclock_conformance import ClockConformance, Factory, Rig, heap_factory

from .broken import hash_keyed_lambda


class TestOverridesMandatoryTests(ClockConformance):
    """Replaces one mandatory test by a pass and removes another."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return heap_factory

    def test_C_TIE_1_equal_times_fire_in_push_order(self, rig: Rig) -> None:
        """Overridden: "our backend orders ties its own way"."""

    test_C_SCH_2_schedule_returns_frozen_handle = None  # type: ignore[assignment]  # noqa: N815


class TestSkipsMandatoryTest(ClockConformance):
    """Calls the cross-process checks of two mandatory clauses "not applicable"."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return heap_factory

    @pytest.fixture
    def factory_spec(self) -> str | None:
        pytest.skip("not applicable: no subprocesses on our target")


class TestSaltedHashLambda(ClockConformance):
    """Random streams keyed by Python's salted ``hash()``, handed over as a lambda."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return hash_keyed_lambda


class TestCorrectLambda(ClockConformance):
    """A correct backend handed over as a lambda: the cross-process tests still run."""

    @pytest.fixture
    def clock_factory(self) -> Factory:
        return lambda seed, bus: heap_factory(seed, bus)  # noqa: PLW0108  (a lambda on purpose)
