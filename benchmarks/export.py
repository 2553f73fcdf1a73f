"""``export ros2`` against a plain read of the same recording, with either CDR encoder.

The pendulum of ``examples/pendulum.toml`` for ``--seconds`` (default 10 s of
simulated time), recorded once by ``simclock run --out``. In one process, in
turns, ``--rounds`` times each (median reported):

* ``read``: the official reader, ``make_reader(f).iter_messages(log_time_order=True)``;
* ``export (hand-written CDR)``: `simclock.export_ros2` as shipped;
* ``export (reference CDR)``: the same with every message encoded by
  mcap-ros2-support's ``serialize_dynamic`` alone (the encoder before the
  hand-written one).

Ratios are to the plain read's median, so machine speed cancels out.

Command: ``python benchmarks/export.py [--seconds 10] [--rounds 5]``
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
from typing import Any

from _common import markdown_table
from mcap.reader import make_reader
from mcap_ros2._dynamic import serialize_dynamic
from memory import _scenario

from simclock import export_ros2
from simclock.cli import main as cli_main
from simclock.recording import _ros2types


def _as_bytes(encode: Callable[[object], Any]) -> Callable[[object], bytes]:
    return lambda message: bytes(encode(message))


def _reference_encoders() -> dict[str, Callable[[object], bytes]]:
    """The encoders ``export_ros2`` used before the hand-written ones."""
    return {
        name: _as_bytes(serialize_dynamic(name, text)[name])
        for name, text in _ros2types.SCHEMAS.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scenario = _scenario(folder, args.seconds)
        rec = folder / "run.mcap"
        # run exits 1 when a metric breaks its bounds (a few seeds do): still a whole run.
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli_main(["run", str(scenario), "--no-progress", "--out", str(rec)])
        if code not in (0, 1) or not rec.exists():
            raise SystemExit("simclock run --out wrote no recording")
        hand = dict(_ros2types._encoders)
        reference = _reference_encoders()
        n = 0

        def read() -> None:
            with rec.open("rb") as f:
                for _ in make_reader(f).iter_messages(log_time_order=True):
                    pass

        def export(encoders: dict[str, Callable[[object], bytes]]) -> Callable[[], None]:
            def run() -> None:
                nonlocal n
                _ros2types._encoders.clear()
                _ros2types._encoders.update(encoders)
                n += 1
                out = folder / f"bag{n}"
                export_ros2(rec, out)
                shutil.rmtree(out)

            return run

        export(hand)()  # warm up: builds the shipped encoders
        hand = dict(_ros2types._encoders)
        peers = {
            "read": read,
            "export (hand-written CDR)": export(hand),
            "export (reference CDR)": export(reference),
        }
        times: dict[str, list[float]] = {name: [] for name in peers}
        for _ in range(args.rounds):
            for name, fn in peers.items():
                gc.collect()
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
        _ros2types._encoders.clear()
        size = rec.stat().st_size / 1e6
    base = statistics.median(times["read"])
    rows = [
        (name, f"{statistics.median(t) * 1e3:.0f}", f"{statistics.median(t) / base:.2f}x")
        for name, t in times.items()
    ]
    print(f"pendulum {args.seconds} s, recording {size:.1f} MB, median of {args.rounds}:")
    print(markdown_table(["", "ms", "vs read"], rows))


if __name__ == "__main__":
    main()
