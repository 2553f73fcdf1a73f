"""Which situations a program reaches, read from the oracle's replies (SPEC §14, C-CONF-1).

Each program module lists, next to its programs, the situations the programs
of a clause must reach (``SITUATIONS``: clause -> situation id -> what it
is). A situation is decided here, by :data:`DETECTORS`, from a walk of the
program on the oracle: who pushed every entry that fired (a top-level
request, a callback, a periodic's re-push), during which request, and what
``now`` was before every request. So a list of situations cannot claim what
no program does: the self-test runs every detector on every program of its
clause, and on what the state machine draws.

Ties are two or more firings at one instant within one advance.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DETECTORS", "Firing", "Walk", "covered", "walk"]

Json = dict[str, Any]
MAX = 2**64 - 1
NEAR_MAX = MAX - 2**32
"""Ties and firings at or after this instant are "near 2**64 - 1"."""


@dataclass(frozen=True)
class Firing:
    """One firing: the entry, its instant, who pushed it and during which request."""

    entry: str
    now: int
    request: int
    """Index of the advance request whose reply holds this firing."""
    origin: str
    """``top`` (a schedule request), ``callback`` (a callback's child) or ``repush``."""
    epoch: float
    """Advances before the push; ``+ 0.5`` when pushed during an advance."""


@dataclass
class Walk:
    """A program on the oracle: its requests, replies, firings, ties and ``now`` before each."""

    requests: list[Json]
    replies: list[Json]
    before: list[int] = field(default_factory=list)
    firings: list[Firing] = field(default_factory=list)
    ties: list[list[Firing]] = field(default_factory=list)
    halted: list[tuple[str, int]] = field(default_factory=list)
    failed: list[tuple[str, int]] = field(default_factory=list)
    periodic: set[str] = field(default_factory=set)


def walk(requests: list[Json], replies: list[Json]) -> Walk:
    """Follow the oracle's replies to the requests of the program's first clock."""
    w = Walk(requests, replies)
    actions: dict[str, list[Json]] = {}
    pushed: dict[str, tuple[str, float]] = {}
    children: dict[str, int] = {}
    advances = 0
    now = 0
    clock = next((r.get("clock") for r in requests if r.get("op") == "create"), None)
    for i, (request, reply) in enumerate(zip(requests, replies, strict=False)):
        w.before.append(now)
        if request.get("clock") != clock:
            continue  # another clock of the program: its own walk
        op = request.get("op")
        if op in ("schedule", "schedule_periodic", "schedule_rate") and reply.get("ok"):
            entry = str(request.get("entry"))
            actions[entry] = list(request.get("on_fire") or [])
            pushed[entry] = ("top", float(advances))
            if op != "schedule":
                w.periodic.add(entry)
        if op == "advance":
            group: list[Firing] = []
            for record in reply.get("fired") or []:
                entry, at = str(record["entry"]), int(record["now_ns"])
                origin, epoch = pushed.get(entry, ("top", float(advances)))
                firing = Firing(entry, at, i, origin, epoch)
                w.firings.append(firing)
                if group and group[-1].now != at:
                    if len(group) > 1:
                        w.ties.append(group)
                    group = []
                group.append(firing)
                if entry in w.periodic:
                    pushed[entry] = ("repush", advances + 0.5)
                for action in actions.get(entry, []):
                    if action.get("do") == "schedule" and "refused" not in record:
                        n = children.get(entry, 0)
                        children[entry] = n + 1
                        child = f"{entry}.{n}"
                        actions[child] = list(action.get("on_fire") or [])
                        pushed[child] = ("callback", advances + 0.5)
            if len(group) > 1:
                w.ties.append(group)
            for failure in reply.get("failures") or []:
                w.failed.append((str(failure["entry"]), int(failure["at_ns"])))
            if reply.get("error") == "halted":
                w.halted.append((str(reply.get("entry")), int(reply.get("at_ns", 0))))
            advances += 1
        if "now_ns" in reply:
            now = int(reply["now_ns"])
    return w


def _beyond(w: Walk, relation: Callable[[int, int], bool]) -> bool:
    """A request naming a time past ``2**64 - 1`` whose value modulo ``2**64`` relates to now."""
    for request, now in zip(w.requests, w.before, strict=False):
        for key in ("at_ns", "phase_ns", "period_ns"):
            value = request.get(key)
            if isinstance(value, str) and value.isdigit() and int(value) > MAX:
                wrapped = int(value) % 2**64
                if relation(wrapped, now):
                    return True
    return False


def _tie_has(w: Walk, test: Callable[[list[Firing]], bool]) -> bool:
    return any(test(tie) for tie in w.ties)


def _origins(tie: list[Firing]) -> set[str]:
    return {f.origin for f in tie}


def _before(tie: list[Firing], first: Iterable[str], then: Iterable[str]) -> bool:
    """Some firing of origin in ``first`` precedes one of origin in ``then`` in ``tie``."""
    first, then = set(first), set(then)
    seen = False
    for f in tie:
        if seen and f.origin in then:
            return True
        seen = seen or f.origin in first
    return False


def _refused(w: Walk, op: str, test: Callable[[Json, int], bool]) -> bool:
    return any(
        r.get("op") == op and reply.get("ok") is False and test(r, now)
        for r, reply, now in zip(w.requests, w.replies, w.before, strict=False)
    )


def _at_now_fires_on_advance_zero(w: Walk) -> bool:
    for i, (r, reply, now) in enumerate(zip(w.requests, w.replies, w.before, strict=False)):
        if r.get("op") == "schedule" and reply.get("ok") and r.get("at_ns") == str(now):
            later = [f for f in w.firings if f.request > i and f.entry == r.get("entry")]
            if later and w.requests[later[0].request].get("dt_ns") == "0":
                return True
    return False


def _rearmed_after(w: Walk, events: list[tuple[str, int]]) -> bool:
    return any(
        entry in w.periodic and any(f.entry == entry and f.now > at for f in w.firings)
        for entry, at in events
    )


def _halt_leaves_others_pending(w: Walk) -> bool:
    """After a halt at ``t``, a later advance still fires something at ``t``."""
    for i, reply in enumerate(w.replies):
        if reply.get("error") == "halted":
            at = int(reply.get("at_ns", 0))
            if any(f.request > i and f.now == at for f in w.firings):
                return True
    return False


DETECTORS: dict[str, Callable[[Walk], bool]] = {
    # C-TIE-1
    "tie/top-level": lambda w: _tie_has(w, lambda t: sum(f.origin == "top" for f in t) > 1),
    "tie/from-callbacks": lambda w: _tie_has(w, lambda t: "callback" in _origins(t)),
    "tie/periodic-repush": lambda w: _tie_has(w, lambda t: "repush" in _origins(t)),
    "tie/across-advances": lambda w: _tie_has(w, lambda t: len({f.epoch for f in t}) > 1),
    "tie/near-2-64": lambda w: _tie_has(w, lambda t: t[0].now >= NEAR_MAX),
    "tie/callback-before-later-top-level": lambda w: _tie_has(
        w, lambda t: _before(t, ("callback", "repush"), ("top",))
    ),
    "tie/top-level-before-callback": lambda w: _tie_has(
        w, lambda t: _before(t, ("top",), ("callback",)) and _before(t, ("top",), ("repush",))
    ),
    "tie/all-origins-mixed": lambda w: _tie_has(
        w, lambda t: _origins(t) == {"top", "callback", "repush"} and len({f.epoch for f in t}) > 2
    ),
    # C-TIME-4
    "time/odd-beyond-2-53": lambda w: any(
        2**53 < f.now <= MAX and f.now % 2 == 1 for f in w.firings
    ),
    "time/fires-at-2-64-minus-1": lambda w: any(f.now == MAX for f in w.firings),
    "time/beyond-wrapped-ahead": lambda w: _beyond(w, lambda wrapped, now: wrapped > now),
    "time/beyond-wrapped-at-now": lambda w: _beyond(w, lambda wrapped, now: wrapped == now),
    "time/beyond-wrapped-behind": lambda w: _beyond(w, lambda wrapped, now: wrapped < now),
    "time/advance-beyond": lambda w: any(
        r.get("op") == "advance" and now + int(r.get("dt_ns", "0")) > MAX
        for r, now in zip(w.requests, w.before, strict=False)
        if str(r.get("dt_ns", "")).isdigit()
    ),
    "time/beyond-period": lambda w: any(
        r.get("op") == "schedule_periodic"
        and str(r.get("period_ns", "")).isdigit()
        and int(r["period_ns"]) > MAX
        for r in w.requests
    ),
    # C-SCH-1
    "sch/past-refused": lambda w: _refused(
        w, "schedule", lambda r, now: str(r.get("at_ns", "")).isdigit() and int(r["at_ns"]) < now
    ),
    "sch/at-now-fires-on-advance-zero": _at_now_fires_on_advance_zero,
    "sch/at-now-from-a-callback": lambda w: any(
        f.origin == "callback"
        and any(g.entry == f.entry.rsplit(".", 1)[0] and g.now == f.now for g in w.firings)
        for f in w.firings
    ),
    # C-PER-2, C-ERR-1, C-ERR-2
    "per/repush-ties-an-entry-pushed-since": lambda w: _tie_has(
        w, lambda t: any(f.origin == "repush" for f in t) and len(t) > 1
    ),
    "err/periodic-rearmed-after-raise": lambda w: _rearmed_after(w, w.failed),
    "err/periodic-rearmed-after-halt": lambda w: _rearmed_after(w, w.halted),
    "err/halt-leaves-others-pending": _halt_leaves_others_pending,
}
"""``situation id -> does the walk reach it``."""


def covered(situation: str, walks: Iterable[Walk]) -> bool:
    """Whether any of ``walks`` reaches ``situation`` (an id of :data:`DETECTORS`)."""
    detect = DETECTORS[situation]
    return any(detect(w) for w in walks)
