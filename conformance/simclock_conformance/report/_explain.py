"""What a failed suite test tells the user: distinct failures, programs, the root cause (§14).

:func:`explain` turns the exception of a failed test into the fields the
report shows (C-CONF-3): every distinct failure Hypothesis found (an
exception group) with its minimal program, a message starting with the
clause id that shows the inputs that matter (Hypothesis's falsifying
example), and a root cause: the exception the backend raised and where, so
one bug that breaks many clauses is reported once with the clauses it touched.
"""

from __future__ import annotations

from typing import Any

import pytest

from simclock_conformance.kit._watchdog import (
    RAISED,
    ConformanceTimeout,
    backend_frame,
    is_standard_library,
    is_suite_file,
)
from simclock_conformance.report._rootkey import FROM_CALLBACK, fixed_program

__all__ = ["PROTOCOL_NOTE", "explain"]


def _program(notes: list[str]) -> str:
    """The ``state = ...`` .. ``state.teardown()`` lines of a state machine's notes."""
    lines: list[str] = []
    inside = False
    for note in notes:
        for line in note.splitlines():
            if line.startswith("state = "):
                inside, lines = True, []
            if inside and line.strip() != "state.agree()":
                lines.append(line)
            if inside and line.strip() == "state.teardown()":
                inside = False
    return "\n".join(lines)


PROTOCOL_NOTE = "protocol program:\n"
"""How a program test's note starts: the rest is the program as protocol lines (C-WIRE-4)."""


def _protocol(notes: list[str]) -> str:
    """The protocol lines a clause program test attached to its failure, or ``""``."""
    for note in notes:
        if note.startswith(PROTOCOL_NOTE):
            return note.removeprefix(PROTOCOL_NOTE)
    return ""


def _inputs(notes: list[str]) -> str:
    """Hypothesis's ``Falsifying example: ...`` of a ``@given`` test, or ``""``."""
    text = "\n".join(notes)
    start = text.find("Falsifying example")
    if start < 0:
        return ""
    end = text.find("Explanation:", start)
    return text[start : end if end > 0 else len(text)].strip()


_OUTCOMES = (pytest.fail.Exception, pytest.skip.Exception, pytest.exit.Exception)


def _is_verdict(exc: BaseException) -> bool:
    """The suite's own verdict (an assertion, ``pytest.fail``), not something the backend did."""
    return isinstance(exc, (AssertionError, *_OUTCOMES))


def _root(exc: BaseException) -> str:
    """``Type raised in file:line in func`` for an exception coming out of the backend."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and _is_verdict(current) and id(current) not in seen:
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    if current is None or _is_verdict(current):
        return ""
    if isinstance(current, ConformanceTimeout):
        parts = str(current).split("the backend was running ", 1)
        if len(parts) < 2:
            return "the backend hung (C-CONF-2 time limit)"
        place, _, func = parts[1].rpartition(" in ")
        return f"the backend hung (C-CONF-2 time limit) in {place.rsplit(':', 1)[0]} ({func})"
    tb = current.__traceback__
    frame = None
    origin = tb
    while origin is not None and origin.tb_next is not None:
        origin = origin.tb_next
    # Raised by the suite's own callback and let out of the backend (C-ERR-1: a callback's
    # Exception is reported, never raised from advance); a BaseException must propagate.
    escaped = (
        isinstance(current, Exception)
        and origin is not None
        and is_suite_file(origin.tb_frame.f_code.co_filename)
    )
    # The innermost frame of the backend or its library; of the standard library only if none.
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not is_suite_file(filename) and (
            frame is None
            or is_standard_library(frame.f_code.co_filename)
            or not is_standard_library(filename)
        ):
            frame = tb.tb_frame
            line = tb.tb_lineno
        tb = tb.tb_next
    if frame is None:
        return ""
    where = backend_frame(frame).rsplit(":", 1)[0]
    root = f"{type(current).__qualname__} raised in {where}:{line} ({frame.f_code.co_name})"
    return root + FROM_CALLBACK if escaped else root


def _swallowed_timeout(exc: BaseException) -> ConformanceTimeout | None:
    """The timeout behind a Hypothesis error raised because the backend hung mid-program.

    A timeout while the state machine draws its next step leaves Hypothesis
    unable to replay the step, and it reports ``FlakyStrategyDefinition``
    (or another ``Flaky``), naming external state; the watchdog kept the
    timeout it raised.
    """
    from hypothesis.errors import Flaky

    if isinstance(exc, Flaky) and RAISED:
        return RAISED[-1]
    return None


def _one(exc: BaseException, clause: str) -> dict[str, str]:
    notes = [str(n) for n in getattr(exc, "__notes__", [])]
    timeout = _swallowed_timeout(exc)
    if timeout is not None:
        # Hypothesis's own message blames the strategy: the backend is what hung.
        cause = str(timeout).removeprefix(f"{clause}: ")
        return {
            "message": f"{clause}: the backend hung while the state machine was building a "
            f"program; {cause}",
            "program": "",
            "program_kind": "",
            "root": _root(timeout),
        }
    # pytest's assertion rewriting appends "assert ... == ..." and a diff: the
    # suite's own message says what differs, so that is dropped.
    text = str(exc).split("\nassert ", 1)[0].strip()
    if not _is_verdict(exc) and not isinstance(exc, ConformanceTimeout):
        text = f"{type(exc).__qualname__}: {text}" if text else type(exc).__qualname__
    if not text.startswith(clause):
        text = f"{clause}: {text}"
    inputs = _inputs(notes)
    program, kind = _program(notes), ""
    if program:
        from simclock_conformance.kit._options import SHRINK

        kind = "minimal" if SHRINK[0] else "first"
    else:
        program = _protocol(notes)
        if program:
            program, kind = fixed_program(text, program)
    return {
        "message": text + (f"\n{inputs}" if inputs else ""),
        "program": program,
        "program_kind": kind,
        "root": _root(exc),
    }


def explain(exc: BaseException, clause: str) -> dict[str, Any]:
    """The report fields of a failed test of ``clause`` whose exception is ``exc``."""
    if isinstance(exc, BaseExceptionGroup):
        parts = [_one(e, clause) for e in exc.exceptions]
        listing = "\n".join(
            f"  {i}. {p['message'].splitlines()[0]}" for i, p in enumerate(parts, 1)
        )
        message = f"{clause}: {len(parts)} distinct failures:\n{listing}"
        roots = {p["root"] for p in parts}
        root = roots.pop() if len(roots) == 1 else ""
    else:
        parts = [_one(exc, clause)]
        message, root = parts[0]["message"], parts[0]["root"]
    return {
        "message": message,
        "failures": [
            {"message": p["message"], "program": p["program"], "program_kind": p["program_kind"]}
            for p in parts
        ],
        "root": root,
        "timeout": isinstance(exc, ConformanceTimeout)
        or any(isinstance(e, ConformanceTimeout) for e in getattr(exc, "exceptions", []))
        or any(_swallowed_timeout(e) for e in [exc, *getattr(exc, "exceptions", [])]),
    }
