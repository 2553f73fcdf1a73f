"""The suite against drivers written in other languages (SPEC §18, C-WIRE-6, C-CONF-1).

The C++17 driver must be CONFORMING (wire profile 1); each broken variant is
rejected on its clause, or as a driver failure (C-WIRE-5). The JavaScript
clocks' verdicts are recorded in ``docs/conformance.md``; here they must stay
NOT CONFORMING on the clauses that table names. Compilers and node are found
by ``tests/wire_drivers.py``, which skips with one reason where they are missing.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from wire_drivers import (
    BROKEN_VARIANTS,
    SLOW_FAR_ADVANCE,
    assert_judged,
    cpp_driver,
    node_test_driver,
    sinon_driver,
)

from simclock_conformance.entry._wire_run import WIRE_CLAUSES, run_driver


def test_C_WIRE_6_the_cpp_driver_is_conforming_wire_profile_1(tmp_path: object) -> None:
    command = cpp_driver()
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", "--driver", "--", *command],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert proc.stdout.rstrip().endswith(
        f"{len(WIRE_CLAUSES)} passed, 0 failed, 0 incomplete, 0 not applicable, 0 not run: "
        "CONFORMING (wire profile 1)"
    )


@pytest.mark.parametrize("variant", sorted(BROKEN_VARIANTS))
def test_C_WIRE_6_every_broken_cpp_variant_is_rejected(variant: str) -> None:
    # A hang costs the whole deadline at every request it stops: a short one keeps it quick.
    deadline = 0.5 if variant == "BROKEN_HANG" else 3.0
    # Not shrunk: the verdict and the clause are what is checked, and every shrinking step
    # is a round trip to the driver (30 s of them for the nested advance). Shrinking over
    # the wire is checked in test_conformance_wire.py.
    report = run_driver(cpp_driver(variant), deadline_s=deadline, shrink=False)
    want = BROKEN_VARIANTS[variant]
    assert report.verdict == "NOT CONFORMING"
    if want.startswith("C-WIRE-5"):
        evidence = {
            "C-WIRE-5: exit": "the driver was killed by signal 6 while answering the request",
            "C-WIRE-5: no reply": f"the driver gave no reply within {deadline:g} s to the request",
        }[want]
        messages = [t.message for c in report.failed() for t in report.tests[c]]
        assert any(evidence in m for m in messages), messages[:3]
    else:
        assert want in report.failed(), report.table()


# What the JavaScript clocks do not keep (failed or blocked), as docs/conformance.md explains
# clause by clause.
JS_FAILED = {
    "sinon": [
        "C-TIME-2", "C-TIME-3", "C-TIME-4", "C-ADV-1", "C-ADV-3", "C-ADV-4", "C-ADV-5", "C-SCH-1",
        "C-TIE-1", "C-PER-2", "C-PER-3", "C-CAN-4", "C-ERR-1", "C-ERR-2", "C-DET-1", "C-RNG-1",
        "C-RNG-2", "C-RNG-3", "C-RNG-4", "C-WIRE-2", "SM-ORACLE", "C-WIRE-7",
    ],
    "node_test": [
        "C-TIME-1", "C-TIME-2", "C-TIME-3", "C-TIME-4", "C-ADV-1", "C-ADV-2", "C-ADV-3",
        "C-ADV-4", "C-ADV-5", "C-SCH-1", "C-TIE-1", "C-PER-1", "C-PER-2", "C-PER-3",
        "C-CAN-1", "C-CAN-2", "C-CAN-3", "C-CAN-4", "C-ERR-1", "C-ERR-2", "C-DET-1", "C-RNG-1",
        "C-RNG-2", "C-RNG-3", "C-RNG-4", "C-WIRE-2", "SM-ORACLE", "C-WIRE-7",
    ],
}  # fmt: skip


JS_BLOCKED = {
    "sinon": {
        **dict.fromkeys(["C-TIME-2", "C-TIME-3", "C-WIRE-2"], "C-SCH-1"),
        **dict.fromkeys(["C-RNG-3", "C-RNG-4"], "C-RNG-2"),
        "C-ADV-5": "C-ADV-3",
        # A delay above 2**31 - 1 becomes 1: the far entry C-CAN-4's programs keep fires
        # at once, before its time (C-ADV-1); per-3/no-drift's far advance is refused
        # before any grid point differs (C-ADV-1).
        **dict.fromkeys(["C-TIE-1", "C-PER-3", "C-CAN-4"], "C-ADV-1"),
        "C-PER-2": "C-ERR-1",
    },
    "node_test": {
        # C-ADV-4: the nested tick's program fails first where a firing before the nested
        # tick reads the target (C-ADV-2).
        **dict.fromkeys(
            [
                "C-TIME-2", "C-ADV-3", "C-ADV-4", "C-ADV-5", "C-TIE-1", "C-PER-2", "C-PER-3",
                "C-CAN-1", "C-CAN-2", "C-CAN-3",
            ],
            "C-ADV-2",
        ),
        # A delay above 2**31 - 1 becomes 1: the far entry C-CAN-4's programs keep fires
        # before its time (C-ADV-1).
        "C-CAN-4": "C-ADV-1",
        **dict.fromkeys(["C-TIME-3", "C-WIRE-2"], "C-SCH-1"),
        # One mock per process: the second clock of the RNG programs is refused (C-TIME-1).
        **dict.fromkeys(["C-RNG-3", "C-RNG-4"], "C-TIME-1"),
        "C-ERR-2": "C-ADV-1",
        "C-DET-1": "C-RNG-2",
    },
}  # fmt: skip
"""The clauses of :data:`JS_FAILED` (not kept) reported as blocked, by what."""

JS_TIMED: dict[str, dict[str, tuple[str, ...]]] = {"sinon": SLOW_FAR_ADVANCE, "node_test": {}}
"""Clauses whose status the machine's speed decides: the statuses each may take."""


@pytest.mark.parametrize("name", sorted(JS_FAILED))
def test_C_WIRE_6_javascript_clocks_are_judged_clause_by_clause(name: str) -> None:
    command = sinon_driver() if name == "sinon" else node_test_driver()
    # Shrunk, as a user runs it: sinon's first failing program can hold a far advance of
    # seconds, whose replay at the end could meet the deadline on a loaded machine.
    report = run_driver(command, deadline_s=5.0)
    assert report.verdict == "NOT CONFORMING"
    assert_judged(report, JS_FAILED[name], JS_BLOCKED[name], JS_TIMED[name])
    not_applicable = [c for c in report.clause_ids() if report.status(c) == "not applicable"]
    assert not_applicable == ["C-X-PEEK", "C-X-RATE", "C-X-STATS", "C-X-BITS"]
    # Every failure quotes the program and both replies, or the driver's evidence.
    for clause in report.failed():
        for test in report.tests[clause]:
            if test.outcome == "failed":
                assert test.message.startswith(clause)
                assert "expected" in test.message or "driver failure" in test.message
