"""How a sweep hands its seeds to Dask: tasks of about half a second of runs each (SPEC §16).

A Dask task costs the worker a few ms of its own event loop's work (the
task's messages, the transfer of its result), done in the worker's main
thread while the next run holds the GIL: measured on the pendulum example,
~3.6 ms of the worker's CPU and ~7 ms of wall time per task (see
``docs/benchmarks.md``, "Sweeps"). For a 1 s run that is under 1 %; for a
20 ms run it is a third. So the first tasks hold one seed each, and the
later ones as many seeds as take about `BATCH_S` by the runs measured
so far (at most `MAX_BATCH`). Near the end the remaining seeds are
split evenly over the tasks in flight, so the workers finish together.

Dask still decides where and when every task runs (C-SWEEP-2): this module
only cuts the seed list into tasks and submits a new one as one finishes.
Each seed is still an independent run with its own row, so the table does
not depend on how seeds were grouped (C-SWEEP-1); rows reach the output
directory when their task finishes, i.e. at most ~`BATCH_S` of runs
per worker are lost to a kill (C-SWEEP-5).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from simclock.sweeps._task import Outcome, Runner, run_seeds

__all__ = ["BATCH_S", "MAX_BATCH", "batch_size", "batches"]

BATCH_S = 0.5
"""Wall time of runs a task aims at, once a run's time is known."""

MAX_BATCH = 64
"""Most seeds in one task (bounds a result's size with ``record="all"``)."""


def batch_size(mean_run_s: float, remaining: int, slots: int) -> int:
    """Seeds for the next task: ~``BATCH_S`` of runs, at most ``remaining / slots`` (>= 1)."""
    by_time = MAX_BATCH if mean_run_s <= 0 else int(BATCH_S / mean_run_s)
    share = math.ceil(remaining / max(1, slots))
    return max(1, min(by_time, MAX_BATCH, share))


def batches(
    client: Any, job: Any, todo: Sequence[int], runner: Runner | None, record: str
) -> Iterator[list[Outcome]]:
    """Run every seed of ``todo`` on ``client``'s cluster; yield each task's outcomes as it lands.

    One list per finished task (its seeds' outcomes in the task's order), so
    the caller can flush a task's rows at once.
    ``job`` is the scattered scenario (a Dask future). Two tasks per worker
    thread are kept in flight (one running, one ready), counted when the
    sweep starts.
    """
    import distributed

    dask: Any = distributed
    pending = deque(todo)
    slots = 2 * max(1, sum(client.nthreads().values()))
    stream = dask.as_completed()
    total_ns = 0
    count = 0

    def submit(k: int) -> None:
        batch = [pending.popleft() for _ in range(min(k, len(pending)))]
        stream.add(client.submit(run_seeds, batch, job, runner, record, pure=False))

    # Until a run has been timed, one seed per task.
    for _ in range(min(slots, len(pending))):
        submit(1)
    for future in stream:
        done: list[Outcome] = future.result()
        future.release()
        for outcome in done:
            total_ns += outcome.wall_ns
            count += 1
        if pending:  # before handing rows out: the worker must not wait for the client
            submit(batch_size(total_ns / count / 1e9, len(pending), slots))
        yield done
