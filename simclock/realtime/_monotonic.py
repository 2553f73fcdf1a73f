"""``MonotonicClock``: the host's monotonic clock as a `SystemClock` (SPEC §4).

This module reads the wall clock on purpose: it is the hardware side of the
contract, never simulation code. Every read goes through the injectable
``source`` (``MonotonicClock(seed, source=...)``), so code on it is tested
with a fake time source.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from simclock.core._bus import Bus
from simclock.core._errors import SimclockTypeError
from simclock.core._names import safe_repr
from simclock.core._random import SeededRandomSource
from simclock.core._timeint import check_time_ns

__all__ = ["MonotonicClock"]


class MonotonicClock:
    """A [`SystemClock`][simclock.SystemClock] reading the OS monotonic clock (C-SYS-1).

    ``MonotonicClock(seed, *, source=None, bus=None)``. ``source`` is a
    zero-argument callable returning int ns, ``time.monotonic_ns`` by default;
    it is the public attribute ``source``, so tests drive the clock with a fake.
    ``now_ns()`` never decreases: a source that steps back is held at the last
    value returned (``time.monotonic_ns`` never does). ``random_source()`` is the
    root stream of ``seed`` (C-RNG-1). ``bus`` (an unbound [`Bus`][simclock.Bus]
    by default) is where periodic threads on this clock report failures, stamped
    in this clock's ns.

    Thread-safe; ``now_ns()`` is O(1) and takes one lock.
    """

    def __init__(
        self,
        seed: int,
        *,
        source: Callable[[], int] | None = None,
        bus: Bus | None = None,
    ) -> None:
        if source is not None and not callable(source):
            raise SimclockTypeError(
                f"source must be a callable returning int ns, got {type(source).__name__} "
                f"{safe_repr(source)}; pass e.g. time.monotonic_ns"
            )
        if bus is not None and not isinstance(bus, Bus):
            raise SimclockTypeError(f"bus must be a simclock.Bus or None, got {safe_repr(bus)}")
        self._random = SeededRandomSource(seed)
        self.source: Callable[[], int] = source if source is not None else time.monotonic_ns
        self.bus = bus if bus is not None else Bus()
        self._lock = threading.Lock()
        self._last = 0

    def now_ns(self) -> int:
        """The source's time in int ns, never lower than a value already returned (C-SYS-1)."""
        value = self.source()
        if type(value) is not int or value < 0:
            value = check_time_ns(value, "source()")
        with self._lock:
            # Invariant: _last is the largest value ever returned.
            if value < self._last:
                return self._last
            self._last = value
            return value

    def random_source(self) -> SeededRandomSource:
        """The root random stream, label ``/`` (C-RNG-1); the same object every call."""
        return self._random
