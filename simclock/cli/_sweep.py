"""``simclock sweep``: a scenario over a range of seeds on Dask, and its report (SPEC §16).

``simclock sweep run SCENARIO --seeds A:B [--out DIR] [--workers N]
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

``simclock sweep SCENARIO ...`` (a first word that is not ``run`` or
``report``) is short for ``simclock sweep run SCENARIO ...``; a scenario
file named ``report`` is swept with ``simclock sweep run report``. Errors are
``simclock sweep run: error: ...`` / ``simclock sweep report: error: ...``.
The progress bar (seeds done, rate, ETA) is `simclock.cli._common.Progress`.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from types import FrameType
from typing import Any

from simclock.cli._common import CommandError, Progress, add_command, describe_failure
from simclock.core._errors import SimclockError
from simclock.core._extras import require_extra

__all__ = ["register", "rewrite_argv"]


_SUBCOMMANDS = ("run", "report")


def rewrite_argv(words: list[str]) -> list[str]:
    """``simclock sweep SCENARIO ...`` is ``simclock sweep run SCENARIO ...``.

    Only a first word that is neither a sub-command nor ``-h``/``--help``
    is taken for the scenario, so a scenario file named ``report`` is swept
    with ``simclock sweep run report``.
    """
    if words and words[0] not in (*_SUBCOMMANDS, "-h", "--help"):
        return ["run", *words]
    return words


def register(subparsers: Any) -> None:
    """Add ``sweep`` with its sub-commands ``sweep run`` and ``sweep report``."""
    parser = subparsers.add_parser(
        "sweep",
        help="run a scenario over many seeds on Dask, or report a sweep",
        description=(
            "`simclock sweep run SCENARIO --seeds A:B` runs SCENARIO once per seed "
            "(locally or on a Dask cluster) into one table; `simclock sweep report TABLE` "
            "summarises and plots a table. `simclock sweep SCENARIO ...` is short for "
            "`simclock sweep run SCENARIO ...`."
        ),
    )
    commands = parser.add_subparsers(dest="sweep_command", metavar="SUBCOMMAND", required=True)
    run = add_command(
        commands,
        "run",
        _run,
        help="run SCENARIO once per seed into DIR/sweep.parquet and DIR/sweep.csv",
        description=(
            "Run SCENARIO once per seed A..B-1 (locally or on a Dask cluster) into one table; "
            "run again on the same DIR, only the missing seeds run. Exit 0: every seed "
            "passed; 1: some failed; 2: bad arguments; 3: the audit found a mismatch; "
            "130: interrupted."
        ),
    )
    run.add_argument("scenario", help="scenario file (TOML)")
    run.add_argument("--seeds", help="seeds A:B (A included, B excluded), e.g. 0:1000")
    run.add_argument("--out", help="directory for the table (default sweep-<scenario name>)")
    run.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    run.add_argument("--scheduler", help="address of an existing Dask scheduler, tcp://HOST:PORT")
    run.add_argument(
        "--record",
        choices=("none", "failing", "all"),
        default="none",
        help="keep the MCAP of failing (or all) runs in DIR/runs/",
    )
    run.add_argument(
        "--audit",
        type=int,
        default=0,
        metavar="K",
        help="run K seeds again in other processes (another PYTHONHASHSEED); fail on any mismatch",
    )
    run.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    report = add_command(
        commands,
        "report",
        _report,
        help="print a sweep table's per-metric summary and plot each metric",
        description="Print the per-metric summary of a sweep table and write <metric>.png.",
    )
    report.add_argument("table", help="the sweep.parquet or sweep.csv of a sweep")
    report.add_argument("--plots", help="directory for the PNGs (default: TABLE's dir/plots)")
    report.add_argument(
        "--scenario", help="the scenario file the sweep ran: its metrics' bounds are drawn"
    )


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


def _run(args: argparse.Namespace) -> int:
    """``simclock sweep run SCENARIO --seeds A:B ...``."""
    if args.seeds is None:
        raise CommandError("--seeds A:B is required, e.g. --seeds 0:1000")
    # The sweep's own extra first: a user without it learns that before the model.
    require_extra("sweep", "simclock sweep")
    from simclock.sim._scenario_file import load_scenario
    from simclock.sweeps._sweep import SweepAuditError, default_out, sweep
    from simclock.sweeps._table import TABLE_CSV, TABLE_PARQUET

    scenario = load_scenario(args.scenario)
    out = default_out(scenario) if args.out is None else args.out
    bar = Progress(f"sweep {scenario.name}", not args.no_progress, unit="items", noun="seeds")
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
    except SweepAuditError as exc:
        print(f"simclock sweep run: {exc}", file=sys.stderr)
        return 3
    except SimclockError:
        raise  # a refusal: the one error line, exit 2
    except KeyboardInterrupt:
        print(
            f"simclock sweep run: interrupted; finished rows are kept in {out}: "
            "run the same command to resume",
            file=sys.stderr,
        )
        return 130
    except Exception as exc:  # the cluster's own failures (a worker that died, a lost scheduler)
        raise CommandError(
            f"the cluster failed: {describe_failure(exc)}; finished rows are kept in "
            f"{out}: run the same command to resume"
        ) from None
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        bar.close()
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
    """``simclock sweep report TABLE [--plots DIR] [--scenario FILE]``."""
    from pathlib import Path

    from simclock.sim._scenario_file import load_scenario
    from simclock.sweeps._report import plot_metrics, summarise
    from simclock.sweeps._table import read_table

    scenario = load_scenario(args.scenario) if args.scenario else None
    try:
        table = read_table(args.table)
    except OSError as exc:
        raise CommandError(f"cannot read table {args.table!r}: {exc.strerror or exc}") from None
    print(summarise(table))
    plots = Path(args.plots) if args.plots else Path(args.table).parent / "plots"
    written = plot_metrics(table, plots, scenario)
    for path in written:
        print(f"plot: {path}")
    return 0
