"""The peer adapters of ``examples/`` (SimPy, stdlib ``sched``): what their WHY entries claim.

The conformance suite runs on them in ``test_conformance_selfcheck.py``; these
tests pin, with exact traces, the behaviours their adapters give as the
reasons for the clauses they do not keep (``docs/conformance.md``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from simclock import Bus

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` (the examples are not a package)."""
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


simpy_adapter = _example("simpy_adapter")
sched_adapter = _example("sched_adapter")


def test_simpy_until_is_exclusive_and_advance_zero_fires_nothing() -> None:
    clock = simpy_adapter.factory(0, Bus())
    trace: list[tuple[str, int]] = []
    clock.schedule(0, lambda: trace.append(("at0", clock.now_ns())))
    clock.schedule(5, lambda: trace.append(("at5", clock.now_ns())))
    clock.advance(0)
    assert trace == []  # simclock fires "at0" here (C-ADV-1)
    clock.advance(5)
    assert (trace, clock.now_ns()) == ([("at0", 0)], 5)  # "at5" waits (C-ADV-1)
    clock.advance(1)
    assert trace == [("at0", 0), ("at5", 5)]
    assert type(clock.now_ns()) is int


def test_simpy_periodic_process_starts_after_later_pushes_and_cancel_stays_queued() -> None:
    clock = simpy_adapter.stepped_factory(0, Bus())
    trace: list[str] = []
    clock.schedule_periodic(5, lambda: trace.append("periodic"), 5)
    clock.schedule(5, lambda: trace.append("one-shot"))
    handle = clock.schedule(3, lambda: trace.append("cancelled"))
    handle.cancel()
    assert clock.next_event_ns() == 0  # the process's Initialize event (C-X-PEEK)
    clock.advance(4)
    # run(until=4) left its stop event queued at 4: peek sees it (C-X-PEEK).
    assert clock.next_event_ns() == 4
    clock.advance(1)
    # Pushed first, fired second (C-TIE-1); the cancelled Timeout stayed queued until 3.
    assert trace == ["one-shot", "periodic"]


def test_sched_nested_run_is_allowed() -> None:
    clock = sched_adapter.factory(0, Bus())
    trace: list[str] = []

    def nested() -> None:
        trace.append(f"nested at {clock.now_ns()}")
        clock.advance(5)  # simclock refuses this (C-ADV-4); sched runs it
        trace.append(f"back at {clock.now_ns()}")

    clock.schedule(2, nested)
    clock.schedule(4, lambda: trace.append("four"))
    clock.advance(3)
    assert trace == ["nested at 2", "four", "back at 7"]


def test_sched_cancel_after_firing_is_a_no_op_and_cancel_removes_the_event() -> None:
    clock = sched_adapter.factory(0, Bus())
    fired: list[int] = []
    first = clock.schedule(1, lambda: fired.append(1))
    second = clock.schedule(2, lambda: fired.append(2))
    clock.advance(1)
    first.cancel()  # sched.cancel would raise ValueError: the adapter ignores it
    second.cancel()
    assert clock.next_event_ns() is None  # removed from the queue at once (C-CAN-4)
    clock.advance(5)
    assert fired == [1]
