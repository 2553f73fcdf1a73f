"""Reading speed: ``replay``, ``diff`` and ``export ros2`` against a plain read of one recording.

The pendulum of ``examples/pendulum.toml`` for ``--seconds`` (default 10 s of
simulated time), recorded by ``simclock run --out`` (or the file ``--recording``
names). Operations, each timed ``--rounds`` times (median reported):

* ``read``: the official reader, ``make_reader(f).iter_messages(log_time_order=True)``;
* ``read both``: the same on the file and on a copy of it, what ``diff`` reads;
* ``replay``: every message of ``open_recording(path).messages()`` (all checks);
* ``diff``: ``simclock diff`` of the file and a copy of it (a full compare);
* ``export ros2``: `simclock.export_ros2` of the file.

Ratios are to the plain read's median, so machine speed cancels out. Wall time
and CPU time of the process are both reported: on a shared machine the CPU time
moves less with the load.

``--trees BEFORE AFTER`` compares two source trees of simclock on the same
recording: one worker process per tree (``PYTHONPATH`` set to the tree), each
operation run in both in turn, round after round (the order flips every round),
so both see the same load.

Commands: ``python benchmarks/reading.py [--seconds 10] [--rounds 5] [--recording FILE]``,
``python benchmarks/reading.py --trees DIR DIR [--rounds 21]``
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import markdown_table
from mcap.reader import make_reader
from memory import _scenario

from simclock import export_ros2, open_recording
from simclock.cli import main as cli_main

OPERATIONS = ("read", "read both", "replay", "diff", "export ros2")


def _record(folder: Path, seconds: int) -> Path:
    scenario = _scenario(folder, seconds)
    rec = folder / "run.mcap"
    # run exits 1 when a metric breaks its bounds (a few seeds do): still a whole run.
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli_main(["run", str(scenario), "--no-progress", "--out", str(rec)])
    if code not in (0, 1) or not rec.exists():
        raise SystemExit("simclock run --out wrote no recording")
    return rec


def _operations(rec: Path, folder: Path) -> dict[str, Callable[[], None]]:
    """The timed operations on ``rec``, warmed up (imports, encoders); scratch in ``folder``."""
    copy = folder / "copy.mcap"
    shutil.copyfile(rec, copy)
    n = 0

    def read() -> None:
        with rec.open("rb") as f:
            for _ in make_reader(f).iter_messages(log_time_order=True):
                pass

    def read_both() -> None:  # what diff reads: the file and its copy
        for path in (rec, copy):
            with path.open("rb") as f:
                for _ in make_reader(f).iter_messages(log_time_order=True):
                    pass

    def replay() -> None:
        with open_recording(rec) as reader:
            for _ in reader.messages():
                pass

    def diff() -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli_main(["diff", str(rec), str(copy)])
        assert code == 0, f"simclock diff exited {code}"

    def export() -> None:
        nonlocal n
        n += 1
        out = folder / f"bag{n}"
        export_ros2(rec, out)
        shutil.rmtree(out)

    ops = dict(zip(OPERATIONS, (read, read_both, replay, diff, export), strict=True))
    for fn in ops.values():
        fn()
    return ops


def _timed(fn: Callable[[], None]) -> tuple[float, float]:
    """``(wall s, CPU s)`` of one call."""
    gc.collect()
    start, start_cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - start_cpu


def _serve(rec: Path) -> None:
    """Worker of ``--trees``: one operation per line of stdin, ``[wall, cpu]`` per line out."""
    with tempfile.TemporaryDirectory() as tmp:
        ops = _operations(rec, Path(tmp))
        print(json.dumps("ready"), flush=True)
        for line in sys.stdin:
            print(json.dumps(_timed(ops[line.strip()])), flush=True)


def _compare(trees: list[Path], rec: Path, rounds: int) -> None:
    workers: list[subprocess.Popen[str]] = []
    for tree in trees:
        root = tree.resolve()
        path = os.pathsep.join(str(root / p) for p in ("", "conformance", "lint", "oracles"))
        worker = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--recording", str(rec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONPATH=path),
        )
        workers.append(worker)
        assert worker.stdout is not None and json.loads(worker.stdout.readline()) == "ready"
    times: dict[tuple[int, str], tuple[list[float], list[float]]] = {
        (i, op): ([], []) for i in range(len(trees)) for op in OPERATIONS
    }
    for r in range(rounds):
        order = list(range(len(trees)))
        if r % 2:
            order.reverse()
        for op in OPERATIONS:
            for i in order:
                worker = workers[i]
                assert worker.stdin is not None and worker.stdout is not None
                worker.stdin.write(op + "\n")
                worker.stdin.flush()
                wall, cpu = json.loads(worker.stdout.readline())
                times[i, op][0].append(wall)
                times[i, op][1].append(cpu)
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    rows: list[list[str]] = []
    for op in OPERATIONS:
        cells = [op]
        for kind in (0, 1):
            for i in range(len(trees)):
                median = statistics.median(times[i, op][kind])
                base = statistics.median(times[i, "read"][kind])
                cells.append(f"{median * 1e3:.0f} ({median / base:.2f}x)")
        rows.append(cells)
    names = [t.name for t in trees]
    print(f"{rec.stat().st_size / 1e6:.1f} MB recording, median of {rounds}, ms (vs read):")
    print(
        markdown_table(
            ["", *(f"{n} wall" for n in names), *(f"{n} CPU" for n in names)],
            rows,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--recording", type=Path, default=None)
    parser.add_argument("--trees", type=Path, nargs=2, default=None)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.recording)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rec = args.recording if args.recording is not None else _record(folder, args.seconds)
        if args.trees is not None:
            _compare(args.trees, rec, args.rounds)
            return
        ops = _operations(rec, folder)
        wall: dict[str, list[float]] = {name: [] for name in ops}
        cpu: dict[str, list[float]] = {name: [] for name in ops}
        for _ in range(args.rounds):
            for name, fn in ops.items():
                w, c = _timed(fn)
                wall[name].append(w)
                cpu[name].append(c)
        size = rec.stat().st_size / 1e6
    base = statistics.median(wall["read"])
    base_cpu = statistics.median(cpu["read"])
    rows = []
    for name in ops:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        rows.append(
            (name, f"{w * 1e3:.1f}", f"{w / base:.2f}x", f"{c * 1e3:.1f}", f"{c / base_cpu:.2f}x")
        )
    print(f"recording {size:.1f} MB, median of {args.rounds}:")
    print(markdown_table(["", "wall ms", "vs read", "CPU ms", "vs read (CPU)"], rows))


if __name__ == "__main__":
    main()
