"""The error clauses of the suite: C-ERR (failures reported, a BaseException propagates).

A mixin of :class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

from functools import partial

import pytest

from simclock import callback_name
from simclock_conformance.kit._args import quote
from simclock_conformance.kit._harness import Rig
from simclock_conformance.kit._reach import advance_to
from simclock_conformance.kit._suite_support import _escaped, _expect, _expect_trace, _refused

__all__ = ["ErrorClauses"]


class _Halt(BaseException):
    """A BaseException that is not an Exception, owned by the suite (C-ERR-2)."""


class _Hostile(Exception):  # noqa: N818  (its name is what the event reports)
    """An exception whose ``str()`` raises (C-ERR-1: nothing may escape the report)."""

    def __str__(self) -> str:
        raise RuntimeError("__str__ of a hostile exception")


def _raise_hostile() -> None:
    raise _Hostile


def _raise_value(message: str) -> None:
    raise ValueError(message)


class _CallableObject:
    """A callback that is an object, not a function (``callback_name`` of its type)."""

    def __call__(self) -> None:
        raise LookupError("object")


class ErrorClauses:
    """C-ERR-1..2: what a raising callback does to the clock, the bus and the caller."""

    # -- C-ERR ---------------------------------------------------------------

    def test_C_ERR_1_failure_reported_on_bus_and_others_fire(self, rig: Rig) -> None:
        """A raising callback is reported on the bus and the others fire.

        In process only: the event's details (the callback's qualified name, the error
        type) and the bus messages' stamps; a wire failure carries the entry and the
        message.
        """
        clock = rig.clock

        def failing_once() -> None:
            raise ValueError(f"bad reading at {clock.now_ns()}")

        def failing_periodic() -> None:
            rig.trace.append(("periodic", clock.now_ns()))
            raise LookupError("lost")

        clock.schedule(3, failing_once)
        clock.schedule(3, rig.rec("after"))
        clock.schedule_periodic(4, failing_periodic)
        clock.schedule(5, rig.rec("later"))
        try:
            clock.advance(9)
        except Exception as exc:
            pytest.fail(
                f"C-ERR-1: advance(9) raised {_escaped(exc)} from a callback; expected the "
                "failure reported as an event and advance to go on"
            )
        _expect_trace(
            rig.trace,
            [("periodic", 0), ("after", 3), ("periodic", 4), ("later", 5), ("periodic", 8)],
            "C-ERR-1",
            "firings around the raising callbacks",
        )
        got = [
            (
                e.at_ns,
                e.details.get("callback"),
                e.details.get("error_type"),
                e.details.get("error_message"),
            )
            for e in rig.failures()
        ]
        periodic_name = failing_periodic.__qualname__
        expected = [
            (0, periodic_name, "LookupError", "lost"),
            (3, failing_once.__qualname__, "ValueError", "bad reading at 3"),
            (4, periodic_name, "LookupError", "lost"),
            (8, periodic_name, "LookupError", "lost"),
        ]
        _expect_trace(
            got, expected, "C-ERR-1", "failure events (at_ns, callback, error_type, error_message)"
        )
        stamps = [m.stamp_ns for m in rig.messages]
        _expect_trace(stamps, [0, 3, 4, 8], "C-ERR-1", "stamps of the events (their at_ns)")
        _expect(clock.now_ns(), 9, "C-ERR-1", "now_ns() after advance(9)")

    def test_C_ERR_1_exact_details_even_for_hostile_exceptions(self, rig: Rig) -> None:
        """Failure details are exact even for hostile exceptions and callable objects.

        In process only: an exception whose ``__str__`` raises, a ``functools.partial``
        and a callable object are Python objects.
        """
        clock = rig.clock
        obj = _CallableObject()
        clock.schedule(1, _raise_hostile)
        clock.schedule(1, partial(_raise_value, "from a partial"))
        clock.schedule(2, obj)
        clock.schedule(2, rig.rec("still-fires"))
        try:
            clock.advance(3)
        except BaseException as exc:
            pytest.fail(
                f"C-ERR-1: advance(3) raised {type(exc).__name__} while reporting a callback "
                "whose exception's __str__ raises; expected no exception object to escape "
                "this path"
            )
        _expect_trace(rig.trace, [("still-fires", 2)], "C-ERR-1", "firings of advance(3)")
        events = rig.failures()
        keys = [sorted(e.details) for e in events]
        _expect_trace(
            keys,
            [["callback", "error_message", "error_type"]] * 3,
            "C-ERR-1",
            "keys of each failure event's details",
        )
        got = [(e.at_ns, e.details["callback"], e.details["error_type"]) for e in events]
        expected = [
            (1, callback_name(_raise_hostile), _Hostile.__qualname__),
            (1, callback_name(partial(_raise_value, "")), "ValueError"),
            (2, callback_name(obj), "LookupError"),
        ]
        _expect_trace(got, expected, "C-ERR-1", "failure events (at_ns, callback, error_type)")
        hostile = events[0].details["error_message"]
        assert isinstance(hostile, str) and _Hostile.__name__ in hostile, (
            f"C-ERR-1: error_message for an exception whose __str__ raises is {quote(hostile)}; "
            f"expected a fixed placeholder naming the type {_Hostile.__name__!r}"
        )
        messages = [e.details["error_message"] for e in events[1:]]
        _expect_trace(messages, ["from a partial", "object"], "C-ERR-1", "error_message values")
        stamps = [m.stamp_ns for m in rig.messages]
        _expect_trace(stamps, [1, 1, 2], "C-ERR-1", "stamps of the events (their at_ns)")

    def test_C_ERR_2_keyboard_interrupt_propagates(self, rig: Rig) -> None:
        """A ``KeyboardInterrupt`` from a callback propagates out of ``advance``.

        In process only: ``KeyboardInterrupt`` itself; the wire's ``halt`` is the
        suite's own BaseException.
        """
        clock = rig.clock

        def interrupt() -> None:
            raise KeyboardInterrupt

        clock.schedule(4, interrupt)
        clock.schedule(6, rig.rec("after"))
        with _refused(
            KeyboardInterrupt, "C-ERR-2", "advance(8) over a callback raising KeyboardInterrupt"
        ):
            clock.advance(8)
        _expect(clock.now_ns(), 4, "C-ERR-2", "now_ns() after the KeyboardInterrupt at 4")
        advance_to(clock, 8, "C-ERR-2")
        _expect_trace(rig.trace, [("after", 6)], "C-ERR-2", "firings after advancing to 8")
