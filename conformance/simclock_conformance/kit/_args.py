"""Argument checks of conformance's public helpers (README "Bad input", issue 14).

conformance may import only simclock's public names (import-linter), so it
has its own small copies of the library's quoting and copying helpers:

- :func:`quote` is ``repr`` cut to about 120 characters, with a placeholder
  when ``repr`` raises and for ints too long to print cheaply: an error
  message quoting a refused value must not fail itself, nor cost more than
  the check;
- :func:`plain_str` copies a ``str`` subclass to a plain ``str`` without
  calling its methods, so a hostile ``__hash__``/``__eq__`` never runs in a
  dict lookup or an ``in`` test;
- :func:`read_iterable` reads a caller's iterable once and at most
  ``limit + 1`` items, refusing one that raises while being read.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from simclock import SimclockTypeError, SimclockValueError
from simclock.lowlevel import describe_exception
from simclock_conformance.kit._options import MAX_TIMEOUT_S, PROFILES

__all__ = [
    "MAX_TIMEOUT_S",
    "check_bool",
    "check_profile",
    "check_str",
    "check_timeout",
    "exception_text",
    "plain_str",
    "quote",
    "read_iterable",
    "typed",
]

_REPR_LIMIT = 120


def quote(value: object) -> str:
    """``repr(value)`` cut to about 120 characters; a placeholder when ``repr`` raises."""
    # The same algorithm, and so the same text, as simclock's own quoting.
    if type(value) is int and value.bit_length() > 4 * _REPR_LIMIT:
        return f"<int of {value.bit_length()} bits>"
    if type(value) is str and len(value) > _REPR_LIMIT:
        value = value[:_REPR_LIMIT]
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__qualname__} object with a failing __repr__>"
    if len(text) > _REPR_LIMIT:
        return text[:_REPR_LIMIT] + "...(truncated)"
    return text


def typed(value: object) -> str:
    """``"<type name> <quote(value)>"``: how a refusal names a value of the wrong type."""
    return f"{type(value).__name__} {quote(value)}"


def plain_str(value: str) -> str:
    """``value`` as a plain ``str``; a subclass is copied without calling its methods."""
    return value if type(value) is str else str.__getitem__(value, slice(None))


def exception_text(exc: BaseException) -> str:
    """``Type: message`` of an exception raised by a backend; never raises itself."""
    return describe_exception(exc)


def check_bool(value: object, name: str, type_error: type[Exception] = SimclockTypeError) -> bool:
    """``value`` if it is a ``bool``; ``type_error`` naming ``name`` otherwise."""
    if type(value) is not bool:
        raise type_error(f"{name} must be True or False, got {typed(value)}")
    return value


def check_profile(
    value: object,
    type_error: type[Exception] = SimclockTypeError,
    value_error: type[Exception] = SimclockValueError,
) -> str:
    """``value`` as one of the Hypothesis profiles ``ci``/``thorough`` (a plain ``str``)."""
    if not isinstance(value, str):
        raise type_error(f"profile must be one of {', '.join(PROFILES)}, got {typed(value)}")
    profile = plain_str(value)  # `in PROFILES` compares: a subclass's __eq__ never runs
    if profile not in PROFILES:
        raise value_error(f"profile must be one of {', '.join(PROFILES)}, got {quote(profile)}")
    return profile


def check_timeout(
    value: object,
    type_error: type[Exception],
    value_error: type[Exception],
    name: str = "timeout",
) -> None:
    """Refuse a ``timeout`` that is not ``None`` or a number of seconds in [0, 10**6].

    ``bool`` is refused (``True`` is not one second); NaN, negative numbers
    and limits beyond :data:`MAX_TIMEOUT_S` are refused before any conversion
    (``float(10**400)`` would raise ``OverflowError``; the watchdog's timers
    overflow past about 10**8 s).
    """
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise type_error(
            f"{name} must be a number of seconds (int or float) or None, got {typed(value)}"
        )
    if not value >= 0:  # NaN too
        raise value_error(f"{name} must be a number of seconds >= 0, got {quote(value)}")
    if value > MAX_TIMEOUT_S:
        raise value_error(
            f"{name} must be at most {MAX_TIMEOUT_S} seconds (0: no limit), got {quote(value)}"
        )


def read_iterable(
    value: object,
    name: str,
    expected: str,
    limit: int,
    type_error: type[Exception],
    value_error: type[Exception],
) -> list[object]:
    """The items of the caller's iterable ``value``, read once, at most ``limit``.

    A ``str``/``bytes`` (an iterable of characters, never what is meant), a
    non-iterable, and an iterable whose ``__iter__``/``__next__`` raises are
    ``type_error("<name> must be <expected>, got ...")``; more than ``limit``
    items is ``value_error``. An endless iterator is never read to its end.
    """
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise type_error(f"{name} must be {expected}, got {typed(value)}")
    try:
        items = list(itertools.islice(value, limit + 1))
    except Exception as exc:  # the caller's __iter__/__next__, whatever it raises
        raise type_error(
            f"{name} must be {expected}, got {typed(value)}, which raised "
            f"{type(exc).__name__} when read"
        ) from None
    if len(items) > limit:
        raise value_error(
            f"{name} must hold at most {limit} items, got more from a {type(value).__name__}"
        )
    return items


def check_str(value: object, name: str, type_error: type[Exception] = SimclockTypeError) -> str:
    """``value`` as a plain ``str``; ``type_error`` naming ``name`` otherwise."""
    if not isinstance(value, str):
        raise type_error(f"{name} must be a str, got {typed(value)}")
    return plain_str(value)
