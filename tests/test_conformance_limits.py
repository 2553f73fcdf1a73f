"""Per-test time limits of the conformance suite (C-CONF-2): where a hang is, and no shrinking.

The hanging backends of ``tests/backends/hang.py`` spin inside the standard
library (``heapq.merge``); the report must name the backend's line, or its
library's, with the exact report lines. Every test keeps its own limit after
another one timed out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from simclock_conformance.entry import _plugin
from simclock_conformance.kit import _watchdog
from simclock_conformance.kit._watchdog import ConformanceTimeout

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def _line_of(path: Path, marker: str) -> int:
    (number,) = [
        i for i, line in enumerate(path.read_text().splitlines(), 1) if line.endswith(marker)
    ]
    return number


def _cli(tmp_path: Path, spec: str, *clauses: str) -> tuple[str, dict[str, Any]]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
    out = tmp_path / "report.json"
    args = [sys.executable, "-m", "simclock_conformance", spec, "--timeout", "1", "-q"]
    for clause in clauses:
        args += ["--clause", clause]
    proc = subprocess.run(
        [*args, "--json", str(out)], capture_output=True, text=True, env=env, cwd=ROOT,
        check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout, json.loads(out.read_text())


def _messages(report: dict[str, Any]) -> dict[str, list[str]]:
    """The failed tests' messages of every clause that failed or is blocked."""
    return {
        row["id"]: [t["message"] for t in row["tests"] if t["outcome"] == "failed"]
        for row in report["clauses"]
        if row["status"] in ("failed", "blocked")
    }


def test_C_CONF_2_a_hang_in_the_standard_library_names_the_backends_line(tmp_path: Path) -> None:
    line = _line_of(TESTS / "backends" / "hang.py", "# hang: stdlib")
    stdout, report = _cli(tmp_path, "backends.hang:in_stdlib", "C-ADV-2", "C-RNG-1")
    message = (
        "C-ADV-2: timed out after 1 s of CPU time (C-CONF-2 time limit per test); "
        f"the backend was running tests/backends/hang.py:{line} in advance"
    )
    # The clause program hangs in the backend, through the protocol engine, and says where.
    assert _messages(report) == {"C-ADV-2": [message]}
    assert [r["status"] for r in report["clauses"] if r["id"] == "C-RNG-1"] == ["passed"]
    assert report["root_causes"] == [
        {
            "cause": "the backend hung (C-CONF-2 time limit) in tests/backends/hang.py (advance)",
            "clauses": ["C-ADV-2"],
            "charged": ["C-ADV-2"],
            "tests": ["test_C_ADV_2_program[adv-2/now-in-callback]"],
        }
    ]
    # One failed test: no root-cause block, the failure once with its message.
    assert "ROOT CAUSE" not in stdout
    assert stdout.count(message) == 1, stdout
    table = stdout[stdout.index("simclock conformance: backends.hang:in_stdlib") :]
    assert "heapq" not in table.split("short test summary info")[0]


def test_C_CONF_2_a_hang_in_the_backends_library_names_the_library_and_keeps_each_limit(
    tmp_path: Path,
) -> None:
    line = _line_of(TESTS / "backends" / "spinlib.py", "# hang: library")
    stdout, report = _cli(tmp_path, "backends.hang:in_library", "C-ADV-2", "C-ADV-3")
    where = f"the backend was running tests/backends/spinlib.py:{line} in wait_forever"
    # Both tests had the full limit: the second hang is not cut short by the first.
    tests = {
        "C-ADV-2": ["test_C_ADV_2_program[adv-2/now-in-callback]"],
        "C-ADV-3": [
            "test_C_ADV_3_entries_pushed_by_callbacks_fire_in_same_advance",
            "test_C_ADV_3_program[adv-3/pushed-by-callbacks]",
            "test_C_ADV_3_program[adv-3/pushed-beside-a-later-periodic]",
        ],
    }
    assert _messages(report) == {
        clause: [
            f"{clause}: timed out after 1 s of CPU time (C-CONF-2 time limit per test); {where}"
        ]
        * len(names)
        for clause, names in tests.items()
    }
    # One hang, one place, one root cause; a hang has no reply whose rule could be
    # charged, so each clause it stops fails on its own.
    assert (report["failed"], report["blocked"]) == (["C-ADV-2", "C-ADV-3"], {})
    assert [c["charged"] for c in report["root_causes"]] == [["C-ADV-2", "C-ADV-3"]]
    lines = stdout.splitlines()
    at = lines.index("ROOT CAUSE in 4 tests of C-ADV-2, C-ADV-3:")
    assert lines[at + 1 : at + 3] == [
        "  the backend hung (C-CONF-2 time limit) in tests/backends/spinlib.py (wait_forever)",
        f"  tests: {', '.join(tests['C-ADV-2'] + tests['C-ADV-3'])}",
    ]


def test_C_CONF_2_a_timeout_never_shrinks_the_next_tests_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options = {
        "simclock_profile": "ci",
        "simclock_timeout": None,
        "simclock_hang_budget": None,
        "simclock_backend": "b:f",
    }
    config = SimpleNamespace(getoption=options.__getitem__)
    collector = _plugin.ResultCollector(config)  # type: ignore[arg-type]
    items = [
        SimpleNamespace(nodeid=f"suite.py::T::{name}", name=name)
        for name in ("test_C_ADV_2_a", "test_C_ADV_3_b")
    ]
    for item in items:
        collector.groups[item.nodeid] = "b:f"
    limits: list[tuple[float, str]] = []
    monkeypatch.setattr(_watchdog, "watchdog", lambda s, c: limits.append((s, c)))

    collector._limit(items[0])  # type: ignore[arg-type]
    # The first test times out: its report goes through the collector.
    hung = ConformanceTimeout("C-ADV-2: timed out after 30 s of CPU time")
    call = SimpleNamespace(when="call", excinfo=SimpleNamespace(value=hung))
    wrapper = collector.pytest_runtest_makereport(items[0], call)  # type: ignore[arg-type]
    next(wrapper)
    with pytest.raises(StopIteration) as done:
        wrapper.send(SimpleNamespace(user_properties=[]))  # type: ignore[arg-type]
    assert done.value.value.user_properties[0][1]["timeout"] is True
    collector._limit(items[1])  # type: ignore[arg-type]
    assert limits == [(30.0, "C-ADV-2"), (30.0, "C-ADV-3")]


def test_C_CONF_2_a_backend_hanging_everywhere_gets_its_verdict_within_the_hang_budget(
    tmp_path: Path,
) -> None:
    """The whole suite on a backend whose ``advance`` never returns, 1 s per test and a
    hang budget of 2 s: two tests time out (the clause and the backend's line named), and
    every later test is cut short by the budget, each saying so, instead of costing its
    own limit."""
    line = _line_of(TESTS / "backends" / "hang.py", "# hang: stdlib")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", "backends.hang:in_stdlib", "--timeout",
         "1", "--hang-budget", "2", "-q", "--json", str(out)],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["verdict"] == "NOT CONFORMING"
    tests = [t for row in report["clauses"] for t in row["tests"]]
    timed_out = [t for t in tests if t["outcome"] == "failed"]
    assert [t["name"] for t in timed_out] == [
        "test_C_TIME_1_now_is_int_and_starts_at_zero",
        "test_C_TIME_3_non_time_ints_are_refused",
    ]
    for test in timed_out:
        clause = "-".join(test["name"].split("_")[1:4])
        assert test["message"] == (
            f"{clause}: timed out after 1 s of CPU time (C-CONF-2 time limit per test); "
            f"the backend was running tests/backends/hang.py:{line} in advance"
        )
    cut = (
        "not run: the run's hang budget of 2 s (C-CONF-2) was spent by 2 tests that timed "
        "out (test_C_TIME_1_now_is_int_and_starts_at_zero, "
        "test_C_TIME_3_non_time_ints_are_refused); rerun with --hang-budget 0 to run every test"
    )
    rest = [t for t in tests if t["outcome"] != "failed"]
    assert len(rest) > 50
    assert {(t["outcome"], t["message"]) for t in rest} == {("skipped", cut)}
    assert (
        f"hang budget spent: 2 tests timed out (2 s of limits, budget 2 s, C-CONF-2); "
        f"{len(rest)} later tests not run (--hang-budget 0 runs every test)"
    ) in proc.stdout.splitlines()


def test_C_CONF_2_the_default_hang_budget_is_two_limits_and_is_documented() -> None:
    from simclock_conformance.kit._options import default_hang_budget, default_timeout

    assert (default_hang_budget("ci"), default_timeout("ci")) == (60.0, 30.0)
    assert (default_hang_budget("thorough"), default_timeout("thorough")) == (600.0, 300.0)
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", "--help"],
        capture_output=True, text=True, check=True, timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    help_text = " ".join(proc.stdout.split())
    assert "--hang-budget SECONDS the run's budget for hangs" in help_text
    assert "(default 60 for ci, 600 for thorough; 0: run every test)" in help_text
    page = " ".join((ROOT / "docs" / "backends.md").read_text(encoding="utf-8").split())
    assert "`--hang-budget`" in page and "60 s" in page


def test_C_CONF_2_a_negative_hang_budget_is_a_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", "simclock_conformance:heap_factory",
         "--hang-budget", "-1"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "python -m simclock_conformance: error: "
        "hang_budget must be a number of seconds >= 0, got -1.0\n"
    )
