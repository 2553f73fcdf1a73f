"""Factories that cannot be tested at all: the CLI must exit 2 with a clear message."""

from __future__ import annotations

from simclock import Bus, HeapSimClock

__all__ = [
    "NOT_CALLABLE",
    "exiting",
    "float_horizon",
    "horizon_without_start",
    "not_a_clock",
    "raising",
    "short_horizon",
]

NOT_CALLABLE = 3


def raising(seed: int, bus: Bus) -> object:
    """A factory whose backend cannot start."""
    raise RuntimeError("no clock device found")


def not_a_clock(seed: int, bus: Bus) -> object:
    """A factory returning something without the SimClock methods."""
    return {"seed": seed}


def exiting(seed: int, bus: Bus) -> object:
    """A factory that ends the process instead of raising an ``Exception``."""
    raise SystemExit(5)


def short_horizon(seed: int, bus: Bus, start_ns: int = 0) -> HeapSimClock:
    """A correct clock declaring a horizon below the suite's smallest (2**16 ns)."""
    return HeapSimClock(seed, bus=bus, start_ns=start_ns)


def float_horizon(seed: int, bus: Bus, start_ns: int = 0) -> HeapSimClock:
    """A correct clock declaring a horizon that is not an int."""
    return HeapSimClock(seed, bus=bus, start_ns=start_ns)


def horizon_without_start(seed: int, bus: Bus) -> HeapSimClock:
    """A correct clock declaring a horizon but unable to start anywhere but 0."""
    return HeapSimClock(seed, bus=bus)


short_horizon.horizon_ns = 2**16 - 1  # type: ignore[attr-defined]
float_horizon.horizon_ns = 65536.0  # type: ignore[attr-defined]
horizon_without_start.horizon_ns = 2**16  # type: ignore[attr-defined]
