"""Backend-agnostic conformance suite for simclock clocks (SPEC §14).

A backend is a factory ``FACTORY(seed: int, bus: simclock.Bus) -> SimClock``.
Three ways to run the suite on it:

- ``python -m conformance MODULE:FACTORY [--json REPORT] [--profile ci|thorough]``;
- ``pytest --simclock-backend MODULE:FACTORY`` (the ``pytest11`` plugin);
- subclass :class:`ClockConformance` in a ``Test*`` class and override its
  ``clock_factory`` fixture.

See ``conformance/README.md``.
"""

from typing import TYPE_CHECKING, Any

from conformance._clauses import CLAUSES, Clause, clause_of_test, register_clauses
from conformance._harness import (
    BackendError,
    Factory,
    Rig,
    check_factory,
    heap_factory,
    load_factory,
    make_rig,
    not_applicable,
)
from conformance._report import BackendReport, Outcome

if TYPE_CHECKING:
    from conformance._run import run
    from conformance._suite_clock import ClockConformance, hypothesis_settings

__all__ = [
    "CLAUSES",
    "BackendError",
    "BackendReport",
    "Clause",
    "ClockConformance",
    "Factory",
    "Outcome",
    "Rig",
    "check_factory",
    "clause_of_test",
    "heap_factory",
    "hypothesis_settings",
    "load_factory",
    "make_rig",
    "not_applicable",
    "register_clauses",
    "run",
]


def __getattr__(name: str) -> Any:
    """Import the suite (pytest, Hypothesis, the oracle) only when it is asked for.

    The pytest plugin and the determinism subprocess import this package; they
    must stay cheap and must not break other test runs if the suite cannot load.
    """
    if name == "run":
        from conformance._run import run

        return run
    if name in ("ClockConformance", "hypothesis_settings"):
        from conformance import _suite_clock

        return getattr(_suite_clock, name)
    raise AttributeError(f"module 'conformance' has no attribute {name!r}")
