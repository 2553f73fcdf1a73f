"""The Java driver kit (SPEC §18): its JUnit tests, its example clock and the Reactor peer.

The kit (``conformance/drivers/java``) is built once by ``tests/kit_java.py`` into the
drivers' cache. The example heap clock must be CONFORMING (wire profile 1) and replay every
golden vector; Reactor's ``VirtualTimeScheduler`` (reactor-test 3.8.8, pinned in the kit's
POM) must stay NOT CONFORMING on exactly the clauses the kit's README explains.
"""

from __future__ import annotations

import subprocess
import sys

from kit_java import JAVA_DIR, heap_driver, junit_results, minimal_driver, reactor_driver

from simclock_conformance.entry._vectors import load, replay
from simclock_conformance.entry._wire_run import WIRE_CLAUSES, run_driver
from simclock_conformance.protocol._wire_core import Session

JUNIT_CLASSES = {
    "dev.simclock.driver.DriverTest": 7,
    "dev.simclock.driver.StreamsTest": 64,
    "dev.simclock.driver.WireTest": 29,
    "dev.simclock.example.CarelessClockTest": 1,
    "dev.simclock.example.HeapClockTest": 9,
    "dev.simclock.reactor.VirtualTimeSchedulerTest": 8,
}


def test_C_X_BITS_the_kits_junit_tests_pass() -> None:
    results = junit_results()
    assert {r.name: r.tests for r in results} == JUNIT_CLASSES
    problems = [f"{r.name}.{p}" for r in results for p in r.problems]
    assert problems == []
    assert [r.name for r in results if r.failures or r.errors or r.skipped] == []


def _suite_verdict(driver: list[str]) -> str:
    """The last line of the suite's report on ``driver``, which must have exited 0."""
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", "--driver", "--", *driver],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:]
    return proc.stdout.rstrip().splitlines()[-1]


def test_C_WIRE_6_the_java_heap_clock_is_conforming_wire_profile_1() -> None:
    assert _suite_verdict(heap_driver()) == (
        f"{len(WIRE_CLAUSES)} passed, 0 failed, 0 incomplete, 0 not applicable, 0 not run: "
        "CONFORMING (wire profile 1)"
    )


def test_C_WIRE_6_the_readmes_minimal_java_clock_is_conforming_without_options() -> None:
    source = JAVA_DIR / "example" / "src" / "main" / "java" / "dev" / "simclock" / "example"
    code = (source / "MinimalClock.java").read_text(encoding="utf-8")
    readme = (JAVA_DIR / "README.md").read_text(encoding="utf-8")
    assert f"```java\n{code}```\n" in readme  # the README shows the file as it is
    assert _suite_verdict(minimal_driver()) == (
        f"{len(WIRE_CLAUSES) - 3} passed, 0 failed, 0 incomplete, 3 not applicable, 0 not run: "
        "CONFORMING (wire profile 1)"
    )


def test_C_WIRE_7_the_java_heap_clock_replays_every_golden_vector() -> None:
    session = Session(heap_driver(), 10.0)
    session.start()
    try:
        lines = load()
        passed, failed = replay(session, lines)
    finally:
        session.close()
    assert failed == {}
    assert len(passed) == len(lines)


# What Reactor's VirtualTimeScheduler does not keep (failed or blocked), as the kit's README
# explains clause by clause.
REACTOR_FAILED = [
    "C-TIME-2", "C-TIME-3", "C-TIME-4", "C-ADV-1", "C-ADV-4", "C-ADV-5", "C-SCH-1", "C-TIE-1",
    "C-PER-1", "C-PER-2", "C-CAN-2", "C-ERR-1", "C-ERR-2", "C-DET-1", "C-RNG-1", "C-RNG-2",
    "C-RNG-3", "C-RNG-4", "C-WIRE-2", "SM-ORACLE", "C-WIRE-7",
]  # fmt: skip


REACTOR_BLOCKED = {
    **dict.fromkeys(["C-ADV-5", "C-PER-2", "C-CAN-2"], "C-PER-1"),
    **dict.fromkeys(["C-TIME-2", "C-TIME-3", "C-WIRE-2"], "C-SCH-1"),
    # C-DET-1: its program draws from a stream, which Reactor has none of (C-RNG-2's
    # refusal comes before any difference between two runs).
    **dict.fromkeys(["C-DET-1", "C-RNG-3", "C-RNG-4"], "C-RNG-2"),
    "C-TIE-1": "C-TIME-4",
}
"""The clauses of :data:`REACTOR_FAILED` (not kept) reported as blocked, by what."""


def test_C_WIRE_6_reactor_virtual_time_scheduler_is_judged_clause_by_clause() -> None:
    # Two requests hang Reactor (a zero period, a grid wrapping past 2**63-1): a shorter deadline.
    report = run_driver(reactor_driver(), deadline_s=5.0, shrink=False)
    assert report.verdict == "NOT CONFORMING"
    assert report.blocked() == REACTOR_BLOCKED
    assert report.failed() == [c for c in REACTOR_FAILED if c not in REACTOR_BLOCKED]
    not_applicable = [c for c in report.clause_ids() if report.status(c) == "not applicable"]
    assert not_applicable == ["C-X-PEEK", "C-X-RATE", "C-X-STATS", "C-X-BITS"]
    for clause in report.failed():
        for test in report.tests[clause]:
            if test.outcome == "failed":
                assert test.message.startswith(clause)
                assert "expected" in test.message or "driver failure" in test.message
