"""Which rule a difference is charged to where one reply part rests on two (C-CONF-3).

:data:`PRECEDENCE` is the one place this is written, as data: ``(winner, loser,
why)``; :func:`decide` orders a part's rules by it. Each entry has a test
(``tests/test_conformance_charges.py``). :data:`EITHER` joins rules one reply
cannot tell apart; the report settles those (``report._charges.settle_either``).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["EITHER", "PRECEDENCE", "decide"]

PRECEDENCE: tuple[tuple[str, str, str], ...] = (
    # (the rule charged, the rule it wins over, why)
    ("C-TIME-4", "C-ADV-1", "a time beyond 2**53 ns is first a question of exact times"),
    ("C-ADV-2", "C-PER-1", "a callback that reads the advance's target reads the wrong time"),
    ("C-ADV-2", "C-PER-3", "a callback that reads the advance's target reads the wrong time"),
    ("C-ADV-2", "C-X-RATE", "a callback that reads the advance's target reads the wrong time"),
    ("C-TIME-4", "C-ADV-2", "a firing beyond 2**53 ns read at a neighbouring time is inexact"),
    ("C-TIME-4", "C-ADV-3", "an entry pushed beyond 2**53 ns is first a question of exact times"),
    ("C-TIME-4", "C-PER-1", "a grid point beyond 2**53 ns is first a question of exact times"),
    ("C-TIME-4", "C-PER-3", "a grid point beyond 2**53 ns is first a question of exact times"),
    ("C-TIME-4", "C-SCH-1", "a time beyond 2**63 - 1 refused or taken wrongly is magnitude"),
    ("C-TIME-4", "C-TIME-2", "a far advance that leaves now elsewhere is inexact time"),
    ("C-TIME-3", "C-WIRE-2", "a time that is not digits reaches the clock's time-int check"),
    ("C-ERR-2", "C-ERR-1", "an advance that a halting callback ends is C-ERR-2's"),
    ("C-ERR-1", "C-ADV-4", "a raising callback's advance answers as C-ERR-1 says"),
    ("C-ERR-1", "C-ADV-1", "an advance with a raising callback goes on (C-ERR-1)"),
    ("C-ERR-2", "C-ADV-1", "an advance a halt ends stops at the halting entry"),
    ("C-ERR-1", "C-PER-3", "a periodic stays scheduled after its callback raised"),
    ("C-ERR-1", "C-ADV-3", "after a callback raised the remaining entries still fire"),
    ("C-ADV-3", "C-PER-3", "a re-push due within its advance fires in it"),
    ("C-ADV-3", "C-X-RATE", "a re-push due within its advance fires in it"),
    ("C-ERR-1", "C-PER-1", "after a callback raised the remaining entries still fire"),
    ("C-ERR-1", "C-SCH-1", "after a callback raised the remaining entries still fire"),
    ("C-ERR-1", "C-X-RATE", "after a callback raised the remaining entries still fire"),
    ("C-ERR-2", "C-PER-3", "a periodic is re-armed after its callback halted"),
    ("C-ADV-4", "C-ADV-1", "an advance with a nested advance answers as C-ADV-4 says"),
    ("C-PER-2", "C-TIE-1", "at a shared instant a re-pushed periodic's fresh seq decides"),
    ("C-CAN-2", "C-ADV-1", "a cancelled entry never fires, due or not"),
    ("C-ADV-3", "C-ADV-1", "an entry a callback pushes is due in the same advance"),
    ("C-SCH-1", "C-ADV-1", "an entry at == now fires on the next advance, even advance(0)"),
    ("C-X-RATE", "C-PER-3", "a rate's grid is C-X-RATE's"),
)
"""``(winner, loser, why)``: where one reply part rests on two rules, the one charged."""

_BEATS = {(w, loser) for w, loser, _ in PRECEDENCE}

EITHER = " or "
"""Joins the rules of a charge one reply cannot settle (``C-PER-2 or C-TIE-1``): the report
charges the one another failure is charged to (``report._charges.settle_either``)."""


def decide(rules: Iterable[str]) -> tuple[str, ...]:
    """``rules`` in the order they are charged: a rule beaten by another (PRECEDENCE) goes after.

    The first is the clause charged; the others are the fallbacks a report uses
    when it does not cover the first (C-WIRE-2 in process).
    """
    pending = list(dict.fromkeys(rules))
    ordered: list[str] = []
    while pending:
        top = next(
            (r for r in pending if not any((o, r) in _BEATS for o in pending if o != r)),
            pending[0],
        )
        ordered.append(top)
        pending.remove(top)
    return tuple(ordered)
