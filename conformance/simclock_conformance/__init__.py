"""Backend-agnostic conformance suite for simclock clocks (SPEC §14).

A backend is a factory ``FACTORY(seed: int, bus: simclock.Bus) -> SimClock``.
Three ways to run the suite on it:

- ``python -m simclock_conformance MODULE:FACTORY [--json REPORT] [--profile ci|thorough]``;
- ``pytest --simclock-backend MODULE:FACTORY`` (the ``pytest11`` plugin);
- subclass :class:`ClockConformance` in a ``Test*`` class and override its
  ``clock_factory`` fixture.

See ``conformance/README.md``.

The names above (``__all__``) are the whole public API. Everything below this
module is private: the sub-packages (``kit``, ``clauses``, ``protocol``,
``suite``, ``report``, ``entry``) only sort the private ``_*`` modules by job,
export nothing (their ``__init__.py`` are empty) and may change in any release.
"""

import importlib
from typing import TYPE_CHECKING, Any

# The one export table: each public name -> the private module that defines it.
# ``__all__`` is derived from it; the imports below only tell type checkers the
# same names (tests/test_conformance_exports.py fails if the two drift).
_HOME: dict[str, str] = {
    **dict.fromkeys(
        ["CLAUSES", "Clause", "clause_of_test", "register_clauses"], "clauses._clauses"
    ),
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
        "kit._harness",
    ),
    "BackendReport": "report._report",
    "Outcome": "report._outcome",
    "check_factory": "kit._check",
    "OracleMachine": "machine._machine",
    "run": "entry._run",
    "ClockConformance": "suite._suite_clock",
    "hypothesis_settings": "kit._suite_support",
}

__all__ = list(_HOME)

if TYPE_CHECKING:
    from simclock_conformance.clauses._clauses import CLAUSES as CLAUSES
    from simclock_conformance.clauses._clauses import Clause as Clause
    from simclock_conformance.clauses._clauses import clause_of_test as clause_of_test
    from simclock_conformance.clauses._clauses import register_clauses as register_clauses
    from simclock_conformance.entry._run import run as run
    from simclock_conformance.kit._check import check_factory as check_factory
    from simclock_conformance.kit._harness import BackendError as BackendError
    from simclock_conformance.kit._harness import BackendTypeError as BackendTypeError
    from simclock_conformance.kit._harness import BackendValueError as BackendValueError
    from simclock_conformance.kit._harness import Factory as Factory
    from simclock_conformance.kit._harness import Rig as Rig
    from simclock_conformance.kit._harness import heap_factory as heap_factory
    from simclock_conformance.kit._harness import load_factory as load_factory
    from simclock_conformance.kit._harness import make_rig as make_rig
    from simclock_conformance.kit._harness import not_applicable as not_applicable
    from simclock_conformance.kit._suite_support import hypothesis_settings as hypothesis_settings
    from simclock_conformance.machine._machine import OracleMachine as OracleMachine
    from simclock_conformance.report._outcome import Outcome as Outcome
    from simclock_conformance.report._report import BackendReport as BackendReport
    from simclock_conformance.suite._suite_clock import ClockConformance as ClockConformance


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


def __dir__() -> list[str]:
    """The module's own names and every public name (loaded or not)."""
    return sorted({*globals(), *__all__})
