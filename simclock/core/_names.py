"""Deterministic names for callables, and the callable check every scheduler shares.

Lowest floor of the core (only ``_errors`` below it), so the bus, the clocks
and the real-time threads all name callbacks the same way (C-ERR-1, C-DET-1).
"""

from __future__ import annotations

from functools import partial

from simclock.core._errors import SimclockTypeError

__all__ = ["callback_name", "check_callable", "exact_str", "safe_repr"]


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
        raise SimclockTypeError(f"{name} must be callable, got {type(cb).__name__} {safe_repr(cb)}")


# An error message quotes the refused value, but a refusal must stay cheap and
# must not fail itself: a 10**6-character string or a 10**400 is cut short.
_REPR_LIMIT = 120


def safe_repr(value: object) -> str:
    """``repr(value)`` cut to about 120 characters; a placeholder when ``repr`` raises.

    Used by every error message that quotes a refused value: a hostile
    ``__repr__`` (or an int too long for ``repr``) must not replace the
    library's ``TypeError``/``ValueError`` with its own exception.
    """
    if type(value) is str and len(value) > _REPR_LIMIT:
        value = value[:_REPR_LIMIT]
        suffix = "...(truncated)"
    elif type(value) is int and value.bit_length() > 4 * _REPR_LIMIT:
        return f"<int of {value.bit_length()} bits>"
    else:
        suffix = ""
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__qualname__} object with a failing __repr__>"
    if not isinstance(text, str):  # pragma: no cover - repr() itself refuses non-str
        return f"<{type(value).__qualname__} object>"
    if len(text) > _REPR_LIMIT:
        return text[:_REPR_LIMIT] + "...(truncated)"
    return text + suffix


def exact_str(value: str) -> str:
    """``value`` as a plain ``str``: a ``str`` subclass is copied without calling its methods.

    A subclass may override ``__hash__``/``__eq__`` to raise; the copy is what
    gets stored, hashed and compared, so those overrides never run inside the
    library. O(len(value)) for a subclass, O(1) for a plain ``str``.
    """
    if type(value) is str:
        return value
    return str.__getitem__(value, slice(None))
