"""Runners and scenarios shared by the sweep tests (imported by the Dask workers too).

The workers import this module by name (``test_sweep_helpers``), so it holds
only plain module-level functions: Dask pickles them by reference.
"""

from __future__ import annotations

import os
from pathlib import Path

from simclock import RunResult, Scenario, run_scenario

SHORT_TOML = """\
name = "short"
duration = "200 ms"

[physics]
step = "1 ms"

[devices.imu0]
period = "7 ms"
latency = "3 ms"
noise_std = 0.5
dim = 2

[devices.enc0]
period = "5 ms"
phase = "2 ms"
latency = "1500 us"
policy = "next_boundary"

[controllers.tick]
kind = "tick"
period = "4 ms"

[metrics.noise_rms]
kind = "rms_error"
device = "imu0"
index = 1
max = 0.55

[metrics.final]
kind = "final"
device = "imu0"

[metrics.enc_late]
kind = "max_lateness"
device = "enc0"

[metrics.imu_samples]
kind = "samples"
device = "imu0"
after = "100 ms"
"""


def write_short(directory: Path) -> Path:
    """The short scenario (200 ms, two noisy devices, metrics with a bound) as a file."""
    path = directory / "short.toml"
    path.write_text(SHORT_TOML, encoding="utf-8")
    return path


def failing_runner(
    scenario: Scenario, *, seed: int, out: str | os.PathLike[str] | None
) -> RunResult:
    """Like ``run_scenario``, but every seed ``% 5 == 3`` raises after its run (C-SWEEP-3)."""
    result = run_scenario(scenario, seed=seed, out=out)
    if seed % 5 == 3:
        raise ValueError(f"planted failure at seed {seed}")
    return result


def salted_runner(
    scenario: Scenario, *, seed: int, out: str | os.PathLike[str] | None
) -> RunResult:
    """A planted C-DET-1 bug: the noise seed mixes in ``hash()`` of a str, salted per process.

    The classic mistake (``hash(name)`` as a stream key) that a unit test in one
    process never sees and ``--audit`` must catch (C-SWEEP-4).
    """
    return run_scenario(scenario, seed=seed ^ (hash("imu0") & 0xFFFF), out=out)
