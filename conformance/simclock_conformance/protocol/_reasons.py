"""Why the oracle answered as it did: the clause whose rule decided each part of a reply.

Every part of an expected reply rests on a rule of SPEC §1: a refusal and its
kind (``ok``), the time of a firing, whether an entry is due in an advance, the
order of two firings at one instant, ``now_ns``, ``next_event_ns``,
``stored``, a draw. :func:`reply_reasons` reads a program's requests with the
oracle's replies and gives each reply its :class:`Reasons`;
``_charge.charge`` takes the first difference of an observed reply and names the
clause it is charged to (C-CONF-3: one defect, one clause, the rule it breaks,
not the program that found it). Where one part rests on two rules (a firing
beyond ``2**53`` ns rests on C-TIME-4 and on the rule that timed it),
``_precedence.PRECEDENCE`` decides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from simclock_conformance.protocol._precedence import EITHER, decide

__all__ = ["EXACT_BELOW", "Firing", "Reasons", "int_of", "reply_reasons"]

Json = dict[str, Any]

EXACT_BELOW = 2**53
"""A time above this is exact only for a backend that keeps C-TIME-4 (float64 is not)."""
_MAX = 2**64 - 1
_DIGITS = re.compile(r"[0-9]+")


@dataclass
class _Entry:
    """What the oracle's program says of one entry: enough to name the rule of its firings."""

    kind: str  # "at", "child", "every", "rate"
    at: int | None = None
    scheduled_now: int = 0
    pushed_in: int = -1  # the advance whose callback pushed it (children), else -1
    on_fire: list[Json] = field(default_factory=list)
    cancelled: bool = False
    fired: int = 0
    last: str = ""  # "raise" or "halt": how its last firing ended
    seq: int = 0
    """The push order of its pending firing (C-TIE-1): a re-push takes a fresh one (C-PER-2)."""
    first_seq: int = 0
    """The push order of its first firing: what a re-push that kept its seq would still have."""
    due: int | None = None
    """When its pending firing is due; None when nothing is pending."""
    grid: tuple[int, int, int] | None = None
    """``(period or 10**9, phase, rate denominator)`` of a periodic or rate grid; k = fired + k0."""
    k0: int = 0


@dataclass
class Firing:
    """One expected firing: the rules of its time, of its being due here, of its order."""

    entry: str
    time: tuple[str, ...]
    due: tuple[str, ...]
    repush: bool
    seq: int
    first_seq: int
    tied: dict[str, tuple[int, int, bool]]
    """Entries pending at this firing's instant, not fired yet: name -> (seq, first_seq, repush)."""
    cancelled: frozenset[str]
    """Entries cancelled before this firing: they must not fire from here on (C-CAN-2)."""
    tie_kept: bool
    """Two entries pushed fresh fired at one instant in push order earlier in the program."""
    zero: bool = False
    """Fired by an ``advance(0)``."""
    at: str = ""
    """Its time, as the reply writes it."""
    child: bool = False
    """Pushed by a callback: when it fires is C-ADV-3's (see ``_charge``)."""
    raisers: frozenset[str] = frozenset()
    """Other entries whose callbacks raised earlier in this advance."""
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class Reasons:
    """The rules behind one expected reply (see the module's docstring)."""

    parts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    firings: list[Firing] = field(default_factory=list)
    elsewhere: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Why an entry that is not expected here must not fire here (after the last firing)."""
    otherwise: tuple[str, ...] = ()
    """Why no other entry fires here."""
    pending: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The entries still pending after this reply: the rules of their next firing's time."""
    actions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The actions of each entry fired here: what its callback calls on the clock."""
    raised: frozenset[str] = frozenset()
    """The actions of every callback fired here (``raise``: one raised an Exception)."""
    after_halt: bool = False
    """The advance before this one on its clock ended in a halt (C-ERR-2)."""
    target: str | None = None
    """An advance's target: a callback reading it instead of its own time breaks C-ADV-2."""


@dataclass
class _ClockFacts:
    now: int = 0
    advances: int = 0
    seq: int = 0
    tie_kept: bool = False
    halted: bool = False
    entries: dict[str, _Entry] = field(default_factory=dict)
    children: dict[str, int] = field(default_factory=dict)
    streams: list[str] = field(default_factory=list)
    seed: int = 0

    def push(self, e: _Entry, due: int | None, first: bool) -> None:
        e.seq = self.seq
        if first:
            e.first_seq = self.seq
        self.seq += 1
        e.due = due


def _grid_time(e: _Entry, k: int) -> int | None:
    if e.grid is None:
        return None
    period, phase, den = e.grid
    if e.kind == "rate":
        # C-X-RATE: phase + ceil(k * 10**9 * den / num), ``period`` holding the numerator.
        return phase + -(-(k * 10**9 * den) // period)
    return phase + k * period


def _first_index(e: _Entry, now: int) -> int:
    lo, hi = -1, 1
    while (_grid_time(e, hi) or 0) < now:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if (_grid_time(e, mid) or 0) < now:
            lo = mid
        else:
            hi = mid
    return hi


def int_of(value: object) -> int | None:
    """A protocol integer (a string of digits) as an int; anything else None."""
    return int(value) if isinstance(value, str) and _DIGITS.fullmatch(value) else None


def _far(*times: int | None) -> tuple[str, ...]:
    return ("C-TIME-4",) if any(t is not None and t > EXACT_BELOW for t in times) else ()


def _time_args_rules(request: Json, names: Sequence[str], own: str) -> tuple[str, ...]:
    """Rules of a request whose time arguments the oracle refused or took."""
    values = [request.get(n) for n in names if n in request]
    if any(int_of(v) is None for v in values):
        return decide(("C-WIRE-2", "C-TIME-3"))
    numbers = [int_of(v) for v in values]
    if any(n is not None and n > _MAX for n in numbers):
        return ("C-TIME-4",)
    if any(n is not None and n >= 2**63 for n in numbers):
        return ("C-TIME-4", own)
    return (own,)


def _kinds(actions: list[Json]) -> tuple[str, ...]:
    return tuple(str(a.get("do", "")) for a in actions)


def _time_rules(e: _Entry, time: int) -> tuple[str, ...]:
    if e.kind == "every":
        own = "C-PER-1" if e.fired == 0 else "C-PER-3"
    elif e.kind == "rate":
        own = "C-X-RATE"
    elif e.kind == "child":
        own = "C-ADV-3"  # pushed by a callback: when it fires in the advance is C-ADV-3's
    else:
        own = "C-ADV-1"  # at its at_ns, in (at_ns, seq) order: a callback reading the
        # advance's target instead is C-ADV-2's (see _charge)
    return decide((own, *_far(time)))


def _due_rules(e: _Entry, time: int, advance: int) -> tuple[str, ...]:
    """Why ``e`` is due in this advance: the rule broken when it does not fire here."""
    rules: list[str] = []
    repush = e.kind in ("every", "rate") and e.fired > 0
    grid = "C-X-RATE" if e.kind == "rate" else "C-PER-3"
    if e.pushed_in == advance and not repush:
        # Pushed by a callback during this advance: due at or before the target, it
        # fires in the same advance (C-ADV-3).
        rules.append("C-ADV-3")
    elif e.pushed_in == advance:
        # A periodic's next entry, pushed during this advance and due in it: the re-push
        # (C-PER-2), its grid point (C-PER-3, C-X-RATE) or, read as C-ADV-3's entries
        # pushed during an advance, C-ADV-3; one reply cannot tell them apart.
        rules.append(EITHER.join(("C-PER-2", grid, "C-ADV-3")))
    if repush:
        rearm = {"raise": "C-ERR-1", "halt": "C-ERR-2"}.get(e.last, "")
        if rearm and rules:
            # Re-armed after its callback raised (C-ERR-1): one reply cannot tell a
            # re-push that waits from none at all.
            rules = [rearm + EITHER + rules[0]]
        else:
            rules.append(rearm)
        rules.append(grid)
    if e.kind in ("at", "child") and e.at == e.scheduled_now:
        rules.append("C-SCH-1")
    if e.kind == "every" and not e.fired and time == e.scheduled_now:
        rules.append("C-PER-1")
    rules.append("C-ADV-1")
    # Not _far(time): a far entry that is missing, not late, is not an inexact time
    # (one put elsewhere is charged by its timing rule, see _missing).
    return decide(r for r in rules if r)


@dataclass(frozen=True)
class _Drawn:
    """Where a value was first drawn: the clock, its stream's path, the labels as given,
    and the order in which that clock's streams were first drawn from."""

    clock: str
    path: str
    labels: tuple[str, ...]
    order: tuple[str, ...]


def _draw_rules(
    facts: _ClockFacts,
    clock: str,
    labels: object,
    values: object,
    seen: dict[str, _Drawn],
    seen_orders: dict[str, tuple[int, tuple[str, ...]]],
) -> tuple[str, ...]:
    """The rule that decides a draw's values (compared as the pattern of equal draws).

    A draw repeating a stream drawn on another clock of the same seed: C-RNG-3 when the
    labels were given in another form (``child('a').child('b') == child('a/b')``),
    C-RNG-4 when that clock made its streams in another order, else C-RNG-2 (stable
    derivation). A draw of values new to the program: C-RNG-2 (distinct paths give
    distinct streams), C-RNG-1 for the root.
    """
    if not isinstance(labels, list) or not labels:
        return ("C-RNG-1", "C-X-BITS")
    form = tuple(str(x) for x in labels)
    path = "/".join(x.strip("/") for x in form)
    if path not in facts.streams:
        facts.streams.append(path)
    order = tuple(facts.streams)
    first = str(values[0]) if isinstance(values, list) and values else None
    earlier = seen.get(first) if first is not None else None
    if first is not None and earlier is None:
        seen[first] = _Drawn(clock, path, form, order)
    if earlier is None:
        # New values: another clock of this seed that made a stream first at the same
        # place in its order is what a creation-order derivation would repeat (C-RNG-4).
        place = order.index(path)
        if any(
            other != clock
            and seed == facts.seed
            and place < len(streams) != 0
            and streams[place] != path
            for other, (seed, streams) in seen_orders.items()
        ):
            return ("C-RNG-4", "C-X-BITS")
        seen_orders[clock] = (facts.seed, order)
        return ("C-RNG-2", "C-X-BITS")
    seen_orders[clock] = (facts.seed, order)
    if earlier.clock == clock:
        return ("C-RNG-2", "C-X-BITS")
    if earlier.labels != form:
        return ("C-RNG-3", "C-X-BITS")
    if earlier.order[: earlier.order.index(earlier.path)] != order[: order.index(path)]:
        return ("C-RNG-4", "C-X-BITS")
    return ("C-RNG-2", "C-X-BITS")


def _fire(facts: _ClockFacts, name: str, e: _Entry, time: int, index: int, zero: bool) -> Firing:
    """The expected firing of ``e`` at ``time``; then the model's state after it."""
    tied = {
        n: (x.seq, x.first_seq, x.fired > 0)
        for n, x in facts.entries.items()
        if x.due == time and n != name and not x.cancelled
    }
    firing = Firing(
        name,
        _time_rules(e, time),
        _due_rules(e, time, index),
        e.kind in ("every", "rate") and e.fired > 0,
        e.seq,
        e.first_seq,
        tied,
        frozenset(n for n, x in facts.entries.items() if x.cancelled),
        facts.tie_kept,
        zero,
    )
    e.fired += 1
    e.due = None
    kinds = _kinds(e.on_fire)
    e.last = "halt" if "halt" in kinds else "raise" if "raise" in kinds else ""
    for action in e.on_fire:
        do = action.get("do")
        if do == "schedule":
            n = facts.children.get(name, 0)
            at = time + (int_of(action.get("delay_ns")) or 0)
            if at <= _MAX:
                facts.children[name] = n + 1
                child = _Entry("child", at, time, index, _list(action.get("on_fire", [])))
                facts.entries[f"{name}.{n}"] = child
                facts.push(child, at, True)
        elif do == "cancel":
            _cancel(facts, str(action.get("entry")))
    if e.grid is not None and not e.cancelled:
        facts.push(e, _grid_time(e, e.k0 + e.fired), False)  # C-PER-2: after the callback
        e.pushed_in = index
    return firing


def _advance(facts: _ClockFacts, request: Json, reply: Json) -> Reasons:
    reasons = Reasons()
    dt = int_of(request.get("dt_ns"))
    reasons.target = None if dt is None else str(facts.now + dt)
    index = facts.advances
    facts.advances += 1
    fired = reply.get("fired") or []
    halted = reply.get("error") == "halted"
    reasons.after_halt = facts.halted
    facts.halted = halted
    actions: set[str] = set()
    previous: tuple[int, bool] | None = None
    raisers: set[str] = set()
    for record in fired:
        name = str(record.get("entry", ""))
        time = int_of(record.get("now_ns")) or 0
        e = facts.entries.get(name)
        if e is None:  # not reached: every fired entry was scheduled by the program
            e = facts.entries[name] = _Entry("at", time, time)
        actions.update(_kinds(e.on_fire))
        reasons.actions[name] = _kinds(e.on_fire)
        firing = _fire(facts, name, e, time, index, dt == 0)
        firing.at = str(record.get("now_ns"))
        firing.child = e.kind == "child"
        kinds = _kinds(e.on_fire)
        if "advance" in kinds:
            firing.extra["nested"] = ("C-ADV-4",)
        delays = [int_of(a.get("delay_ns")) or 0 for a in e.on_fire if a.get("do") == "schedule"]
        if delays:
            # A child at now or later is taken (C-SCH-1) unless beyond what times hold.
            far = any(time + d >= 2**63 for d in delays)
            firing.extra["refused"] = ("C-TIME-4", "C-SCH-1") if far else ("C-SCH-1",)
        firing.raisers = frozenset(raisers - {name})
        if "raise" in _kinds(e.on_fire):
            raisers.add(name)
        if previous == (time, False) and not firing.repush:
            facts.tie_kept = True
        reasons.firings.append(firing)
        previous = (time, firing.repush)
    reasons.raised = frozenset(actions)
    ok_rules = _time_args_rules(request, ["dt_ns"], "C-ADV-1")
    if dt is not None and facts.now + dt >= 2**63:
        # A target beyond 2**63 - 1 (a small dt from a far now): reaching it is C-TIME-4's
        # range first, as a time argument beyond it is (PRECEDENCE: C-TIME-4 over C-ADV-1).
        ok_rules = decide(("C-TIME-4", *ok_rules))
    if halted:
        ok_rules = ("C-ERR-2",)
    elif "raise" in actions:
        ok_rules = decide(("C-ERR-1", *ok_rules))
    elif "advance" in actions:
        ok_rules = decide(("C-ADV-4", *ok_rules))
    reasons.parts["ok"] = ok_rules
    reasons.parts["failures"] = ("C-ERR-1",)
    reasons.parts["entry"] = ("C-ERR-2",)
    # The time the halting callback read: its firing's rules.
    reasons.parts["at_ns"] = reasons.firings[-1].time if reasons.firings else ("C-ERR-2",)
    now = int_of(reply.get("now_ns"))
    if reply.get("ok") is True:
        reasons.parts["now_ns"] = decide(("C-ADV-1", *_far(now)))
    elif halted:
        reasons.parts["now_ns"] = ("C-ERR-2",)
    else:
        reasons.parts["now_ns"] = ok_rules
    for name, e in facts.entries.items():
        if e.cancelled:
            reasons.elsewhere[name] = ("C-CAN-2",)
    reasons.otherwise = ("C-ERR-2",) if halted else decide(("C-ADV-1", *_far(now)))
    reasons.pending = {
        n: _time_rules(x, x.due)
        for n, x in facts.entries.items()
        if x.due is not None and not x.cancelled
    }
    if now is not None:
        facts.now = now
    return reasons


def _list(value: object) -> list[Json]:
    return [a for a in value if isinstance(a, dict)] if isinstance(value, list) else []


def _cancel(facts: _ClockFacts, name: str) -> None:
    """A cancel: the entry never fires again (C-CAN-2); a fired one-shot is a no-op (C-CAN-3)."""
    target = facts.entries.get(name)
    if target is not None and not (target.kind in ("at", "child") and target.fired):
        target.cancelled = True
        target.due = None


def _schedule(facts: _ClockFacts, request: Json, reply: Json, kind: str) -> Reasons:
    reasons = Reasons()
    op_rule = {"at": "C-SCH-1", "every": "C-PER-1", "rate": "C-X-RATE"}[kind]
    names = {"at": ["at_ns"], "every": ["period_ns", "phase_ns"], "rate": ["phase_ns"]}[kind]
    rules = decide(_time_args_rules(request, names, op_rule))
    if kind == "at" and int_of(request.get("at_ns")) == facts.now and rules[0] == "C-TIME-4":
        # A time equal to now beyond 2**63 - 1: taken by C-SCH-1's own wording ("at_ns >=
        # now") and by C-TIME-4's range; one refusal cannot tell which the clock broke.
        rules = ("C-SCH-1" + EITHER + "C-TIME-4", *rules[2:])
    reasons.parts["ok"] = rules
    reasons.parts["now_ns"] = ("C-TIME-2",)
    if reply.get("ok") is True:
        e = _Entry(
            kind, int_of(request.get("at_ns")), facts.now, on_fire=_list(request.get("on_fire"))
        )
        if kind == "every":
            e.grid = (
                int_of(request.get("period_ns")) or 1,
                int_of(request.get("phase_ns", "0")) or 0,
                1,
            )
        elif kind == "rate":
            num, den = (int_of(x) or 1 for x in request.get("rate_hz") or ["1", "1"])
            e.grid = (num, int_of(request.get("phase_ns", "0")) or 0, den)
        if e.grid is not None:
            e.k0 = _first_index(e, facts.now)
            e.at = _grid_time(e, e.k0)
        facts.entries[str(request.get("entry"))] = e
        facts.push(e, e.at, True)
    return reasons


def reply_reasons(requests: Sequence[Json], replies: Sequence[Json]) -> list[Reasons]:
    """The :class:`Reasons` of each of the oracle's ``replies`` to ``requests``."""
    clocks: dict[str, _ClockFacts] = {}
    seen: dict[str, _Drawn] = {}
    orders: dict[str, tuple[int, tuple[str, ...]]] = {}
    out: list[Reasons] = []
    for request, reply in zip(requests, replies, strict=True):
        op = request.get("op")
        name = str(request.get("clock"))
        if op == "create":
            facts = clocks[name] = _ClockFacts(now=int_of(request.get("start_ns")) or 0)
            facts.seed = int_of(request.get("seed")) or 0
            reasons = Reasons(parts={"ok": ("C-TIME-1",), "now_ns": ("C-TIME-1",)})
        else:
            facts = clocks.setdefault(name, _ClockFacts())
            if op == "advance":
                reasons = _advance(facts, request, reply)
            elif op == "schedule":
                reasons = _schedule(facts, request, reply, "at")
            elif op == "schedule_periodic":
                reasons = _schedule(facts, request, reply, "every")
            elif op == "schedule_rate":
                reasons = _schedule(facts, request, reply, "rate")
            elif op == "cancel":
                reasons = Reasons(parts={"ok": ("C-CAN-1",), "now_ns": ("C-TIME-2",)})
                _cancel(facts, str(request.get("entry")))
            elif op == "draw":
                rules = _draw_rules(
                    facts, name, request.get("labels"), reply.get("values"), seen, orders
                )
                ok = ("C-RNG-3",) if reply.get("ok") is False else rules[:1]
                reasons = Reasons(parts={"ok": ok, "values": rules, "now_ns": ("C-TIME-2",)})
            elif op == "step_ns":
                reasons = Reasons(parts={"ok": ("C-STEP-1",), "step_ns": ("C-STEP-1",)})
            elif op == "stats":
                stats = ("C-X-STATS",)
                reasons = Reasons(
                    parts={"ok": stats, "fired": stats, "skipped": stats, "overruns": stats}
                )
            else:
                reasons = Reasons(parts={"now_ns": ("C-TIME-2",)})
        reasons.parts.setdefault("next_event_ns", ("C-X-PEEK",))
        reasons.parts.setdefault("stored", ("C-CAN-4",))
        reasons.parts.setdefault("now_ns", ("C-TIME-2",))
        if "ok" in reasons.parts:
            reasons.parts.setdefault("error", reasons.parts["ok"])
        out.append(reasons)
    return out
