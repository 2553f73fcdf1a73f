"""A stand-in for the library a backend is built on; it spins in the standard library."""

from __future__ import annotations

import heapq
import itertools
from collections import deque

__all__ = ["wait_forever"]


def wait_forever() -> None:
    """Never returns: drains an endless ``heapq.merge``."""
    deque(heapq.merge(itertools.count(), itertools.count()), maxlen=0)  # hang: library
