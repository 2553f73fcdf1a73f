"""The wire profile's clause programs, run in process (C-WIRE-4, C-WIRE-6, C-WIRE-8).

Every clause program of :mod:`~simclock_conformance.clauses._programs` runs here on the
backend in this process, through the same protocol engine ``serve`` puts in
front of it and the same runner a driver run uses
(:func:`~simclock_conformance.protocol._wire_core.run_program`): each reply is compared
with the oracle's. So a clause a driver is checked on gets, in process, the
verdict it gets through ``serve``, and a Python backend is held to everything
a backend in another language is held to; the Python-only tests of the other
mixins check what the protocol cannot carry (numpy integers, shared callback
objects, memory, the bus).

One test per clause, ``test_<CLAUSE>_program[<case id>]``, one parameter per
program of that clause, as the wire runner reports them. C-ADV-5's programs are
one program advanced in different steps: each is compared with the first
(``adv-5/split-0``), run before it on the same engine, whose own problems are
its own test's. A program needing a feature the backend lacks is "not
applicable" for an optional clause (``C-X-*``) and not run for a mandatory
one, as on the wire (``start_ns``: a backend may have no other start).
With a declared horizon (C-CONF-4) a program whose advances go past it is
not run and the test is reported ``limited``. The cross-process halves of
C-DET-1 and C-RNG-2 are the determinism mixin's.

A mixin of :class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from simclock_conformance.clauses._builder import Case
from simclock_conformance.clauses._clauses import CLAUSES, WIRE_ONLY
from simclock_conformance.clauses._programs import CASES
from simclock_conformance.kit._harness import NOT_APPLICABLE, Factory
from simclock_conformance.kit._reach import LIMITED, Reach
from simclock_conformance.protocol._backends import PythonBackend
from simclock_conformance.protocol._engine import Engine
from simclock_conformance.protocol._wire_core import (
    SPLIT,
    expected_replies,
    program_text,
    run_program,
)
from simclock_conformance.report._explain import PROTOCOL_NOTE

__all__ = ["PROGRAM_CLAUSES", "ProgramClauses"]

_BY_ID = {case.id: case for case in CASES}

PROGRAM_CLAUSES = tuple(
    c for c in CLAUSES if c not in WIRE_ONLY and any(c in k.clauses for k in CASES)
)
"""The clauses with a program test here, in report order."""

_FIRST_SPLIT = next(case for case in CASES if case.clauses == [SPLIT])
"""The split program the others are compared with (C-ADV-5), as on the wire."""


def _span(case: Case) -> int:
    """The latest ``now_ns`` the oracle reaches in ``case``: how far the program advances."""
    return max((int(r["now_ns"]) for r in expected_replies(case) if "now_ns" in r), default=0)


def _run(clock_factory: Factory, reach: Reach, clause: str, cases: list[Case]) -> None:
    """Run ``cases`` of ``clause`` on a fresh engine over the backend; fail at the first problem.

    A C-ADV-5 program other than the first runs after the first, whose trace it is
    compared with; the first one's problems are left to its own test.
    """
    engine = Engine(PythonBackend(clock_factory, "in-process"))
    features = engine.features
    splits: dict[str, list[dict[str, Any]]] = {}
    if clause == SPLIT and cases != [_FIRST_SPLIT]:
        run_program(engine.handle, _FIRST_SPLIT, features, splits)
    for case in cases:
        missing = [f for f in case.requires if f not in features]
        if missing:
            if CLAUSES[clause].optional:
                pytest.skip(
                    f"{NOT_APPLICABLE}: the backend does not offer feature {', '.join(missing)}"
                )
            # A mandatory clause's program that needs an optional feature (a start other
            # than 0) is not part of the run, in process as on the wire (C-WIRE-6).
            continue
        span = _span(case)
        if reach.horizon is not None and span > reach.horizon:
            if reach.record is not None:
                reach.record(
                    f"{LIMITED}: program {case.id} advances to {span} ns, beyond the backend's "
                    f"declared horizon of {reach.horizon} ns; it was not run (C-CONF-4)"
                )
            continue
        problem, _ = run_program(engine.handle, case, features, splits)
        if problem is not None:
            failure = AssertionError(f"{clause}: {problem}")
            failure.add_note(PROTOCOL_NOTE + program_text(case.requests))
            if '\n  observed reply: {"ok":false,"error":"internal"' in problem:
                # The backend raised: its exception (and where) is the root cause, the
                # same one its in-process tests name.
                raise failure from engine.internal
            raise failure


def _program_test(clause: str) -> Callable[..., None]:
    ids = [case.id for case in CASES if clause in case.clauses]

    @pytest.mark.parametrize("program", ids)
    def test(self: object, clock_factory: Factory, reach: Reach, program: str) -> None:
        _run(clock_factory, reach, clause, [_BY_ID[program]])

    test.__name__ = test.__qualname__ = f"test_{clause.replace('-', '_')}_program"
    test.__doc__ = f"The wire profile's {clause} programs in process, replies against the oracle's."
    return test


class ProgramClauses:
    """The clause programs of the wire profile, in process: one test per clause."""


for _clause in PROGRAM_CLAUSES:
    _test = _program_test(_clause)
    setattr(ProgramClauses, _test.__name__, _test)
del _clause, _test
