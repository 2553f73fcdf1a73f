"""Factories that cannot be tested at all: the CLI must exit 2 with a clear message."""

from __future__ import annotations

from simclock import Bus

__all__ = ["NOT_CALLABLE", "exiting", "not_a_clock", "raising"]

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
