"""Per-clause results: collected from pytest reports, rendered as a table and as JSON (§14).

A clause is ``failed`` when any of its tests failed, else ``passed`` when any
passed, else ``not applicable`` when its tests were skipped because the backend
lacks an optional method (``schedule_rate``, ``next_event_ns``), else ``not run``
(deselected, or skipped for another reason).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from conformance._clauses import CLAUSES

__all__ = [
    "FAILED",
    "NOT_APPLICABLE",
    "NOT_RUN",
    "PASSED",
    "BackendReport",
    "Outcome",
    "falsifying_program",
]

PASSED = "passed"
FAILED = "failed"
NOT_APPLICABLE = "not applicable"
NOT_RUN = "not run"


@dataclass
class Outcome:
    """The outcome of one test of a clause; ``message`` and ``details`` only on failure."""

    name: str
    outcome: str
    message: str = ""
    details: str = ""
    program: str = ""

    def to_json(self) -> dict[str, Any]:
        """A plain dict; empty strings are left out."""
        data: dict[str, Any] = {"name": self.name, "outcome": self.outcome}
        for key in ("message", "details", "program"):
            value = getattr(self, key)
            if value:
                data[key] = value
        return data


_PROGRAM_START = re.compile(r"^(?:E\s+)?state = ", re.M)
_PROGRAM_END = re.compile(r"^(?:E\s+)?state\.teardown\(\)\s*$", re.M)


def falsifying_program(text: str) -> str:
    """The minimal failing program Hypothesis printed for a state machine, or ``""``."""
    starts = list(_PROGRAM_START.finditer(text))
    if not starts:
        return ""
    start = starts[-1].start()
    end_match = _PROGRAM_END.search(text, start)
    end = end_match.end() if end_match else len(text)
    lines = [re.sub(r"^E\s+", "", line) for line in text[start:end].splitlines()]
    return "\n".join(lines)


@dataclass
class BackendReport:
    """Results of one backend: tests grouped by clause id."""

    backend: str
    profile: str = "ci"
    tests: dict[str, list[Outcome]] = field(default_factory=dict)

    def add(self, clause_id: str, outcome: Outcome) -> None:
        """Record ``outcome`` under ``clause_id`` (replacing an earlier phase of the same test)."""
        bucket = self.tests.setdefault(clause_id, [])
        for i, old in enumerate(bucket):
            if old.name == outcome.name:
                if old.outcome != FAILED:
                    bucket[i] = outcome
                return
        bucket.append(outcome)

    def status(self, clause_id: str) -> str:
        """``passed``, ``failed``, ``not applicable`` or ``not run``."""
        outcomes = {t.outcome for t in self.tests.get(clause_id, [])}
        for status in (FAILED, PASSED, NOT_APPLICABLE):
            if status in outcomes:
                return status
        return NOT_RUN

    def clause_ids(self) -> list[str]:
        """Registered clauses in report order, then any unregistered ids seen."""
        return [*CLAUSES, *(c for c in self.tests if c not in CLAUSES)]

    def failed(self) -> list[str]:
        """Ids of the failed clauses."""
        return [c for c in self.clause_ids() if self.status(c) == FAILED]

    @property
    def conforming(self) -> bool:
        """True when no clause failed and at least one passed."""
        statuses = {self.status(c) for c in self.clause_ids()}
        return FAILED not in statuses and PASSED in statuses

    def counts(self) -> dict[str, int]:
        """How many clauses have each status."""
        result = {PASSED: 0, FAILED: 0, NOT_APPLICABLE: 0, NOT_RUN: 0}
        for c in self.clause_ids():
            result[self.status(c)] += 1
        return result

    def to_json(self) -> dict[str, Any]:
        """The JSON report: backend, profile, verdict, counts and one row per clause."""
        rows = []
        for c in self.clause_ids():
            clause = CLAUSES.get(c)
            rows.append(
                {
                    "id": c,
                    "section": clause.section if clause else "",
                    "summary": clause.summary if clause else "",
                    "status": self.status(c),
                    "tests": [t.to_json() for t in self.tests.get(c, [])],
                }
            )
        return {
            "backend": self.backend,
            "profile": self.profile,
            "conforming": self.conforming,
            "counts": self.counts(),
            "failed": self.failed(),
            "clauses": rows,
        }

    def table(self) -> str:
        """The per-clause table printed at the end of a run, then the failures in detail."""
        width = max(len(c) for c in self.clause_ids())
        lines = [f"simclock conformance: {self.backend} (profile {self.profile})", ""]
        lines.append(f"{'clause':<{width}}  {'status':<14}  summary")
        lines.append(f"{'-' * width}  {'-' * 14}  {'-' * 40}")
        for c in self.clause_ids():
            clause = CLAUSES.get(c)
            summary = clause.summary if clause else ""
            lines.append(f"{c:<{width}}  {self.status(c):<14}  {summary}")
        counts = self.counts()
        lines.append("")
        lines.append(
            f"{counts[PASSED]} passed, {counts[FAILED]} failed, "
            f"{counts[NOT_APPLICABLE]} not applicable, {counts[NOT_RUN]} not run: "
            + ("CONFORMING" if self.conforming else "NOT CONFORMING")
        )
        for c in self.failed():
            for t in self.tests[c]:
                if t.outcome != FAILED:
                    continue
                lines.append("")
                lines.append(f"FAILED {c}: {t.name}")
                lines.append(f"  {t.message}")
                if t.program:
                    lines.append("  minimal failing program (Hypothesis):")
                    lines.extend("    " + line for line in t.program.splitlines())
        return "\n".join(lines)
