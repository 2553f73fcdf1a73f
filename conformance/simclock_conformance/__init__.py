"""Backend-agnostic conformance suite for simclock clocks (SPEC §14).

A backend is a factory ``FACTORY(seed: int, bus: simclock.Bus) -> SimClock``.
Three ways to run the suite on it:

- ``python -m simclock_conformance MODULE:FACTORY [--json REPORT] [--profile ci|thorough]``;
- ``pytest --simclock-backend MODULE:FACTORY`` (the ``pytest11`` plugin);
- subclass :class:`ClockConformance` in a ``Test*`` class and override its
  ``clock_factory`` fixture.

See ``conformance/README.md``.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simclock_conformance._check import check_factory
    from simclock_conformance._clauses import CLAUSES, Clause, clause_of_test, register_clauses
    from simclock_conformance._harness import (
        BackendError,
        BackendTypeError,
        BackendValueError,
        Factory,
        Rig,
        heap_factory,
        load_factory,
        make_rig,
        not_applicable,
    )
    from simclock_conformance._machine import OracleMachine
    from simclock_conformance._report import BackendReport, Outcome
    from simclock_conformance._run import run
    from simclock_conformance._suite_clock import ClockConformance, hypothesis_settings

__all__ = [
    "CLAUSES",
    "BackendError",
    "BackendReport",
    "BackendTypeError",
    "BackendValueError",
    "Clause",
    "ClockConformance",
    "Factory",
    "OracleMachine",
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

_HOME = {
    **dict.fromkeys(["CLAUSES", "Clause", "clause_of_test", "register_clauses"], "_clauses"),
    **dict.fromkeys(
        [
            "BackendError",
            "BackendTypeError",
            "BackendValueError",
            "Factory",
            "Rig",
            "heap_factory",
            "load_factory",
            "make_rig",
            "not_applicable",
        ],
        "_harness",
    ),
    **dict.fromkeys(["BackendReport", "Outcome"], "_report"),
    "check_factory": "_check",
    "OracleMachine": "_machine",
    "run": "_run",
    **dict.fromkeys(["ClockConformance", "hypothesis_settings"], "_suite_clock"),
}


def __getattr__(name: str) -> Any:
    """Import each public name's module on first use.

    The pytest plugin is loaded into every pytest run of an environment where
    simclock is installed; importing the package must cost nothing and must
    not import simclock, pytest's suite, Hypothesis or the oracle until a
    conformance run actually needs them.
    """
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'simclock_conformance' has no attribute {name!r}")
    return getattr(importlib.import_module(f"simclock_conformance.{home}"), name)
