"""The library's string enums, whose lookup refuses bad input cleanly (README "Bad input").

``EventKind("x")``, ``Policy(...)``, ``PacingMode(...)`` are public entries
like any other. The stdlib lookup ``Enum(value)`` hashes ``value`` (a
``__hash__`` that raises escapes), compares it with ``==`` when it is not
hashable, and quotes it with ``repr`` in its ``ValueError`` (a ``__repr__``
that raises escapes). `CheckedStrEnum` looks a value up without
calling any method of it: anything but a ``str`` is a ``SimclockTypeError``;
a ``str`` is copied to a plain ``str`` before the dictionary lookup, and an
unknown one is a ``SimclockValueError`` quoting it with
`safe_repr`. Both name the argument (``value``)
and list the members. A successful lookup is O(1) for a member and O(len(value))
for a ``str`` (hashed after the copy); a refusal is also O(number of members),
to list them.
"""

from __future__ import annotations

import enum
from typing import Any

from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import exact_str, safe_repr

__all__ = ["CheckedStrEnum"]


class _CheckedEnumType(enum.EnumType):
    """Metaclass of `CheckedStrEnum`: a checked ``Cls(value)`` lookup."""

    def __call__(cls, value: object, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not cls._member_map_:
            # The functional API (Cls("Name", names=...)) and the memberless base class:
            # nothing is looked up, the stdlib refuses or builds as it always does.
            return super().__call__(value, *args, **kwargs)
        if type(value) is cls:  # a member: the common case, no copy
            return value
        if not isinstance(value, str):
            raise SimclockTypeError(
                f"{cls.__name__} value must be a str, one of {_members(cls)}, got "
                f"{type(value).__name__} {safe_repr(value)}"
            )
        # A plain str: a subclass's __hash__/__eq__ never run in the lookup below.
        member = cls._value2member_map_.get(exact_str(value))
        if member is None:
            raise SimclockValueError(
                f"{cls.__name__} value must be one of {_members(cls)}, got {safe_repr(value)}"
            )
        return member


def _members(cls: enum.EnumType) -> str:
    """The members' values as the error messages list them: ``'a', 'b'``."""
    return ", ".join(repr(m.value) for m in cls)  # type: ignore[var-annotated]


class CheckedStrEnum(enum.StrEnum, metaclass=_CheckedEnumType):
    """A ``StrEnum`` whose ``Cls(value)`` refuses a non-member without running its methods.

    ``Cls(member)`` and ``Cls("its value")`` return the member;
    ``SimclockTypeError`` for anything but a ``str``, ``SimclockValueError``
    for a ``str`` that is no member's value.
    """
