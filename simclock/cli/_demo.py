"""``make demo``: run the pendulum scenario, record it, replay and verify it, plot it.

Steps, all through the public command line so the demo shows what a user types:

1. ``simclock run examples/pendulum.toml --out out/pendulum.mcap``: a MuJoCo
   pendulum on a 2 ms grid with a 250 Hz strict PD controller, a 2 ms strict
   encoder and a 7 ms IMU with 3 ms latency (next_boundary), 10 s simulated;
   prints per-component counts and the run's fingerprint (C-X-FP).
2. When `simclock.ReplayClock` is available: replay the recording,
   fingerprint the replayed bus trace and check it equals the run's (C-REP-4).
3. ``simclock timeline out/pendulum.mcap -o out/timeline.png``: nominal vs
   actual acquisition and delivery on the grid for the first 40 ms.

It ends by saying how to type ``simclock`` yourself: ``make demo`` installs
the commands into ``.venv/bin``, which is on ``PATH`` only once the
environment is activated.

``out/`` is git-ignored. Exit code 0 when every step succeeds.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Mapping
from pathlib import Path

import simclock
from simclock.cli._main import main as cli

__all__ = ["main"]

_ROOT = Path(__file__).resolve().parents[2]  # simclock/cli/_demo.py -> the repository


def main(out_dir: str = "out") -> int:
    """Run the three steps above; returns the exit code."""
    scenario = _ROOT / "examples" / "pendulum.toml"
    if not scenario.is_file():
        print(f"demo: {scenario} not found; run make demo from a clone of the repository")
        return 1
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    recording = out / "pendulum.mcap"
    # As the user would type it: relative to the working directory when below it
    # (make demo runs in the clone), else the whole path.
    shown = scenario
    with contextlib.suppress(ValueError):
        shown = scenario.relative_to(Path.cwd().resolve())
    print(f"$ simclock run {shown} --out {recording}")
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        code = cli(["run", str(shown), "--out", str(recording)])
    print(captured.getvalue(), end="")
    if code != 0:
        return code
    fingerprint = captured.getvalue().splitlines()[-1].removeprefix("fingerprint: ")

    replay_clock = getattr(simclock, "ReplayClock", None)
    if replay_clock is None:
        print("replay: simclock.ReplayClock is not available in this build; skipped")
    else:
        clock = replay_clock(recording)
        replayed = simclock.Fingerprinter()
        clock.bus.subscribe(None, replayed)
        clock.advance(clock.end_ns() - clock.now_ns())
        if replayed.hexdigest() != fingerprint:
            print(
                f"replay: MISMATCH: replayed {replayed.count} messages with fingerprint "
                f"{replayed.hexdigest()}, the run printed {fingerprint}"
            )
            return 1
        print(f"replay: {replayed.count} messages replayed, fingerprint matches the run")

    timeline = out / "timeline.png"
    print(f"$ simclock timeline {recording} -o {timeline}")
    code = cli(["timeline", str(recording), "-o", str(timeline)])
    if code == 0:
        for line in path_hint(Path(sys.executable).parent, Path.cwd(), os.environ):
            print(line)
    return code


def path_hint(scripts: Path, cwd: Path, environ: Mapping[str, str]) -> list[str]:
    """The demo's last lines: how the ``simclock`` command gets on ``PATH``.

    ``scripts`` is the running environment's script directory (``.venv/bin``
    for ``make demo``), shown relative to ``cwd`` when below it, as the user
    would type it.
    """
    on_path = [Path(p) for p in environ.get("PATH", "").split(os.pathsep) if p]
    if scripts in on_path:
        return [f"The simclock commands are on your PATH ({scripts})."]
    shown = scripts
    with contextlib.suppress(ValueError):
        shown = scripts.relative_to(cwd)
    lines = [f"The simclock commands are in {shown}, which is not on your PATH."]
    if (scripts / "activate").is_file():
        lines.append(f"To type them as simclock ..., activate the environment: . {shown}/activate")
    lines.append(f"or run them by their path: {shown}/simclock --help")
    return lines


if __name__ == "__main__":  # the command make demo runs: python -m simclock.cli._demo
    sys.exit(main())
