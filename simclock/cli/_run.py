"""``simclock run`` and ``simclock timeline``: the scenario runner's command line (SPEC §7-§11).

``simclock run SCENARIO [--out run.mcap] [--ros2 DIR] [--seed N] [--mode MODE]
[--no-progress]`` validates and runs a scenario file, prints a summary and, last,
the line ``fingerprint: <hex>`` (C-X-FP). ``--ros2 DIR`` also writes the run as
a ROS 2 bag (C-ROS-1; the recording is made next to ``DIR`` and removed unless
``--out`` keeps it). Exit code 0, or 2 for a scenario error
(printed as ``simclock run: error: <key>: <problem>``).

``simclock timeline RUN -o timeline.png [--start "0 ms"] [--span "40 ms"]``
plots a recording's device samples on the grid.

This module is host code: the progress bar reads the wall clock (never the
simulation), appears only on a terminal and only once a run has taken more
than a second, and goes to stderr so stdout stays machine-readable.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from simclock.core._errors import SimclockError, SimclockValueError
from simclock.realtime._pacing import PacingMode
from simclock.sim._grid import format_ns

__all__ = ["register"]

_PROGRESS_AFTER_NS = 1_000_000_000
_REDRAW_NS = 100_000_000


def register(subparsers: Any) -> None:
    """Add the ``run`` and ``timeline`` sub-commands."""
    run = subparsers.add_parser(
        "run",
        help="run a scenario file (TOML) and print its fingerprint",
        description="Run a scenario: physics grid, devices, controllers, episodes.",
    )
    run.add_argument("scenario", help="scenario file, e.g. examples/pendulum.toml")
    run.add_argument("--out", help="record the run to this MCAP file")
    run.add_argument(
        "--ros2", metavar="DIR", help="also write the run as a ROS 2 bag (a new rosbag2 directory)"
    )
    run.add_argument("--seed", type=int, help="override the scenario's seed (int >= 0)")
    run.add_argument(
        "--mode",
        choices=[m.value for m in PacingMode],
        help="override the scenario's execution mode (pacing only; the trace is identical)",
    )
    run.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    run.set_defaults(func=_run)
    timeline = subparsers.add_parser(
        "timeline",
        help="plot nominal vs actual acquisition and delivery of a recorded run",
        description="Plot a recording's device samples on the physics grid (PNG).",
    )
    timeline.add_argument("run", help="a recording made by simclock run --out")
    timeline.add_argument("-o", "--output", required=True, help="PNG file to write")
    timeline.add_argument("--start", default="0 ms", help='window start, e.g. "0 ms"')
    timeline.add_argument("--span", default="40 ms", help='window length, e.g. "40 ms"')
    timeline.set_defaults(func=_timeline)


class _Progress:
    """A rich progress bar on stderr that appears once a run has lasted 1 s of wall time.

    ``console`` and ``wall_ns`` are injectable for tests; by default stderr and
    ``time.monotonic_ns``. Nothing is shown unless the console is a terminal.
    The bar is redrawn at most every 100 ms of wall time.
    """

    def __init__(
        self,
        label: str,
        enabled: bool,
        *,
        console: Any = None,
        wall_ns: Callable[[], int] | None = None,
    ) -> None:
        from rich.console import Console

        self._console = Console(stderr=True) if console is None else console
        self._enabled = enabled and self._console.is_terminal
        self._label = label
        # Host-side wall clock, for the progress display only; the run never sees it.
        self._wall = time.monotonic_ns if wall_ns is None else wall_ns  # noqa: SC301
        self._wall_start = self._wall()
        self._last_draw = self._wall_start
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, done_ns: int, total_ns: int) -> object:
        if not self._enabled:
            return None
        now = self._wall()
        if self._bar is None:
            if now - self._wall_start < _PROGRESS_AFTER_NS:
                return None
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[sim]}"),
                TimeRemainingColumn(),
                console=self._console,
                transient=True,
                auto_refresh=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(self._label, total=total_ns, sim="")
        elif now - self._last_draw < _REDRAW_NS and done_ns < total_ns:
            return None
        self._last_draw = now
        self._bar.update(
            self._task,
            completed=done_ns,
            sim=f"{format_ns(done_ns)} / {format_ns(total_ns)} simulated",
        )
        self._bar.refresh()
        return None

    @property
    def shown(self) -> bool:
        """Whether the bar has appeared."""
        return self._bar is not None

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _ros2_out(args: argparse.Namespace) -> tuple[str | None, str]:
    """The recording to write and the scratch file to remove (``--ros2`` without ``--out``).

    ``--ros2 DIR`` is refused before the run when ``DIR`` exists (C-ROS-1's export
    would refuse it after the run).
    """
    if args.ros2 is None:
        return args.out, ""
    if os.path.lexists(args.ros2):
        raise SimclockValueError(
            f"--ros2 {args.ros2!r} exists already; pass the path of a new directory for the bag"
        )
    if args.out is not None:
        return args.out, ""
    parent = os.path.dirname(os.path.abspath(args.ros2))
    fd, scratch = tempfile.mkstemp(prefix=".simclock-run-", suffix=".mcap", dir=parent)
    os.close(fd)
    return scratch, scratch


def _run(args: argparse.Namespace) -> int:
    from simclock.sim._scenario import run_scenario
    from simclock.sim._scenario_file import load_scenario

    try:
        scenario = load_scenario(args.scenario)
        if args.seed is not None and args.seed < 0:
            print(f"simclock run: error: --seed must be >= 0, got {args.seed}", file=sys.stderr)
            return 2
        out, scratch = _ros2_out(args)
        progress = _Progress(f"simclock run {scenario.name}", not args.no_progress)
        try:
            result = run_scenario(
                scenario, seed=args.seed, mode=args.mode, out=out, progress=progress
            )
            if args.ros2 is not None:
                from simclock.recording._export import export_ros2

                assert out is not None
                export_ros2(out, args.ros2)
        finally:
            progress.close()
            if scratch:
                os.unlink(scratch)
    except SimclockError as exc:
        print(f"simclock run: error: {exc}", file=sys.stderr)
        return 2
    physics = scenario.physics
    engine = (
        f"MuJoCo {physics.mujoco_model.name}" if physics.mujoco_model is not None else "no engine"
    )
    episodes = f"{scenario.episodes} episode" + ("s" if scenario.episodes != 1 else "")
    print(f"scenario: {scenario.name} ({args.scenario})")
    print(
        f"seed {result.seed}, mode {result.mode}, grid {format_ns(physics.step_ns)} ({engine}), "
        f"{format_ns(scenario.duration_ns)} x {episodes}, ended at {format_ns(result.end_ns)}"
    )
    for component, stats in result.stats.items():
        device = component.removeprefix("sensors/")
        delivered = (
            f", {result.samples[device]} delivered" if component.startswith("sensors/") else ""
        )
        print(
            f"  {component}: {stats.fired} fired{delivered}, {stats.overrun} overrun, "
            f"{stats.failed} failed"
        )
    if result.dropped_in_flight:
        print(f"  {result.dropped_in_flight} samples in flight dropped at episode resets")
    pacing = result.pacing
    if pacing is not None and pacing.rtf is not None:
        # Lag is the host's, not the simulation's: reported here, never in the trace.
        lags = len(pacing.lag_events)
        print(
            f"pacing: rtf {pacing.rtf}, max lag {format_ns(pacing.max_lag_ns)}, "
            f"{lags} PACING_LAG event{'s' if lags != 1 else ''}"
        )
    if args.out is not None:
        print(f"recording: {result.out} ({result.messages} messages + /clock)")
    if args.ros2 is not None:
        print(f"ros2 bag: {args.ros2} (rosbag2, MCAP storage)")
    print(f"fingerprint: {result.fingerprint}")
    return 0


def _timeline(args: argparse.Namespace) -> int:
    from simclock.sim._scenario_file import parse_duration
    from simclock.sim._timeline import load_samples, plot_timeline

    try:
        start = parse_duration(args.start, "--start")
        span = parse_duration(args.span, "--span")
        recording = load_samples(args.run)
        drawn = plot_timeline(recording, args.output, start_ns=start, span_ns=span)
    except SimclockError as exc:
        print(f"simclock timeline: error: {exc}", file=sys.stderr)
        return 2
    print(
        f"timeline: {args.output} ({drawn} samples of {len(recording.devices)} devices, "
        f"{format_ns(start)} to {format_ns(start + span)})"
    )
    return 0
