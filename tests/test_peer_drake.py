"""Drake's ``Simulator`` through ``examples/drake_adapter.py``: what its ``WHY`` entries claim.

The conformance suite runs on the adapter in ``test_conformance_selfcheck.py``; these
tests pin, with exact traces, the Drake behaviours the adapter gives as the reasons for
the clauses it does not keep (``docs/conformance.md``). They need ``pydrake`` (the
``drake`` package, in the ``dev`` extra on x86-64 Linux) and skip with one reason without it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from simclock import Bus

pytest.importorskip("pydrake", reason="Drake (pip package 'drake') is not installed")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _adapter() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_example_drake", EXAMPLES / "drake_adapter.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


drake = _adapter()


def test_C_PER_2_drake_runs_simultaneous_events_in_declaration_order() -> None:
    clock = drake.factory(0, Bus())
    trace: list[tuple[str, int]] = []
    clock.schedule_periodic(5, lambda: trace.append(("t", clock.now_ns())), 1)
    clock.schedule(6, lambda: trace.append(("k", clock.now_ns())))
    clock.advance(6)
    # simclock fires k first at 6: t was re-pushed at 1, after k was scheduled (C-PER-2).
    assert trace == [("t", 1), ("t", 6), ("k", 6)]


def test_C_PER_2_drake_periodic_times_are_float_seconds() -> None:
    clock = drake.factory(0, Bus())
    trace: list[tuple[str, int]] = []
    clock.schedule_periodic(2, lambda: trace.append(("p2", clock.now_ns())))
    clock.schedule_periodic(3, lambda: trace.append(("p3", clock.now_ns())))
    clock.advance(6)
    period_s, target_s = 2 / 1e9, 6 / 1e9
    assert 3 * period_s > target_s  # Drake's third p2 time is just past the target
    assert (trace, clock.now_ns()) == (
        [("p2", 0), ("p3", 0), ("p2", 2), ("p3", 3), ("p2", 4), ("p3", 6)],
        6,
    )
    clock.advance(0)
    assert trace[6:] == []  # 6.000000000000001e-9 s is still after now
    clock.advance(1)
    assert trace[6:] == [("p2", 6)]  # it fires, reading 6 ns, on the next positive advance


def test_C_ERR_1_drake_lets_a_handler_exception_out_of_advance() -> None:
    clock = drake.factory(0, Bus())
    trace: list[str] = []

    def boom() -> None:
        trace.append("boom")
        raise LookupError("lost")

    clock.schedule(3, boom)
    clock.schedule(3, lambda: trace.append("after"))
    with pytest.raises(LookupError, match=r"^lost$"):
        clock.advance(5)
    assert (trace, clock.now_ns()) == (["boom"], 3)  # "after", due with it, did not run
    clock.advance(2)
    assert (trace, clock.now_ns()) == (["boom", "after"], 5)


def test_C_ADV_4_drake_refuses_an_advance_from_a_handler() -> None:
    clock = drake.factory(0, Bus())
    seen: list[str] = []

    def nested() -> None:
        try:
            clock.advance(10)
        except RuntimeError as exc:
            seen.append(str(exc).split(".")[0])

    clock.schedule(1, nested)
    clock.advance(2)
    assert seen == ["Simulation time has changed since last Initialize() or AdvanceTo()"]
    assert clock.now_ns() == 2


def test_C_ADV_4_the_adapter_refuses_an_advance_while_drake_initialises() -> None:
    # Drake 1.51.1 dies of SIGSEGV on an AdvanceTo from a handler run by Initialize (an
    # event due at the simulator's start time); the adapter refuses it instead.
    clock = drake.factory(0, Bus())
    seen: list[str] = []
    trace: list[tuple[str, int]] = []

    def nested() -> None:
        try:
            clock.advance(0)
        except RuntimeError as exc:
            seen.append(str(exc))

    clock.schedule(0, nested)
    clock.schedule_periodic(1, lambda: trace.append(("p", clock.now_ns())))
    clock.schedule(1, lambda: trace.append(("o", clock.now_ns())))
    clock.advance(1)
    assert seen == [
        "advance from a callback while Drake's Simulator initialises; "
        "Drake 1.51.1 crashes on a nested AdvanceTo there"
    ]
    assert (trace, clock.now_ns()) == ([("p", 0), ("p", 1), ("o", 1)], 1)


def test_C_TIME_4_drake_time_is_float_seconds_past_2_53_ns() -> None:
    clock = drake.factory(0, Bus())
    fired: list[int] = []
    clock.schedule(2**53 + 1, lambda: fired.append(clock.now_ns()))
    clock.advance(2**53 + 1)
    assert (fired, clock.now_ns()) == ([2**53], 2**53)
