"""Deterministic names for callables, and the callable check every scheduler shares.

Lowest floor of the core (only ``_errors`` below it), so the bus, the clocks
and the real-time threads all name callbacks and describe exceptions the same
way (C-ERR-1, C-BUS-4, C-DET-1), whatever the exception object does.
"""

from __future__ import annotations

import enum
import re
from functools import partial
from typing import TypeVar

from simclock.core._errors import SimclockTypeError, SimclockValueError

_E = TypeVar("_E", bound=enum.StrEnum)

__all__ = [
    "callback_name",
    "check_callable",
    "check_str_enum",
    "check_str_matching",
    "describe_exception",
    "exact_str",
    "exception_message",
    "safe_repr",
    "type_name",
    "typed_repr",
]


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


def describe_exception(exc: BaseException, *, limit: int | None = None) -> str:
    """``Type: message`` of an exception, ``Type`` alone when the message is empty (C-ERR-1).

    The one describer of the library: ``Type`` is `type_name`
    (``type(exc).__qualname__``, so a nested class reads ``Outer.Inner``) and
    the message `exception_message` (``<str() of Type raised>`` when
    ``str`` fails). Never raises. ``limit`` (characters, ``>= 16``) cuts a long
    description to one line: whitespace runs become one space and the end is
    ``...(truncated)``; ``None`` keeps it whole. O(len(message)).
    """
    name = type_name(exc)
    text = exception_message(exc)
    described = f"{name}: {text}" if text else name
    if limit is None:
        return described
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise SimclockTypeError(f"limit must be an int or None, got {safe_repr(limit)}")
    if limit < 16:
        raise SimclockValueError(f"limit must be >= 16 characters, got {limit}")
    # Cut first: a megabyte message is not split into words to keep 500 characters.
    line = " ".join(described[: 2 * limit + 1].split())
    if len(line) > limit or len(described) > 2 * limit + 1:
        return line[: limit - len("...(truncated)")] + "...(truncated)"
    return line


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


def typed_repr(value: object) -> str:
    """``"<type name> <safe_repr(value)>"``: how a refusal quotes a value of the wrong type."""
    return f"{type(value).__name__} {safe_repr(value)}"


def exact_str(value: str) -> str:
    """``value`` as a plain ``str``: a ``str`` subclass is copied without calling its methods.

    A subclass may override ``__hash__``/``__eq__`` to raise; the copy is what
    gets stored, hashed and compared, so those overrides never run inside the
    library. O(len(value)) for a subclass, O(1) for a plain ``str``.
    """
    if type(value) is str:
        return value
    return str.__getitem__(value, slice(None))


def check_str_matching(value: object, name: str, pattern: re.Pattern[str], rule: str) -> str:
    """``value`` as a plain ``str`` (`exact_str`) if it matches ``pattern`` in full.

    ``TypeError`` "<name> must be a str, got ..." otherwise, or ``ValueError``
    "<name> must <rule>, got ..." (topics, component ids).
    """
    if not isinstance(value, str):
        raise SimclockTypeError(
            f"{name} must be a str, got {type(value).__name__} {safe_repr(value)}"
        )
    if not pattern.fullmatch(value):
        raise SimclockValueError(f"{name} must {rule}, got {safe_repr(value)}")
    return exact_str(value)


def check_str_enum(value: object, kind: type[_E], type_error: str, value_error: str) -> _E:
    """``value`` as a member of the string enum ``kind``.

    Not a ``str``: ``TypeError`` "<type_error>, got <type> <value>"; not a
    member: ``ValueError`` "<value_error><value>" (modes, policies).
    """
    if not isinstance(value, str):
        raise SimclockTypeError(f"{type_error}, got {type(value).__name__} {safe_repr(value)}")
    try:
        return kind(exact_str(value))  # a str subclass's __hash__ never runs
    except ValueError:
        raise SimclockValueError(f"{value_error}{safe_repr(value)}") from None
