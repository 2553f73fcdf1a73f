"""What a Dask worker runs for one seed: a run, its row, optionally its recording and trace.

Host code: the wall time of a run is measured here (for ``timing.csv`` only,
never the table). Everything a row holds comes from the run's trace
(C-SWEEP-1).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pickle
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from simclock.core import describe_exception, run_in_child
from simclock.core._errors import SimclockRuntimeError, SimclockValueError
from simclock.core._names import safe_repr
from simclock.sim._metrics import metric_violation
from simclock.sim._scenario import RunResult, run_scenario
from simclock.sim._scenario_file import Scenario
from simclock.sweeps._table import metric_column

__all__ = [
    "AUDIT_HASH_SEEDS",
    "Outcome",
    "Runner",
    "Shipped",
    "audit_seed",
    "hash_probe",
    "localise",
    "run_seed",
    "run_seeds",
    "ship",
]

Runner = Callable[..., RunResult]
"""``runner(scenario, *, seed, out) -> RunResult``: one run (default `simclock.run_scenario`).

``out`` is ``None`` or a path to record the run to. A runner must be picklable
(a module-level function) so Dask can send it to the workers.
"""

AUDIT_HASH_SEEDS = (1, 2, 3)
"""``PYTHONHASHSEED`` values an audit run tries, first one whose salt differs from the sweep's."""

AUDIT_TIMEOUT_S = 600.0
"""Seconds an audit run may take in its child process before it is killed and reported."""

_PROBE = "simclock.sweeps.hash-probe"


def hash_probe() -> int:
    """``hash()`` of a fixed str: equal in two processes only if their hash salt is equal."""
    return hash(_PROBE)


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"pid-{os.getpid()}"


@dataclass(frozen=True, slots=True)
class Shipped:
    """A scenario with the bytes of its MuJoCo model, as sent to the workers.

    A worker runs the model the client loaded, not whatever file sits at that
    path on its machine: a fleet whose copies differ (or lack the file) still
    gives the client's table (C-SWEEP-1).
    """

    scenario: Scenario
    model: bytes | None
    model_sha256: str | None


def ship(scenario: Scenario) -> Shipped:
    """Pack ``scenario`` with its model's bytes (read once, on the client).

    ``ValueError`` naming the file if it can no longer be read (it was when
    the scenario was loaded).
    """
    path = scenario.physics.mujoco_model
    if path is None:
        return Shipped(scenario, None, None)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SimclockValueError(
            f"cannot read the MuJoCo model {safe_repr(str(path))} of scenario "
            f"{safe_repr(scenario.name)}: {exc.strerror}; restore the file or load the "
            "scenario again"
        ) from None
    return Shipped(scenario, data, hashlib.sha256(data).hexdigest())


_LOCAL: dict[str, Scenario] = {}


def localise(job: Scenario | Shipped) -> Scenario:
    """The scenario to run here: its own model file if it holds the shipped bytes, else a copy.

    The copy is written once per process under the temp directory, named by
    its digest, beside nothing: a model that includes other files (meshes,
    ``<include>``) then needs them at the same path on the worker.
    """
    if isinstance(job, Scenario):
        return job
    if job.model is None or job.model_sha256 is None:
        return job.scenario
    cached = _LOCAL.get(job.model_sha256)
    if cached is not None:
        return cached
    path = job.scenario.physics.mujoco_model
    assert path is not None  # Invariant: ship() sets model only with a model path
    try:
        same = hashlib.sha256(Path(path).read_bytes()).hexdigest() == job.model_sha256
    except OSError:
        same = False
    scenario = job.scenario
    if not same:
        folder = Path(tempfile.gettempdir()) / "simclock-sweep-models" / job.model_sha256
        folder.mkdir(parents=True, exist_ok=True)
        copy = folder / Path(path).name
        if not copy.exists():
            tmp = copy.with_name(f"{copy.name}.{os.getpid()}.tmp")
            tmp.write_bytes(job.model)
            os.replace(tmp, copy)
        physics = dataclasses.replace(scenario.physics, mujoco_model=copy)
        scenario = dataclasses.replace(scenario, physics=physics)
    _LOCAL[job.model_sha256] = scenario
    return scenario


@dataclass(frozen=True, slots=True)
class Outcome:
    """One seed's run: its ``row`` plus what varies (worker, wall and CPU time, hash salt)."""

    row: dict[str, Any]
    worker: str
    wall_ns: int
    cpu_ns: int
    probe: int
    hashseed: str
    mcap: bytes | None = None
    trace: list[bytes] | None = field(default=None)


def _row(scenario: Scenario, seed: int, runner: Runner, out: Path | None) -> dict[str, Any]:
    """Run ``seed`` and make its row; a run that raises is an ``error`` row (C-SWEEP-3)."""
    row: dict[str, Any] = {
        "seed": seed,
        "status": "ok",
        "message": None,
        "fingerprint": None,
        "messages": None,
        "callback_failures": None,
    }
    for m in scenario.metrics:
        row[metric_column(m.name)] = None
    try:
        result = runner(scenario, seed=seed, out=out)
        if not isinstance(result, RunResult):
            raise SimclockRuntimeError(
                f"runner returned {type(result).__name__}, expected simclock.RunResult"
            )
    except Exception as exc:
        row["status"] = "error"
        row["message"] = describe_exception(exc)
        return row
    row["fingerprint"] = result.fingerprint
    row["messages"] = result.messages
    row["callback_failures"] = sum(s.failed for s in result.stats.values())
    for m in scenario.metrics:
        value = result.metrics.get(m.name)
        row[metric_column(m.name)] = (
            None if value is None else (int(value) if m.integer else float(value))
        )
    problem = metric_violation(scenario.metrics, result.metrics)
    if problem is not None:
        row["status"] = "error"
        row["message"] = problem
    return row


def _trace(scenario: Scenario, seed: int, runner: Runner, mcap: Path) -> list[bytes]:
    """The run's trace lines (C-X-FP), read back from a recording of it."""
    from simclock.recording._fingerprint import payload_kind_and_json, trace_line
    from simclock.recording._reader import RecordingReader

    # A run that raises: the trace up to the failure is what gets compared.
    with contextlib.suppress(Exception):
        runner(scenario, seed=seed, out=mcap)
    lines = []
    if mcap.exists():
        with RecordingReader(mcap) as reader:
            for m in reader.messages():
                kind, text = payload_kind_and_json(m.payload)
                lines.append(trace_line(m.stamp_ns, m.sequence, m.topic, kind, text))
    return lines


class _Here(NamedTuple):
    """Where runs happen: the worker's name, its hash salt probe, its ``PYTHONHASHSEED``."""

    worker: str
    probe: int
    hashseed: str


def _here() -> _Here:
    return _Here(_worker_name(), hash_probe(), os.environ.get("PYTHONHASHSEED", "random"))


def run_seed(
    seed: int,
    job: Scenario | Shipped,
    runner: Runner | None = None,
    record: str = "none",
    trace: bool = False,
    here: _Here | None = None,
) -> Outcome:
    """Run one seed (on a worker); keep its MCAP bytes per ``record`` (``none/failing/all``).

    With ``record="failing"`` a failing seed is run a second time with a
    recorder: the run is deterministic (C-DET-1), so the recording is the run
    that failed, and passing seeds pay nothing for it. ``here``: the worker's
    identity when the caller has it (one look-up per task, not per seed).
    """
    scenario = localise(job)
    run = run_scenario if runner is None else runner
    start = time.perf_counter_ns()  # noqa: SCK301 - wall time for timing.csv only
    cpu = time.thread_time_ns()  # noqa: SCK301 - CPU time for timing.csv only
    mcap = None
    lines = None
    if record == "none" and not trace:
        # The common case writes no file: no temporary directory per seed (~0.2 ms).
        row = _row(scenario, seed, run, None)
    else:
        with tempfile.TemporaryDirectory(prefix="simclock-sweep-") as tmp:
            path = Path(tmp) / f"seed-{seed}.mcap"
            row = _row(scenario, seed, run, path if record == "all" else None)
            if record == "failing" and row["status"] == "error":
                # The same failure again: the recorder is closed on the way out and kept.
                with contextlib.suppress(Exception):
                    run(scenario, seed=seed, out=path)
            if path.exists():
                mcap = path.read_bytes()
            if trace:
                lines = _trace(scenario, seed, run, Path(tmp) / "trace.mcap")
    wall = time.perf_counter_ns() - start  # noqa: SCK301 - wall time for timing.csv only
    cpu = time.thread_time_ns() - cpu  # noqa: SCK301 - CPU time for timing.csv only
    if here is None:
        here = _here()
    return Outcome(
        row=row,
        worker=here.worker,
        wall_ns=wall,
        cpu_ns=cpu,
        probe=here.probe,
        hashseed=here.hashseed,
        mcap=mcap,
        trace=lines,
    )


def run_seeds(
    seeds: Sequence[int],
    job: Scenario | Shipped,
    runner: Runner | None = None,
    record: str = "none",
) -> list[Outcome]:
    """Run several seeds in one Dask task (on a worker), one `run_seed` each, in order.

    One task per seed costs the worker's event loop a few ms of its own work
    per task (messages, the result's transfer), done while the next run holds
    the GIL; for runs of a few ms that is a large share, so short runs are
    sent in batches (see ``simclock.sweeps._feed``). Every seed is still an
    independent run with its own row (C-SWEEP-1). The scenario is localised
    and the worker named once per task.
    """
    scenario = localise(job)
    here = _here()
    return [run_seed(seed, scenario, runner, record, here=here) for seed in seeds]


def audit_seed(
    seed: int,
    job: Scenario | Shipped,
    runner: Runner | None,
    avoid: frozenset[int],
    trace: bool = False,
) -> Outcome:
    """Run ``seed`` again in a new process with another ``PYTHONHASHSEED`` (C-SWEEP-4).

    Runs on a worker of the sweep's cluster, so the audit happens on the same
    fleet. The child gets the first of `AUDIT_HASH_SEEDS` whose hash salt
    (`hash_probe`) is neither this worker's nor in ``avoid`` (the salts of
    the processes that ran the seed before). `SimclockChildError`
    (a ``RuntimeError``) with the child's exit status and stderr tail if it fails
    or runs longer than `AUDIT_TIMEOUT_S`.
    """
    import cloudpickle

    avoid = avoid | {hash_probe()}
    payload = cloudpickle.dumps((seed, job, runner, trace))
    outcome: Outcome | None = None
    with tempfile.TemporaryDirectory(prefix="simclock-audit-") as tmp:
        for value in AUDIT_HASH_SEEDS:
            result = Path(tmp) / "outcome.pickle"
            run_in_child(
                "simclock.sweeps._child",
                [str(result)],
                hash_seed=value,
                what=f"audit run of seed {seed}",
                stdin=payload,
                timeout_s=AUDIT_TIMEOUT_S,
            )
            outcome = pickle.loads(result.read_bytes())
            assert isinstance(outcome, Outcome)  # Invariant: _child writes an Outcome
            if outcome.probe not in avoid:
                # For timing.csv: the worker that started the child, and the child.
                return dataclasses.replace(outcome, worker=f"{_worker_name()} {outcome.worker}")
    raise SimclockRuntimeError(
        f"audit of seed {seed}: every PYTHONHASHSEED in {AUDIT_HASH_SEEDS} gave the same hash "
        "salt as the sweep's run; run the sweep's workers without a fixed PYTHONHASHSEED"
    )
