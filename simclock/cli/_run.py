"""``simclock run`` and ``simclock timeline``: the scenario runner's command line (SPEC §7-§11).

``simclock run SCENARIO [--out run.mcap] [--ros2 DIR] [--seed N] [--mode MODE]
[--no-progress] [--live [HOST:PORT]]`` validates and runs a scenario file and
prints a summary, the scenario's ``[metrics]`` (each with its bounds, if any) and, last, the line
``fingerprint: <hex>`` (C-X-FP). A metric outside its bounds fails the run
exactly as it fails the seed's row of a sweep (C-SWEEP-3): the line
``failed: <the sweep row's message>`` comes before the fingerprint, so
``simclock run SCENARIO --seed N`` shows why seed N failed. Exit status 0
when every bound holds, 1 when one is broken (the recording, if any, is
complete), 2 for a scenario error (``simclock run: error: <key>: <problem>``).
``--ros2 DIR`` also writes the run as a ROS 2 bag (C-ROS-1; the recording is
made next to ``DIR`` and removed unless ``--out`` keeps it).
``--live`` shows the run in the Foxglove app as it runs
(`simclock.recording._live`): paced ``realtime_paced`` unless ``--mode``
or the file names another wall-paced mode; the trace and the fingerprint are
those of the same run without it (C-MODE-1).

``simclock timeline RUN -o timeline.png [--start "0 ms"] [--span "40 ms"]``
plots a recording's device samples on the grid.

The progress bar is `simclock.cli._common.Progress` (stderr, terminal only).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from simclock.cli._common import CommandError, Progress, add_command
from simclock.cli._live import add_live_argument, close_live, open_live
from simclock.realtime._pacing import PacingMode
from simclock.sim._grid import format_ns
from simclock.sim._metrics import MetricConfig, metric_violation

if TYPE_CHECKING:
    from simclock.recording._live import LiveView

__all__ = ["metric_lines", "register"]


def register(subparsers: Any) -> None:
    """Add the ``run`` and ``timeline`` sub-commands."""
    run = add_command(
        subparsers,
        "run",
        _run,
        help="run a scenario file (TOML): its metrics and fingerprint",
        description=(
            "Run a scenario: physics grid, devices, controllers, episodes. Prints the "
            "scenario's metrics and its fingerprint; exit 1 when a metric breaks its bounds."
        ),
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
    add_live_argument(run, "the run")
    timeline = add_command(
        subparsers,
        "timeline",
        _timeline,
        help="plot nominal vs actual acquisition and delivery of a recorded run",
        description="Plot a recording's device samples on the physics grid (PNG).",
    )
    timeline.add_argument("run", help="a recording made by simclock run --out")
    timeline.add_argument("-o", "--output", required=True, help="PNG file to write")
    timeline.add_argument("--start", default="0 ms", help='window start, e.g. "0 ms"')
    timeline.add_argument("--span", default="40 ms", help='window length, e.g. "40 ms"')


_UNPACED = (PacingMode.UNBOUNDED.value, PacingMode.DETERMINISTIC_CI.value)


def _ticking(progress: Progress, view: LiveView) -> Callable[[int, int], None]:
    """The run's progress callback that also moves the live view's time (after each chunk)."""

    def tick(done: int, total: int) -> None:
        view.time_to(done)
        progress(done, total)

    return tick


def _ros2_out(args: argparse.Namespace) -> tuple[str | None, str]:
    """The recording to write and the scratch file to remove (``--ros2`` without ``--out``).

    ``--ros2 DIR`` is refused before the run when ``DIR`` exists (C-ROS-1's export
    would refuse it after the run).
    """
    if args.ros2 is None:
        return args.out, ""
    if os.path.lexists(args.ros2):
        raise CommandError(
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

    scenario = load_scenario(args.scenario)
    if args.seed is not None and args.seed < 0:
        raise CommandError(f"--seed must be >= 0, got {args.seed}")
    mode = args.mode
    if args.live is not None and mode is None and scenario.mode in _UNPACED:
        mode = PacingMode.REALTIME_PACED.value  # a live view at the pace of the simulation
    out, scratch = _ros2_out(args)
    view = None
    if args.live is not None:
        view = open_live(args, clock_period_ns=scenario.physics.step_ns, start_ns=0)
        for topic in (
            *(d.spec.topic for d in scenario.devices),
            *(c.spec.topic for c in scenario.controllers),
        ):
            view.advertise(topic)
    progress = Progress(f"simclock run {scenario.name}", not args.no_progress)
    tick = progress if view is None else _ticking(progress, view)
    end_ns: int | None = None
    try:
        result = run_scenario(
            scenario,
            seed=args.seed,
            mode=mode,
            out=out,
            progress=tick,
            subscriber=None if view is None else view.record,
        )
        end_ns = result.end_ns
        if args.ros2 is not None:
            from simclock.recording._export import export_ros2

            assert out is not None
            export_ros2(out, args.ros2)
    finally:
        progress.close()
        close_live(view, end_ns)
        if scratch:
            os.unlink(scratch)
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
        print(f"recording: {result.out} ({result.messages} bus messages)")
    if args.ros2 is not None:
        print(f"ros2 bag: {args.ros2} (rosbag2, MCAP storage)")
    lines, broken = metric_lines(scenario.metrics, result.metrics)
    for line in lines:
        print(line)
    if broken is not None:
        print(f"failed: {broken}")
    print(f"fingerprint: {result.fingerprint}")
    return 0 if broken is None else 1


def metric_lines(
    configs: Sequence[MetricConfig], values: Mapping[str, float | int | None]
) -> tuple[list[str], str | None]:
    """``simclock run``'s metric lines, and the first broken bound (the sweep row's message).

    One line per metric in declaration order, ``  name = value`` (``repr``,
    as the sweep's message quotes it; ``none`` over no samples), then its
    bounds and ``ok`` or ``broken`` when it has any. The verdict is
    `metric_violation`'s, the rule of a sweep's
    row (C-SWEEP-3); no lines at all for a scenario without metrics.
    """
    if not configs:
        return [], None
    lines = ["metrics:"]
    for config in configs:
        value = values.get(config.name)
        text = f"  {config.name} = {'none (no samples)' if value is None else repr(value)}"
        bounds = [
            f"{word} {bound!r}"
            for word, bound in (("min", config.minimum), ("max", config.maximum))
            if bound is not None
        ]
        if bounds:
            verdict = "broken" if metric_violation([config], values) is not None else "ok"
            text += f" ({', '.join(bounds)}: {verdict})"
        lines.append(text)
    return lines, metric_violation(configs, values)


def _timeline(args: argparse.Namespace) -> int:
    from simclock.sim._scenario_file import parse_duration
    from simclock.sim._timeline import load_samples, plot_timeline

    start = parse_duration(args.start, "--start")
    span = parse_duration(args.span, "--span")
    recording = load_samples(args.run)
    drawn = plot_timeline(recording, args.output, start_ns=start, span_ns=span)
    print(
        f"timeline: {args.output} ({drawn} samples of {len(recording.devices)} devices, "
        f"{format_ns(start)} to {format_ns(start + span)})"
    )
    return 0
