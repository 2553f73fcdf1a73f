"""ReplayClock passes the C-REP clauses of the conformance suite (SPEC §5, §14).

The suite runs in a subprocess, through the pytest plugin, as a user would run
it: importing ``simclock_conformance.clauses._replay_clauses`` registers the C-REP clauses in
the process-wide registry, which must not leak into the other conformance tests
of this session (they compare their reports with that registry).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import simclock_conformance
from simclock import Bus, HeapSimClock, ReplayClock, SimClock

_MODULE = str(
    Path(simclock_conformance.__file__).resolve().parent / "clauses" / "_replay_clauses.py"
)
_TESTS = str(Path(__file__).resolve().parent)


def _always_callbacks(path: str, bus: Bus, callbacks: bool) -> SimClock:
    """A defective replay backend: runs control callbacks even when told not to."""
    return ReplayClock(path, bus=bus, callbacks=True)


def broken_backend(seed: int, bus: Bus) -> SimClock:
    """Records with HeapSimClock; replays with the defective backend above."""
    return HeapSimClock(seed, bus=bus)


broken_backend.replay = _always_callbacks  # type: ignore[attr-defined]


def _suite(tmp_path: Path, spec: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": _TESTS + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
            "-c", os.devnull, "-p", "no:looptime_plugin", "--rootdir", str(tmp_path),
            "--simclock-backend", spec, "-k", "C_REP", _MODULE,
        ],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )  # fmt: skip


def test_C_REP_1_to_4_replay_clock_passes_the_replay_clauses(tmp_path: Path) -> None:
    proc = _suite(tmp_path, "simclock_conformance.clauses._replay_clauses:replay_backend")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for clause in ("C-REP-1", "C-REP-2", "C-REP-3", "C-REP-4"):
        assert f"{clause}    passed" in proc.stdout, proc.stdout
    assert " failed" not in proc.stdout.splitlines()[-1]


def test_C_REP_2_the_suite_fails_a_backend_that_always_runs_callbacks(tmp_path: Path) -> None:
    proc = _suite(tmp_path, "test_replay_conformance:broken_backend")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "C-REP-2    failed" in proc.stdout
    assert "C-REP-2: callbacks ran without callbacks enabled at [0, 4, 7, 8, 12," in proc.stdout
    for clause in ("C-REP-1", "C-REP-3", "C-REP-4"):
        assert f"{clause}    passed" in proc.stdout, proc.stdout


def test_C_REP_1_plain_clock_backends_skip_replay_clauses_as_not_applicable(
    tmp_path: Path,
) -> None:
    proc = _suite(tmp_path, "simclock_conformance:heap_factory")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "not applicable: simclock_conformance:heap_factory is not a replay backend "
        "(its FACTORY has no "
        "callable .replay(path, bus, callbacks)); C-REP-* apply to replay backends only"
    ) in proc.stdout
    assert "C-REP-1    not applicable" in proc.stdout
