"""Reading speed: ``info``, ``diff`` and ``export ros2`` against a plain read of one recording.

The pendulum of ``examples/pendulum.toml`` for ``--seconds`` (default 10 s of
simulated time), recorded by ``simclock run --out`` (or the file ``--recording``
names, so two trees can be timed on the same bytes). In one process, in turns,
``--rounds`` times each (median reported):

* ``read``: the official reader, ``make_reader(f).iter_messages(log_time_order=True)``;
* ``info``: ``open_recording(path).info`` (what ``simclock info`` reads);
* ``replay``: every message of ``RecordingReader.messages()`` (all checks);
* ``diff``: ``simclock diff`` of the file and a copy of it (a full compare);
* ``export ros2``: `simclock.export_ros2` of the file.

Ratios are to the plain read's median, so machine speed cancels out. Wall time
and CPU time of the process are both reported: on a shared machine the CPU time
moves less with the load.

Command: ``python benchmarks/reading.py [--seconds 10] [--rounds 5] [--recording FILE]``
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import markdown_table
from mcap.reader import make_reader
from memory import _scenario

from simclock import export_ros2, open_recording
from simclock.cli import main as cli_main


def _record(folder: Path, seconds: int) -> Path:
    scenario = _scenario(folder, seconds)
    rec = folder / "run.mcap"
    # run exits 1 when a metric breaks its bounds (a few seeds do): still a whole run.
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli_main(["run", str(scenario), "--no-progress", "--out", str(rec)])
    if code not in (0, 1) or not rec.exists():
        raise SystemExit("simclock run --out wrote no recording")
    return rec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--recording", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rec = args.recording if args.recording is not None else _record(folder, args.seconds)
        copy = folder / "copy.mcap"
        shutil.copyfile(rec, copy)
        n = 0

        def read() -> None:
            with rec.open("rb") as f:
                for _ in make_reader(f).iter_messages(log_time_order=True):
                    pass

        def info() -> None:
            with open_recording(rec) as reader:
                assert reader.info.message_count > 0

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

        peers: dict[str, Callable[[], None]] = {
            "read": read,
            "info": info,
            "replay": replay,
            "diff": diff,
            "export ros2": export,
        }
        for fn in peers.values():
            fn()  # warm up: imports, encoders
        wall: dict[str, list[float]] = {name: [] for name in peers}
        cpu: dict[str, list[float]] = {name: [] for name in peers}
        for _ in range(args.rounds):
            for name, fn in peers.items():
                gc.collect()
                start, start_cpu = time.perf_counter(), time.process_time()
                fn()
                cpu[name].append(time.process_time() - start_cpu)
                wall[name].append(time.perf_counter() - start)
        size = rec.stat().st_size / 1e6
    base = statistics.median(wall["read"])
    base_cpu = statistics.median(cpu["read"])
    rows = []
    for name in peers:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        rows.append(
            (name, f"{w * 1e3:.1f}", f"{w / base:.2f}x", f"{c * 1e3:.1f}", f"{c / base_cpu:.2f}x")
        )
    print(f"recording {size:.1f} MB, median of {args.rounds}:")
    print(markdown_table(["", "wall ms", "vs read", "CPU ms", "vs read (CPU)"], rows))


if __name__ == "__main__":
    main()
