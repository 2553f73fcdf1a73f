"""The builder of the clause programs: :class:`Case`, the builder :class:`P` and the actions.

A program's callbacks are action lists (C-WIRE-4): :func:`sched`,
:func:`cancel`, :func:`nested`, :func:`fail` and :data:`HALT` build them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["HALT", "MAX", "Case", "Json", "P", "cancel", "fail", "nested", "sched"]

MAX = 2**64 - 1
Json = dict[str, Any]


@dataclass
class Case:
    """One program: ``steps`` are ``(request, accept)`` pairs."""

    id: str
    clauses: list[str]
    requires: list[str] = field(default_factory=list)
    steps: list[tuple[Json, list[str]]] = field(default_factory=list)

    @property
    def requests(self) -> list[Json]:
        """The requests alone, in order."""
        return [r for r, _ in self.steps]


def _s(value: int | str) -> str:
    return str(value)


def sched(delay: int, *then: Json) -> Json:
    """Action: a child entry ``delay`` ns from now (C-WIRE-4)."""
    action: Json = {"do": "schedule", "delay_ns": _s(delay)}
    if then:
        action["on_fire"] = list(then)
    return action


def cancel(entry: str) -> Json:
    """Action: cancel ``entry``."""
    return {"do": "cancel", "entry": entry}


def nested(dt: int) -> Json:
    """Action: a nested advance, which the backend must refuse (C-ADV-4)."""
    return {"do": "advance", "dt_ns": _s(dt)}


def fail(message: str) -> Json:
    """Action: raise an ordinary error (C-ERR-1)."""
    return {"do": "raise", "message": message}


HALT: Json = {"do": "halt"}


class P:
    """A builder of one case on clock ``c`` (and more clocks by name)."""

    def __init__(self, case_id: str, clauses: list[str], requires: list[str] | None = None):
        self.case = Case(case_id, clauses, list(requires or []))

    def _add(self, request: Json, accept: list[str] | None = None) -> P:
        self.case.steps.append((request, list(accept or [])))
        return self

    def create(self, seed: int = 0, clock: str = "c", start: int | None = None) -> P:
        req: Json = {"op": "create", "clock": clock, "seed": _s(seed)}
        if start is not None:
            req["start_ns"] = _s(start)
        return self._add(req)

    def at(
        self,
        entry: str,
        at: int | object,
        *on_fire: Json,
        clock: str = "c",
        accept: list[str] | None = None,
    ) -> P:
        value = _s(at) if isinstance(at, int) else at
        req = {
            "op": "schedule",
            "clock": clock,
            "entry": entry,
            "at_ns": value,
            "on_fire": list(on_fire),
        }
        return self._add(req, accept)

    def every(
        self,
        entry: str,
        period: int | object,
        phase: int | object = 0,
        *on_fire: Json,
        clock: str = "c",
        accept: list[str] | None = None,
    ) -> P:
        req = {
            "op": "schedule_periodic",
            "clock": clock,
            "entry": entry,
            "period_ns": _s(period) if isinstance(period, int) else period,
            "phase_ns": _s(phase) if isinstance(phase, int) else phase,
            "on_fire": list(on_fire),
        }
        return self._add(req, accept)

    def rate(
        self, entry: str, num: int | object, den: int | object = 1, phase: int = 0, clock: str = "c"
    ) -> P:
        parts = [_s(num) if isinstance(num, int) else num, _s(den) if isinstance(den, int) else den]
        req = {
            "op": "schedule_rate",
            "clock": clock,
            "entry": entry,
            "rate_hz": parts,
            "phase_ns": _s(phase),
            "on_fire": [],
        }
        return self._add(req)

    def cancel(self, entry: str, clock: str = "c") -> P:
        return self._add({"op": "cancel", "clock": clock, "entry": entry})

    def adv(self, dt: int | object, clock: str = "c", accept: list[str] | None = None) -> P:
        return self._add(
            {"op": "advance", "clock": clock, "dt_ns": _s(dt) if isinstance(dt, int) else dt},
            accept,
        )

    def observe(self, clock: str = "c") -> P:
        return self._add({"op": "observe", "clock": clock})

    def stats(self, entry: str, clock: str = "c") -> P:
        return self._add({"op": "stats", "clock": clock, "entry": entry})

    def step(self, clock: str = "c") -> P:
        return self._add({"op": "step_ns", "clock": clock})

    def draw(self, labels: list[str], n: int, clock: str = "c") -> P:
        return self._add({"op": "draw", "clock": clock, "labels": labels, "n": _s(n)})

    def drop(self, clock: str = "c") -> Case:
        self._add({"op": "drop", "clock": clock})
        return self.case
