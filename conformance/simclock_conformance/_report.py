"""Per-clause results and the verdict: collected from pytest, rendered as a table and JSON (§14).

Clause status (C-CONF-1):

- ``failed``: a test of the clause failed (an expected failure, ``xfail``,
  counts as failed: the backend does not keep the clause);
- ``incomplete``: a test of a mandatory clause was skipped, overridden (e.g.
  by a subclass) or called "not applicable", or ran only in the reduced form
  a backend's declared horizon allows (``limited``, see ``_reach``);
- ``not run``: a test of the clause was not run (deselected by ``--clause``
  or ``-k``, or cut short by ``-x``);
- ``not applicable``: every test of an optional clause (``C-X-*``, or a family
  registered as optional) was skipped because the backend lacks the feature;
- ``passed``: every test of the clause ran and passed.

Verdict, the same in the CLI, the plugin, subclasses and the JSON:
NOT CONFORMING when a clause failed, else INCOMPLETE when one is incomplete,
else PARTIAL when one was not run, else CONFORMING.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from simclock_conformance._clauses import CLAUSES, WIRE_ONLY

__all__ = [
    "CONFORMING",
    "FAILED",
    "INCOMPLETE",
    "LIMITED",
    "NOT_APPLICABLE",
    "NOT_CONFORMING",
    "NOT_RUN",
    "OVERRIDDEN",
    "PARTIAL",
    "PASSED",
    "SKIPPED",
    "BackendReport",
    "Outcome",
    "falsifying_program",
]

PASSED = "passed"
FAILED = "failed"
NOT_APPLICABLE = "not applicable"
NOT_RUN = "not run"
SKIPPED = "skipped"
OVERRIDDEN = "overridden"
INCOMPLETE_STATUS = "incomplete"
LIMITED = "limited"
"""A test that passed only within the backend's declared horizon (see ``_reach``)."""

CONFORMING = "CONFORMING"
NOT_CONFORMING = "NOT CONFORMING"
PARTIAL = "PARTIAL"
INCOMPLETE = "INCOMPLETE"

_STATUSES = (PASSED, FAILED, INCOMPLETE_STATUS, NOT_APPLICABLE, NOT_RUN)


@dataclass
class Outcome:
    """The outcome of one test of a clause.

    ``message``/``details`` on failure or skip; ``failures`` lists every
    distinct failure a state machine found, each with its minimal program
    (C-CONF-3); ``root`` names the exception the backend raised, so one bug
    breaking many clauses is reported once.
    """

    name: str
    outcome: str
    message: str = ""
    details: str = ""
    program: str = ""
    failures: list[dict[str, str]] = field(default_factory=list)
    root: str = ""

    def to_json(self) -> dict[str, Any]:
        """A plain dict; empty values are left out."""
        data: dict[str, Any] = {"name": self.name, "outcome": self.outcome}
        for key in ("message", "details", "program", "failures", "root"):
            value = getattr(self, key)
            if value:
                data[key] = value
        return data


_PROGRAM_START = re.compile(r"^(?:E\s+)?state = ", re.M)
_PROGRAM_END = re.compile(r"^(?:E\s+)?state\.teardown\(\)\s*$", re.M)


def falsifying_program(text: str) -> str:
    """The (last) minimal failing program Hypothesis printed for a state machine, or ``""``."""
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
    """Results of one backend: tests grouped by clause id, and the tests each clause expects."""

    backend: str
    profile: str = "ci"
    tests: dict[str, list[Outcome]] = field(default_factory=dict)
    expected: dict[str, list[str]] = field(default_factory=dict)
    nondeterministic: list[dict[str, str]] = field(default_factory=list)
    """Failed tests whose second run gave another outcome: clause, test, first, second."""
    clause_set: list[str] | None = None
    """The clauses this report covers; by default every registered one but the wire-only ones."""
    label: str = ""
    """The profile a CONFORMING verdict names (``wire profile 1`` for a driver, C-CONF-1)."""

    def add(self, clause_id: str, outcome: Outcome) -> None:
        """Record ``outcome`` under ``clause_id`` (a failure is never replaced by a later phase)."""
        bucket = self.tests.setdefault(clause_id, [])
        for i, old in enumerate(bucket):
            if old.name == outcome.name:
                if old.outcome not in (FAILED, OVERRIDDEN):
                    bucket[i] = outcome
                return
        bucket.append(outcome)

    def expect(self, clause_id: str, test_name: str) -> None:
        """Declare that ``test_name`` belongs to ``clause_id`` in a full run."""
        names = self.expected.setdefault(clause_id, [])
        if test_name not in names:
            names.append(test_name)

    def _optional(self, clause_id: str) -> bool:
        clause = CLAUSES.get(clause_id)
        return clause.optional if clause else False

    def status(self, clause_id: str) -> str:
        """``passed``, ``failed``, ``incomplete``, ``not applicable`` or ``not run``."""
        outcomes = self.tests.get(clause_id, [])
        kinds = {t.outcome for t in outcomes}
        if FAILED in kinds:
            return FAILED
        if SKIPPED in kinds or OVERRIDDEN in kinds or LIMITED in kinds:
            return INCOMPLETE_STATUS
        if NOT_APPLICABLE in kinds and not self._optional(clause_id):
            return INCOMPLETE_STATUS
        ran = {t.name.split("[", 1)[0] for t in outcomes}  # parametrised: test[case]
        if not outcomes or any(n not in ran for n in self.expected.get(clause_id, [])):
            return NOT_RUN
        if PASSED in kinds:
            return PASSED
        return NOT_APPLICABLE

    def clause_ids(self) -> list[str]:
        """Registered clauses in report order, then any unregistered ids seen."""
        base = self.clause_set
        if base is None:
            base = [c for c in CLAUSES if c not in WIRE_ONLY]
        return [*base, *(c for c in self.tests if c not in base)]

    def failed(self) -> list[str]:
        """Ids of the failed clauses."""
        return [c for c in self.clause_ids() if self.status(c) == FAILED]

    def incomplete_tests(self) -> list[str]:
        """``test (reason)`` of every mandatory test skipped, overridden or limited (C-CONF-1)."""
        out = []
        for c in self.clause_ids():
            optional = self._optional(c)
            for t in self.tests.get(c, []):
                if t.outcome in (SKIPPED, OVERRIDDEN, LIMITED) or (
                    t.outcome == NOT_APPLICABLE and not optional
                ):
                    why = (
                        t.message
                        if t.message.startswith(t.outcome)
                        else f"{t.outcome}: {t.message}"
                    )
                    out.append(f"{t.name} ({why})")
        return out

    @property
    def verdict(self) -> str:
        """CONFORMING, NOT CONFORMING, INCOMPLETE or PARTIAL (C-CONF-1)."""
        statuses = {self.status(c) for c in self.clause_ids()}
        if FAILED in statuses:
            return NOT_CONFORMING
        if INCOMPLETE_STATUS in statuses:
            return INCOMPLETE
        if NOT_RUN in statuses or PASSED not in statuses:
            return PARTIAL
        return f"{CONFORMING} ({self.label})" if self.label else CONFORMING

    @property
    def conforming(self) -> bool:
        """True only for the verdict CONFORMING: every mandatory clause ran and passed."""
        return self.verdict.startswith(CONFORMING)

    def counts(self) -> dict[str, int]:
        """How many clauses have each status."""
        result = dict.fromkeys(_STATUSES, 0)
        for c in self.clause_ids():
            result[self.status(c)] += 1
        return result

    def root_causes(self) -> list[dict[str, Any]]:
        """Backend exceptions behind failures, each once with the clauses and tests it broke."""
        causes: dict[str, dict[str, Any]] = {}
        for c in self.clause_ids():
            for t in self.tests.get(c, []):
                if t.outcome == FAILED and t.root:
                    entry = causes.setdefault(t.root, {"cause": t.root, "clauses": [], "tests": []})
                    if c not in entry["clauses"]:
                        entry["clauses"].append(c)
                    entry["tests"].append(t.name)
        return list(causes.values())

    def to_json(self) -> dict[str, Any]:
        """The JSON report: backend, profile, verdict, counts, causes and one row per clause."""
        rows = []
        for c in self.clause_ids():
            clause = CLAUSES.get(c)
            rows.append(
                {
                    "id": c,
                    "section": clause.section if clause else "",
                    "summary": clause.summary if clause else "",
                    "optional": self._optional(c),
                    "status": self.status(c),
                    "tests": [t.to_json() for t in self.tests.get(c, [])],
                }
            )
        return {
            "backend": self.backend,
            "profile": self.profile,
            "verdict": self.verdict,
            "conforming": self.conforming,
            "deterministic": not self.nondeterministic,
            "nondeterministic": self.nondeterministic,
            "counts": self.counts(),
            "failed": self.failed(),
            "incomplete": self.incomplete_tests(),
            "not_run": [c for c in self.clause_ids() if self.status(c) == NOT_RUN],
            "root_causes": self.root_causes(),
            "clauses": rows,
        }

    def summary_line(self) -> str:
        """``N passed, N failed, ...: VERDICT``."""
        counts = self.counts()
        return (
            f"{counts[PASSED]} passed, {counts[FAILED]} failed, "
            f"{counts[INCOMPLETE_STATUS]} incomplete, {counts[NOT_APPLICABLE]} not applicable, "
            f"{counts[NOT_RUN]} not run: {self.verdict}"
        )

    def table(self) -> str:
        """The per-clause table printed at the end of a run, then the failures in detail."""
        width = max(len(c) for c in self.clause_ids())
        from simclock_conformance._rerun import describe

        lines = [f"simclock conformance: {self.backend} (profile {self.profile})", ""]
        lines.extend(describe(self.nondeterministic))
        lines.append(f"{'clause':<{width}}  {'status':<14}  summary")
        lines.append(f"{'-' * width}  {'-' * 14}  {'-' * 40}")
        for c in self.clause_ids():
            clause = CLAUSES.get(c)
            summary = clause.summary if clause else ""
            lines.append(f"{c:<{width}}  {self.status(c):<14}  {summary}")
        lines.append("")
        lines.append(self.summary_line())
        verdict = self.verdict
        if verdict == INCOMPLETE:
            lines.append("INCOMPLETE: mandatory tests skipped, overridden or limited:")
            lines.extend(f"  {t}" for t in self.incomplete_tests())
        elif verdict == PARTIAL:
            not_run = [c for c in self.clause_ids() if self.status(c) == NOT_RUN]
            lines.append(
                f"PARTIAL: {len(not_run)} clauses not run ({', '.join(not_run[:8])}"
                + (", ..." if len(not_run) > 8 else "")
                + "); only a full run (no --clause, -k or -x) can say CONFORMING"
            )
        shown: set[str] = set()
        for cause in self.root_causes():
            if len(cause["tests"]) < 2:
                continue
            shown.add(cause["cause"])
            lines.append("")
            lines.append(
                f"ROOT CAUSE in {len(cause['tests'])} tests of {', '.join(cause['clauses'])}:"
            )
            lines.append(f"  {cause['cause']}")
            lines.append(f"  tests: {', '.join(cause['tests'])}")
        for c in self.failed():
            for t in self.tests[c]:
                if t.outcome != FAILED:
                    continue
                lines.append("")
                if t.root in shown:
                    lines.append(f"FAILED {c}: {t.name} (root cause above)")
                    continue
                lines.append(f"FAILED {c}: {t.name}")
                lines.extend("  " + line for line in t.message.splitlines()[:12])
                failures = t.failures or (
                    [{"message": "", "program": t.program}] if t.program else []
                )
                for i, failure in enumerate(failures, 1):
                    if len(failures) > 1:
                        lines.append(f"  distinct failure {i} of {len(failures)}:")
                        lines.append(f"    {failure['message']}")
                    if failure["program"]:
                        lines.append("  minimal failing program (Hypothesis):")
                        lines.extend("    " + line for line in failure["program"].splitlines())
        return "\n".join(lines)
