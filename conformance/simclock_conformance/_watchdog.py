"""A per-test time limit without extra dependencies (C-CONF-2).

``with watchdog(seconds, clause):`` arms two timers: ``seconds`` of this
process's CPU time (``ITIMER_PROF``: a busy machine does not make a correct
backend time out) and, as a backstop for a backend that blocks without
computing (a sleep, a lock), ten times as much wall-clock time, at least a
minute more (``ITIMER_REAL``: on a machine shared by many processes a busy
test gets a small share of a core). When one expires, :class:`ConformanceTimeout` is raised in
the main thread wherever the backend is running, so a hung backend fails the
clause it hung in and the run goes on to its report. The timeout is a
``BaseException`` (not an ``Exception``), so a backend that catches callback
``Exception``\\ s (C-ERR-1) lets it through; it fires again every second
until the test ends, so one swallowed timeout is not enough to hang the run.
Where these timers do not exist (Windows), or off the main thread, there is
no limit.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

__all__ = ["ConformanceTimeout", "backend_frame", "watchdog"]

_SUITE_DIR = str(Path(__file__).resolve().parent)
_FOREIGN = ("/_pytest/", "/pluggy/", "/hypothesis/", "/contextlib.py", "/threading.py")


class ConformanceTimeout(BaseException):
    """A suite test exceeded its time limit (C-CONF-2)."""


def is_suite_file(filename: str) -> bool:
    """True for frames of the suite, pytest, Hypothesis: not the backend's code."""
    return filename.startswith(_SUITE_DIR) or any(part in filename for part in _FOREIGN)


def backend_frame(frame: FrameType | None) -> str:
    """``file:line in function`` of the innermost frame that is not the suite's, or ``""``."""
    while frame is not None:
        code = frame.f_code
        if not is_suite_file(code.co_filename):
            return f"{_short(code.co_filename)}:{frame.f_lineno} in {code.co_name}"
        frame = frame.f_back
    return ""


def _short(filename: str) -> str:
    try:
        return str(Path(filename).resolve().relative_to(Path.cwd()))
    except ValueError:
        return filename


@contextlib.contextmanager
def watchdog(seconds: float, clause: str) -> Iterator[None]:
    """Raise :class:`ConformanceTimeout` in this thread after ``seconds`` (0: no limit)."""
    usable = (
        seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    wall = max(10 * seconds, seconds + 60)

    def expire(signum: int, frame: FrameType | None) -> None:
        where = backend_frame(frame)
        spent = f"{seconds:g} s of CPU time" if signum == signal.SIGPROF else f"{wall:g} s"
        raise ConformanceTimeout(
            f"{clause}: timed out after {spent} (C-CONF-2 time limit per test)"
            + (f"; the backend was running {where}" if where else "")
        )

    previous = {sig: signal.signal(sig, expire) for sig in (signal.SIGPROF, signal.SIGALRM)}
    signal.setitimer(signal.ITIMER_PROF, seconds, 1.0)
    signal.setitimer(signal.ITIMER_REAL, wall, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
