"""Deterministic names for callables, and the callable check every scheduler shares.

Lowest floor of the core (only ``_errors`` below it), so the bus, the clocks
and the real-time threads all name callbacks the same way (C-ERR-1, C-DET-1).
"""

from __future__ import annotations

from functools import partial

from simclock.core._errors import SimclockTypeError

__all__ = ["callback_name", "check_callable"]


def callback_name(cb: object) -> str:
    """A deterministic name for ``cb``: its ``__qualname__``, never a repr with an address.

    ``functools.partial(f, ...)`` is ``partial(<name of f>)``; an object
    without a string ``__qualname__`` is named by its type. Never raises: a
    ``__qualname__`` property that raises counts as absent (C-ERR-1).
    """
    if isinstance(cb, partial):
        return f"partial({callback_name(cb.func)})"
    try:
        name = getattr(cb, "__qualname__", None)
    except Exception:
        name = None
    if isinstance(name, str):
        return name
    return type(cb).__qualname__


def check_callable(cb: object, name: str = "cb") -> None:
    """Raise ``TypeError`` naming ``name`` when ``cb`` is not callable."""
    if not callable(cb):
        raise SimclockTypeError(
            f"{name} must be callable, got {type(cb).__name__} {_safe_repr(cb)}"
        )


def _safe_repr(value: object) -> str:
    """``repr(value)``, or a placeholder naming the type when ``repr`` itself raises."""
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__qualname__} object with a failing __repr__>"
