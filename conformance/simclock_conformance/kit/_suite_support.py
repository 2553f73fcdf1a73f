"""Shared helpers of the suite's clause modules (``_suite_*.py``): settings, refusals, constants.

No tests here: the clause families are mixins in their own modules, composed
by :class:`~simclock_conformance.ClockConformance` in ``_suite_clock``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, Phase, settings

from simclock_conformance.kit._args import check_bool, check_profile, exception_text, quote
from simclock_conformance.kit._harness import not_applicable
from simclock_conformance.kit._options import SHRINK
from simclock_conformance.kit._watchdog import ConformanceTimeout

__all__ = ["MAX_NS", "hypothesis_settings", "trace_difference"]

MAX_NS = 2**64 - 1
"""C-TIME-4: every time up to here is exact."""


def hypothesis_settings(profile: str, *, stateful: bool = False) -> settings:
    """Settings of the suite's own Hypothesis runs for ``profile`` (``ci`` or ``thorough``).

    ``ci`` is derandomised and small enough for the whole suite to run in well
    under a minute on 2 cores; ``thorough`` runs many more examples and steps.
    No example database is written: the suite runs inside other projects.
    Under ``--simclock-no-shrink`` (:data:`SHRINK` false) a failure is reported
    with the first failing example, not its minimal form: the same verdict,
    without the search for a smaller program (most of a broken backend's run).
    """
    profile = check_profile(profile)  # README "Bad input": no hostile __eq__/__repr__ runs
    stateful = check_bool(stateful, "stateful")
    ci = profile == "ci"
    examples = (40 if ci else 1000) if stateful else (30 if ci else 300)
    return settings(
        max_examples=examples,
        stateful_step_count=25 if ci else 60,
        derandomize=ci,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        phases=list(Phase) if SHRINK[0] else [p for p in Phase if p != Phase.shrink],
    )


def _np_int(dtype: Any, value: int) -> int:
    """A numpy integer typed as ``int``: time-ints accept numpy integers (SPEC §0)."""
    return cast(int, dtype(value))


@contextlib.contextmanager
def _refused(expected: type[BaseException], clause: str, what: str) -> Iterator[None]:
    """Like ``pytest.raises`` but a failure message that starts with the clause id."""
    try:
        yield
    except expected:
        return
    except ConformanceTimeout:
        raise  # the time limit (C-CONF-2), not the backend's answer
    except BaseException as other:
        # What escaped, against what was expected (C-ERR-2): a group is listed by member.
        pytest.fail(
            f"{clause}: {what} raised {_escaped(other)}; expected {expected.__name__}",
            pytrace=True,
        )
    pytest.fail(f"{clause}: {what} raised nothing (it was accepted); expected {expected.__name__}")


def _escaped(exc: BaseException) -> str:
    """``Type: message``, and for an exception group its members, in order."""
    text = exception_text(exc)
    if isinstance(exc, BaseExceptionGroup):
        members = ", ".join(_escaped(e) for e in exc.exceptions)
        return f"{type(exc).__name__} of [{members}]"
    return text


def _boom() -> None:
    raise ValueError("boom")


def _optional_method(clock: object, method: str) -> Any:
    """The backend's optional ``method``, or skip the test as not applicable (SPEC §14)."""
    reason = not_applicable(clock, method)
    if reason:
        pytest.skip(reason)
    return getattr(clock, method)


_SHOWN_CHARS = 1500
"""A trace longer than this (as text) is shown by its first items and its length."""


def _shown(items: Sequence[object]) -> str:
    """``items`` as a list: whole when short, else its first items and how many there are."""
    text = "[" + ", ".join(quote(item) for item in items) + "]"
    if len(text) <= _SHOWN_CHARS:
        return text
    head: list[str] = []
    size = 0
    for item in items:
        part = quote(item)
        if size + len(part) > _SHOWN_CHARS // 2:
            break
        head.append(part)
        size += len(part) + 2
    return "[" + ", ".join(head) + f", ...] ({len(items)} items)"


def trace_difference(expected: Sequence[object], observed: Sequence[object]) -> str:
    """``expected [...], observed [...]; first difference at item i: expected X, observed Y``.

    Items are counted from 0. A trace that stops early shows ``observed
    nothing`` at the first missing item; one that goes on, ``expected nothing``.
    """
    expected, observed = list(expected), list(observed)
    at = next(
        (i for i, (e, o) in enumerate(zip(expected, observed, strict=False)) if e != o),
        min(len(expected), len(observed)),
    )
    want = quote(expected[at]) if at < len(expected) else "nothing"
    got = quote(observed[at]) if at < len(observed) else "nothing"
    return (
        f"expected {_shown(expected)}, observed {_shown(observed)}; "
        f"first difference at item {at}: expected {want}, observed {got}"
    )


def _expect_trace(
    observed: Sequence[object], expected: Sequence[object], clause: str, what: str
) -> None:
    """Fail ``clause`` unless the two lists are equal, saying both and where they part."""
    if list(observed) != list(expected):
        raise AssertionError(f"{clause}: {what}: {trace_difference(expected, observed)}")


def _expect(observed: object, expected: object, clause: str, what: str) -> None:
    """Fail ``clause`` unless ``observed == expected``: ``what: expected X, observed Y``."""
    if not observed == expected:
        raise AssertionError(
            f"{clause}: {what}: expected {quote(expected)}, observed {quote(observed)}"
        )


def difference(expected: object, observed: object) -> str:
    """Where two results part: the first differing key of a dict, item of a list, or both values."""
    if isinstance(expected, dict) and isinstance(observed, dict):
        for key in [*expected, *(k for k in observed if k not in expected)]:
            if key not in observed:
                return f"[{quote(key)}]: expected {quote(expected[key])}, observed nothing"
            if key not in expected:
                return f"[{quote(key)}]: expected nothing, observed {quote(observed[key])}"
            if expected[key] != observed[key]:
                return f"[{quote(key)}]: {difference(expected[key], observed[key])}"
    if isinstance(expected, list | tuple) and isinstance(observed, list | tuple):
        return trace_difference(expected, observed)
    return f"expected {quote(expected)}, observed {quote(observed)}"


def _expect_same(observed: object, expected: object, clause: str, what: str) -> None:
    """Fail ``clause`` unless the two (nested) results are equal, saying where they part."""
    if not observed == expected:
        raise AssertionError(f"{clause}: {what}: {difference(expected, observed)}")
