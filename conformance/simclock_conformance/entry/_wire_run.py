"""The driver runner: the wire profile against a driver process (SPEC §18, C-WIRE-6, C-CONF-1).

``python -m simclock_conformance --driver -- CMD ARG...`` starts the driver
once, says ``hello``, then runs every clause program of
:mod:`~simclock_conformance.clauses._programs` (expected replies: the oracle's), the
cross-process cases on a second process (C-DET-1, C-RNG-2), the state
machine (Hypothesis generates request programs, compares every reply with
the oracle's and shrinks a divergence to its minimal program, shown as
protocol lines to paste into the driver) and the golden vectors (C-WIRE-7).
A driver failure (C-WIRE-5) fails the test it happened in with its evidence;
the driver is started again for the next test and the run ends with its
report, whatever the driver does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from simclock_conformance.clauses._builder import Case
from simclock_conformance.clauses._clauses import CLAUSES
from simclock_conformance.clauses._programs import CASES
from simclock_conformance.entry._vectors import not_offered, replay_outcome
from simclock_conformance.machine._wire_machine import run_wire_machine
from simclock_conformance.protocol._driver import (
    DEFAULT_DEADLINE_S,
    DriverError,
    protocol_line,
)
from simclock_conformance.protocol._engine import MAX_NS
from simclock_conformance.protocol._wire_core import (
    LocalDriver,
    Session,
    charged_line,
    expected_reasons,
    program_text,
    replies_difference,
    run_program,
)
from simclock_conformance.report._outcome import FAILED, NOT_APPLICABLE, PASSED, Outcome
from simclock_conformance.report._report import BackendReport
from simclock_conformance.report._rootkey import fixed_program

__all__ = ["WIRE_CLAUSES", "WIRE_PROFILE", "LocalDriver", "run_driver", "write_json"]

WIRE_PROFILE = "wire profile 1"

WIRE_CLAUSES = (
    *(f"C-TIME-{i}" for i in range(1, 5)),
    *(f"C-ADV-{i}" for i in range(1, 6)),
    "C-SCH-1",
    "C-TIE-1",
    *(f"C-PER-{i}" for i in range(1, 4)),
    *(f"C-CAN-{i}" for i in range(1, 5)),
    "C-ERR-1",
    "C-ERR-2",
    "C-DET-1",
    "C-STEP-1",
    *(f"C-RNG-{i}" for i in range(1, 5)),
    "C-X-PEEK",
    "C-X-RATE",
    "C-X-STATS",
    "C-X-BITS",
    "C-WIRE-2",
    "SM-ORACLE",
    "C-WIRE-7",
)
"""The clauses a driver is checked on (C-WIRE-6), in report order."""

_CROSS_PROCESS = ("C-DET-1", "C-RNG-2")

Json = dict[str, Any]


def _failure_outcome(
    name: str, clause: str, text: str, program: str = "", kind: str = "fixed"
) -> Outcome:
    """A failed test; a fixed clause program is cut after its failing request."""
    message = text if text.startswith(clause) else f"{clause}: {text}"
    if program and kind == "fixed":
        program, kind = fixed_program(message, program)
    return Outcome(name, FAILED, message=message, program=program, program_kind=kind)


def run_driver(
    command: list[str],
    *,
    profile: str = "ci",
    clauses: Sequence[str] = (),
    deadline_s: float = DEFAULT_DEADLINE_S,
    vectors: bool = True,
    expected_failures: Sequence[str] = (),
    make_driver: Callable[[], Any] | None = None,
    shrink: bool = True,
    required: Sequence[str] = (),
) -> BackendReport:
    """Run the wire profile on the driver ``command``; the report (verdict: C-CONF-1).

    ``make_driver`` replaces the process by any object with ``request``,
    ``kill``, ``close`` and ``stderr_tail`` (:class:`LocalDriver`: a Python
    backend through the protocol without a pipe, what ``serve`` does).
    ``shrink=False`` reports a state machine failure with its first failing
    program instead of the minimal one: the same verdict, without the round
    trips of shrinking (``--no-shrink``). A feature in ``required`` (``--require``)
    that the driver does not offer fails the programs and vectors needing it,
    instead of leaving their optional clauses not applicable.
    """
    selected = set(clauses)
    session = Session(command, deadline_s, make_driver)
    report = BackendReport(
        " ".join(command), profile, clause_set=list(WIRE_CLAUSES), label=WIRE_PROFILE
    )
    try:
        session.start()
    except DriverError as failure:
        session.failed()
        for clause in WIRE_CLAUSES:
            report.expect(clause, "hello")
            report.add(clause, _failure_outcome("hello", clause, str(failure)))
        return report
    cases = [c for c in CASES if not selected or selected & set(c.clauses)]
    for case in CASES:
        for clause in case.clauses:
            optional = CLAUSES[clause].optional if clause in CLAUSES else False
            # A program needing a feature the driver lacks belongs to the run only for
            # an optional clause (then "not applicable"), never to a mandatory one.
            if optional or all(f in session.features for f in case.requires):
                report.expect(clause, case.id)
    splits: dict[str, list[Json]] = {}
    for case in cases:
        _run_one(session, report, case, splits, required)
    if not selected or "SM-ORACLE" in selected:
        report.expect("SM-ORACLE", "state-machine")
        report.add("SM-ORACLE", _run_machine(session, profile, shrink))
    else:
        report.expect("SM-ORACLE", "state-machine")
    report.expect("C-WIRE-7", "vectors")
    if vectors and (not selected or "C-WIRE-7" in selected):
        report.add("C-WIRE-7", replay_outcome(session, expected_failures, required))
    session.close()
    return report


def _run_one(
    session: Session,
    report: BackendReport,
    case: Case,
    splits: dict[str, list[Json]],
    required: Sequence[str] = (),
) -> None:
    missing = [f for f in case.requires if f not in session.features]
    if missing:
        lacking = [f for f in missing if f in required]
        for clause in case.clauses:
            if not (CLAUSES[clause].optional if clause in CLAUSES else False):
                continue
            if lacking:
                text = f"case {case.id}: {not_offered(lacking[0], session.features)}"
                report.add(clause, _failure_outcome(case.id, clause, text))
            else:
                why = f"not applicable: the driver does not offer feature {', '.join(missing)}"
                report.add(clause, Outcome(case.id, NOT_APPLICABLE, message=why))
        return
    program = program_text(case.requests)
    session.mark()
    try:
        problem, replies = run_program(session.send, case, session.features, splits)
        session.drain()
        if problem is None and any(c in _CROSS_PROCESS for c in case.clauses):
            problem = _second_process(session, case, replies)
    except DriverError as failure:
        session.failed()
        text = f"case {case.id}: {failure}"
        crashed = _crashed_request(case, str(failure))
        if crashed is not None and "gave no reply within" not in failure.evidence:
            # A crash (not a hang, which is its own test's time limit) has no reply to
            # compare: it is charged to the rule of the request it ended.
            rules = expected_reasons(case)[crashed].parts.get("ok", ())
            text += f"\n  {charged_line([*rules, *case.clauses])}"
        for clause in case.clauses:
            report.add(clause, _failure_outcome(case.id, clause, text, program))
        return
    for clause in case.clauses:
        if problem is None:
            report.add(clause, Outcome(case.id, PASSED))
        else:
            report.add(clause, _failure_outcome(case.id, clause, problem, program))


def _crashed_request(case: Case, evidence: str) -> int | None:
    """The index of the request a driver failure names, or None."""
    for k, request in enumerate(case.requests):
        if protocol_line(request) in evidence:
            return k
    return None


def _second_process(session: Session, case: Case, first: list[Json]) -> str | None:
    """C-DET-1, C-RNG-2: the same program in a second driver process gives the same replies."""
    other = session.make_driver()
    try:
        session._hello(other)
        replies = [other.request(r) for r in case.requests]
    finally:
        other.close()
    return replies_difference(case, replies, first, session.features, "a second driver process")


def _run_machine(session: Session, profile: str, shrink: bool) -> Outcome:
    session.mark()
    try:
        problem = run_wire_machine(session, profile, shrink)
    except DriverError as failure:
        session.failed()
        return _failure_outcome("state-machine", "SM-ORACLE", str(failure))
    if problem is None:
        return Outcome("state-machine", PASSED)
    message, program = problem
    kind = "minimal" if shrink else "first"
    return _failure_outcome("state-machine", "SM-ORACLE", message, program, kind)


def write_json(report: BackendReport, path: str) -> None:
    """The JSON report at ``path`` (the same shape as the in-process one)."""
    Path(path).write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")


def max_ns() -> int:
    """``2**64 - 1``."""
    return MAX_NS
