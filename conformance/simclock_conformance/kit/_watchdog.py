"""A per-test time limit without extra dependencies (C-CONF-2).

``with watchdog(seconds, clause):`` arms two timers: ``seconds`` of this
process's CPU time (``ITIMER_PROF``: a busy machine does not make a correct
backend time out) and, as a backstop for a backend that blocks without
computing (a sleep, a lock), ten times as much wall-clock time, at least a
minute more (``ITIMER_REAL``: on a machine shared by many processes a busy
test gets a small share of a core). When one expires, :class:`ConformanceTimeout` is raised in
the main thread wherever the backend is running, so a hung backend fails the
clause it hung in and the run goes on to its report; the message names the
nearest frame of the backend or its library (not the standard library's, nor
the suite's). Every test gets the same limit: one that hung never shortens
another's. The timeout is a
``BaseException`` (not an ``Exception``), so a backend that catches callback
``Exception``\\ s (C-ERR-1) lets it through; it fires again every second
until the test ends, so one swallowed timeout is not enough to hang the run.
A repeat that finds the suite or Hypothesis at work (handling the first
one) names where the first one found the backend.
Where these timers do not exist (Windows), or off the main thread, there is
no limit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import site
import sysconfig
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

__all__ = [
    "RAISED",
    "ConformanceTimeout",
    "backend_frame",
    "in_backend",
    "is_standard_library",
    "is_suite_file",
    "timeout_where",
    "watchdog",
]

# The whole package, every folder of it (this module is in kit/).
_SUITE_DIR = str(Path(__file__).resolve().parents[1])
_FOREIGN = ("/_pytest/", "/pluggy/", "/hypothesis/", "/contextlib.py", "/threading.py")


class ConformanceTimeout(BaseException):
    """A suite test exceeded its time limit (C-CONF-2).

    ``limit_s`` is the limit that expired (the CPU time, or the wall-clock
    backstop): what the test cost the run's hang budget.
    """

    limit_s: float = 0.0
    where: str = ""
    """``file:line in function`` the message names (`backend_frame`), or ``""``."""


RAISED: list[ConformanceTimeout] = []
"""The timeouts raised in the current (or last) test: a timeout Hypothesis swallows while
it builds a program (it reports ``FlakyStrategyDefinition`` instead) is still named."""


def is_suite_file(filename: str) -> bool:
    """True for frames of the suite, pytest, Hypothesis: not the backend's code."""
    return filename.startswith(_SUITE_DIR) or any(part in filename for part in _FOREIGN)


def _dirs(*paths: str | None) -> tuple[str, ...]:
    out = []
    for path in paths:
        if path:
            resolved = str(Path(path).resolve())
            out.append(resolved.rstrip(os.sep) + os.sep)
    return tuple(out)


_STDLIB = _dirs(*(sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib")))
# Installed packages may live under the standard library's folder (a Python
# installed without a venv): those are libraries, not the standard library.
_SITE = _dirs(
    *(sysconfig.get_paths().get(k) for k in ("purelib", "platlib")),
    *site.getsitepackages(),
    site.getusersitepackages(),
)


def is_standard_library(filename: str) -> bool:
    """True for a frame of the standard library (``selectors.py``, ``<frozen ...>``)."""
    if filename.startswith("<"):
        return True
    path = str(Path(filename).resolve())
    return path.startswith(_STDLIB) and not path.startswith(_SITE)


def backend_frame(frame: FrameType | None) -> str:
    """``file:line in function`` of the frame of the backend (or its library) nearest ``frame``.

    Walks outwards from ``frame`` past the standard library (a backend waiting
    in ``selectors.py`` is reported where it called it) and the suite; when
    every frame is one of those, the innermost one outside the suite, or ``""``.
    """
    fallback = ""
    while frame is not None:
        code = frame.f_code
        if not is_suite_file(code.co_filename):
            where = f"{_short(code.co_filename)}:{frame.f_lineno} in {code.co_name}"
            if not is_standard_library(code.co_filename):
                return where
            fallback = fallback or where
        frame = frame.f_back
    return fallback


def in_backend(frame: FrameType | None) -> bool:
    """True when a frame from ``frame`` outwards is the backend's (or its library's).

    False when every one is the suite's, pytest's, Hypothesis's or the
    standard library's: a time limit that expires there found the suite at work.
    """
    while frame is not None:
        name = frame.f_code.co_filename
        if not is_suite_file(name) and not is_standard_library(name):
            return True
        frame = frame.f_back
    return False


def timeout_where(frame: FrameType | None, earlier: list[ConformanceTimeout]) -> str:
    """Where a timeout of this test says the backend was running (see `watchdog`).

    `backend_frame` of ``frame``; but when the limit expires again outside the
    backend (the suite or Hypothesis handling an ``earlier`` timeout of the
    same test, or drawing its next step), the place the first one found.
    """
    if earlier and earlier[0].where and not in_backend(frame):
        return earlier[0].where
    return backend_frame(frame)


def _short(filename: str) -> str:
    try:
        return str(Path(filename).resolve().relative_to(Path.cwd()))
    except ValueError:
        return filename


@contextlib.contextmanager
def watchdog(seconds: float, clause: str) -> Iterator[None]:
    """Raise :class:`ConformanceTimeout` in this thread after ``seconds`` (0: no limit)."""
    RAISED.clear()
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
        where = timeout_where(frame, RAISED)
        spent = f"{seconds:g} s of CPU time" if signum == signal.SIGPROF else f"{wall:g} s"
        timeout = ConformanceTimeout(
            f"{clause}: timed out after {spent} (C-CONF-2 time limit per test)"
            + (f"; the backend was running {where}" if where else "")
        )
        timeout.limit_s = seconds if signum == signal.SIGPROF else wall
        timeout.where = where
        RAISED.append(timeout)
        raise timeout

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
