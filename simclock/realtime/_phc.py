"""``PhcTimeSource``: a PTP hardware clock (``/dev/ptpN``) as a time source (C-SYS-6).

This module reads a hardware clock on purpose: it is the hardware side of
the contract. A network card with hardware timestamping keeps its own clock
(disciplined by ``ptp4l`` to a grandmaster), and cameras that timestamp
frames in hardware stamp them on it; reading the same clock puts the host's
code on the cameras' time. Linux exposes it as a character device; opening
it gives a file descriptor, and ``(~fd << 3) | 3`` is its dynamic POSIX
clock id (the kernel's ``FD_TO_CLOCKID``), which ``clock_gettime`` reads.
"""

from __future__ import annotations

import os
import threading
import time

from simclock.core._errors import SimclockRuntimeError, SimclockTypeError
from simclock.core._names import exact_str, safe_repr
from simclock.realtime._monotonic import MonotonicClock

__all__ = ["PhcTimeSource"]

_CLOCKFD = 3


def phc_clock_id(fd: int) -> int:
    """The dynamic POSIX clock id of an open ``/dev/ptpN`` descriptor (``FD_TO_CLOCKID``)."""
    return ((~fd) << 3) | _CLOCKFD


class PhcTimeSource:
    """A PTP hardware clock read through its dynamic POSIX clock id (C-SYS-6).

    ``PhcTimeSource(path="/dev/ptp0")`` opens the device read-only and reads
    it once; a missing device, one this process may not open, or a file that
    is not a PTP clock is refused there with ``RuntimeError`` naming the path
    (nothing is left open). ``now_ns()`` (the object is also callable, so it
    plugs into ``MonotonicClock(seed, source=...)``; `clock` does that) is the
    clock's time in int ns, never lower than a value already returned
    (C-SYS-1): ``ptp4l`` may step a PHC back, and the reading is then held. A
    read that fails later (the device was removed) is also held at the last
    value; ``failures`` counts such reads. ``close()`` releases the
    descriptor; reads after it are held at the last value.
    """

    def __init__(self, path: str = "/dev/ptp0") -> None:
        if not isinstance(path, str) or not path:
            raise SimclockTypeError(
                f"path must be the path of a PTP hardware clock such as '/dev/ptp0', got "
                f"{safe_repr(path)}"
            )
        if not hasattr(time, "clock_gettime_ns"):
            raise SimclockRuntimeError(
                f"cannot read {safe_repr(path)}: this OS has no clock_gettime; PTP hardware "
                "clocks are read on Linux"
            )
        path = exact_str(path)
        self.path = path
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            raise SimclockRuntimeError(
                f"no PTP hardware clock at {safe_repr(path)}: the device does not exist; list "
                "this machine's clocks with 'ls /dev/ptp*' (a network card with hardware "
                "timestamping and its driver provide one)"
            ) from None
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise SimclockRuntimeError(
                f"cannot open the PTP hardware clock {safe_repr(path)}: {reason}; pass the "
                "path of a /dev/ptpN device this process may read"
            ) from None
        self._clock_id = phc_clock_id(fd)
        try:
            first = time.clock_gettime_ns(self._clock_id)
        except OSError as exc:
            os.close(fd)
            raise SimclockRuntimeError(
                f"{safe_repr(path)} is not a PTP hardware clock (clock_gettime on its "
                f"descriptor failed: {exc.strerror}); pass a /dev/ptpN device"
            ) from None
        self._fd: int | None = fd
        self._lock = threading.Lock()
        self._last = max(0, first)
        self.failures = 0

    def now_ns(self) -> int:
        """The PHC's time in int ns, never lower than a value already returned (C-SYS-1)."""
        try:
            value = time.clock_gettime_ns(self._clock_id) if self._fd is not None else -1
        except OSError:
            value = -1
            with self._lock:
                self.failures += 1
        with self._lock:
            # Invariant: _last is the largest value ever returned.
            if value < self._last:
                return self._last
            self._last = value
            return value

    __call__ = now_ns

    def clock(self, seed: int) -> MonotonicClock:
        """A [`MonotonicClock`][simclock.MonotonicClock] on this hardware clock."""
        return MonotonicClock(seed, source=self.now_ns)

    def close(self) -> None:
        """Release the device; idempotent. Later reads hold the last value."""
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> PhcTimeSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
