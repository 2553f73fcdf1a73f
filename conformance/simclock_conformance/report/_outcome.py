"""The result of one test (:class:`Outcome`) and the names of statuses and verdicts (C-CONF-1).

What each status and verdict means: :mod:`~simclock_conformance.report._report`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BLOCKED",
    "CONFORMING",
    "FAILED",
    "INCOMPLETE",
    "INCOMPLETE_STATUS",
    "LIMITED",
    "NOT_APPLICABLE",
    "NOT_CONFORMING",
    "NOT_RUN",
    "OVERRIDDEN",
    "PARTIAL",
    "PASSED",
    "SKIPPED",
    "STATUSES",
    "Outcome",
]

PASSED = "passed"
FAILED = "failed"
NOT_APPLICABLE = "not applicable"
NOT_RUN = "not run"
SKIPPED = "skipped"
OVERRIDDEN = "overridden"
INCOMPLETE_STATUS = "incomplete"
BLOCKED = "blocked"
"""A failed clause whose every failure is a failed prerequisite's defect (``blocked by C-...``)."""
LIMITED = "limited"
"""A test that passed only within the backend's declared horizon (see ``_reach``)."""

CONFORMING = "CONFORMING"
NOT_CONFORMING = "NOT CONFORMING"
PARTIAL = "PARTIAL"
INCOMPLETE = "INCOMPLETE"

STATUSES = (PASSED, FAILED, BLOCKED, INCOMPLETE_STATUS, NOT_APPLICABLE, NOT_RUN)


@dataclass
class Outcome:
    """The outcome of one test of a clause.

    ``message``/``details`` on failure or skip; ``failures`` lists every
    distinct failure a state machine found, each with its minimal program
    (C-CONF-3); ``root`` names the exception the backend raised, so one bug
    breaking many clauses is reported once; ``program_kind`` says what
    ``program`` is: ``fixed`` (a clause program, cut at the failing request),
    ``program`` (a clause program, whole), ``minimal`` (shrunk by Hypothesis)
    or ``first`` (not shrunk).
    """

    name: str
    outcome: str
    message: str = ""
    details: str = ""
    program: str = ""
    failures: list[dict[str, str]] = field(default_factory=list)
    root: str = ""
    program_kind: str = ""

    def to_json(self) -> dict[str, Any]:
        """A plain dict; empty values are left out."""
        data: dict[str, Any] = {"name": self.name, "outcome": self.outcome}
        for key in ("message", "details", "program", "program_kind", "failures", "root"):
            value = getattr(self, key)
            if value:
                data[key] = value
        return data
