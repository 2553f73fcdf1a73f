"""``simclock.sweep``: every seed of a range run as an independent run on Dask (SPEC §16).

* C-SWEEP-1: each seed is an independent run (a Dask task holds one or
  more seeds, see ``_feed``); the table is built from the rows sorted by
  seed, so it does not depend on the number of workers, where they run or
  the order runs finish. Wall times and worker names go to ``timing.csv``.
* C-SWEEP-2: Dask distributed runs the tasks: a ``LocalCluster`` of one
  single-threaded worker process per core by default, or the existing
  cluster at ``scheduler`` (``tcp://HOST:PORT``). simclock schedules nothing
  itself.
* C-SWEEP-3: a run that raises (or breaks a metric's bounds) is a row with
  status ``error`` and its message; the other seeds go on.
* C-SWEEP-4: ``audit=K`` runs K seeds spread over the range again, each in
  a new process started by a worker with another ``PYTHONHASHSEED``; a row
  that differs fails the sweep with `SweepAuditError` naming the seed
  and the first diverging message of the two traces.
* C-SWEEP-5: with ``out``, rows are flushed as their task finishes (at most
  ~0.5 s of runs per task); a sweep started again on the same directory runs
  only the seeds it lacks.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._extras import require_extra
from simclock.core._names import exact_str, safe_repr
from simclock.sim._scenario_file import Scenario, load_scenario
from simclock.sweeps._feed import batches
from simclock.sweeps._table import SweepDir, rows_equal, rows_to_table, spread, table_schema
from simclock.sweeps._task import Outcome, Runner, Shipped, audit_seed, run_seed, ship

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["RECORD_CHOICES", "WORKER_CONFIG", "SweepAuditError", "parse_seeds", "sweep"]

RECORD_CHOICES = ("none", "failing", "all")
_SEEDS = re.compile(r"([0-9]+):([0-9]+)")
_LINE_LIMIT = 400
_QUIET_HTTP = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}
# The local cluster's workers run without the diagnostics that only a dashboard shows
# (and the sweep serves none): the statistical profiler wakes every 10 ms and the
# event-loop tick every 20 ms, each time taking the GIL from the run; the system
# monitor (every 500 ms) and the memory monitor (every 100 ms) run less often (together
# ~4 % of a pendulum run's CPU in the worker's other threads, ~1.5 % so). The memory
# limit stays enforced by the nanny. Measured in docs/benchmarks.md ("Sweeps", "Sweep").
# An existing cluster (scheduler=) keeps its own config.
WORKER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.system-monitor.disk": False,
    "distributed.worker.memory.monitor-interval": "1s",
}

SweepProgress = Callable[[int, int], object]
"""``progress(done, total)``: called after each finished run of this call."""


class SweepAuditError(SimclockRuntimeError):
    """An audited seed gave another row in another process (C-SWEEP-4); ``seed`` names it."""

    def __init__(self, seed: int, message: str) -> None:
        self.seed = seed
        super().__init__(message)


def parse_seeds(value: object) -> range:
    """``"A:B"`` (half-open, like a slice) or a ``range`` with step 1 -> ``range(A, B)``.

    ``TypeError`` for other types; ``ValueError`` for malformed text, negative
    seeds or an empty range.
    """
    if isinstance(value, range):
        seeds = value
        if seeds.step != 1:
            raise SimclockValueError(f"seeds must be a range with step 1, got {safe_repr(value)}")
    elif isinstance(value, str):
        match = _SEEDS.fullmatch(value.strip())
        if match is None:
            raise SimclockValueError(
                f'seeds must be "A:B" with integers 0 <= A < B (B excluded), got {safe_repr(value)}'
            )
        seeds = range(int(match.group(1)), int(match.group(2)))
    else:
        raise SimclockTypeError(
            f'seeds must be "A:B" or a range, got {type(value).__name__} {safe_repr(value)}'
        )
    if seeds.start < 0:
        raise SimclockValueError(f"seeds must be >= 0, got {safe_repr(value)}")
    if len(seeds) == 0:
        raise SimclockValueError(f"seeds is empty: {safe_repr(value)}; use A:B with A < B")
    return seeds


@contextlib.contextmanager
def _client(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """A Dask client: to ``scheduler``, or to a new ``LocalCluster`` closed afterwards."""
    import distributed

    # distributed's constructors are untyped: one Any handle instead of an ignore per call.
    dask: Any = distributed
    if scheduler is not None:
        try:
            client = dask.Client(scheduler, timeout="20s")
        except OSError as exc:
            raise SimclockRuntimeError(
                f"cannot reach the Dask scheduler at {scheduler!r}: {exc}; start one with "
                "`dask scheduler` and `dask worker ADDRESS`, or leave out --scheduler"
            ) from None
        with client:
            yield client
        return
    n = workers if workers is not None else (os.cpu_count() or 1)
    with (
        dask.LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # The scheduler serves health routes over HTTP even without a dashboard: on
            # loopback, on a free port (not 8787, which another cluster may hold).
            scheduler_kwargs=_QUIET_HTTP,
            silence_logs=logging.ERROR,
            config=WORKER_CONFIG,
        ) as cluster,
        dask.Client(cluster) as client,
    ):
        yield client


def _check_args(
    out: object, workers: object, scheduler: object, record: object, audit: object, runner: object
) -> tuple[str, str | None]:
    """Refuse bad arguments; return ``record`` and ``scheduler`` as plain ``str``.

    A ``str`` subclass is copied (``exact_str``): its own ``__eq__``/``__hash__``
    never run inside the sweep or Dask.
    """
    if out is not None and not isinstance(out, str | os.PathLike):
        raise SimclockTypeError(f"out must be a directory path or None, got {safe_repr(out)}")
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int):
            raise SimclockTypeError(f"workers must be an int or None, got {safe_repr(workers)}")
        if workers < 1:
            raise SimclockValueError(f"workers must be >= 1, got {safe_repr(workers)}")
        if scheduler is not None:
            raise SimclockValueError(
                f"workers={safe_repr(workers)} applies to the local cluster only; an existing "
                "cluster at scheduler has the workers it has"
            )
    if scheduler is not None and not isinstance(scheduler, str):
        raise SimclockTypeError(
            f"scheduler must be an address str or None, got {safe_repr(scheduler)}"
        )
    if not isinstance(record, str) or exact_str(record) not in RECORD_CHOICES:
        raise SimclockValueError(
            f'record must be one of "none", "failing", "all", got {safe_repr(record)}'
        )
    record = exact_str(record)
    if record != "none" and out is None:
        raise SimclockValueError(
            f"record={safe_repr(record)} needs out: a directory for the recordings"
        )
    if isinstance(audit, bool) or not isinstance(audit, int):
        raise SimclockTypeError(f"audit must be an int, got {safe_repr(audit)}")
    if audit < 0:
        raise SimclockValueError(f"audit must be >= 0, got {safe_repr(audit)}")
    if runner is not None and not callable(runner):
        raise SimclockTypeError(f"runner must be callable or None, got {safe_repr(runner)}")
    return record, None if scheduler is None else _check_address(exact_str(scheduler))


_ADDRESS_LIMIT = 1000
_SCHEMES = ("tcp", "tls", "ws", "wss")


def _check_address(scheduler: str) -> str:
    """Refuse a scheduler address Dask would fail on later (``tcp://HOST:PORT``, tls/ws/wss too).

    Checked before any connection, so a typo is a ``ValueError`` naming the
    argument rather than a failure from inside Dask's client.
    """
    from distributed.comm.addressing import parse_address, parse_host_port

    shown = safe_repr(scheduler)
    problem = None
    if len(scheduler) > _ADDRESS_LIMIT:
        problem = f"is longer than {_ADDRESS_LIMIT} characters"
    else:
        try:
            scheme, location = parse_address(scheduler)
            host, port = parse_host_port(location, 8786)
        except ValueError:
            problem = "has no valid HOST:PORT"
        else:
            if scheme not in _SCHEMES:
                problem = f"has the scheme {scheme!r}; use one of {', '.join(_SCHEMES)}"
            elif not host:
                problem = "has no host"
            elif not 0 < port < 65536:
                problem = f"has the port {port}, outside 1..65535"
    if problem is not None:
        raise SimclockValueError(
            f"scheduler must be an address like tcp://HOST:PORT, got {shown}: it {problem}"
        )
    return scheduler


def sweep(
    scenario: Scenario | str | os.PathLike[str],
    seeds: str | range,
    *,
    out: str | os.PathLike[str] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    record: str = "none",
    audit: int = 0,
    runner: Runner | None = None,
    progress: SweepProgress | None = None,
) -> pa.Table:
    """Run ``scenario`` once per seed of ``seeds`` on Dask; return the table (SPEC §16).

    ``seeds``: ``"A:B"`` or ``range(A, B)``. ``out``: a directory for the
    table (``sweep.parquet``, ``sweep.csv``), ``timing.csv`` and recordings;
    seeds whose rows it already holds are not run again (C-SWEEP-5).
    ``workers``: local worker processes (default: one per core);
    ``scheduler``: an existing cluster's address instead. ``record``:
    ``"failing"`` or ``"all"`` keeps those runs' MCAP files in
    ``out/runs/``. ``audit``: how many seeds to run again in other processes
    (C-SWEEP-4); a mismatch raises [`SweepAuditError`][simclock.SweepAuditError] after the table
    is written. ``runner(scenario, *, seed, out)`` replaces
    [`simclock.run_scenario`][simclock.run_scenario] (e.g. a session with Python controllers);
    it must be picklable. Every argument is checked before anything runs.

    The returned table holds every row of ``out`` (earlier ones too), sorted
    by seed. Worker crashes (not a run raising) propagate as Dask's error.
    """
    record, scheduler = _check_args(out, workers, scheduler, record, audit, runner)
    if progress is not None and not callable(progress):
        raise SimclockTypeError(
            f"progress must be callable as progress(done, total) or None, got {safe_repr(progress)}"
        )
    if not isinstance(scenario, Scenario | str | os.PathLike):
        raise SimclockTypeError(
            "scenario must be a scenario file path or a simclock.Scenario, got "
            f"{type(scenario).__name__} {safe_repr(scenario)}"
        )
    seed_range = parse_seeds(seeds)
    require_extra("sweep", "simclock sweep")  # after the arguments: a bad one is refused alike
    plan = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    # The model file is read once: its bytes make the directory's digest and travel to
    # the workers (load_scenario's compile is MuJoCo's own read).
    job = ship(plan)
    store = None if out is None else SweepDir(out, plan, job.model)
    rows: dict[int, dict[str, Any]] = {} if store is None else store.rows
    probes: dict[int, Outcome] = {}
    try:
        todo = [s for s in seed_range if s not in rows]
        # A finished sweep with no audit starts no cluster: it only rewrites its table.
        cluster = _client(scheduler, workers) if todo or audit else contextlib.nullcontext()
        with cluster as client:
            work = _Work(client, job, runner) if todo or audit else None
            if work is not None and todo:
                _run_all(work, todo, record, store, rows, probes, progress)
            table = (
                store.finish()
                if store is not None
                else rows_to_table(rows.values(), table_schema(plan))
            )
            if work is not None and audit:
                _audit(work, seed_range, audit, rows, probes, store)
    finally:
        if store is not None:
            store.close()
    return table


class _Work(NamedTuple):
    """What every Dask task of one sweep needs: the client, the shipped plan, the runner."""

    client: Any
    job: Shipped
    runner: Runner | None


def _run_all(
    work: _Work,
    todo: Sequence[int],
    record: str,
    store: SweepDir | None,
    rows: dict[int, dict[str, Any]],
    probes: dict[int, Outcome],
    progress: SweepProgress | None,
) -> None:
    client, job, runner = work
    [job_future] = client.scatter([job], broadcast=True)
    done = 0
    for batch in batches(client, job_future, todo, runner, record):
        for outcome in batch:
            seed = int(outcome.row["seed"])
            if store is not None:
                if outcome.mcap is not None:
                    store.write_run(seed, outcome.mcap)
                store.append(outcome.row)
                store.timing(seed, "run", outcome.worker, outcome.wall_ns, outcome.cpu_ns)
            else:
                rows[seed] = outcome.row
            probes[seed] = Outcome(
                outcome.row, outcome.worker, 0, 0, outcome.probe, outcome.hashseed
            )
        if store is not None:
            store.flush()  # the task's rows at once (C-SWEEP-5), not one write per row
        for _ in batch:
            done += 1
            if progress is not None:
                progress(done, len(todo))


def _short(line: bytes | None) -> str:
    if line is None:
        return "(trace ended)"
    text = line.decode("ascii").rstrip("\n")
    return text if len(text) <= _LINE_LIMIT else text[:_LINE_LIMIT] + "..."


def first_divergence(
    a: Sequence[bytes], b: Sequence[bytes]
) -> tuple[int, bytes | None, bytes | None] | None:
    """The first index where two traces differ and both lines (``None``: that trace ended)."""
    for index in range(max(len(a), len(b))):
        la = a[index] if index < len(a) else None
        lb = b[index] if index < len(b) else None
        if la != lb:
            return index, la, lb
    return None


def _audit(
    work: _Work,
    seed_range: range,
    k: int,
    rows: dict[int, dict[str, Any]],
    probes: dict[int, Outcome],
    store: SweepDir | None,
) -> None:
    """C-SWEEP-4: rerun ``k`` spread seeds in new processes; raise on the first mismatch."""
    client, job, runner = work
    picks = spread(list(seed_range), k)
    avoid = {s: frozenset({probes[s].probe}) if s in probes else frozenset() for s in picks}
    futures = [client.submit(audit_seed, s, job, runner, avoid[s], pure=False) for s in picks]
    outcomes: list[Outcome] = client.gather(futures)
    for seed, outcome in zip(picks, outcomes, strict=True):
        if store is not None:
            store.timing(seed, "audit", outcome.worker, outcome.wall_ns, outcome.cpu_ns)
        differ = rows_equal(rows[seed], outcome.row)
        if differ:
            raise _mismatch(
                client, job, seed, runner, rows[seed], outcome, probes.get(seed), differ
            )


def _mismatch(
    client: Any,
    job: Shipped,
    seed: int,
    runner: Runner | None,
    row: dict[str, Any],
    audit: Outcome,
    main: Outcome | None,
    differ: list[str],
) -> SweepAuditError:
    """Find where the two runs' traces part and say it in one error."""
    # The sweep's side is traced again on the worker that ran it when it is still
    # known (same process, same salt); the audit side in a child with the same
    # PYTHONHASHSEED as the audit run.
    where = {} if main is None else {"workers": [main.worker], "allow_other_workers": True}
    ref_future = client.submit(run_seed, seed, job, runner, "none", True, pure=False, **where)
    aud_future = client.submit(
        audit_seed,
        seed,
        job,
        runner,
        frozenset() if main is None else frozenset({main.probe}),
        True,
        pure=False,
    )
    ref, again = client.gather([ref_future, aud_future])
    columns = ", ".join(differ)
    lines = [
        f"audit failed: seed {seed} gave another result when run again in another process "
        f"(PYTHONHASHSEED={audit.hashseed} vs {main.hashseed if main else 'unknown'}); "
        f"columns that differ: {columns}",
        f"  sweep: fingerprint {row.get('fingerprint')} status {row.get('status')}",
        f"  audit: fingerprint {audit.row.get('fingerprint')} status {audit.row.get('status')}",
    ]
    found = first_divergence(ref.trace or [], again.trace or [])
    if found is None:
        lines.append("  the traces of both runs are identical; only the row's values differ")
    else:
        index, la, lb = found
        lines.append(f"  first divergence at message #{index} (0-based, in total order):")
        lines.append(f"    sweep: {_short(la)}")
        lines.append(f"    audit: {_short(lb)}")
    return SweepAuditError(seed, "\n".join(lines))


def default_out(scenario: Scenario) -> Path:
    """Where the CLI writes when no ``--out`` is given: ``sweep-<scenario name>``."""
    return Path(f"sweep-{scenario.name}")
