"""The library's error root.

Every error simclock raises for its own reasons derives from `SimclockError`
and also from the builtin that names the kind of mistake, so callers may catch
either: ``TypeError`` for a wrong type, ``ValueError`` for a bad value,
``RuntimeError`` for misuse of state. Messages are lower-case, quote the
offending value and say what to do instead.
"""

from __future__ import annotations

__all__ = [
    "SimclockError",
    "SimclockRuntimeError",
    "SimclockTypeError",
    "SimclockValueError",
]


class SimclockError(Exception):
    """Root of every error simclock raises on its own account."""


class SimclockTypeError(SimclockError, TypeError):
    """An argument has the wrong type (e.g. a float where a time-int is needed)."""


class SimclockValueError(SimclockError, ValueError):
    """An argument has the right type but a value the contract refuses."""


class SimclockRuntimeError(SimclockError, RuntimeError):
    """A call is not allowed in the object's current state (e.g. nested advance)."""
