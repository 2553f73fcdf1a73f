"""``with obj:`` for objects that own a file: ``close()`` on exit, however the block ends."""

from __future__ import annotations

from typing import Self

__all__ = ["Closing"]


class Closing:
    """Mixin: ``__enter__`` returns the object, ``__exit__`` calls ``close()``.

    Subclasses implement ``close()`` (idempotent); exceptions from the block
    propagate unchanged.
    """

    __slots__ = ()

    def close(self) -> None:
        """Release what the object owns; subclasses override."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
