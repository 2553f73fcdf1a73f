"""``simclock --help`` start-up: what the command line imports and how long the process takes.

For each source tree given (``--tree DIR``, repeatable; default: this
checkout) the script measures, in one run:

* the modules ``simclock --help`` loads **beyond** ``import simclock`` (the
  CLI's own cost: its table of commands, or every command module), their
  number and their summed ``-X importtime`` self time;
* the summed ``-X importtime`` of the whole ``--help`` process and of
  ``import simclock`` alone;
* the wall time of whole processes (``python -m simclock --help`` and
  ``python -c "import simclock"``), the median of ``--repeat`` runs,
  alternating between trees so load changes hit both alike.

A tree of an older commit is a plain export, e.g.
``git archive ce0f57b simclock | tar -x -C /tmp/before``. To see the CLI's
share alone while ``import simclock`` still loads every sub-package, give
copies whose ``simclock/__init__.py`` is emptied (a stand-in for a lazy root
package): then ``--help`` pays only for what the CLI itself imports.

Command: ``python benchmarks/cli_startup.py --tree /tmp/before --tree . --repeat 15``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

_BEYOND = """
import contextlib, io, json, sys
import simclock
before = set(sys.modules)
from simclock.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(["--help"])
    except SystemExit:
        pass
print(json.dumps(sorted(set(sys.modules) - before)))
"""
_HELP = "from simclock.cli import main; main(['--help'])"
_IMPORT = "import simclock"
_WATCH = (
    "dask", "distributed", "mujoco", "rich", "pyarrow", "matplotlib", "numpy", "mcap",
    "simclock.sweeps", "simclock.recording",
)  # fmt: skip


def _env(tree: Path) -> dict[str, str]:
    # With -P (below): the tree alone decides, not the working directory.
    return {**os.environ, "PYTHONPATH": str(tree)}


def _import_times(tree: Path, code: str) -> dict[str, int]:
    """``-X importtime`` self times (us) per module of ``python -c code``."""
    done = subprocess.run(
        [sys.executable, "-P", "-X", "importtime", "-c", code],
        env=_env(tree),
        capture_output=True,
        text=True,
        check=True,
    )
    times: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        self_us, _cumulative, name = line.removeprefix("import time:").split("|")
        if self_us.strip().isdigit():
            times[name.strip()] = int(self_us)
    return times


def _beyond(tree: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-P", "-c", _BEYOND],
        env=_env(tree),
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(done.stdout))


def _wall(tree: Path, code: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-P", "-c", code], env=_env(tree), stdout=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - start


@dataclass
class _Tree:
    path: Path
    beyond: list[str]
    beyond_us: int
    help_us: int
    import_us: int
    heavy: list[str]
    help_wall: list[float] = field(default_factory=list)
    import_wall: list[float] = field(default_factory=list)


def _measure(path: Path) -> _Tree:
    beyond = _beyond(path)
    help_times = _import_times(path, _HELP)
    return _Tree(
        path,
        beyond,
        sum(help_times.get(m, 0) for m in beyond),
        sum(help_times.values()),
        sum(_import_times(path, _IMPORT).values()),
        [w for w in _WATCH if any(m == w or m.split(".")[0] == w for m in beyond)],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", type=Path, help="a source tree (repeatable)")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    trees = [_measure(t.resolve()) for t in (args.tree or [Path(__file__).resolve().parents[1]])]
    for _ in range(args.repeat):
        for tree in trees:
            tree.help_wall.append(_wall(tree.path, _HELP))
            tree.import_wall.append(_wall(tree.path, _IMPORT))
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.repeat} processes each")
    for tree in trees:
        help_wall = statistics.median(tree.help_wall)
        import_wall = statistics.median(tree.import_wall)
        print(
            f"{tree.path}:\n"
            f"  --help loads {len(tree.beyond)} modules beyond `import simclock` "
            f"({tree.beyond_us / 1000:.1f} ms importtime); heavy among them: "
            f"{', '.join(tree.heavy) or 'none'}\n"
            f"  importtime: --help process {tree.help_us / 1000:.0f} ms, "
            f"import simclock {tree.import_us / 1000:.0f} ms\n"
            f"  wall: simclock --help {help_wall * 1000:.0f} ms, "
            f"python -c 'import simclock' {import_wall * 1000:.0f} ms, "
            f"the CLI's own share {(help_wall - import_wall) * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
