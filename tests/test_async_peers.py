"""trio's MockClock and asyncio (looptime) through their adapters in ``examples/`` (SPEC §14).

Each adapter runs through the whole suite (``ci`` profile) and must be NOT
CONFORMING on exactly the clauses its ``WHY`` explains, keeping every other
one. trio's tie order is random, so some of its tie clauses fail on some runs
only: those must all be explained, and the ones that fail on every run
(``ALWAYS``) must fail. The table of ``docs/conformance.md`` is rendered from
the ``WHY`` entries. A few exact traces pin the behaviours the reasons name.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from simclock import Bus
from simclock_conformance import CLAUSES

pytest.importorskip("trio", reason="trio not installed")
pytest.importorskip("looptime", reason="looptime not installed")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DOC = ROOT / "docs" / "conformance.md"
START = "<!-- async-peer-table:start (checked by tests/test_async_peers.py) -->"
END = "<!-- async-peer-table:end -->"
WHAT = {
    "trio_adapter": "trio `MockClock`, `advance` = one `trio.run` (`examples/trio_adapter.py`)",
    "asyncio_adapter": (
        "asyncio on `looptime`, `advance` = `run_until_complete` (`examples/asyncio_adapter.py`), "
        "declared horizon 2**46 ns"
    ),
}
NOT_APPLICABLE = ["C-X-PEEK", "C-X-RATE"]


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


trio_adapter = _example("trio_adapter")
asyncio_adapter = _example("asyncio_adapter")


def _suite(tmp_path: Path, spec: str, *args: str) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(EXAMPLES), str(ROOT), env.get("PYTHONPATH", "")])
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", spec, "-q", *args, "--json", str(out)],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False, timeout=1500,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {row["id"]: row["status"] for row in report["clauses"]}


def render_table() -> str:
    """The async peers table of ``docs/conformance.md``, from the adapters' ``WHY``."""
    lines = ["| backend | verdict | clauses not kept | why |", "|---|---|---|---|"]
    for name, module in (("trio_adapter", trio_adapter), ("asyncio_adapter", asyncio_adapter)):
        why: dict[str, str] = module.WHY
        always = getattr(module, "ALWAYS", tuple(why))
        kept_out = [c if c in always else f"{c} (some runs)" for c in why]
        kept_out += [f"{c} (not applicable)" for c in NOT_APPLICABLE]
        if name == "asyncio_adapter" and "C-PER-3" not in why:
            kept_out.append("C-PER-3 (limited by the horizon)")
        reasons = "; ".join(f"**{c}**: {text}" for c, text in why.items())
        lines.append(f"| {WHAT[name]} | NOT CONFORMING | {', '.join(kept_out)} | {reasons} |")
    return "\n".join(lines)


def test_docs_table_is_rendered_from_the_adapters_reasons() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text.split(START, 1)[1].split(END, 1)[0].strip()
    assert table == render_table()


def test_trio_fails_exactly_its_explained_clauses_and_is_not_deterministic(
    tmp_path: Path,
) -> None:
    report = _suite(tmp_path, "trio_adapter:factory")
    statuses = _statuses(report)
    failed = set(report["failed"])
    # Its tie order is its defect: C-TIE-1 itself fails, on every run.
    assert "C-TIE-1" in failed, report["failed"]
    # A clause failing only through trio's tie order is blocked by C-TIE-1 (which fails).
    not_kept = failed | set(report["blocked"])
    assert set(trio_adapter.ALWAYS) <= not_kept <= set(trio_adapter.WHY), report["failed"]
    assert set(report["blocked"].values()) <= failed, report["blocked"]
    assert list(trio_adapter.WHY) == [c for c in CLAUSES if c in trio_adapter.WHY]
    for clause, status in statuses.items():
        if clause in NOT_APPLICABLE:
            assert status == "not applicable", clause
        elif clause not in not_kept:
            assert status == "passed", (clause, status)
    # The re-run of a failed tie program gives another order: said at the report's top.
    assert report["deterministic"] is False
    assert {e["clause"] for e in report["nondeterministic"]} <= set(trio_adapter.WHY)


ASYNCIO_BLOCKED = {
    # The nanosecond skew of float seconds (see WHY["C-TIME-3"]): entries fire 1 ns
    # before or after their time (C-ADV-1), a grid point comes off its time (C-PER-3);
    # the timer heap's order at one instant is C-TIE-1's.
    **dict.fromkeys(
        [
            "C-TIME-2",
            "C-TIME-3",
            "C-ADV-4",
            "C-ADV-5",
            "C-SCH-1",
            "C-CAN-1",
            "C-ERR-1",
            "C-ERR-2",
        ],
        "C-ADV-1",
    ),
    **dict.fromkeys(["C-PER-2", "C-CAN-2"], "C-PER-3"),
    "C-BUS-3": "C-TIE-1",
    "C-RNG-2": "C-ADV-3",
}
"""The clauses of asyncio's ``WHY`` reported as blocked, by the failed clause blocking each."""


def test_asyncio_fails_exactly_its_explained_clauses(tmp_path: Path) -> None:
    # Its far-time programs spin for ever (see WHY["C-TIME-4"]): a short limit keeps this quick.
    report = _suite(tmp_path, "asyncio_adapter:factory", "--timeout", "5")
    assert report["blocked"] == ASYNCIO_BLOCKED
    assert report["failed"] == [c for c in asyncio_adapter.WHY if c not in ASYNCIO_BLOCKED]
    statuses = _statuses(report)
    kept = {c: s for c, s in statuses.items() if c not in asyncio_adapter.WHY}
    assert kept == {
        c: "not applicable" if c in NOT_APPLICABLE else "incomplete" if c == "C-PER-3" else "passed"
        for c in kept
    }
    # Limited by the horizon: C-PER-3's tests, one of C-PER-1's and the far programs
    # (whose clauses failed anyway).
    assert [t.split(" (", 1)[0] for t in report["incomplete"]] == [
        "test_C_TIME_4_program[time-4/exact-up-to-2-64-minus-1]",
        "test_C_TIME_4_program[time-4/beyond-2-64-exact-or-refused]",
        "test_C_TIME_4_program[time-4/advance-zero-at-far-instants]",
        "test_C_TIME_4_program[time-4/advance-beyond-refused-or-exact]",
        "test_C_TIME_4_program[time-4/beyond-wrapped-ahead-of-a-far-now]",
        "test_C_TIE_1_program[tie-1/far-ties]",
        "test_C_TIE_1_program[tie-1/mixed-origins-near-2-64]",
        "test_C_PER_1_grid_is_exact_for_large_values",
        "test_C_PER_1_program[per-1/large-grid]",
        "test_C_PER_3_no_drift_over_many_firings",
        "test_C_PER_3_program[per-3/no-drift]",
    ]
    assert all("beyond the backend's declared horizon of 70368744177664 ns" in t
               for t in report["incomplete"])  # fmt: skip
    assert (report["deterministic"], report["nondeterministic"]) == (True, [])


# -- the behaviours the reasons name --------------------------------------------------------


def _trace(clock: Any, entries: list[tuple[str, int]]) -> list[tuple[str, int]]:
    trace: list[tuple[str, int]] = []
    for name, at in entries:
        clock.schedule(at, lambda n=name: trace.append((n, clock.now_ns())))
    return trace


def test_asyncio_fires_an_entry_one_ns_off_its_time() -> None:
    clock = asyncio_adapter.factory(0, Bus())
    trace = _trace(clock, [("a", 4)])
    clock.schedule_periodic(3, lambda: trace.append(("p", clock.now_ns())), 2)
    clock.advance(6)
    assert trace == [("p", 2), ("a", 4), ("p", 6)]  # the periodic's 5 came at 6
    clock.close()


def test_asyncio_heap_breaks_ties_out_of_push_order() -> None:
    clock = asyncio_adapter.factory(0, Bus())
    trace = _trace(clock, [(str(i), 10) for i in range(5)])
    clock.advance(10)
    assert [n for n, _ in trace] != ["0", "1", "2", "3", "4"]
    assert sorted(trace) == [(str(i), 10) for i in range(5)]
    clock.close()


def test_asyncio_keeps_cancelled_timers_until_the_loop_runs() -> None:
    clock = asyncio_adapter.factory(0, Bus())
    for _ in range(500):
        clock.schedule(5, lambda: None).cancel()
    assert len(clock._loop._scheduled) == 500
    clock.advance(1)
    assert len(clock._loop._scheduled) == 0
    clock.close()


def test_trio_float_seconds_merge_neighbouring_nanoseconds_past_2_53() -> None:
    clock = trio_adapter.factory(0, Bus())
    far = 2**53
    clock.advance(far)
    trace = _trace(clock, [("a", far + 1)])
    clock.advance(1)
    assert clock.now_ns() != far + 1
    assert len(trace) == 1 and trace[0][1] != far + 1


def test_trio_base_exception_escapes_alone_not_in_a_group() -> None:
    clock = trio_adapter.factory(0, Bus())

    class Halt(BaseException):
        pass

    def halt() -> None:
        raise Halt("stop")

    clock.schedule(3, halt)
    trace = _trace(clock, [("later", 5)])
    with pytest.raises(Halt, match=r"^stop$"):
        clock.advance(10)
    assert (clock.now_ns(), trace) == (3, [])
    clock.advance(2)
    assert trace == [("later", 5)]
