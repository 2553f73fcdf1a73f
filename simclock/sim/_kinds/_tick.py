"""The ``tick`` controller kind: publishes a counter, ``{"tick": n}``, at each firing."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from simclock.sim._kinds._base import ControllerKind, KindParams, KindRun

__all__ = ["Tick"]


@dataclass(frozen=True, slots=True)
class Tick(ControllerKind):
    """``kind = "tick"``: no keys of its own; works on any grid."""

    name: ClassVar[str] = "tick"

    @classmethod
    def load(cls, params: KindParams) -> Tick:
        """Nothing to check."""
        return cls()

    def controller(self, run: KindRun) -> Callable[[Mapping[str, Any]], dict[str, int]]:
        """``{"tick": 0}``, ``{"tick": 1}``, ... : the firings of this session."""
        count = [0]

        def step(latest: Mapping[str, Any]) -> dict[str, int]:
            count[0] += 1
            return {"tick": count[0] - 1}

        return step
