"""``ReadOnly``: a public read-only attribute backed by a private one, written once.

``steps = ReadOnly[int]("_steps", "Boundaries crossed since time 0.")`` in a
class body does what a ``@property`` returning ``self._steps`` does: reading
gives the value (typed ``int`` for mypy), assigning or deleting raises
``AttributeError`` as for a property without a setter, and ``help()`` shows
the docstring. The clocks, the recorder and the random streams expose their
state this way instead of one three-line property per attribute.
"""

from __future__ import annotations

import operator
from typing import Any, Generic, Never, NoReturn, TypeVar, overload

__all__ = ["ReadOnly"]

T = TypeVar("T")


class ReadOnly(Generic[T]):
    """A data descriptor reading ``attr`` (dotted paths allowed) of the instance."""

    def __init__(self, attr: str, doc: str) -> None:
        self._get = operator.attrgetter(attr)
        self.__doc__ = doc
        self._name = attr

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type[Any] | None = None) -> ReadOnly[T]: ...

    @overload
    def __get__(self, obj: object, owner: type[Any] | None = None) -> T: ...

    def __get__(self, obj: object, owner: type[Any] | None = None) -> T | ReadOnly[T]:
        if obj is None:
            return self
        value: T = self._get(obj)
        return value

    def __set__(self, obj: object, value: Never) -> NoReturn:
        # value: Never, so mypy refuses an assignment as it does for a property.
        raise AttributeError(
            f"property {self._name!r} of {type(obj).__name__!r} object has no setter"
        )

    def __delete__(self, obj: object) -> NoReturn:
        raise AttributeError(
            f"property {self._name!r} of {type(obj).__name__!r} object has no deleter"
        )
