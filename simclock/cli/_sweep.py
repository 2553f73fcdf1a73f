"""``simclock sweep``: a scenario over a range of seeds on Dask, and its report (SPEC §16).

``simclock sweep SCENARIO --seeds A:B [--out DIR] [--workers N]
[--scheduler tcp://HOST:PORT] [--record failing|all|none] [--audit K]
[--no-progress]`` runs every seed (A included, B excluded) and writes the
table to ``DIR`` (default ``sweep-<scenario name>``); run again on the same
``DIR`` it runs only the seeds the table lacks (C-SWEEP-5). Exit code 0 when
every seed passed, 1 when some failed (their rows say why), 2 for bad
arguments or a scenario error, 3 when the audit found a mismatch (C-SWEEP-4),
130 when interrupted (finished rows are kept; the same command resumes).

``simclock sweep report TABLE [--plots DIR]`` prints the per-metric summary
and writes ``<metric>.png`` for each metric (default: beside the table, in
``plots/``).

Host code: the progress bar (rate, ETA) reads the wall clock, is drawn on
stderr and only on a terminal.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from types import FrameType
from typing import Any

from simclock.core._errors import SimclockError
from simclock.core._extras import require_extra

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``sweep`` sub-command (and ``sweep report``)."""
    parser = subparsers.add_parser(
        "sweep",
        help="run a scenario over many seeds on Dask; `sweep report TABLE` summarises one",
        description=(
            "Run SCENARIO once per seed (locally or on a Dask cluster) into one table; "
            "or `simclock sweep report TABLE` to summarise and plot a table."
        ),
    )
    parser.add_argument("scenario", help="scenario file (TOML), or `report`")
    parser.add_argument("table", nargs="?", help="with `report`: the sweep.parquet or sweep.csv")
    parser.add_argument("--seeds", help="seeds A:B (A included, B excluded), e.g. 0:1000")
    parser.add_argument("--out", help="directory for the table (default sweep-<scenario name>)")
    parser.add_argument(
        "--workers", type=int, help="local worker processes (default: one per core)"
    )
    parser.add_argument(
        "--scheduler", help="address of an existing Dask scheduler, tcp://HOST:PORT"
    )
    parser.add_argument(
        "--record",
        choices=("none", "failing", "all"),
        default="none",
        help="keep the MCAP of failing (or all) runs in DIR/runs/",
    )
    parser.add_argument(
        "--audit",
        type=int,
        default=0,
        metavar="K",
        help="run K seeds again in other processes (another PYTHONHASHSEED); fail on any mismatch",
    )
    parser.add_argument(
        "--plots", help="with `report`: directory for the PNGs (default TABLE's dir/plots)"
    )
    parser.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    parser.set_defaults(func=_handler)


class _Bar:
    """A rich progress bar with rate and ETA on a terminal's stderr; nothing otherwise."""

    def __init__(self, label: str, enabled: bool, *, console: Any = None) -> None:
        from rich.console import Console

        console = Console(stderr=True) if console is None else console
        self._bar: Any = None
        self._task: Any = None
        if enabled and console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[rate]}"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(label, total=None, rate="")

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            return
        task = self._bar.tasks[0]
        speed = task.speed
        rate = f"{speed:.1f} seeds/s" if speed else ""
        self._bar.update(self._task, completed=done, total=total, rate=rate)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _fail(text: str) -> int:
    print(f"simclock sweep: error: {text}", file=sys.stderr)
    return 2


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGINT during a sweep: stop all logging, then the usual ``KeyboardInterrupt``.

    Logging stops in the signal handler, before the interrupt reaches Dask's
    client: its event-loop thread then cancels pending calls and may log its
    own races (a ``NameError`` in ``distributed.utils.sync`` via
    ``tornado.application``) while the sweep unwinds. The rows are flushed as
    they finish; the CLI's one line is what the user needs (exit 130).
    Logging stays off: Dask's loop thread outlives the sweep, and the process
    exits next.
    """
    logging.disable(logging.CRITICAL)
    signal.default_int_handler(signum, frame)


def _handler(args: argparse.Namespace) -> int:
    if args.scenario == "report":
        return _report(args)
    if args.table is not None:
        return _fail(
            f"unexpected argument {args.table!r}; did you mean `simclock sweep report TABLE`?"
        )
    if args.seeds is None:
        return _fail("--seeds A:B is required, e.g. --seeds 0:1000")
    from simclock.sim._scenario_file import load_scenario
    from simclock.sweeps._sweep import SweepAuditError, default_out, sweep
    from simclock.sweeps._table import TABLE_CSV, TABLE_PARQUET

    out = args.out
    try:
        # The sweep's own extra first: a user without it learns that before the model.
        require_extra("sweep", "simclock sweep")
        scenario = load_scenario(args.scenario)
        if out is None:
            out = default_out(scenario)
        bar = _Bar(f"sweep {scenario.name}", not args.no_progress)
        # Only in the main thread, and not where SIGINT is ignored or handled already.
        ours = (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        )
        if ours:
            signal.signal(signal.SIGINT, _interrupt)
        try:
            table = sweep(
                scenario,
                args.seeds,
                out=out,
                workers=args.workers,
                scheduler=args.scheduler,
                record=args.record,
                audit=args.audit,
                progress=bar,
            )
        finally:
            if ours:
                signal.signal(signal.SIGINT, signal.default_int_handler)
            bar.close()
    except SweepAuditError as exc:
        print(f"simclock sweep: {exc}", file=sys.stderr)
        return 3
    except SimclockError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        print(
            f"simclock sweep: interrupted; finished rows are kept in {out}: "
            "run the same command to resume",
            file=sys.stderr,
        )
        return 130
    except Exception as exc:  # the cluster's own failures (a worker that died, a lost scheduler)
        return _fail(
            f"the cluster failed: {type(exc).__name__}: {exc}; finished rows are kept in "
            f"{out}: run the same command to resume"
        )
    rows = table.to_pylist()
    failing = [r for r in rows if r["status"] != "ok"]
    print(
        f"sweep: {scenario.name}, {len(rows)} seeds in the table, "
        f"{len(rows) - len(failing)} ok, {len(failing)} error"
    )
    if args.audit:
        print(
            f"audit: {min(args.audit, len(rows))} seeds run again in other processes, all identical"
        )
    print(f"table: {out}/{TABLE_PARQUET} {out}/{TABLE_CSV}")
    for r in failing[:5]:
        print(f"  seed {r['seed']}: {r['message']}")
    if failing:
        seed = failing[0]["seed"]
        print(f"reproduce: simclock run {args.scenario} --seed {seed} --out seed-{seed}.mcap")
        return 1
    return 0


def _report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from simclock.sweeps._report import plot_metrics, summarise
    from simclock.sweeps._table import read_table

    if args.table is None:
        return _fail("report needs a TABLE: simclock sweep report DIR/sweep.parquet")
    try:
        table = read_table(args.table)
    except SimclockError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot read table {args.table!r}: {exc.strerror or exc}")
    print(summarise(table))
    plots = Path(args.plots) if args.plots else Path(args.table).parent / "plots"
    written = plot_metrics(table, plots)
    for path in written:
        print(f"plot: {path}")
    return 0
