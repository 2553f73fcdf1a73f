"""ReplayClock passes the C-REP clauses of the conformance suite (SPEC §5, §14)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import conformance._replay_clauses as replay_clauses
from conformance._replay_clauses import ReplayConformance, ReplayFactory, record_reference
from simclock import Bus, ReplayClock, SimClock


def replay_clock(path: str, bus: Bus, callbacks: bool) -> SimClock:
    """``ReplayClock(path, bus=bus, callbacks=callbacks)``."""
    return ReplayClock(path, bus=bus, callbacks=callbacks)


class TestReplayClockConformance(ReplayConformance):
    """The C-REP suite on simclock.ReplayClock."""

    @pytest.fixture
    def replay_factory(self) -> ReplayFactory:
        return replay_clock


def _always_callbacks(path: str, bus: Bus, callbacks: bool) -> SimClock:
    """A defective replay backend: runs control callbacks even when told not to."""
    return ReplayClock(path, bus=bus, callbacks=True)


def test_C_REP_2_the_suite_fails_a_backend_that_always_runs_callbacks(tmp_path: Path) -> None:
    path = tmp_path / "ref.mcap"
    live, drawn = record_reference(path, draws=True)
    suite = ReplayConformance()
    with pytest.raises(
        AssertionError,
        match=r"^C-REP-2: callbacks ran without callbacks enabled at \[0, 4, 7, 8, 12,",
    ):
        suite.test_C_REP_2_callbacks_do_not_run_unless_enabled(
            _always_callbacks, (str(path), live, drawn)
        )


def test_C_REP_1_plain_clock_backends_skip_replay_clauses_as_not_applicable(
    tmp_path: Path,
) -> None:
    module = Path(replay_clauses.__file__)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-c",
            os.devnull,
            "--rootdir",
            str(tmp_path),
            "--simclock-backend",
            "conformance:heap_factory",
            "-k",
            "C_REP",
            str(module),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "not applicable: conformance:heap_factory is not a replay backend (its FACTORY has no "
        "callable .replay(path, bus, callbacks)); C-REP-* apply to replay backends only"
    ) in proc.stdout
    assert "passed" not in proc.stdout.splitlines()[-1]


def test_C_REP_4_the_plugin_runs_simclock_replay_backend(tmp_path: Path) -> None:
    module = Path(replay_clauses.__file__)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            os.devnull,
            "--rootdir",
            str(tmp_path),
            "--simclock-backend",
            "conformance._replay_clauses:replay_backend",
            "-k",
            "C_REP",
            str(module),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "C-REP-4    passed" in proc.stdout
