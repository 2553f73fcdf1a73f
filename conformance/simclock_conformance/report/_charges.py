"""The clause a failed test is charged to: the rule its first difference breaks (C-CONF-3).

A clause program's failure carries its charge, found from the rules behind
the oracle's reply (``protocol._reasons``): a line ``charged to: C-X (else
C-Y)``; :func:`program_charge` reads it. The aggregates, which compare whole
runs with the oracle (SM-ORACLE) or with recorded replies (C-WIRE-7), are
charged to themselves. A Python-only test has no oracle reply behind it:
:func:`python_charge` charges it by what it observed (:data:`PYTHON_RULES`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

from simclock_conformance.report._outcome import Outcome
from simclock_conformance.report._rootkey import DIFFERENCE, defect_key

__all__ = [
    "AGGREGATES",
    "CHARGED",
    "EXACT_BELOW",
    "METHOD_RULES",
    "OWN_MEASURES",
    "PYTHON_RULES",
    "REPLAYED_OTHERWISE",
    "program_charge",
    "program_refusal",
    "python_charge",
    "refusal_key",
    "settle_either",
]

AGGREGATES = ("SM-ORACLE", "C-WIRE-7")
"""Clauses that compare whole runs: a failure of theirs is their own (and shows its rule)."""

CHARGED = "charged to: "
_CHARGED = re.compile(r"^\s*charged to: (\S+(?: or \S+)*)(?: \(else ([^)]*)\))?\s*$", re.M)
EITHER = " or "

REPLAYED_OTHERWISE = "SM-ORACLE: the driver answered the same program differently"
"""How the state machine's message starts when Hypothesis's replay of a program gave
another outcome: a nondeterminism, reported as C-DET-1's (``BackendReport.nondeterminism``)."""

EXACT_BELOW = 2**53
"""A time above this is exact only for a backend that keeps C-TIME-4."""

METHOD_RULES: dict[str, str] = {
    "cancel": "C-CAN-1",
    "now_ns": "C-TIME-1",
    "next_event_ns": "C-X-PEEK",
    "step_ns": "C-STEP-1",
    "heap_size": "C-CAN-4",
}
"""A backend method that raised, and the clause whose rule says what it returns: ``cancel()``
never raises (C-CAN-1), ``now_ns()`` returns an int (C-TIME-1), and so on."""

PYTHON_RULES: dict[str, str] = {
    f"{DIFFERENCE}fired order differs at equal now_ns": "C-TIE-1",
}
"""The kind of a Python-only test's first difference and the rule that decides it: two entries
of one instant in another order is the tie rule's (C-TIE-1; no Python-only test has a
re-pushed periodic at a shared instant)."""

OWN_MEASURES: dict[str, str] = {
    "memory grew by": "C-CAN-4",
}
"""A Python-only test's measurement that no reply part carries, and the one rule that decides
it: memory kept for cancelled entries is C-CAN-4's alone (no program's reply measures memory,
so a program of the same clause failing elsewhere does not explain it)."""

_FAR_SIDE = re.compile(r"expected \(?[^,]*?(\d{16,})")
_TIME_KINDS = (f"{DIFFERENCE}fired now_ns differs", f"{DIFFERENCE}now_ns differs")
_RAISED_IN = re.compile(r"^\S+ raised in \S+:\d+ \((\w+)\)(, from a callback)?$")


def _message(outcome: Outcome) -> str:
    return outcome.failures[0]["message"] if outcome.failures else outcome.message


def program_charge(clause: str, outcome: Outcome, known: Collection[str]) -> str | None:
    """The clause a failed program is charged to, or None when ``outcome`` names no charge.

    The first of the named clauses that ``known`` (the report's clauses) has;
    the test's own clause when it has none of them.
    """
    if clause in AGGREGATES:
        return clause
    found = _CHARGED.search(_message(outcome))
    if found is None:
        return None
    names = [found.group(1), *(n.strip() for n in (found.group(2) or "").split(","))]
    return next((n for n in names if n and (n in known or EITHER in n)), clause)


def settle_either(charge: str, settled: Collection[str], known: Collection[str]) -> str:
    """``A or B`` (a reply that cannot tell two rules apart) -> the one charged elsewhere.

    The first of them charged by another failure, else the first the report has.
    """
    if EITHER not in charge:
        return charge
    names = [n for n in charge.split(EITHER) if n in known]
    return next((n for n in names if n in settled), names[0] if names else charge)


_OBSERVED = re.compile(r"^\s*observed reply: (\{.*\})\s*$", re.M)
_NUMBER = re.compile(r"[0-9]+")


_CLAUSE_PREFIX = re.compile(r"^(?:C|SM)-[A-Z0-9-]+: ")


def refusal_key(text: str) -> str:
    """A refusal's message with its numbers left out: one check refusing other values.

    The first line only, without the clause id a test's message starts with.
    """
    first = text.strip().splitlines()[0] if text.strip() else ""
    return _NUMBER.sub("N", _CLAUSE_PREFIX.sub("", first))


def program_refusal(outcome: Outcome) -> str | None:
    """:func:`refusal_key` of the message a program's observed reply refused with, or None."""
    found = _OBSERVED.search(_message(outcome))
    if found is None:
        return None
    try:
        reply = json.loads(found.group(1))
    except ValueError:
        return None
    message = reply.get("message") if isinstance(reply, dict) else None
    return refusal_key(message) if isinstance(message, str) and message else None


def python_charge(
    clause: str,
    outcome: Outcome,
    key: str,
    known: Collection[str],
    by_root: dict[str, str],
    programs: str | None,
    by_kind: dict[str, str] | None = None,
    by_refusal: dict[str, str] | None = None,
) -> str:
    """The clause a failed Python-only test is charged to.

    A backend exception raised where a program's failure also raised it is
    charged as that program was (``by_root``: the defect's place -> its
    charge); else a method that raised is charged to the rule of what it
    returns (:data:`METHOD_RULES`). A difference of a kind a rule decides
    (:data:`PYTHON_RULES`) is charged to that rule, a time beyond ``2**53`` ns
    that differs to C-TIME-4; a backend exception whose message a program's
    observed refusal also had (``by_refusal``: :func:`refusal_key` -> that
    program's charge: the same check refused another value) as that program
    was; a difference of the kind a program's difference
    was (``by_kind``: its root key -> the charge the oracle's reasons gave it)
    as that program was; a measurement only one rule decides (:data:`OWN_MEASURES`)
    to that rule. Otherwise, when programs of the same clause
    failed, as the first of them was (``programs``: the same clause's
    situations, in the same backend, broke on that rule); else to the test's
    own clause.
    """
    if outcome.root:
        named = by_root.get(defect_key(outcome.root))
        if named is not None and named in known:
            return named
        refused = (by_refusal or {}).get(refusal_key(_message(outcome)))
        if refused is not None and refused in known:
            return refused
        raised = _RAISED_IN.match(outcome.root)
        if raised and raised.group(2) and "C-ERR-1" in known:
            return "C-ERR-1"  # a callback's Exception left the backend: C-ERR-1's rule
        rule = METHOD_RULES.get(raised.group(1)) if raised else None
        return rule if rule is not None and rule in known else clause
    rule = PYTHON_RULES.get(key)
    if rule is not None and rule in known:
        return rule
    if key in _TIME_KINDS:
        first = _message(outcome).splitlines()[0] if _message(outcome) else ""
        far = _FAR_SIDE.search(first)
        if far and int(far.group(1)) > EXACT_BELOW and "C-TIME-4" in known:
            return "C-TIME-4"
    for measure, rule in OWN_MEASURES.items():
        if measure in _message(outcome) and rule in known:
            return rule
    named = (by_kind or {}).get(key)
    if named is not None and named in known:
        return named
    return programs if programs is not None and programs in known else clause
