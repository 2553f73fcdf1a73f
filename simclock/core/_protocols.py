"""Public protocols and small value types of the contract (SPEC §1, §2, §4)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from simclock.core._errors import SimclockTypeError
from simclock.core._names import safe_repr

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Callback",
    "Handle",
    "PeriodicStats",
    "RandomSource",
    "SimClock",
    "SystemClock",
]

Callback = Callable[[], object]
"""A scheduled callback: called with no arguments; its return value is ignored."""


@dataclass(frozen=True, slots=True)
class PeriodicStats:
    """Counters of one periodic schedule (C-X-STATS).

    ``fired``: callbacks started; ``failed``: of those, how many raised;
    ``skipped``: grid points dropped because they were already missed (never
    non-zero on an event clock, which cannot be late); ``overrun``: firings that
    happened after the next nominal deadline had already passed.
    """

    fired: int = 0
    failed: int = 0
    skipped: int = 0
    overrun: int = 0


def _no_stats() -> PeriodicStats:
    return PeriodicStats()


@dataclass(frozen=True, slots=True)
class Handle:
    """What ``schedule*`` returns (C-SCH-2).

    ``cancel()`` may be called at any time, from anywhere, any number of times,
    and never raises (C-CAN-1..3). ``stats()`` reports the counters of the
    schedule (C-X-STATS); for a one-shot entry ``fired`` is 0 or 1.
    """

    cancel: Callable[[], None]
    stats: Callable[[], PeriodicStats] = _no_stats

    def __post_init__(self) -> None:
        # A third-party backend builds Handles: a non-callable is refused here,
        # not when the user first cancels (C-CAN-1 says cancel never raises).
        # One test of both on the path every schedule takes; the loop only to refuse.
        if callable(self.cancel) and callable(self.stats):
            return
        for name in ("cancel", "stats"):
            value = getattr(self, name)
            if not callable(value):
                raise SimclockTypeError(
                    f"{name} must be callable, got {type(value).__name__} {safe_repr(value)}"
                )


@runtime_checkable
class RandomSource(Protocol):
    """A labelled, seeded random stream (SPEC §2, C-RNG-1..5)."""

    @property
    def seed(self) -> int: ...

    @property
    def label(self) -> str: ...

    def child(self, label: str) -> RandomSource: ...

    def uniform(self, a: float, b: float) -> float: ...

    def normal(self, mu: float, sigma: float, size: int | tuple[int, ...] | None = None) -> Any: ...

    def integers(self, low: int, high: int, size: int | tuple[int, ...] | None = None) -> Any: ...

    def numpy_rng(self) -> np.random.Generator: ...


@runtime_checkable
class SimClock(Protocol):
    """A deterministic, event-driven clock (SPEC §1)."""

    def now_ns(self) -> int: ...

    def step_ns(self) -> int: ...

    def advance(self, dt_ns: int) -> None: ...

    def schedule(self, at_ns: int, cb: Callback) -> Handle: ...

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle: ...

    def random_source(self) -> RandomSource: ...


@runtime_checkable
class SystemClock(Protocol):
    """A free-running clock: time moves by itself, there is no ``advance`` (SPEC §4)."""

    def now_ns(self) -> int: ...

    def random_source(self) -> RandomSource: ...
