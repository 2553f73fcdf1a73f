"""The driver runner: the wire profile against a driver process (SPEC §18, C-WIRE-6, C-CONF-1).

``python -m simclock_conformance --driver -- CMD ARG...`` starts the driver
once, says ``hello``, then runs every clause program of
:mod:`~simclock_conformance._programs` (expected replies: the oracle's), the
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

from simclock_conformance._clauses import CLAUSES
from simclock_conformance._compare import first_difference, value_patterns
from simclock_conformance._driver import (
    DEFAULT_DEADLINE_S,
    STARTUP_S,
    Driver,
    DriverFailure,
    protocol_line,
)
from simclock_conformance._engine import MAX_NS, Engine, OracleBackend
from simclock_conformance._programs import CASES, Case
from simclock_conformance._report import FAILED, NOT_APPLICABLE, PASSED, BackendReport, Outcome

__all__ = ["WIRE_CLAUSES", "WIRE_PROFILE", "expected_replies", "run_case", "run_driver"]

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
_RNG = ("C-RNG-1", "C-RNG-2", "C-RNG-3", "C-RNG-4", "C-DET-1")

Json = dict[str, Any]
Send = Callable[[Json], Json]

_EXPECTED: dict[str, list[Json]] = {}


def expected_replies(case: Case) -> list[Json]:
    """The oracle's reply to every request of ``case`` (cached by id)."""
    if case.id not in _EXPECTED:
        engine = Engine(OracleBackend())
        _EXPECTED[case.id] = [engine.handle(r) for r in case.requests]
    return _EXPECTED[case.id]


def program_text(requests: Sequence[Json]) -> str:
    """Requests as protocol lines, ready to paste into the driver's stdin."""
    return "\n".join(protocol_line(r) for r in requests)


def run_case(
    send: Send,
    case: Case,
    features: Sequence[str],
    expected: list[Json] | None = None,
) -> tuple[str | None, list[Json]]:
    """Run ``case`` through ``send``; ``(None, replies)`` or ``(description of the failure, ...)``.

    :class:`DriverFailure` propagates: the caller owns the process.
    """
    want = expected if expected is not None else expected_replies(case)
    got: list[Json] = []
    for (request, accept), _ in zip(case.steps, want, strict=True):
        got.append(send(request))
        reply = got[-1]
        if accept and reply.get("ok") is False and reply.get("error") in accept:
            return None, got  # a clean refusal past 2**64 - 1 (C-TIME-4): the case ends here
    rng = any(c in _RNG for c in case.clauses)
    compare_got, compare_want = got, want
    if rng and "bits" not in features:
        compare_got, compare_want = value_patterns(got), value_patterns(want)
    for k, (o, e) in enumerate(zip(compare_got, compare_want, strict=True)):
        diff = first_difference(o, e, features)
        if diff:
            return (
                f"case {case.id}, request {k + 1} of {len(case.steps)}: "
                f"{protocol_line(case.steps[k][0])}\n"
                f"  first difference: {diff}\n"
                f"  expected reply: {protocol_line(e)}\n"
                f"  observed reply: {protocol_line(o)}"
            ), got
    return None, got


class _Session:
    """The running driver of a run, started again after each failure (C-WIRE-5)."""

    def __init__(
        self,
        command: list[str],
        deadline_s: float,
        make_driver: Callable[[], Any] | None = None,
    ) -> None:
        self.command = command
        self.deadline_s = deadline_s
        self.make_driver = make_driver or (lambda: Driver(self.command, self.deadline_s))
        self.driver: Any = None
        self.features: tuple[str, ...] = ()
        self.backend = ""
        self.hello_error = ""

    def start(self) -> Driver:
        if self.driver is None:
            driver = self.make_driver()
            self.driver = driver
            reply = self._hello(driver)
            if reply.get("ok") is not True or reply.get("protocol") != "1":
                driver.kill()
                self.driver = None
                raise DriverFailure(
                    f"hello was answered with {protocol_line(reply)}", driver.stderr_tail()
                )
            features = reply.get("features")
            names = (
                [f for f in features if isinstance(f, str)] if isinstance(features, list) else []
            )
            self.features = tuple(
                f for f in ("peek", "rate", "stats", "start_ns", "bits") if f in names
            )
            self.backend = str(reply.get("backend", ""))
        return self.driver

    def _hello(self, driver: Any) -> Json:
        hello = {"op": "hello", "protocol": "1"}
        if isinstance(driver, Driver):
            return driver.request(hello, max(self.deadline_s, STARTUP_S))
        reply: Json = driver.request(hello)
        return reply

    def send(self, request: Json) -> Json:
        return self.start().request(request)

    def drain(self) -> None:
        drain = getattr(self.driver, "drain", None)
        if callable(drain):
            drain()

    def failed(self) -> None:
        if self.driver is not None:
            self.driver.kill()
        self.driver = None

    def close(self) -> None:
        if self.driver is not None:
            self.driver.close()
        self.driver = None


def _failure_outcome(name: str, clause: str, text: str, program: str = "") -> Outcome:
    message = text if text.startswith(clause) else f"{clause}: {text}"
    return Outcome(name, FAILED, message=message, program=program)


def run_driver(
    command: list[str],
    *,
    profile: str = "ci",
    clauses: Sequence[str] = (),
    deadline_s: float = DEFAULT_DEADLINE_S,
    vectors: bool = True,
    expected_failures: Sequence[str] = (),
    make_driver: Callable[[], Any] | None = None,
) -> BackendReport:
    """Run the wire profile on the driver ``command``; the report (verdict: C-CONF-1).

    ``make_driver`` replaces the process by any object with ``request``,
    ``kill``, ``close`` and ``stderr_tail`` (:class:`LocalDriver`: a Python
    backend through the protocol without a pipe, what ``serve`` does).
    """
    selected = set(clauses)
    session = _Session(command, deadline_s, make_driver)
    report = BackendReport(
        " ".join(command), profile, clause_set=list(WIRE_CLAUSES), label=WIRE_PROFILE
    )
    try:
        session.start()
    except DriverFailure as failure:
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
    for case in cases:
        _run_one(session, report, case)
    if not selected or "SM-ORACLE" in selected:
        report.expect("SM-ORACLE", "state-machine")
        report.add("SM-ORACLE", _run_machine(session, profile))
    else:
        report.expect("SM-ORACLE", "state-machine")
    report.expect("C-WIRE-7", "vectors")
    if vectors and (not selected or "C-WIRE-7" in selected):
        from simclock_conformance._vectors import replay_outcome

        report.add("C-WIRE-7", replay_outcome(session, expected_failures))
    session.close()
    return report


def _run_one(session: _Session, report: BackendReport, case: Case) -> None:
    missing = [f for f in case.requires if f not in session.features]
    if missing:
        for clause in case.clauses:
            why = f"not applicable: the driver does not offer feature {', '.join(missing)}"
            if CLAUSES[clause].optional if clause in CLAUSES else False:
                report.add(clause, Outcome(case.id, NOT_APPLICABLE, message=why))
        return
    program = program_text(case.requests)
    try:
        problem, replies = run_case(session.send, case, session.features)
        session.drain()
        if problem is None and any(c in _CROSS_PROCESS for c in case.clauses):
            problem = _second_process(session, case, replies)
    except DriverFailure as failure:
        session.failed()
        for clause in case.clauses:
            report.add(
                clause, _failure_outcome(case.id, clause, f"case {case.id}: {failure}", program)
            )
        return
    for clause in case.clauses:
        if problem is None:
            report.add(clause, Outcome(case.id, PASSED))
        else:
            report.add(clause, _failure_outcome(case.id, clause, problem, program))


def _second_process(session: _Session, case: Case, first: list[Json]) -> str | None:
    """C-DET-1, C-RNG-2: the same program in a second driver process gives the same replies."""
    other = session.make_driver()
    try:
        session._hello(other)
        replies = [other.request(r) for r in case.requests]
    finally:
        other.close()
    for k, (a, b) in enumerate(zip(replies, first, strict=True)):
        diff = first_difference(a, b, session.features)
        if diff:
            return (
                f"case {case.id}: a second driver process answered request {k + 1} "
                f"{protocol_line(case.requests[k])} differently: {diff} (first process: "
                f"{protocol_line(b)}; second: {protocol_line(a)})"
            )
    return None


def _run_machine(session: _Session, profile: str) -> Outcome:
    from simclock_conformance._wire_machine import run_wire_machine

    try:
        problem = run_wire_machine(session, profile)
    except DriverFailure as failure:
        session.failed()
        return _failure_outcome("state-machine", "SM-ORACLE", str(failure))
    if problem is None:
        return Outcome("state-machine", PASSED)
    message, program = problem
    return _failure_outcome("state-machine", "SM-ORACLE", message, program)


def write_json(report: BackendReport, path: str) -> None:
    """The JSON report at ``path`` (the same shape as the in-process one)."""
    Path(path).write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")


def max_ns() -> int:
    """``2**64 - 1``."""
    return MAX_NS


class LocalDriver:
    """The protocol on a Python factory in this process: ``serve`` without the pipe (C-WIRE-8).

    Every request and reply goes through ``json`` as on the wire, so what the
    runner sees is exactly what ``serve`` would write.
    """

    def __init__(self, factory: Callable[..., Any], name: str) -> None:
        from simclock_conformance._engine import PythonBackend

        self.engine = Engine(PythonBackend(factory, name))

    def request(self, obj: Json) -> Json:
        reply = self.engine.handle(json.loads(protocol_line(obj)))
        data: Json = json.loads(protocol_line(reply))
        return data

    def stderr_tail(self) -> list[str]:
        return []

    def kill(self) -> None:
        return None

    def close(self) -> None:
        return None
