"""Per-clause results and the verdict: collected from pytest, rendered as a table and JSON (§14).

Clause status (C-CONF-1):

- ``failed``: a test of the clause failed (an expected failure, ``xfail``,
  counts as failed: the backend does not keep the clause);
- ``blocked``: the clause failed, but every failed test of it is the same
  defect as a failed test of a clause it relies on (its prerequisites,
  ``_clauses.PREREQUISITES``), which itself failed: the report names that
  clause (``blocked by C-TIE-1``) and charges the defect there;
- ``incomplete``: a test of a mandatory clause was skipped, overridden (e.g.
  by a subclass) or called "not applicable", or ran only in the reduced form
  a backend's declared horizon allows (``limited``, see ``_reach``);
- ``not run``: a test of the clause was not run (deselected by ``--clause``
  or ``-k``, or cut short by ``-x``);
- ``not applicable``: every test of an optional clause (``C-X-*``, or a family
  registered as optional) was skipped because the backend lacks the feature;
- ``passed``: every test of the clause ran and passed.

Verdict, the same in the CLI, the plugin, subclasses and the JSON:
NOT CONFORMING when a clause failed (a clause is only ever blocked by a failed
one), else INCOMPLETE when one is incomplete,
else PARTIAL when one was not run, else CONFORMING.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simclock_conformance.clauses._clauses import CLAUSES, WIRE_ONLY, prerequisites
from simclock_conformance.report._attribution import first_of_a_closed_cycle
from simclock_conformance.report._outcome import (
    BLOCKED,
    CONFORMING,
    FAILED,
    INCOMPLETE,
    INCOMPLETE_STATUS,
    LIMITED,
    NOT_APPLICABLE,
    NOT_CONFORMING,
    NOT_RUN,
    OVERRIDDEN,
    PARTIAL,
    PASSED,
    SKIPPED,
    STATUSES,
    Outcome,
)
from simclock_conformance.report._rootkey import defect_key, program_label, root_key

__all__ = ["BackendReport"]


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
    _blocked_memo: tuple[object, dict[str, str]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

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
        """``passed``, ``failed``, ``blocked``, ``incomplete``, ``not applicable``, ``not run``."""
        status = self._own_status(clause_id)
        if status == FAILED and clause_id in self.blocked():
            return BLOCKED
        return status

    def _own_status(self, clause_id: str) -> str:
        """The status from the clause's own tests alone, before blocking."""
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

    def blocked(self) -> dict[str, str]:
        """``clause -> the failed clause blocking it``, in report order.

        A clause X that failed is blocked by Y when Y is one of X's
        prerequisites, Y is failed (not blocked), and the defect of every
        failed test of X (:func:`defect_key` of its root key) is the defect of
        some failed test of Y. Clauses are settled in rounds: one with no such
        Y is failed; one with such a Y already failed is blocked by the first
        in its prerequisites' order. When only clauses that could each be
        explained by another unsettled one are left (a cycle: two clauses
        failing with the same defect, each relying on the other), the first
        clause of a cycle that waits on nothing outside it is failed and the
        rounds go on: the clause whose subject the shared kind of failure is
        (``_attribution._OWNER``: ties in another order are C-TIE-1's), else the most basic
        (``_attribution._MOST_BASIC``), else the first in report order.
        So two clauses never block each other and every blocked clause names
        a failed one.
        """
        ids = self.clause_ids()
        # Every status, count and table line asks: settle once per state of the outcomes.
        state = tuple(
            (c, *((id(t), t.outcome, t.root, t.message) for t in self.tests.get(c, [])))
            for c in ids
        )
        if self._blocked_memo is not None and self._blocked_memo[0] == state:
            return dict(self._blocked_memo[1])
        result = self._settle(ids)
        self._blocked_memo = (state, result)
        return dict(result)

    def _settle(self, ids: list[str]) -> dict[str, str]:
        """:meth:`blocked`, computed."""
        defects = {
            c: {defect_key(self.root_key(t)) for t in self.tests[c] if t.outcome == FAILED}
            for c in ids
            if self._own_status(c) == FAILED
        }
        candidates = {
            x: [y for y in prerequisites(x) if y != x and y in defects and defects[x] <= defects[y]]
            for x in defects
        }
        failed: set[str] = set()
        blocked: dict[str, str] = {}
        # Invariant: undecided keeps report order; each round settles at least one clause.
        undecided = [c for c in ids if c in defects]
        while undecided:
            settled = []
            for x in undecided:
                if not candidates[x] or all(y in blocked for y in candidates[x]):
                    failed.add(x)
                    settled.append(x)
                    continue
                by = next((y for y in candidates[x] if y in failed), None)
                if by is not None:
                    blocked[x] = by
                    settled.append(x)
            if not settled:
                first = first_of_a_closed_cycle(undecided, candidates, defects)
                settled = [first]
                failed.add(first)
            undecided = [c for c in undecided if c not in settled]
        return {c: blocked[c] for c in ids if c in blocked}

    def clause_ids(self) -> list[str]:
        """Registered clauses in report order, then any unregistered ids seen."""
        base = self.clause_set
        if base is None:
            base = [c for c in CLAUSES if c not in WIRE_ONLY]
        return [*base, *(c for c in self.tests if c not in base)]

    def failed(self) -> list[str]:
        """Ids of the failed clauses (blocked ones are left out, see :meth:`blocked`)."""
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
        # Invariant: a blocked clause names a failed one, so BLOCKED implies FAILED here.
        if FAILED in statuses or BLOCKED in statuses:
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
        result = dict.fromkeys(STATUSES, 0)
        for c in self.clause_ids():
            result[self.status(c)] += 1
        return result

    def root_key(self, outcome: Outcome) -> str:
        """The root cause of a failed test: the backend's exception, else :func:`root_key`."""
        if outcome.root:
            return outcome.root
        message = outcome.failures[0]["message"] if outcome.failures else outcome.message
        return root_key(message)

    def root_causes(self) -> list[dict[str, Any]]:
        """Every failed test grouped by its root cause, each test once (C-CONF-3).

        The cause is the exception the backend raised (type, file:line,
        function) or, when there is none, the kind of its first difference
        (:func:`root_key`). The causes behind most tests come first; equal
        ones in the order of their first clause.
        """
        causes: dict[str, dict[str, Any]] = {}
        for c in self.clause_ids():
            for t in self.tests.get(c, []):
                if t.outcome == FAILED:
                    key = self.root_key(t)
                    entry = causes.setdefault(key, {"cause": key, "clauses": [], "tests": []})
                    if c not in entry["clauses"]:
                        entry["clauses"].append(c)
                    entry["tests"].append(t.name)
        return sorted(causes.values(), key=lambda entry: -len(entry["tests"]))

    def to_json(self) -> dict[str, Any]:
        """The JSON report: backend, profile, verdict, counts, causes and one row per clause."""
        rows = []
        blocked = self.blocked()
        for c in self.clause_ids():
            clause = CLAUSES.get(c)
            row: dict[str, Any] = {
                "id": c,
                "section": clause.section if clause else "",
                "summary": clause.summary if clause else "",
                "optional": self._optional(c),
                "status": self.status(c),
            }
            if c in blocked:
                row["blocked_by"] = blocked[c]
            row["tests"] = [t.to_json() for t in self.tests.get(c, [])]
            rows.append(row)
        return {
            "backend": self.backend,
            "profile": self.profile,
            "verdict": self.verdict,
            "conforming": self.conforming,
            "deterministic": not self.nondeterministic,
            "nondeterministic": self.nondeterministic,
            "counts": self.counts(),
            "failed": self.failed(),
            "blocked": blocked,
            "incomplete": self.incomplete_tests(),
            "not_run": [c for c in self.clause_ids() if self.status(c) == NOT_RUN],
            "root_causes": self.root_causes(),
            "clauses": rows,
        }

    def summary_line(self) -> str:
        """``N passed, N failed, [N blocked, ]...: VERDICT``."""
        counts = self.counts()
        # Blocked clauses appear only when there are some: "0 blocked" says nothing.
        blocked = f"{counts[BLOCKED]} blocked, " if counts[BLOCKED] else ""
        return (
            f"{counts[PASSED]} passed, {counts[FAILED]} failed, {blocked}"
            f"{counts[INCOMPLETE_STATUS]} incomplete, {counts[NOT_APPLICABLE]} not applicable, "
            f"{counts[NOT_RUN]} not run: {self.verdict}"
        )

    def table(self) -> str:
        """The per-clause table printed at the end of a run, then the failures in detail."""
        width = max(len(c) for c in self.clause_ids())
        from simclock_conformance.report._rerun import describe

        lines = [f"simclock conformance: {self.backend} (profile {self.profile})", ""]
        lines.extend(describe(self.nondeterministic))
        blocked = self.blocked()
        status_width = max([14, *(len(f"blocked by {b}") for b in blocked.values())])
        lines.append(f"{'clause':<{width}}  {'status':<{status_width}}  summary")
        lines.append(f"{'-' * width}  {'-' * status_width}  {'-' * 40}")
        for c in self.clause_ids():
            clause = CLAUSES.get(c)
            summary = clause.summary if clause else ""
            status = f"blocked by {blocked[c]}" if c in blocked else self.status(c)
            lines.append(f"{c:<{width}}  {status:<{status_width}}  {summary}")
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
        failed = [
            (c, t)
            for c in self.clause_ids()
            if self._own_status(c) == FAILED
            for t in self.tests[c]
            if t.outcome == FAILED
        ]
        by_key: dict[str, list[tuple[str, Outcome]]] = {}
        for c, t in failed:
            by_key.setdefault(self.root_key(t), []).append((c, t))
        for cause in self.root_causes():
            group = by_key.get(cause["cause"], [])
            if len(group) < 2:
                continue
            lines.append("")
            lines.append(
                f"ROOT CAUSE in {len(cause['tests'])} tests of {', '.join(cause['clauses'])}:"
            )
            lines.append(f"  {cause['cause']}")
            lines.append(f"  tests: {', '.join(cause['tests'])}")
            # One failure in full: the one with the shortest program shows the cause best.
            c, t = min(group, key=lambda ct: _program_size(ct[1]))
            lines.append(f"  for example, {c}: {t.name}")
            lines.extend(_failure_lines(t, "    "))
        for c, t in failed:
            if len(by_key[self.root_key(t)]) > 1:
                continue
            lines.append("")
            why = f" (blocked by {blocked[c]})" if c in blocked else ""
            lines.append(f"FAILED {c}{why}: {t.name}")
            lines.extend(_failure_lines(t, "  "))
        return "\n".join(lines)


def _program_size(outcome: Outcome) -> int:
    """How many lines the programs of ``outcome`` have (no program: last)."""
    programs = [f.get("program", "") for f in outcome.failures] or [outcome.program]
    sizes = [len(p.splitlines()) for p in programs if p]
    return min(sizes) if sizes else 1_000_000


def _failure_lines(t: Outcome, indent: str) -> list[str]:
    """The message of a failed test and each distinct failure with its program."""
    lines = [indent + line for line in t.message.splitlines()[:12]]
    failures = t.failures or (
        [{"message": "", "program": t.program, "program_kind": t.program_kind}] if t.program else []
    )
    for i, failure in enumerate(failures, 1):
        if len(failures) > 1:
            lines.append(f"{indent}distinct failure {i} of {len(failures)}:")
            lines.append(f"{indent}  {failure['message']}")
        if failure["program"]:
            lines.append(indent + program_label(failure.get("program_kind", "")))
            lines.extend(f"{indent}  {line}" for line in failure["program"].splitlines())
    return lines
