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

import ast
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
    "fixed_program",
    "program_label",
    "root_key",
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


DIFFERENCE = "first differing reply: "
"""How the key of a root cause without a backend exception starts (see :func:`root_key`)."""

_WIRE_DIFF = re.compile(r"^\s*first difference: (\w+)(\[\d+\])?: (.*)$", re.M)
_SIDES = re.compile(r"^expected (.*), observed (.*)$")
_ITEM_DIFF = re.compile(
    r"first difference at (?:item|index) \d+: "
    r"(?:expected (?P<e>.*), observed (?P<o>.*)|backend (?P<o2>.*), oracle (?P<e2>.*))$",
    re.M,
)
_ERROR = re.compile(r'^\s*observed reply: .*?"error":"([^"]*)"', re.M)
_ACCEPTED = re.compile(r"expected \w*Error, observed accepted")


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _entry_difference(field_name: str, want: object, got: object) -> str | None:
    """The kind of difference between two fired/failure items (dicts or tuples)."""
    if isinstance(want, dict) and isinstance(got, dict):
        time_key = "now_ns" if "now_ns" in want else "at_ns"
        if want.get(time_key) != got.get(time_key):
            return f"{field_name} {time_key} differs"
        if want.get("entry") != got.get("entry"):
            return f"{field_name} order differs at equal {time_key}"
        keys = sorted(k for k in {*want, *got} if want.get(k) != got.get(k))
        return f"{field_name} {', '.join(keys)} differs"
    if isinstance(want, tuple) and isinstance(got, tuple) and len(want) == len(got):
        # In-process traces are (name, time) or (time, name, ...) tuples: the ints are times.
        times = [i for i, v in enumerate(want) if type(v) is int and type(got[i]) is int]
        if times:
            if any(want[i] != got[i] for i in times):
                return f"{field_name} now_ns differs"
            return f"{field_name} order differs at equal now_ns"
    return None


def _length_difference(field_name: str, want: str, got: str) -> str | None:
    if got == "nothing":
        return f"{field_name}: an expected entry is missing"
    if want == "nothing":
        return f"{field_name}: an entry too many"
    return None


def root_key(message: str) -> str:
    """The root-cause key of a failure without a backend exception, from its message.

    The key names the *kind* of the first difference, not its values, so the
    same defect seen by different programs and tests gets the same key:

    - ``first differing reply: fired order differs at equal now_ns``: the
      first differing firing has the expected time but another entry (ties
      broken otherwise than in push order, an entry fired that should not
      have); in-process traces of ``(name, time)`` tuples are read the same way;
    - ``first differing reply: fired now_ns differs``: it fired at another time;
    - ``first differing reply: fired: an expected entry is missing`` / ``an
      entry too many``;
    - ``first differing reply: ok false where true expected with error X``
      (``ok true where false expected``, also an in-process test's
      ``expected TypeError, observed accepted``): a call refused or accepted
      wrongly;
    - ``first differing reply: FIELD differs``: another field of a reply
      (``now_ns``, ``next_event_ns``, ``values`` ...), whatever the request:
      an in-process test that checks ``next_event_ns()`` and a program whose
      ``cancel`` reply carries a wrong ``next_event_ns`` then share a key;
    - otherwise ``CLAUSE: MESSAGE`` with the message's first line, numbers
      replaced by ``N`` and quoted text by ``'...'``: such a failure is its
      own root unless another test words its failure the same way.
    """
    first = message.splitlines()[0] if message else ""
    wire = _WIRE_DIFF.search(message)
    if wire:
        field_name, index, rest = wire.groups()
        sides = _SIDES.match(rest)
        if field_name == "ok" and sides:
            want, got = sides.groups()
            if got == "False":
                error = _ERROR.search(message)
                why = f" with error {error.group(1)}" if error else ""
                return f"{DIFFERENCE}ok false where true expected{why}"
            if got == "True" and want == "False":
                return f"{DIFFERENCE}ok true where false expected"
        if index and sides:
            kind = _entry_difference(field_name, *(_literal(s) for s in sides.groups()))
            if kind:
                return DIFFERENCE + kind
        if field_name in ("fired", "failures") and rest.startswith("expected "):
            if "first observed only" in rest:
                return f"{DIFFERENCE}{field_name}: an entry too many"
            if "first expected only" in rest:
                return f"{DIFFERENCE}{field_name}: an expected entry is missing"
        if field_name == "stored":
            return f"{DIFFERENCE}stored exceeds the C-CAN-4 bound"
        return f"{DIFFERENCE}{field_name}{'[]' if index else ''} differs"
    item = _ITEM_DIFF.search(message)
    if item:
        want = item.group("e") if item.group("e") is not None else item.group("e2")
        got = item.group("o") if item.group("o") is not None else item.group("o2")
        kind = _length_difference("fired", want, got) if "(" in want + got else None
        kind = kind or _entry_difference("fired", _literal(want), _literal(got))
        if kind:
            return DIFFERENCE + kind
    clause, _, rest = first.partition(": ")
    if _ACCEPTED.search(message):
        return f"{DIFFERENCE}ok true where false expected"
    observed = re.match(r"(now_ns|next_event_ns)\(\)", rest)
    if observed:
        return f"{DIFFERENCE}{observed.group(1)} differs"
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'...'", rest or clause)
    text = re.sub(r"\d+", "N", text)
    return f"{clause}: {text[:160]}" if rest else text[:160]


_FAILING_REQUEST = re.compile(r"^(?:\S+: )?case \S+, request (\d+) of \d+: ")


def fixed_program(message: str, program: str) -> tuple[str, str]:
    """``(program, kind)`` of a fixed clause program: cut after the failing request.

    The requests after the one whose reply differs do not matter; without a
    request number in ``message`` (the driver crashed, say) the program is whole.
    """
    failing = _FAILING_REQUEST.match(message)
    if not failing:
        return program, "program"
    return "\n".join(program.splitlines()[: int(failing.group(1))]), "fixed"


def program_label(kind: str) -> str:
    """The heading of a failure's program, by ``Outcome.program_kind``."""
    if kind == "fixed":
        return "program (fixed, up to the failing request):"
    if kind == "program":
        return "program:"
    if kind == "first":
        return "first failing program (not minimised):"
    return "minimal failing program (Hypothesis):"


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
        failed = [(c, t) for c in self.failed() for t in self.tests[c] if t.outcome == FAILED]
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
            lines.append(f"FAILED {c}: {t.name}")
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
