"""Per-clause results and the verdict: collected from pytest, rendered as a table and JSON (§14).

Clause status (C-CONF-1):

- ``failed``: a difference is charged to the clause (:meth:`BackendReport.charges`):
  the first difference of a failing program is charged to the clause whose rule
  decided that part of the oracle's reply (``protocol/_reasons.py``), from any
  clause's program; a Python-only test by what it observed (``_charges``); an
  expected failure (``xfail``) counts as failed; a backend whose failed tests gave
  another outcome when run again fails C-DET-1;
- ``blocked``: tests of the clause failed, but every difference is charged to
  other clauses: the report names the clause its first failed test is charged to
  (``blocked by C-TIE-1``);
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

from simclock_conformance.clauses._clauses import CLAUSES, WIRE_ONLY
from simclock_conformance.report._charges import (
    AGGREGATES,
    EITHER,
    REPLAYED_OTHERWISE,
    program_charge,
    program_refusal,
    python_charge,
    settle_either,
)
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
from simclock_conformance.report._rootkey import (
    defect_key,
    program_label,
    program_lines,
    root_key,
)

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
    json_path: str = ""
    """Where the JSON report (every program whole) is written, for the text report to say."""
    _blocked_memo: tuple[object, dict[tuple[str, str], str]] | None = field(
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
        """``passed``, ``failed``, ``blocked``, ``incomplete``, ``not applicable``, ``not run``.

        ``failed`` when a difference is charged to the clause (by any test), or
        the backend is not deterministic (C-DET-1); ``blocked`` when its tests
        failed only through differences charged elsewhere.
        """
        charged = set(self.charges().values()) | self._nondeterminism_charge()
        if clause_id in charged:
            return FAILED
        status = self._own_status(clause_id)
        return BLOCKED if status == FAILED else status

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
        """``clause -> the clause charged with its failures``, in report order.

        A clause is blocked when tests of it failed but none of their first
        differences is charged to it (:meth:`charges`): it is blocked by the
        clause its first failed test is charged to, which is failed.
        """
        charges = self.charges()
        charged = set(charges.values()) | self._nondeterminism_charge()
        out: dict[str, str] = {}
        for c in self.clause_ids():
            if c in charged or self._own_status(c) != FAILED:
                continue
            first = next(t for t in self.tests[c] if t.outcome == FAILED)
            out[c] = charges[(c, first.name)]
        return out

    def charges(self) -> dict[tuple[str, str], str]:
        """``(clause, test) -> the clause its first difference is charged to``, failed tests only.

        A program's failure names its charge (``charged to: C-X``, from the rules
        behind the oracle's reply, ``protocol._reasons``); the first of its
        clauses this report has is charged. The aggregates (SM-ORACLE, the golden
        vectors) are charged to themselves. A Python-only test is charged by
        :func:`~simclock_conformance.report._charges.python_charge`.
        """
        ids = self.clause_ids()
        state = tuple(
            (c, *((id(t), t.outcome, t.root, t.message) for t in self.tests.get(c, [])))
            for c in ids
        )
        if self._blocked_memo is not None and self._blocked_memo[0] == state:
            return dict(self._blocked_memo[1])
        known = set(ids)
        result: dict[tuple[str, str], str] = {}
        pending: list[tuple[str, Outcome]] = []
        by_root: dict[str, str] = {}
        by_refusal: dict[str, str] = {}
        for c in ids:
            for t in self.tests.get(c, []):
                if t.outcome != FAILED:
                    continue
                named = program_charge(c, t, known)
                if named is None:
                    pending.append((c, t))
                    continue
                result[(c, t.name)] = named
                if t.root and c not in AGGREGATES:
                    by_root.setdefault(defect_key(t.root), named)
                refusal = program_refusal(t) if c not in AGGREGATES else None
                if refusal is not None:
                    by_refusal.setdefault(refusal, named)
        settled = {v for v in result.values() if EITHER not in v}
        for k, v in result.items():
            result[k] = settle_either(v, settled, known)
        by_root = {k: settle_either(v, settled, known) for k, v in by_root.items()}
        by_refusal = {k: settle_either(v, settled, known) for k, v in by_refusal.items()}
        programs: dict[str, str] = {}
        by_kind: dict[str, str] = {}
        for c in ids:
            for t in self.tests.get(c, []):
                named = result.get((c, t.name))
                if named is not None and c not in AGGREGATES:
                    programs.setdefault(c, named)
                    by_kind.setdefault(self.root_key(t), named)
        for c, t in pending:
            result[(c, t.name)] = python_charge(
                c, t, self.root_key(t), known, by_root, programs.get(c), by_kind, by_refusal
            )
        self._blocked_memo = (state, result)
        return dict(result)

    def _nondeterminism_charge(self) -> set[str]:
        """C-DET-1 when a test's two runs differed: it fails, whatever its own tests say."""
        return {"C-DET-1"} if self.nondeterminism() and "C-DET-1" in self.clause_ids() else set()

    def nondeterminism(self) -> list[dict[str, str]]:
        """Every failed test whose runs differed: the re-run's, and a state machine's replay."""
        out = list(self.nondeterministic)
        for c in self.clause_ids():
            for t in self.tests.get(c, []):
                if t.outcome == FAILED and t.message.startswith(REPLAYED_OTHERWISE):
                    out.append({"clause": c, "test": t.name, "first": t.message, "second": ""})
        return out

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
        charges = self.charges()
        for c in self.clause_ids():
            for t in self.tests.get(c, []):
                if t.outcome == FAILED:
                    key = self.root_key(t)
                    entry = causes.setdefault(
                        key, {"cause": key, "clauses": [], "charged": [], "tests": []}
                    )
                    if c not in entry["clauses"]:
                        entry["clauses"].append(c)
                    if charges[(c, t.name)] not in entry["charged"]:
                        entry["charged"].append(charges[(c, t.name)])
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
            "deterministic": not self.nondeterminism(),
            "nondeterministic": self.nondeterminism(),
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
        lines.extend(describe(self.nondeterminism()))
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
            lines.extend(_failure_lines(t, "    ", self.json_path))
        for c, t in failed:
            if len(by_key[self.root_key(t)]) > 1:
                continue
            lines.append("")
            why = f" (blocked by {blocked[c]})" if c in blocked else ""
            lines.append(f"FAILED {c}{why}: {t.name}")
            lines.extend(_failure_lines(t, "  ", self.json_path))
        return "\n".join(lines)


def _program_size(outcome: Outcome) -> int:
    """How many lines the programs of ``outcome`` have (no program: last)."""
    programs = [f.get("program", "") for f in outcome.failures] or [outcome.program]
    sizes = [len(p.splitlines()) for p in programs if p]
    return min(sizes) if sizes else 1_000_000


def _failure_lines(t: Outcome, indent: str, json_path: str = "") -> list[str]:
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
            lines.extend(
                f"{indent}  {line}" for line in program_lines(failure["program"], json_path)
            )
    return lines
