"""Deterministic names for callables, and the callable check every scheduler shares.

Lowest floor of the core (only ``_errors`` below it), so the bus, the clocks
and the real-time threads all name callbacks and describe exceptions the same
way (C-ERR-1, C-BUS-4, C-DET-1), whatever the exception object does.
"""

from __future__ import annotations

from functools import partial

from simclock.core._errors import SimclockTypeError

__all__ = ["callback_name", "check_callable", "exception_message", "type_name"]


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


def type_name(exc: BaseException) -> str:
    """``type(exc).__qualname__``; never raises, even for a hostile metaclass (C-ERR-1)."""
    try:
        name = type(exc).__qualname__
    except Exception:
        name = None
    return name if isinstance(name, str) else "<exception type without a name>"


def exception_message(exc: BaseException) -> str:
    """``str(exc)``, or a fixed placeholder naming the type when ``str`` raises (C-ERR-1).

    Also used when ``str(exc)`` returns something that is not a ``str``
    (``__str__`` returning a non-string raises ``TypeError`` inside ``str``).
    The placeholder is ``<str() of TYPE raised>``.
    """
    try:
        return str(exc)
    except BaseException:
        # Any failure of __str__, even one raising KeyboardInterrupt or SystemExit,
        # is the callback's failure, not the clock's: report the placeholder.
        return f"<str() of {type_name(exc)} raised>"


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
