"""What every ``simclock`` command shares: how it fails, its progress bar, closed pipes.

* **Failing.** A command refuses with one line on stderr,
  ``simclock <command>: error: <message>``, and exit status 2, whatever the
  command: `fail` prints it, and `CommandError` (or any
  `SimclockError`) raised by a handler is printed the same way
  by the entry point. ``<command>`` is the sub-command's full name
  (``run``, ``sweep report``), as in argparse's own usage errors.
* **Progress.** `Progress` is the one progress bar: on stderr, on a
  terminal only, and only once the work has lasted a second of wall time.
* **Closed pipes.** `quiet_closed_stdout` ends a command whose stdout
  reader went away (``| head``) with status 141 and no traceback.

This module is host code: the progress bar reads the wall clock (never the
simulation's time), so stdout stays the command's machine-readable output.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any, Literal

from simclock.core._errors import SimclockError, SimclockValueError

__all__ = [
    "CLOSED_PIPE_STATUS",
    "CommandError",
    "Progress",
    "add_command",
    "describe_failure",
    "error_line",
    "fail",
    "quiet_closed_stdout",
]

CLOSED_PIPE_STATUS = 141
"""Exit status when stdout's reader went away (``| head``): 128 + SIGPIPE, as a shell reports
for ``cat`` or ``yes`` killed by the signal, so ``set -o pipefail`` sees the same for simclock."""

_PROGRESS_AFTER_NS = 1_000_000_000
_REDRAW_NS = 100_000_000


class CommandError(SimclockValueError):
    """A command's refusal of its arguments: printed as ``simclock <command>: error: <text>``."""


def add_command(
    subparsers: Any, name: str, handler: Callable[[argparse.Namespace], int], **kwargs: Any
) -> argparse.ArgumentParser:
    """Add the sub-command ``name`` run by ``handler(args) -> exit status``.

    ``kwargs`` go to ``add_parser`` (``help``, ``description``). The parser
    remembers its full name (``sweep run`` under ``sweep``) for error lines.
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(name, **kwargs)
    parser.set_defaults(
        func=handler, command_name=parser.prog.removeprefix("simclock "), command_parser=parser
    )
    return parser


def error_line(command: str, text: str) -> str:
    """The one refusal line, ``simclock <command>: error: <text>`` (no newline)."""
    return f"simclock {command}: error: {text}"


def fail(command: str, text: str) -> int:
    """Print `error_line` on stderr; returns 2, the exit status of every refusal."""
    print(error_line(command, text), file=sys.stderr)
    return 2


def quiet_closed_stdout() -> int:
    """After a ``BrokenPipeError`` on stdout: silence it for good; returns 141.

    Points the stdout file descriptor at ``os.devnull``, so the interpreter's
    final flush of what is still buffered cannot raise a second time (the
    recipe of the Python documentation's note on SIGPIPE).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a file (captured in-process): nothing will flush it to a pipe
    return CLOSED_PIPE_STATUS


Unit = Literal["ns", "items"]


class Progress:
    """A rich progress bar on stderr that appears once the work has lasted 1 s of wall time.

    Call it as ``progress(done, total)``. ``unit="ns"``: ``done``/``total``
    are simulated nanoseconds, shown as ``2 s / 10 s simulated``;
    ``unit="items"``: counts (seeds), shown as ``4/10``, a percentage and a
    rate ``1.5 seeds/s`` (``noun``). Both show the time remaining. Nothing is
    shown unless ``enabled`` and the console is a terminal; the bar is redrawn
    at most every 100 ms of wall time, and the last call (``done == total``)
    always draws. ``console`` and ``wall_ns`` are injectable for tests (default
    stderr and ``time.monotonic_ns``). `close` removes the bar.
    """

    def __init__(
        self,
        label: str,
        enabled: bool,
        *,
        unit: Unit = "ns",
        noun: str = "seeds",
        console: Any = None,
        wall_ns: Callable[[], int] | None = None,
    ) -> None:
        from rich.console import Console

        self._console = Console(stderr=True) if console is None else console
        self._enabled = enabled and self._console.is_terminal
        self._label = label
        self._unit = unit
        self._noun = noun
        # Host-side wall clock, for the progress display only; the work never sees it.
        self._wall = time.monotonic_ns if wall_ns is None else wall_ns  # noqa: SCK301
        self._wall_start = self._wall()
        self._last_draw = self._wall_start
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self._enabled:
            return
        now = self._wall()
        if self._bar is None:
            if now - self._wall_start < _PROGRESS_AFTER_NS:
                return
            self._start(total)
        elif now - self._last_draw < _REDRAW_NS and done < total:
            return
        self._last_draw = now
        if self._unit == "ns":
            from simclock.sim._grid import format_ns

            detail = f"{format_ns(done)} / {format_ns(total)} simulated"
        else:
            elapsed_s = (now - self._wall_start) / 1e9
            detail = f"{done / elapsed_s:.1f} {self._noun}/s" if done and elapsed_s > 0 else ""
        self._bar.update(self._task, completed=done, total=total, detail=detail)
        self._bar.refresh()

    def _start(self, total: int) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        counts = (MofNCompleteColumn(), TaskProgressColumn()) if self._unit == "items" else ()
        self._bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            *counts,
            TextColumn("{task.fields[detail]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self._console,
            transient=True,
            auto_refresh=False,
        )
        self._bar.start()
        self._task = self._bar.add_task(self._label, total=total, detail="")

    @property
    def shown(self) -> bool:
        """Whether the bar is on screen (it has appeared and is not closed)."""
        return self._bar is not None

    def close(self) -> None:
        """Remove the bar (it is transient); safe to call when it never appeared."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def describe_failure(exc: BaseException) -> str:
    """``exc`` as one bounded line: its text for a simclock error, else ``Type: text``."""
    from simclock.core._names import describe_exception, exception_message

    if isinstance(exc, SimclockError):
        return " ".join(exception_message(exc).split())[:500]
    return describe_exception(exc, limit=500)
