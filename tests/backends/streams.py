"""A labelled random stream written apart from ``simclock.SeededRandomSource`` (SPEC §2).

The stream at path ``/a/b`` is ``Generator(PCG64(SeedSequence([seed, *words])))``
where ``words`` are eight 32-bit words of ``sha256(path)``: a different but
equally stable derivation (C-RNG-2), so the suite cannot depend on simclock's
own choice of digest.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np

from simclock import SimclockTypeError, SimclockValueError

__all__ = ["PathStream", "join_label"]

_SEGMENT = re.compile(r"[A-Za-z0-9_.-]+")


def join_label(parent: str, label: object) -> str:
    """``parent`` joined with the relative (or ``/``-prefixed) ``label`` (C-RNG-3)."""
    if not isinstance(label, str):
        raise SimclockTypeError(f"label must be a str, got {type(label).__name__} {label!r}")
    parts = (label[1:] if label.startswith("/") else label).split("/")
    if not all(_SEGMENT.fullmatch(p) for p in parts):
        raise SimclockValueError(
            f"label {label!r} is malformed: use non-empty segments of [A-Za-z0-9_.-] "
            "separated by '/'"
        )
    return ("" if parent == "/" else parent) + "/" + "/".join(parts)


class PathStream:
    """One random stream of the tree rooted at ``seed`` (C-RNG-1..5)."""

    def __init__(self, seed: int, path: str = "/") -> None:
        self._seed = seed
        self._path = path
        self._gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(self.key())))

    def key(self) -> list[int]:
        """Entropy of this stream: the root seed then words derived from the path."""
        digest = hashlib.sha256(self._path.encode("ascii")).digest()
        return [self._seed, *(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 32, 4))]

    @property
    def seed(self) -> int:
        """The scenario seed."""
        return self._seed

    @property
    def label(self) -> str:
        """The absolute path, ``/`` for the root."""
        return self._path

    def child(self, label: str) -> PathStream:
        """The stream at ``label`` below this one."""
        return type(self)(self._seed, join_label(self._path, label))

    def uniform(self, a: float, b: float) -> float:
        """A float in ``[a, b)``."""
        return float(self._gen.uniform(a, b))

    def normal(self, mu: float, sigma: float, size: int | tuple[int, ...] | None = None) -> Any:
        """A float, or an array when ``size`` is given."""
        if size is None:
            return float(self._gen.normal(mu, sigma))
        return self._gen.normal(mu, sigma, size=size)

    def integers(self, low: int, high: int, size: int | tuple[int, ...] | None = None) -> Any:
        """An int in ``[low, high)``, or an array when ``size`` is given."""
        if size is None:
            return int(self._gen.integers(low, high))
        return self._gen.integers(low, high, size=size)

    def numpy_rng(self) -> np.random.Generator:
        """This stream's generator, the same object every call."""
        return self._gen
