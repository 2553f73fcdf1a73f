"""The clause a difference between an observed and an expected reply is charged to (C-CONF-3).

:func:`charge` reads the first difference (``_compare.Difference``) with the
:class:`~simclock_conformance.protocol._reasons.Reasons` of the expected reply:
the rule that decided the part that differs. Where the reply alone cannot tell
two rules apart, the charge is ``A or B`` (``_precedence.EITHER``), settled by
the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simclock_conformance.protocol._compare import Difference
from simclock_conformance.protocol._precedence import EITHER, decide
from simclock_conformance.protocol._reasons import Firing, Reasons, int_of

__all__ = ["charge"]

Json = dict[str, Any]


def _order(firing: Firing, other: str) -> tuple[str, ...]:
    """Whose rule puts ``firing`` before ``other``, pending at the same instant.

    Push order (C-TIE-1), unless a re-pushed periodic is involved and the other
    firing first is what a re-push that kept its first seq gives (``first_seq``
    order): then the re-push's fresh seq (C-PER-2) is broken if the program
    already saw entries pushed fresh fire at one instant in push order; without
    that, the reply cannot tell a reversed tie from a kept seq, and the charge
    is ``C-PER-2 or C-TIE-1``: the report settles it (``report._charges``).
    """
    seq, first_seq, repush = firing.tied[other]
    if not (repush or firing.repush):
        return ("C-TIE-1",)
    mine = firing.first_seq if firing.repush else firing.seq
    theirs = first_seq if repush else seq
    if theirs >= mine:
        return ("C-TIE-1",)
    return ("C-PER-2",) if firing.tie_kept else ("C-PER-2" + EITHER + "C-TIE-1",)


def _why_not(reasons: Reasons, i: int, name: object, same_instant: bool) -> tuple[str, ...]:
    """Why the entry ``name`` must not fire at place ``i`` of the expected firings."""
    firing = reasons.firings[i] if i < len(reasons.firings) else None
    cancelled = firing.cancelled if firing is not None else frozenset(reasons.elsewhere)
    if isinstance(name, str) and name in cancelled:
        return ("C-CAN-2",)
    if firing is not None and same_instant and isinstance(name, str) and name in firing.tied:
        return _order(firing, name)
    for later in reasons.firings[i + 1 :]:
        if later.entry == name:
            return later.time
    if isinstance(name, str) and name in reasons.pending and reasons.otherwise != ("C-ERR-2",):
        return reasons.pending[name]  # due later: it fired before its time
    return reasons.otherwise


def _missing(reasons: Reasons, firing: Firing, observed: Json) -> tuple[str, ...]:
    """Why an expected firing is missing from the observed reply.

    An ``advance(0)`` that fired nothing breaks C-ADV-1's own sentence
    ("advance(0) fires what is due at now"). A backend whose next pending
    entry (``next_event_ns``) lies beyond the target put the entry elsewhere:
    the rule that timed it. Otherwise it was due and did not fire (its due rules).
    """
    fired = observed.get("fired")
    if firing.zero and not fired:
        return ("C-ADV-1",)
    # Not re-armed after its callback raised: the error rules first, whatever else is
    # pending beyond the target (this one is not).
    rearm = firing.due[0].startswith(("C-ERR-1", "C-ERR-2")) or (reasons.after_halt and not fired)
    peek, target = int_of(observed.get("next_event_ns")), int_of(reasons.target)
    if not rearm and peek is not None and target is not None and peek > target:
        return firing.time
    # Rules one reply cannot tell apart, in the order charged when no other failure
    # settles them (report._charges.settle_either): a raise that stopped the advance,
    # the entry's own due rule, C-ADV-1 for an entry due at the target.
    options: list[str] = []
    if reasons.after_halt and not fired:
        options.append("C-ERR-2")  # nothing fires after a halt: "the clock stays consistent"
    if firing.raisers and isinstance(fired, list):
        names = [f.get("entry") if isinstance(f, dict) else None for f in fired]
        if names and names[-1] in firing.raisers:
            options.append("C-ERR-1")  # nothing fired after a raise: "the rest still fire"
    options += firing.due[0].split(EITHER)
    if firing.at == reasons.target:
        options.append("C-ADV-1")  # due at the target: "every live entry with at_ns <= target"
    options = list(dict.fromkeys(options))
    return (EITHER.join(options), *firing.due[1:])


def _fired_rules(reasons: Reasons, observed: Json, expected: Json, index: int) -> tuple[str, ...]:
    got = observed.get("fired")
    want = expected.get("fired") or []
    got = got if isinstance(got, list) else []
    e = want[index] if index < len(want) else None
    o = got[index] if index < len(got) else None
    name = o.get("entry") if isinstance(o, dict) else None
    if e is None or index >= len(reasons.firings):
        return _why_not(reasons, index, name, False)
    firing = reasons.firings[index]
    if not isinstance(o, dict):
        return _missing(reasons, firing, observed)
    if name == e.get("entry"):
        if o.get("now_ns") != e.get("now_ns"):
            if o.get("now_ns") == reasons.target and not firing.child:
                # It read the advance's target, not its own time: C-ADV-2 says what a
                # callback reads (the grid and the order, C-PER-*, are kept). A child's
                # time is C-ADV-3's, which a timer that fires later may land on the target.
                return decide(("C-ADV-2", *firing.time))
            return firing.time
        for key, rules in firing.extra.items():
            if o.get(key) != e.get(key):
                return rules
        return firing.time
    late, early = int_of(o.get("now_ns")), int_of(e.get("now_ns"))
    if late is not None and early is not None and late > early:
        return _missing(reasons, firing, observed)  # it did not fire at its time
    return _why_not(reasons, index, name, o.get("now_ns") == e.get("now_ns"))


_ACTION_RULES = {"cancel": "C-CAN-1", "advance": "C-ADV-4", "schedule": "C-SCH-1"}
"""A callback's call on the clock and the rule of its answer: ``cancel()`` never raises
(C-CAN-1), a nested advance raises RuntimeError, which the callback catches (C-ADV-4),
a schedule at now or later is taken (C-SCH-1)."""


def _failure_rules(reasons: Reasons, observed: Json, expected: Json, item: int) -> tuple[str, ...]:
    """A callback failure reported otherwise: C-ERR-1, or the call that raised in a callback.

    A failure the oracle does not have, of a callback whose own actions do not
    raise, came from one of its calls on the clock: the rule of that call.
    """
    got = observed.get("failures")
    want = expected.get("failures") or []
    o = got[item] if isinstance(got, list) and item < len(got) else None
    e = want[item] if item < len(want) else None
    name = o.get("entry") if isinstance(o, dict) else None
    if isinstance(name, str) and (e is None or e.get("entry") != name):
        kinds = reasons.actions.get(name, ())
        if "raise" not in kinds:
            calls = [_ACTION_RULES[k] for k in kinds if k in _ACTION_RULES]
            if calls:
                return tuple(dict.fromkeys(calls))
    return reasons.parts.get("failures", ("C-ERR-1",))


def _first_fired_difference(observed: Json, expected: Json) -> int | None:
    """The first place the firings of two advance replies differ (entry or time), or None."""
    got, want = observed.get("fired"), expected.get("fired")
    if not isinstance(got, list) or not isinstance(want, list):
        return None
    for i, (o, e) in enumerate(zip(got, want, strict=False)):
        if not isinstance(o, dict) or (o.get("entry"), o.get("now_ns")) != (
            e.get("entry"),
            e.get("now_ns"),
        ):
            return i
    return min(len(got), len(want)) if len(got) != len(want) else None


def _raised_call(
    reasons: Reasons, observed: Json, expected: Json, item: int
) -> tuple[str, ...] | None:
    """The rule of a call on the clock that raised in a callback before firing ``item``.

    Such a call (a ``cancel()`` that raised, say) shows as a failure the oracle
    does not have; what fires after it differs as a consequence.
    """
    got, want = observed.get("failures"), expected.get("failures") or []
    fired = observed.get("fired")
    if not isinstance(got, list) or not isinstance(fired, list):
        return None
    last = fired[item] if item < len(fired) else None
    until = int_of(last.get("now_ns")) if isinstance(last, dict) else None
    default = reasons.parts.get("failures", ("C-ERR-1",))
    for k, failure in enumerate(got):
        if not isinstance(failure, dict) or failure in want:
            continue
        at = int_of(failure.get("at_ns"))
        if until is not None and (at is None or at > until):
            continue
        rules = _failure_rules(reasons, observed, {"failures": want[:k]}, k)
        if rules != default:
            return rules
    return None


def charge(
    reasons: Reasons, observed: Json, expected: Json, diff: Difference, own: Sequence[str]
) -> tuple[str, ...]:
    """The clauses ``diff`` is charged to, in order (the first, else the next a report has).

    ``own``: the program's clauses, charged when no rule decided the part
    (a field the oracle's reply has and no rule of §1 speaks of).
    """
    if diff.field == "fired" and diff.item is not None and isinstance(expected.get("fired"), list):
        rules = _raised_call(reasons, observed, expected, diff.item) or _fired_rules(
            reasons, observed, expected, diff.item
        )
    elif (
        diff.field in ("ok", "error")
        and (expected.get("ok") is True or expected.get("error") == "halted")
        and observed.get("error") not in (None, "halted")
        and "raise" in reasons.raised
    ):
        rules = ("C-ERR-1",)  # a callback's Exception left the advance
    elif (
        diff.field in ("ok", "error")
        and (item := _first_fired_difference(observed, expected)) is not None
    ):
        # The advance ended otherwise because something fired otherwise first.
        rules = _raised_call(reasons, observed, expected, item) or _fired_rules(
            reasons, observed, expected, item
        )
    elif diff.field == "ok" and observed.get("ok") is not True and expected.get("ok") is True:
        rules = reasons.parts.get("ok", ())
    elif diff.field == "failures" and diff.item is not None:
        rules = _failure_rules(reasons, observed, expected, diff.item)
    elif (
        diff.field == "at_ns"
        and observed.get("at_ns") == reasons.target
        and observed.get("now_ns") != observed.get("at_ns")
    ):
        # The halting callback read the target while the clock stopped at its entry's
        # time: what a callback reads is C-ADV-2's.
        rules = decide(("C-ADV-2", *reasons.parts.get("at_ns", ())))
    else:
        rules = reasons.parts.get(diff.field, ())
    return tuple(dict.fromkeys((*rules, *own)))
