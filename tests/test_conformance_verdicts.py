"""C-CONF-1: the verdict is CONFORMING only for a full run where every mandatory test passed.

The CLI and plugin cases (PARTIAL for ``--clause`` and ``-k``) are in
``test_conformance_cli.py``; here are the subclass cases: a subclass that
overrides, removes or skips a mandatory test is INCOMPLETE and the report
names the tests; a salted-hash backend handed over as a lambda is NOT
CONFORMING, because the cross-process tests ship the lambda to a subprocess
instead of skipping (they never say "passed" without running).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from simclock_conformance import BackendReport, Outcome

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One report per subclass of ``backends/subclass_cases.py``."""
    out = tmp_path_factory.mktemp("verdicts") / "report.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT)])}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-c", os.devnull, "-p", "no:looptime_plugin", "--rootdir", str(TESTS),
         str(TESTS / "backends" / "subclass_cases.py"), "--simclock-json", str(out),
         "-k", "C_TIE_1 or C_STEP_1 or C_DET_1 or C_RNG_2"],
        capture_output=True, text=True, env=env, cwd=TESTS, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr[-2000:]
    data = json.loads(out.read_text())
    return {r["backend"].rsplit("::", 1)[-1]: r for r in data}


def test_C_CONF_1_overridden_and_removed_tests_make_the_verdict_incomplete(
    reports: dict[str, dict[str, Any]],
) -> None:
    r = reports["TestOverridesMandatoryTests"]
    assert (r["verdict"], r["conforming"], r["failed"]) == ("INCOMPLETE", False, [])
    assert r["incomplete"] == [
        "test_C_TIE_1_equal_times_fire_in_push_order (overridden: TestOverridesMandatoryTests "
        "overrides ClockConformance.test_C_TIE_1_equal_times_fire_in_push_order)",
        "test_C_STEP_1_step_is_positive_int (overridden: TestOverridesMandatoryTests "
        "overrides ClockConformance.test_C_STEP_1_step_is_positive_int)",
    ]
    statuses = {row["id"]: row["status"] for row in r["clauses"]}
    assert statuses["C-TIE-1"] == statuses["C-STEP-1"] == "incomplete"


def test_C_CONF_1_a_mandatory_clause_cannot_be_not_applicable(
    reports: dict[str, dict[str, Any]],
) -> None:
    r = reports["TestSkipsMandatoryTest"]
    assert (r["verdict"], r["failed"]) == ("INCOMPLETE", [])
    why = "(not applicable: no subprocesses on our target)"
    assert r["incomplete"] == [
        f"test_C_DET_1_same_run_across_processes_and_hash_seeds {why}",
        f"test_C_RNG_2_children_stable_across_processes {why}",
    ]
    statuses = {row["id"]: row["status"] for row in r["clauses"]}
    assert statuses["C-DET-1"] == statuses["C-RNG-2"] == "incomplete"


def test_C_CONF_1_salted_hash_lambda_is_rejected_by_the_cross_process_tests(
    reports: dict[str, dict[str, Any]],
) -> None:
    r = reports["TestSaltedHashLambda"]
    assert r["verdict"] == "NOT CONFORMING"
    assert r["failed"] == ["C-DET-1", "C-RNG-2"]
    rng2 = next(row for row in r["clauses"] if row["id"] == "C-RNG-2")
    messages = [t["message"] for t in rng2["tests"] if t["outcome"] == "failed"]
    assert messages == [
        "C-RNG-2: child streams differ in a subprocess with PYTHONHASHSEED=4242: derive them "
        "from a stable hash of the label path, not hash()"
    ]


def test_C_CONF_1_a_correct_lambda_factory_runs_the_cross_process_tests(
    reports: dict[str, dict[str, Any]],
) -> None:
    r = reports["TestCorrectLambda"]
    # Only -k's clauses ran: PARTIAL, with the cross-process tests passed, not skipped.
    assert (r["verdict"], r["failed"], r["incomplete"]) == ("PARTIAL", [], [])
    det = next(row for row in r["clauses"] if row["id"] == "C-DET-1")
    assert [(t["name"], t["outcome"]) for t in det["tests"]] == [
        ("test_C_DET_1_same_seed_same_run_in_process", "passed"),
        ("test_C_DET_1_same_run_across_processes_and_hash_seeds", "passed"),
    ]


def test_C_CONF_1_verdict_order_and_clause_statuses() -> None:
    rep = BackendReport("x:y")
    rep.expect("C-TIE-1", "test_C_TIE_1_a")
    rep.expect("C-TIE-1", "test_C_TIE_1_b")
    assert (rep.status("C-TIE-1"), rep.verdict) == ("not run", "PARTIAL")
    rep.add("C-TIE-1", Outcome("test_C_TIE_1_a", "passed"))
    assert rep.status("C-TIE-1") == "not run"  # one of its two tests did not run
    rep.add("C-TIE-1", Outcome("test_C_TIE_1_b", "passed"))
    assert rep.status("C-TIE-1") == "passed"
    rep.add("C-X-RATE", Outcome("test_C_X_RATE_a", "not applicable", "not applicable: no"))
    assert rep.status("C-X-RATE") == "not applicable"
    rep.add("C-STEP-1", Outcome("test_C_STEP_1_a", "not applicable", "not applicable: no"))
    assert (rep.status("C-STEP-1"), rep.verdict) == ("incomplete", "INCOMPLETE")
    rep.add("C-TIE-1", Outcome("test_C_TIE_2_c", "failed", "C-TIE-1: lifo", root="E in f:1"))
    assert (rep.status("C-TIE-1"), rep.verdict, rep.conforming) == (
        "failed",
        "NOT CONFORMING",
        False,
    )
