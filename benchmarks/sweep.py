"""Seeds per second: a plain loop in one process vs ``simclock.sweep`` on 1 and 2 Dask workers.

All three in one run, on the same scenario and seeds (the pendulum example
with its duration set by ``--duration``), so the ratios are what matter:

* ``2 workers / 1 worker``: how well seeds spread over processes (the issue
  asks >= 1.7x on 2 cores);
* ``per-run overhead``: what a 1-worker sweep adds to each run over the plain
  loop, in ms and in % (a Dask task, its messages, pickling the outcome,
  flushing its row).

``--duration`` is the simulated time of one run: ``"1 s"`` (the default; the
pendulum runs it in ~20 ms) or ``wall-1s``, which picks the whole number of
simulated seconds whose run takes ~1 s of CPU here (timed before the
benchmark, printed): the issue's "1 s scenario" read as 1 s of wall time.

Besides wall-clock rates (which the machine's load moves), it prints CPU
figures the load does not move much: CPU per run (``time.thread_time`` of the
run's thread: the plain loop's, and the worker's in ``timing.csv``) and CPU
per seed of each process of the 1-worker sweep (the worker process, i.e. its
runs plus its own threads; this process, which holds the client, the local
scheduler and the worker's nanny).

The clusters are started before timing (a ``LocalCluster`` with 1 then 2
single-threaded worker processes, configured as ``simclock.sweep`` makes its
own, reached through ``scheduler=``), and every worker runs a few seeds
first, so imports and cluster start-up are not counted. The tables of the
three ways are checked equal. Host code: reads the wall clock.

Usage: ``python benchmarks/sweep.py [--seeds 40] [--repeat 3] [--duration "1 s" | wall-1s]``
"""

from __future__ import annotations

import argparse
import csv
import logging
import os
import re
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psutil  # type: ignore[import-untyped]  # no stubs; installed with distributed
from _common import markdown_table

import simclock
from simclock.sweeps._sweep import WORKER_CONFIG

ROOT = Path(__file__).resolve().parent.parent
WALL_1S = "wall-1s"


def _scenario(directory: Path, duration: str) -> Path:
    text = (ROOT / "examples" / "pendulum.toml").read_text(encoding="utf-8")
    text = re.sub(r'^duration = ".*"$', f'duration = "{duration}"', text, flags=re.M)
    text = text.replace(
        'mujoco = "pendulum.xml"', f'mujoco = "{ROOT / "examples" / "pendulum.xml"}"'
    )
    path = directory / "pendulum-bench.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _calibrate(directory: Path) -> str:
    """Simulated seconds whose run takes ~1 s of CPU: from the CPU of 1 s runs (best of 3)."""
    scenario = simclock.load_scenario(_scenario(directory, "1 s"))
    simclock.run_scenario(scenario, seed=1)  # warm-up (imports, MuJoCo)
    best = float("inf")
    for seed in range(3):
        start = time.thread_time()
        simclock.run_scenario(scenario, seed=seed)
        best = min(best, time.thread_time() - start)
    return f"{max(1, round(1.0 / best))} s"


def _plain(scenario: simclock.Scenario, seeds: range) -> list[str]:
    return [simclock.run_scenario(scenario, seed=s).fingerprint for s in seeds]


def _best(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (all its threads)."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def _own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40, help="seeds per timed sweep")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many")
    parser.add_argument(
        "--duration",
        default="1 s",
        help=f'simulated time per run, e.g. "1 s", or {WALL_1S}: a run of ~1 s of CPU',
    )
    args = parser.parse_args()
    import distributed

    dask: Any = distributed
    with tempfile.TemporaryDirectory() as tmp:
        duration = _calibrate(Path(tmp)) if args.duration == WALL_1S else args.duration
        path = _scenario(Path(tmp), duration)
        scenario = simclock.load_scenario(path)
        seeds = range(1000, 1000 + args.seeds)
        expected = _plain(scenario, range(1000, 1002))  # warm-up (imports, MuJoCo)
        rates: dict[str, float] = {}
        cpu_start = time.thread_time()
        plain_s = _best(lambda: _plain(scenario, seeds), args.repeat)
        plain_cpu = (time.thread_time() - cpu_start) / (args.repeat * args.seeds)
        rates["plain loop, 1 process"] = args.seeds / plain_s
        for n in (1, 2):
            with dask.LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.ERROR,
                config=WORKER_CONFIG,
            ) as cluster:
                address = cluster.scheduler_address
                warm = simclock.sweep(scenario, range(1000, 1000 + 2 * n), scheduler=address)
                assert warm.column("fingerprint").to_pylist()[:2] == expected
                runs = iter(range(args.repeat))

                def once(address: str = address, n: int = n, runs: Any = runs) -> None:
                    out = Path(tmp) / f"out-{n}-{next(runs)}"
                    simclock.sweep(scenario, seeds, scheduler=address, out=out)

                if n == 1:
                    with dask.Client(address) as client:
                        [worker_pid] = client.run(os.getpid).values()
                    # The nanny lives in this process (LocalCluster), beside client and scheduler.
                    assert psutil.Process(worker_pid).ppid() == os.getpid()
                    before = (_cpu_s(worker_pid), _own_cpu_s())
                seconds = _best(once, args.repeat)
                if n == 1:
                    after = (_cpu_s(worker_pid), _own_cpu_s())
                    count = args.repeat * args.seeds
                    per_seed = [(b - a) / count for a, b in zip(before, after, strict=True)]
                rates[f"sweep, {n} worker" + ("s" if n > 1 else "")] = args.seeds / seconds
                tables = {
                    (Path(tmp) / f"out-{n}-{i}" / "sweep.parquet").read_bytes()
                    for i in range(args.repeat)
                }
                assert len(tables) == 1, "a sweep table differs between runs"
                if n == 1:
                    worker_cpu = 0.0
                    for i in range(args.repeat):
                        with (Path(tmp) / f"out-1-{i}" / "timing.csv").open() as f:
                            worker_cpu += sum(float(r["cpu_s"]) for r in csv.DictReader(f))
                    worker_cpu /= args.repeat * args.seeds
                    # The fixed cost of one sweep call (connect, scatter, write the table):
                    # a sweep of one seed, minus that seed's run.
                    single = _best(
                        lambda a=address: simclock.sweep(scenario, range(7, 8), scheduler=a),
                        args.repeat,
                    )
                    fixed = single - plain_s / args.seeds
                    marginal = (seconds - single) / (args.seeds - 1)
    plain, one, two = rates.values()
    load = os.getloadavg()
    print(
        f"{args.seeds} seeds of the pendulum ({duration} simulated each), best of "
        f"{args.repeat}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"{os.cpu_count()} cores"
    )
    print(markdown_table(["how", "seeds/s"], [(k, f"{v:.2f}") for k, v in rates.items()]))
    print(f"2 workers / 1 worker: {two / one:.2f}x")
    print(f"end-to-end, 1-worker sweep vs plain loop: {plain / one - 1:+.1%} time per seed")
    per_run = plain_s / args.seeds
    print(
        f"per-run wall: plain {per_run * 1e3:.1f} ms, in a 1-worker sweep {marginal * 1e3:.1f} ms: "
        f"overhead {(marginal - per_run) * 1e3:+.1f} ms per run ({marginal / per_run - 1:+.1%}); "
        f"fixed cost per sweep call {fixed:.2f} s"
    )
    print(
        f"CPU per run (load-independent): plain {plain_cpu * 1e3:.1f} ms, in a worker "
        f"{worker_cpu * 1e3:.1f} ms ({(worker_cpu - plain_cpu) * 1e3:+.1f} ms, "
        f"{worker_cpu / plain_cpu - 1:+.1%})"
    )
    worker, client = per_seed
    total = worker + client
    print(
        f"CPU per seed of the 1-worker sweep's processes: worker {worker * 1e3:.1f} ms "
        f"(its runs {worker_cpu * 1e3:.1f} + its own threads {(worker - worker_cpu) * 1e3:.1f}), "
        f"this process (client, scheduler, nanny; with each sweep call's fixed cost) "
        f"{client * 1e3:.1f} ms; total {total * 1e3:.1f} ms = {total / plain_cpu - 1:+.1%} "
        "over the plain run"
    )
    return 0


if __name__ == "__main__":  # LocalCluster spawns workers: the guard is required
    raise SystemExit(main())
