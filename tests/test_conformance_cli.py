"""The two command-line entry points of the conformance suite (SPEC §14).

``python -m simclock_conformance MODULE:FACTORY`` (exit 0 conforming, 1 not, 2 usage
error) and ``pytest --simclock-backend MODULE:FACTORY`` (the ``pytest11``
plugin). Runs are limited to one or two clauses with ``--clause`` / ``-k`` so
this file stays fast; the full runs are in ``test_conformance_selfcheck.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from simclock_conformance import CLAUSES
from simclock_conformance.clauses._clauses import WIRE_ONLY

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT)])
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
        timeout=300,
    )


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {row["id"]: row["status"] for row in report["clauses"]}


def _cli_report(
    tmp_path: Path, spec: str, *args: str, status: int
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run ``python -m simclock_conformance spec *args --json``; check the exit, read the report."""
    out = tmp_path / "report.json"
    proc = _run("-m", "simclock_conformance", spec, *args, "--json", str(out))
    assert proc.returncode == status, proc.stdout + proc.stderr
    report: dict[str, Any] = json.loads(out.read_text())
    return proc, report


def test_C_CONF_1_cli_clause_run_of_a_broken_backend_is_partial_not_conforming(
    tmp_path: Path,
) -> None:
    # lifo_ties fails ten clauses; running two that it passes must not say CONFORMING.
    proc, report = _cli_report(
        tmp_path, "backends.broken:lifo_ties", "--clause", "C-STEP-1", "--clause", "C-X-PEEK",
        status=3,
    )  # fmt: skip
    assert (report["verdict"], report["conforming"]) == ("PARTIAL", False)
    assert report["failed"] == []
    assert report["counts"]["passed"] == 2
    # An in-process report covers every clause but the wire profile's own (C-WIRE-6).
    in_process = [c for c in CLAUSES if c not in WIRE_ONLY]
    assert report["not_run"] == [c for c in in_process if c not in ("C-STEP-1", "C-X-PEEK")]
    assert re.search(
        r"^2 passed, 0 failed, 0 incomplete, 0 not applicable, \d+ not run: PARTIAL$",
        proc.stdout,
        re.M,
    )
    assert "only a full run (no --clause, -k or -x) can say CONFORMING" in proc.stdout


def test_cli_clause_run_exits_3_and_writes_json(tmp_path: Path) -> None:
    proc, report = _cli_report(
        tmp_path, "backends.sorted_list:factory", "--clause", "C-TIE-1", "--clause", "C-X-PEEK",
        status=3,
    )  # fmt: skip
    assert report["backend"] == "backends.sorted_list:factory"
    assert report["profile"] == "ci"
    assert (report["verdict"], report["conforming"]) == ("PARTIAL", False)
    assert report["failed"] == []
    statuses = _statuses(report)
    assert statuses["C-TIE-1"] == "passed"
    assert statuses["C-X-PEEK"] == "passed"
    assert {s for c, s in statuses.items() if c not in ("C-TIE-1", "C-X-PEEK")} == {"not run"}
    assert set(CLAUSES) - set(WIRE_ONLY) <= set(statuses)
    assert "C-TIE-1    passed" in proc.stdout


def test_cli_broken_backend_exits_1_and_names_the_clause(tmp_path: Path) -> None:
    proc, report = _cli_report(
        tmp_path, "backends.broken:lifo_ties", "--clause", "C-TIE-1", "--clause", "C-STEP-1",
        status=1,
    )  # fmt: skip
    assert (report["verdict"], report["conforming"]) == ("NOT CONFORMING", False)
    assert report["failed"] == ["C-TIE-1"]
    assert _statuses(report)["C-STEP-1"] == "passed"
    # One root cause for the six failed tests of the clause, each named once.
    assert (
        "ROOT CAUSE in 6 tests of C-TIE-1:\n"
        "  first differing reply: fired order differs at equal now_ns\n"
    ) in proc.stdout
    assert proc.stdout.count("test_C_TIE_1_equal_times_fire_in_push_order") == 1
    assert "NOT CONFORMING" in proc.stdout


def test_cli_failure_shows_minimal_program_of_the_state_machine(tmp_path: Path) -> None:
    proc, report = _cli_report(
        tmp_path, "backends.broken:base_exception_swallowed", "--clause", "SM-ORACLE", status=1
    )
    assert report["failed"] == ["SM-ORACLE"]
    (row,) = [r for r in report["clauses"] if r["id"] == "SM-ORACLE"]
    program = row["tests"][0]["program"].splitlines()
    assert program[0] == "state = ClockVersusOracle()"
    assert program[-1] == "state.teardown()"
    assert any("halt" in line for line in program), program
    assert "minimal failing program (Hypothesis):" in proc.stdout
    # --no-shrink: the same verdict and failed clause, shown with the first failing
    # program Hypothesis found, which is at least as long as the minimal one.
    _, fast = _cli_report(
        tmp_path,
        "backends.broken:base_exception_swallowed",
        "--clause",
        "SM-ORACLE",
        "--no-shrink",
        status=1,
    )
    assert (fast["verdict"], fast["failed"]) == (report["verdict"], ["SM-ORACLE"])
    (row,) = [r for r in fast["clauses"] if r["id"] == "SM-ORACLE"]
    first = row["tests"][0]["program"].splitlines()
    assert (first[0], first[-1]) == ("state = ClockVersusOracle()", "state.teardown()")
    assert len(first) >= len(program) and first != program, (first, program)


def test_cli_thorough_profile_is_recorded(tmp_path: Path) -> None:
    _, report = _cli_report(
        tmp_path,
        "simclock_conformance:heap_factory",
        "--clause",
        "C-STEP-1",
        "--profile",
        "thorough",
        status=3,
    )  # fmt: skip
    assert report["profile"] == "thorough"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "no-colon",
            r"backend spec must look like MODULE:FACTORY, e\.g\. 'mypkg\.clocks:make_clock', "
            r"got 'no-colon'",
        ),
        (
            "no_such_module_xyz:factory",
            r"cannot import module 'no_such_module_xyz' of backend spec "
            r"'no_such_module_xyz:factory': ModuleNotFoundError: .*; check PYTHONPATH",
        ),
        (
            "backends.sorted_list:nope",
            r"module 'backends\.sorted_list' has no attribute 'nope' \(backend spec "
            r"'backends\.sorted_list:nope'\); name a callable FACTORY\(seed, bus\) -> SimClock",
        ),
        (
            "backends.bad_factories:NOT_CALLABLE",
            r"'backends\.bad_factories:NOT_CALLABLE' is a int, not callable",
        ),
        (
            "backends.bad_factories:raising",
            r"backends\.bad_factories:raising\(seed=0, bus=Bus\(\)\) raised RuntimeError: "
            r"no clock device found; the factory must accept",
        ),
        (
            "backends.exits_on_import:factory",
            r"cannot import module 'backends\.exits_on_import' of backend spec "
            r"'backends\.exits_on_import:factory': SystemExit: 3; check PYTHONPATH",
        ),
        (
            "backends.bad_factories:exiting",
            r"backends\.bad_factories:exiting\(seed=0, bus=Bus\(\)\) raised SystemExit: 5; "
            r"the factory must accept",
        ),
        (
            "backends.bad_factories:not_a_clock",
            r"backends\.bad_factories:not_a_clock\(seed=0, bus=Bus\(\)\) returned dict "
            r"\{'seed': 0\}, which lacks the simclock\.SimClock methods",
        ),
        (
            "backends.bad_factories:short_horizon",
            r"the factory's horizon_ns must be an int >= 2\*\*16 \(65536\), got 65535$",
        ),
        (
            "backends.bad_factories:float_horizon",
            r"the factory's horizon_ns must be an int >= 2\*\*16 \(65536\), got float 65536\.0$",
        ),
        (
            "backends.bad_factories:horizon_without_start",
            r"the factory declares horizon_ns=65536 but takes no start_ns; a horizon needs "
            r"FACTORY\(seed, bus, start_ns=\.\.\.\) to reach far times$",
        ),
    ],
    ids=[
        "bad-spec",
        "import-failure",
        "missing-attribute",
        "not-callable",
        "raising",
        "exits-on-import",
        "factory-exits",
        "not-clock",
        "short-horizon",
        "float-horizon",
        "horizon-without-start",
    ],
)
def test_cli_usage_errors_exit_2_with_a_clear_message(spec: str, message: str) -> None:
    proc = _run("-m", "simclock_conformance", spec)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("python -m simclock_conformance: error: ")
    assert re.search(message, proc.stderr), proc.stderr


def test_cli_unknown_clause_and_bad_profile_exit_2() -> None:
    proc = _run(
        "-m", "simclock_conformance", "backends.sorted_list:factory", "--clause", "C-NOPE-1"
    )
    assert proc.returncode == 2
    assert "unknown clause ids ['C-NOPE-1']" in proc.stderr
    proc = _run("-m", "simclock_conformance", "backends.sorted_list:factory", "--profile", "fast")
    assert proc.returncode == 2
    assert "invalid choice: 'fast'" in proc.stderr


def test_cli_unwritable_json_report_exits_2_before_running(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "report.json"
    for target, problem in (
        (missing, f"directory {str(missing.parent)!r} does not exist; create it first"),
        (tmp_path, "is a directory; name a file such as report.json"),
    ):
        proc = _run(
            "-m", "simclock_conformance", "simclock_conformance:heap_factory", "--json", str(target)
        )
        assert (proc.returncode, proc.stdout) == (2, ""), proc.stdout + proc.stderr
        assert proc.stderr == (
            f"python -m simclock_conformance: error: --json {str(target)!r}"
            f"{':' if target is missing else ''} {problem}\n"
        )
    assert not missing.parent.exists()


def test_pytest_plugin_runs_the_suite_on_a_backend(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    proc = _run(
        "-m", "pytest", "-p", "no:cacheprovider", "-q",
        "--simclock-backend", "backends.sorted_list:factory",
        "--simclock-json", str(out), "-k", "C_TIE_1 or C_RNG_5",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    assert "simclock conformance: backends.sorted_list:factory (profile ci)" in proc.stdout
    report = json.loads(out.read_text())
    statuses = _statuses(report)
    assert statuses["C-TIE-1"] == statuses["C-RNG-5"] == "passed"
    # C-CONF-1: -k leaves clauses out, so the plugin says PARTIAL, never CONFORMING.
    assert (report["verdict"], report["conforming"]) == ("PARTIAL", False)
    assert re.search(r"^2 passed, 0 failed, 0 incomplete, 0 not applicable, \d+ not run: PARTIAL$",
                     proc.stdout, re.M)  # fmt: skip


def test_pytest_plugin_fails_a_broken_backend(tmp_path: Path) -> None:
    proc = _run(
        "-m", "pytest", "-p", "no:cacheprovider", "-q",
        "--simclock-backend", "backends.broken:second_cancel_raises", "-k", "C_CAN_1",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    program = "test_C_CAN_1_program[can-1/cancel-from-callbacks-and-between]"
    assert f"FAILED C-CAN-1: {program}" in proc.stdout


def test_pytest_plugin_bad_backend_or_report_path_is_a_usage_error() -> None:
    proc = _run("-m", "pytest", "-p", "no:cacheprovider", "--simclock-backend", "nope")
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert "backend spec must look like MODULE:FACTORY" in proc.stderr
    proc = _run(
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--simclock-backend",
        "simclock_conformance:heap_factory",
        "--simclock-json", str(ROOT / "no-such-dir" / "report.json"),
    )  # fmt: skip
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--simclock-json" in proc.stderr and "does not exist; create it first" in proc.stderr


def test_C_CONF_4_a_bad_horizon_is_a_usage_error_before_running(tmp_path: Path) -> None:
    # The CLI refuses it up front (exit 2, no test run, no report written) ...
    out = tmp_path / "report.json"
    proc = _run(
        "-m", "simclock_conformance", "backends.bad_factories:short_horizon", "--json", str(out)
    )
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stdout + proc.stderr
    assert proc.stderr == (
        "python -m simclock_conformance: error: the factory's horizon_ns must be an int >= 2**16 "
        "(65536), got 65535\n"
    )
    assert not out.exists()
    # ... and so does the plugin, before collecting a test.
    proc = _run(
        "-m", "pytest", "-p", "no:cacheprovider",
        "--simclock-backend", "backends.bad_factories:float_horizon",
    )  # fmt: skip
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    assert (
        "the factory's horizon_ns must be an int >= 2**16 (65536), got float 65536.0" in proc.stderr
    )
    assert "passed" not in proc.stdout and "failed" not in proc.stdout


def test_pytest_plugin_timeout_out_of_range_is_a_usage_error() -> None:
    for value, message in (
        ("-1", "timeout must be a number of seconds >= 0, got -1.0"),
        ("nan", "timeout must be a number of seconds >= 0, got nan"),
        ("1e7", "timeout must be at most 1000000 seconds (0: no limit), got 10000000.0"),
    ):
        proc = _run(
            "-m", "pytest", "-p", "no:cacheprovider",
            "--simclock-backend", "simclock_conformance:heap_factory", "--simclock-timeout", value,
        )  # fmt: skip
        assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
        assert f"ERROR: {message}\n" in proc.stderr, proc.stderr


def test_pytest_plugin_report_for_in_repo_subclasses() -> None:
    proc = _run(
        "-m", "pytest", "-p", "no:cacheprovider", "-q", "--simclock-report",
        "tests/test_conformance_heap.py", "-k", "Conformance and C_TIE_1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header = (
        "simclock conformance: tests/test_conformance_heap.py::TestHeapSimClockConformance "
        "(profile ci)"
    )
    assert header in proc.stdout
    assert re.search(r"^C-TIE-1 +passed ", proc.stdout, re.M)


def test_C_CONF_2_a_hanging_backend_fails_the_clause_and_the_report_is_written(
    tmp_path: Path,
) -> None:
    # 3 s, not 1: the limit counts the whole test's CPU time, the suite's own work too. With
    # 1 s, under a loaded make test, the program test's limit twice expired while no frame
    # of the backend was on the stack, and its report named none; 3 s leaves that work room.
    proc, report = _cli_report(
        tmp_path, "backends.slow:factory", "--timeout", "3",
        "--clause", "C-PER-3", "--clause", "C-STEP-1",
        status=1,
    )  # fmt: skip
    assert report["failed"] == ["C-PER-3"]
    assert _statuses(report)["C-STEP-1"] == "passed"
    (row,) = [r for r in report["clauses"] if r["id"] == "C-PER-3"]
    assert re.fullmatch(
        r"C-PER-3: timed out after 3 s of CPU time \(C-CONF-2 time limit per test\); "
        r"the backend was running \S*backends/slow\.py:\d+ in advance",
        row["tests"][0]["message"],
    ), row["tests"][0]["message"]
    # The hang is one root cause of the clause's two tests, named with the backend's frame.
    assert re.search(
        r"^ROOT CAUSE in 2 tests of C-PER-3:\n"
        r"  the backend hung \(C-CONF-2 time limit\) in \S*backends/slow\.py \(advance\)\n"
        r"  tests: test_C_PER_3_no_drift_over_many_firings, "
        r"test_C_PER_3_program\[per-3/no-drift\]\n",
        proc.stdout,
        re.M,
    ), proc.stdout[-2000:]


def test_C_CONF_2_negative_timeout_is_a_usage_error() -> None:
    proc = _run(
        "-m", "simclock_conformance", "simclock_conformance:heap_factory", "--timeout", "-1"
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "python -m simclock_conformance: error: "
        "timeout must be a number of seconds >= 0, got -1.0\n"
    )
