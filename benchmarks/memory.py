"""Peak memory of the command line against the length of a run: it must not grow with it.

The pendulum of ``examples/pendulum.toml`` with its ``duration`` set to each of
``--durations`` (default 10, 100 and 1000 s of simulated time). For each, one
fresh child process per command, each reporting its own peak resident set
(``VmHWM`` of ``/proc/self/status``, read in the child when the command has
returned):

* ``run``: ``simclock run`` without a recording;
* ``run --out``: the same, recorded (the file the other commands read);
* ``replay``: ``simclock replay`` of that file, its output thrown away;
* ``diff``: ``simclock diff`` of that file and a copy of it (a full compare);
* ``export ros2``: ``simclock export ros2`` of that file;
* ``recover``: ``simclock recover`` of the file cut at 60 % of its bytes.

Every command is checked for its exit status. The table gives MiB per
duration and the ratio of the longest run's peak to the shortest's (flat: 1.0x;
the interpreter and the imports are about 40 MiB of every figure).

Command: ``python benchmarks/memory.py [--durations 10 100 1000]``
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "pendulum.toml"

# The child: run one CLI command in this process, then report the process's peak RSS.
_CHILD = """
import sys
from simclock.cli._main import main
code = main(sys.argv[1:])
status = open("/proc/self/status").read()
peak = [line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")][0]
sys.stderr.write(f"\\nVmHWM_KIB {peak} EXIT {code}\\n")
"""

COMMANDS = ("run", "run --out", "replay", "diff", "export ros2", "recover")


def _scenario(folder: Path, seconds: int) -> Path:
    """The pendulum example with ``duration = "<seconds> s"``, next to its MJCF file."""
    text = EXAMPLE.read_text(encoding="utf-8")
    text, n = re.subn(r'(?m)^duration = "[^"]*"$', f'duration = "{seconds} s"', text)
    assert n == 1, "examples/pendulum.toml has no duration line"
    shutil.copy(EXAMPLE.with_name("pendulum.xml"), folder / "pendulum.xml")
    path = folder / "pendulum.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _peak(argv: list[str], ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """(peak RSS in MiB, wall s) of one fresh child running ``simclock *argv``."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    found = re.search(r"VmHWM_KIB (\d+) EXIT (\d+)", proc.stderr)
    if found is None or int(found.group(2)) not in ok:
        raise SystemExit(f"simclock {' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
    return int(found.group(1)) / 1024, wall


def measure(seconds: int, folder: Path) -> dict[str, tuple[float, float]]:
    """Peak MiB and wall s of every command of :data:`COMMANDS` for a run of ``seconds``."""
    scenario = _scenario(folder, seconds)
    rec = folder / "run.mcap"
    copy = folder / "copy.mcap"
    cut = folder / "cut.mcap"
    out: dict[str, tuple[float, float]] = {}
    # run exits 1 when a metric breaks its bounds (a few seeds do): still a whole run.
    out["run"] = _peak(["run", str(scenario), "--no-progress"], ok=(0, 1))
    out["run --out"] = _peak(["run", str(scenario), "--no-progress", "--out", str(rec)], ok=(0, 1))
    shutil.copy(rec, copy)
    data = rec.read_bytes()
    cut.write_bytes(data[: len(data) * 6 // 10])
    del data
    out["replay"] = _peak(["replay", str(rec)])
    out["diff"] = _peak(["diff", str(rec), str(copy)])
    out["export ros2"] = _peak(["export", "ros2", str(rec), "-o", str(folder / "bag")])
    out["recover"] = _peak(["recover", str(cut), "-o", str(folder / "recovered.mcap")])
    sizes = f"recording {rec.stat().st_size / 1e6:.1f} MB, cut {cut.stat().st_size / 1e6:.1f} MB"
    print(f"  {seconds} s done ({sizes})", file=sys.stderr, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=int, nargs="+", default=[10, 100, 1000])
    args = parser.parse_args()
    durations: list[int] = sorted(args.durations)
    results: dict[int, dict[str, tuple[float, float]]] = {}
    for seconds in durations:
        with tempfile.TemporaryDirectory() as tmp:
            results[seconds] = measure(seconds, Path(tmp))
    head = " | ".join(f"{s} s" for s in durations)
    print(f"Peak RSS (VmHWM) in MiB of one process per command, pendulum of {durations} s:")
    longest, shortest = durations[-1], durations[0]
    print(f"| command | {head} | {longest} s vs {shortest} s | wall s at {longest} s |")
    print("|---|" + "---|" * (len(durations) + 2))
    for command in COMMANDS:
        peaks = [results[s][command][0] for s in durations]
        cells = " | ".join(f"{p:.0f}" for p in peaks)
        wall = results[durations[-1]][command][1]
        print(f"| {command} | {cells} | {peaks[-1] / peaks[0]:.2f}x | {wall:.1f} |")


if __name__ == "__main__":
    main()
