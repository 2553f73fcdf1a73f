"""Which clause a shared failure is charged to when failed clauses rely on each other.

`BackendReport.blocked` settles the clauses in rounds; when a cycle of failed
clauses remains, each explaining the others' failures, `first_of_a_closed_cycle`
picks the one charged with the defect, so two clauses never block each other.
"""

from __future__ import annotations

from collections.abc import Callable

from simclock_conformance.report._rootkey import DIFFERENCE

__all__ = ["first_of_a_closed_cycle"]

_OWNER = {
    f"{DIFFERENCE}fired order differs at equal now_ns": "C-TIE-1",
    f"{DIFFERENCE}fired now_ns differs": "C-ADV-2",
    f"{DIFFERENCE}fired: an expected entry is missing": "C-ADV-1",
    f"{DIFFERENCE}now_ns differs": "C-TIME-4",
}
"""Whose subject a kind of failure is, when a cycle of clauses all show it: entries at
one time in another order (C-TIE-1), a firing at another time, which is also what a
callback reading another time than its entry's shows (C-ADV-2), a due entry not fired
(C-ADV-1), ``now_ns()`` elsewhere than an advance's target, which far times that are not
exact show (C-TIME-4)."""

_MOST_BASIC = ("C-ADV-2", "C-TIE-1", "C-ADV-1", "C-ADV-3", "C-SCH-1")
"""Otherwise the most basic first: a callback reading another time changes every time
in every trace (C-ADV-2); ties (C-TIE-1); what advance fires (C-ADV-1, C-ADV-3); past
times (C-SCH-1). Then report order."""


def _charge_order(
    undecided: list[str], defects: dict[str, set[str]]
) -> Callable[[str], tuple[int, int, int]]:
    def rank(clause: str) -> tuple[int, int, int]:
        owns = any(_OWNER.get(d) == clause for d in defects[clause])
        basic = _MOST_BASIC.index(clause) if clause in _MOST_BASIC else len(_MOST_BASIC)
        return (0 if owns else 1), basic, undecided.index(clause)

    return rank


def first_of_a_closed_cycle(
    undecided: list[str], candidates: dict[str, list[str]], defects: dict[str, set[str]]
) -> str:
    """The first clause (:func:`_charge_order`) whose every unsettled explainer leads back to it.

    Every clause in ``undecided`` has an unsettled candidate, so following
    candidates always ends in a cycle; one that leads nowhere else exists.
    """

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for y in candidates[todo.pop()]:
                if y in undecided and y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen

    for x in sorted(undecided, key=_charge_order(undecided, defects)):
        reached = reach(x)
        if x in reached and all(x in reach(y) for y in reached):
            return x
    return undecided[0]  # not reached: a finite graph without sinks has a closed cycle
