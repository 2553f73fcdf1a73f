"""The determinism re-run (C-DET-1, C-CONF-3): a failed test runs again; differences head it.

``backends.shuffled`` breaks ties in an order drawn per clock, so its failed
C-TIE-1 tests fail differently on their second run; ``backends.broken:lifo_ties``
fails them the same way twice and is not called non-deterministic.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from simclock_conformance.report import _rerun
from simclock_conformance.report._rerun import describe, outcome_of, same_outcome

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
TIE_TESTS = [
    "test_C_TIE_1_equal_times_fire_in_push_order",
    "test_C_TIE_1_far_ties_reached_by_long_advances",
    "test_C_TIE_1_program[tie-1/push-order]",
    "test_C_TIE_1_program[tie-1/far-ties]",
    "test_C_TIE_1_program[tie-1/mixed-origins]",
    "test_C_TIE_1_program[tie-1/mixed-origins-near-2-64]",
]


def _cli(tmp_path: Path, spec: str) -> tuple[str, dict[str, Any]]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", spec, "-q", "--clause", "C-TIE-1",
         "--clause", "C-STEP-1", "--json", str(out)],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout, json.loads(out.read_text())


def _failed_messages(report: dict[str, Any], clause: str) -> dict[str, str]:
    (row,) = [r for r in report["clauses"] if r["id"] == clause]
    return {t["name"]: t["message"] for t in row["tests"] if t["outcome"] == "failed"}


def test_C_DET_1_a_backend_whose_ties_change_per_run_is_reported_not_deterministic(
    tmp_path: Path,
) -> None:
    stdout, report = _cli(tmp_path, "backends.shuffled:factory")
    # Reported once, and everywhere alike: C-DET-1 fails in the table and the JSON.
    assert report["failed"] == ["C-TIE-1", "C-DET-1"]
    assert report["deterministic"] is False
    assert re.search(r"^C-DET-1 +failed ", stdout, re.M)
    first = _failed_messages(report, "C-TIE-1")
    assert [e["test"] for e in report["nondeterministic"]] == TIE_TESTS
    for entry in report["nondeterministic"]:
        name = entry["test"]
        assert entry["clause"] == "C-TIE-1"
        # The clause keeps the first run's failure; the second run failed otherwise.
        assert entry["first"] == f"failed (call): {first[name]}"
        if "[" in name:  # a clause program: the request and both replies
            case = name.split("[", 1)[1].rstrip("]")
            fired = f"case {case}, request "
        else:
            fired = "at equal times" if "push_order" in name else "of the far ties"
            fired = f"firings {fired} (push order): expected "
        assert entry["second"].startswith(f"failed (call): C-TIE-1: {fired}")
        assert entry["second"] != entry["first"]
    table = stdout[stdout.index("simclock conformance: backends.shuffled:factory") :]
    lines = table.splitlines()
    assert lines[:4] == [
        "simclock conformance: backends.shuffled:factory (profile ci)",
        "",
        f"NOT DETERMINISTIC: {len(TIE_TESTS)} failed tests gave a different outcome when run "
        "again on a new clock with the same seed and calls (C-DET-1):",
        f"  C-TIE-1 {TIE_TESTS[0]}:",
    ]
    entry = report["nondeterministic"][0]
    assert lines[4:6] == [f"    first run: {entry['first']}", f"    second run: {entry['second']}"]


def test_C_DET_1_a_deterministic_failure_is_not_called_non_deterministic(tmp_path: Path) -> None:
    stdout, report = _cli(tmp_path, "backends.broken:lifo_ties")
    assert report["failed"] == ["C-TIE-1"]
    assert (report["deterministic"], report["nondeterministic"]) == (True, [])
    assert "NOT DETERMINISTIC" not in stdout
    assert re.search(r"^C-DET-1 +(passed|not run) ", stdout, re.M)


def test_outcomes_compare_equal_but_for_object_addresses() -> None:
    assert same_outcome("failed (call): <a at 0x7f01aa>", "failed (call): <a at 0x5512bb>")
    # The state machine's clock ids come from a counter: a second run names them anew.
    assert same_outcome(
        'failed (call): {"op":"advance","clock":"sm74"} on sm74t1',
        'failed (call): {"op":"advance","clock":"sm148"} on sm148t1',
    )
    assert not same_outcome("failed (call): sm74 at 5", "failed (call): sm148 at 6")
    assert not same_outcome("failed (call): [1, 2]", "failed (call): [2, 1]")
    assert not same_outcome("failed (call): m", "passed")


def test_describe_and_outcome_of() -> None:
    class _Report:
        def __init__(self, when: str, outcome: str, message: str) -> None:
            self.when, self.outcome = when, outcome
            self.failed, self.skipped = outcome == "failed", outcome == "skipped"
            self.user_properties = [("simclock", {"message": message})]

    run: list[Any] = [_Report("setup", "passed", ""), _Report("call", "failed", "C-X: <a>")]
    one = outcome_of(run)
    assert one == "failed (call): C-X: <a>"
    passed: list[Any] = [_Report("call", "passed", "")]
    assert outcome_of(passed) == "passed"
    assert describe([]) == []
    assert describe(
        [{"clause": "C-X", "test": "t", "first": "passed", "second": "failed (call): m\nn"}]
    ) == [
        "NOT DETERMINISTIC: 1 failed test gave a different outcome when run again on a new "
        "clock with the same seed and calls (C-DET-1):",
        "  C-X t:",
        "    first run: passed",
        "    second run: failed (call): m",
        "      n",
        "",
    ]


def test_C_DET_1_a_failed_test_costing_over_the_limit_is_not_run_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    failed = SimpleNamespace(
        failed=True, skipped=False, when="call", user_properties=[], longrepr=None, longreprtext="x"
    )

    def protocol(item: object, nextitem: object, log: bool) -> list[object]:
        calls.append("run")
        return [failed]

    ihook = SimpleNamespace(
        pytest_runtest_logstart=lambda **_: None,
        pytest_runtest_logreport=lambda **_: None,
        pytest_runtest_logfinish=lambda **_: None,
    )
    item = SimpleNamespace(nodeid="suite::test_SM_ORACLE_x", location=("", 0, ""), ihook=ihook)
    monkeypatch.setattr(_rerun, "runtestprotocol", protocol)
    rerun = _rerun.Rerun(lambda _: True, lambda *_: None)
    clock = iter([0.0, _rerun.RERUN_LIMIT_S + 0.5, 10.0, 10.5, 10.7])
    monkeypatch.setattr("simclock_conformance.report._rerun.time.process_time", lambda: next(clock))
    assert rerun.pytest_runtest_protocol(item, None) is True  # type: ignore[arg-type]
    assert calls == ["run"]  # 2.5 s of CPU time: not run again
    assert rerun.pytest_runtest_protocol(item, None) is True  # type: ignore[arg-type]
    assert calls == ["run", "run", "run"]  # 0.5 s: run again
