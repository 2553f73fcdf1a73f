"""The main job: ``simclock.run_scenario`` on the pendulum vs the same work as a hand-written loop.

In one process, interleaved (one round runs each way once, in turn), median of
the rounds:

* ``run_scenario`` unrecorded, and recorded (``out=``, the MCAP file with its
  ``/clock`` and persisted draws);
* a hand-written MuJoCo loop doing the same work, the loop a user would write
  instead: 5 000 ``mj_step`` for 10 s on the 2 ms grid, ``mj_forward`` where a
  sensor is read (``mj_step`` leaves ``sensordata`` one step behind), the 2 ms
  encoder, the 7 ms IMU acquired at the first boundary at or after each 7 ms
  instant and delivered at the first boundary at or after acquisition + 3 ms,
  its gyro noise from a numpy ``Generator`` seeded like simclock's stream
  ``/sensors/imu0/noise``, the 250 Hz PD on the last delivered samples, and
  the list of delivered samples (what the metrics are computed from). Its
  trace of samples is asserted equal to the session's (every time and value),
  so both do the same work;
* that loop plus what any run with a fingerprint must do per message (its
  canonical JSON, its trace line, SHA-256 over the lines): the floor of an
  unrecorded run, without a clock, bus, session or sample objects. Its digest
  is asserted equal to the run's fingerprint;
* the bare ``mj_step`` loop (5 000 steps, nothing else);
* the official ``mcap`` Writer alone writing the recorded run's 15 361 records
  again with the Recorder's options (zstd, 1 MiB chunks, CRCs);
* simclock's ``McapWriter`` (``simclock.core._mcap_records``, the Recorder's
  writer) alone writing the same records, with zstd, lz4 (what ``run_scenario``
  records with) and no compression: its files are asserted byte-identical to
  the official Writer's with the same options, and their sizes printed;
* the same with foxglove-sdk's compiled ``MCAPWriter`` (when installed,
  ``simclock[live]``): what a compiled writer would cost. It cannot set a
  record's ``sequence`` or ``publish_time`` (C-MCAP-1 needs both), so the
  Recorder does not use it; the row measures what that costs.

Then seeds per second of ``simclock.sweep`` with 1 and 2 Dask workers (the
clusters started before timing, as ``simclock.sweep`` configures its own)
against a plain loop of the hand-written version in this process, over the
same seeds; the sweep's table is asserted byte-identical between repeats.

The machine may be shared: only the ratios mean something. Host code: reads
the wall clock.

``--parts`` adds runs with one part of the recorder (its bus messages, its
draws, the compression) or the Fingerprinter replaced by a no-op: where the
recorded run's time goes, as differences of rows.

Usage: ``python benchmarks/mainjob.py [--rounds 9] [--seeds 40] [--sweep-repeat 3] [--no-sweep]
[--parts]``
"""

from __future__ import annotations

import argparse
import csv
import gc
import hashlib
import io
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mujoco
import numpy as np
from _common import markdown_table

import simclock
from simclock.core._random import derive_spawn_key
from simclock.sim._scenario import build_session
from simclock.sweeps._sweep import WORKER_CONFIG

ROOT = Path(__file__).resolve().parent.parent
PENDULUM = ROOT / "examples" / "pendulum.toml"
MS = 1_000_000

SampleRow = tuple[str, int, int, int, int, int, tuple[float, ...]]
"""(device, index, nominal acquisition, acquisition, requested delivery, delivery, values)."""


def pendulum_start(model: Any, seed: int) -> tuple[Any, int, int, int, float, float, Any]:
    """MjData at the ``start`` keyframe, the sensors' and the motor's indexes, the IMU's noise.

    ``(data, gyro_adr, angle_adr, motor, low, high, noise)``: the noise is a numpy
    ``Generator`` seeded as simclock's stream ``/sensors/imu0/noise``.
    """
    data = mujoco.MjData(model)
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "start")
    mujoco.mj_resetDataKeyframe(model, data, key)
    mujoco.mj_forward(model, data)
    gyro_adr = int(model.sensor_adr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, "gyro")])
    angle_adr = int(model.sensor_adr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, "angle")])
    motor = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, "motor")
    low, high = (float(x) for x in model.actuator_ctrlrange[motor])
    spawn_key = derive_spawn_key("/sensors/imu0/noise")
    noise = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=spawn_key)))
    return data, gyro_adr, angle_adr, motor, low, high, noise


def hand_written(model: Any, seed: int, duration_ns: int) -> list[SampleRow]:
    """The pendulum scenario as a plain MuJoCo loop: the samples it delivers, in order."""
    step = 2 * MS
    data, gyro_adr, angle_adr, motor, low, high, noise = pendulum_start(model, seed)
    sensordata = data.sensordata
    ctrl = data.ctrl
    samples: list[SampleRow] = []
    in_flight: list[SampleRow] = []  # the IMU's samples, in acquisition order (FIFO)
    imu_k = 0
    imu_next = 0  # the boundary of the IMU's next acquisition
    angle = rate = None
    steps = duration_ns // step
    for k in range(steps + 1):
        now = k * step
        if k:
            mujoco.mj_step(model, data)
            mujoco.mj_forward(model, data)  # the sensors at this boundary, not the last one
        if now >= imu_next:  # acquisitions: the IMU, then the encoder (the file's order)
            nominal = imu_k * 7 * MS
            gyro = sensordata[gyro_adr : gyro_adr + 3] + noise.normal(0.0, 0.02, size=3)
            requested = nominal + 3 * MS
            delivery = -(-requested // step) * step
            values = (float(gyro[0]), float(gyro[1]), float(gyro[2]))
            in_flight.append(("imu0", imu_k, nominal, now, requested, delivery, values))
            imu_k += 1
            imu_next = -(-(imu_k * 7 * MS) // step) * step
        encoder = ("encoder0", k, now, now, now, now, (float(sensordata[angle_adr]),))
        while in_flight and in_flight[0][5] <= now:  # deliveries, in acquisition order
            rate = in_flight.pop(0)
            samples.append(rate)
        angle = encoder
        samples.append(encoder)
        if now % (4 * MS) == 0:  # the PD at 250 Hz
            u = 0.0
            if rate is not None:
                u = 8.0 * (0.0 - angle[6][0]) - 0.8 * rate[6][1]
                u = min(max(u, low), high)
            ctrl[motor] = u
    return samples


_SAMPLE_JSON = (
    b'{"acquisition_ns":%d,"delivery_ns":%d,"device":"%s","episode":0,"episode_start_ns":0,'
    b'"index":%d,"nominal_acquisition_ns":%d,"requested_delivery_ns":%d,"values":[%s]}'
)


def hand_written_fingerprint(model: Any, seed: int, duration_ns: int) -> str:
    """The hand-written loop, and the fingerprint of the trace it would publish.

    The floor of an unrecorded ``run_scenario``: the same physics, noise and PD
    as `hand_written`, plus what any run with a fingerprint must do per message:
    its canonical JSON (floats as ``repr``, keys sorted), its trace line
    ``stamp sequence topic json payload``, SHA-256 over every line (C-X-FP).
    No clock, bus, session or sample objects. Its digest is asserted equal to
    the run's, so both do the same work.
    """
    step = 2 * MS
    data, gyro_adr, angle_adr, motor, low, high, noise = pendulum_start(model, seed)
    sensordata = data.sensordata
    ctrl = data.ctrl
    lines: list[bytes] = []
    seq = 0
    in_flight: list[tuple[int, bytes, float]] = []  # (delivery, payload, rate about y)
    imu_k = 0
    imu_next = 0
    angle = rate = None
    for k in range(duration_ns // step + 1):
        now = k * step
        if k:
            mujoco.mj_step(model, data)
            mujoco.mj_forward(model, data)
        if now >= imu_next:
            nominal = imu_k * 7 * MS
            gyro = (sensordata[gyro_adr : gyro_adr + 3] + noise.normal(0.0, 0.02, size=3)).tolist()
            requested = nominal + 3 * MS
            delivery = -(-requested // step) * step
            values = b"%r,%r,%r" % (gyro[0], gyro[1], gyro[2])
            payload = _SAMPLE_JSON % (now, delivery, b"imu0", imu_k, nominal, requested, values)
            in_flight.append((delivery, payload, gyro[1]))
            imu_k += 1
            imu_next = -(-(imu_k * 7 * MS) // step) * step
        while in_flight and in_flight[0][0] <= now:
            _, payload, rate = in_flight.pop(0)
            lines.append(b"%d %d /sensors/imu0 json %s\n" % (now, seq, payload))
            seq += 1
        angle = float(sensordata[angle_adr])
        payload = _SAMPLE_JSON % (now, now, b"encoder0", k, now, now, b"%r" % (angle,))
        lines.append(b"%d %d /sensors/encoder0 json %s\n" % (now, seq, payload))
        seq += 1
        if now % (4 * MS) == 0:
            u = 0.0
            if rate is not None:
                u = min(max(8.0 * (0.0 - angle) - 0.8 * rate, low), high)
            ctrl[motor] = u
            lines.append(b'%d %d /controllers/pd json {"u":%r}\n' % (now, seq, u))
            seq += 1
    return hashlib.sha256(b"".join(lines)).hexdigest()


def bare_steps(model: Any, steps: int) -> None:
    """Only the physics: ``steps`` calls of ``mj_step``."""
    data = mujoco.MjData(model)
    for _ in range(steps):
        mujoco.mj_step(model, data)


def session_samples(scenario: simclock.Scenario, seed: int) -> list[SampleRow]:
    """The samples a simclock session of ``scenario`` delivers, as hand_written returns them."""
    session = build_session(scenario, seed)
    session.run_until(scenario.duration_ns)
    return [
        (
            s.device,
            s.index,
            s.nominal_acquisition_ns,
            s.acquisition_ns,
            s.requested_delivery_ns,
            s.delivery_ns,
            s.values,
        )
        for s in session.samples
    ]


def writer_only(
    path: Path, compression: str = "zstd", ours: bool = False
) -> Callable[[], io.BytesIO]:
    """The official ``mcap`` Writer writing ``path``'s records again, with the Recorder's options.

    Nothing but the writer: its schemas, channels, every message record and
    ``finish``, into memory. What recording costs at least, whatever the
    recorder does around it. ``ours``: simclock's `McapWriter` (the Recorder's,
    the same bytes); ``compression``: ``"zstd"``, ``"lz4"`` or ``""`` (none).
    """
    from mcap.reader import make_reader
    from mcap.writer import CompressionType, Writer

    from simclock.core._mcap_records import McapWriter

    official = {"zstd": CompressionType.ZSTD, "lz4": CompressionType.LZ4, "": CompressionType.NONE}

    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None
        records = [
            (channel.id, message.log_time, message.data, message.publish_time, message.sequence)
            for _, channel, message in reader.iter_messages()
        ]

    def write() -> io.BytesIO:
        target = io.BytesIO()
        writer: Any = (
            McapWriter(target, 1024 * 1024, compression, True)
            if ours
            else Writer(
                target,
                chunk_size=1024 * 1024,
                compression=official[compression],
                enable_data_crcs=True,
            )
        )
        writer.start(profile="", library="benchmark")
        schemas = {
            sid: writer.register_schema(s.name, s.encoding, s.data)
            for sid, s in summary.schemas.items()
        }
        channels = {
            cid: writer.register_channel(
                c.topic, c.message_encoding, schemas.get(c.schema_id, 0), dict(c.metadata)
            )
            for cid, c in summary.channels.items()
        }
        add = writer.add_message
        for cid, log_time, data, publish_time, sequence in records:
            add(channels[cid], log_time, data, publish_time, sequence)
        writer.finish()
        return target

    return write


def foxglove_writer_only(path: Path) -> Callable[[], object] | None:
    """foxglove-sdk's ``MCAPWriter`` writing ``path``'s records again (``None`` if not installed).

    The Recorder's options (zstd, 1 MiB chunks, CRCs), compression on the calling
    thread (``compression_threads=0``) so that the thread's CPU time is all of it,
    into memory. Checked once: the official reader reads every record back with
    its log time and bytes, in order; ``sequence`` and ``publish_time`` are the
    SDK's own (a count per channel from 1, and the log time), not the file's.
    """
    try:
        import foxglove
        from foxglove.mcap import MCAPCompression, MCAPWriteOptions
    except ImportError:
        return None
    from mcap.reader import make_reader

    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None
        records = [(c.id, m.log_time, m.data) for _, c, m in reader.iter_messages()]
    options = MCAPWriteOptions(
        compression=MCAPCompression.Zstd, chunk_size=1024 * 1024, compression_threads=0
    )

    def write() -> io.BytesIO:
        context = foxglove.Context()  # its own: the records reach this writer alone
        target = io.BytesIO()
        writer = foxglove.open_mcap(target, context=context, writer_options=options)
        channels = {}
        for cid, c in summary.channels.items():
            s = summary.schemas.get(c.schema_id)
            schema = (
                None
                if s is None
                else foxglove.Schema(name=s.name, encoding=s.encoding, data=s.data)
            )
            channels[cid] = foxglove.Channel(
                c.topic,
                schema=schema,
                message_encoding=c.message_encoding,
                context=context,
                metadata=dict(c.metadata),
            )
        # BaseChannel.log: the compiled call itself, as writer_only calls add_message
        # (Channel.log adds a Python frame and type checks per record).
        log = {cid: channel.base.log for cid, channel in channels.items()}
        for cid, log_time, data in records:
            log[cid](data, log_time)
        writer.close()
        return target

    target = write()
    target.seek(0)
    back = list(make_reader(target).iter_messages())
    assert [(m.log_time, m.data) for _, _, m in back] == [(t, d) for _, t, d in records], (
        "foxglove-sdk's file does not read back"
    )
    # Why the Recorder cannot use it (C-MCAP-1): the SDK sets these fields itself.
    counts: dict[int, int] = {}
    for _, channel, message in back:
        counts[channel.id] = counts.get(channel.id, 0) + 1
        assert message.sequence == counts[channel.id], "the SDK's sequence is not a count"
        assert message.publish_time == message.log_time, "the SDK's publish_time is not log_time"
    return write


SIZES: dict[str, int] = {}
"""Bytes of the recorded run's records written by `McapWriter`, per compression."""


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds (this thread's) of one call, with GC off during it."""
    gc.collect()
    gc.disable()
    try:
        wall, cpu = time.perf_counter(), time.thread_time()
        fn()
        return time.perf_counter() - wall, time.thread_time() - cpu
    finally:
        gc.enable()


def main_job(rounds: int, tmp: Path) -> dict[str, tuple[float, float]]:
    scenario = simclock.load_scenario(PENDULUM)
    assert scenario.physics.mujoco_model is not None
    model = mujoco.MjModel.from_xml_path(str(scenario.physics.mujoco_model))
    seed, duration = scenario.seed, scenario.duration_ns
    steps = duration // scenario.physics.step_ns
    mine = hand_written(model, seed, duration)
    theirs = session_samples(scenario, seed)
    assert mine == theirs, "the hand-written loop does not deliver the session's samples"
    out = tmp / "run.mcap"
    plain = simclock.run_scenario(scenario)
    recorded = simclock.run_scenario(scenario, out=out)
    assert plain.fingerprint == recorded.fingerprint
    floor = hand_written_fingerprint(model, seed, duration)
    assert floor == plain.fingerprint, "the hand-written fingerprint is not the run's"
    ways: dict[str, Callable[[], object]] = {
        "run_scenario": lambda: simclock.run_scenario(scenario),
        "run_scenario, recorded": lambda: simclock.run_scenario(scenario, out=out),
        "hand-written loop": lambda: hand_written(model, seed, duration),
        "hand-written loop + its trace's fingerprint": lambda: hand_written_fingerprint(
            model, seed, duration
        ),
        "bare mj_step loop": lambda: bare_steps(model, steps),
        "mcap Writer alone, the recorded run's records": writer_only(out),
        "simclock McapWriter alone, the same records": writer_only(out, ours=True),
        "simclock McapWriter alone, lz4": writer_only(out, "lz4", ours=True),
        "simclock McapWriter alone, no compression": writer_only(out, "", ours=True),
    }
    for compression in ("zstd", "lz4", ""):  # the same bytes as the official Writer's
        written = writer_only(out, compression, ours=True)().getvalue()
        assert written == writer_only(out, compression)().getvalue(), "McapWriter differs"
        SIZES[compression or "none"] = len(written)
    compiled = foxglove_writer_only(out)
    if compiled is not None:
        ways["foxglove-sdk MCAPWriter alone, the same records"] = compiled
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, fn in ways.items():
            times[name].append(timed(fn))
    return {
        name: (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
        for name, values in times.items()
    }


def recorder_parts(rounds: int, tmp: Path) -> dict[str, float]:
    """Median CPU ms of the runs with one part of the work replaced by a no-op, interleaved.

    What the recorded run's extra time goes to: its bus messages (the Recorder's
    trace sinks: checks, records, fingerprint lines and the ``/clock`` ticks
    they bring), its draws (records from templates, their ticks), and the
    rest (the file, the remaining ticks, metadata, the last chunk); in the
    unrecorded run, the Fingerprinter's sinks. A knocked-out run writes a
    different file: these rows explain, they are not the judge.
    """
    from simclock.core._bus import register_trace_sink
    from simclock.recording._fingerprint import Fingerprinter
    from simclock.recording._recorder import Recorder

    scenario = simclock.load_scenario(PENDULUM)
    assert scenario.physics.mujoco_model is not None
    model = mujoco.MjModel.from_xml_path(str(scenario.physics.mujoco_model))
    out = tmp / "parts.mcap"
    recorder_sink = Recorder._line_sink
    fingerprint_sink = Fingerprinter._line_sink
    on_draw = Recorder._on_draw
    recorder_init = Recorder.__init__

    def nothing(self: object, topic: str) -> Callable[[int, int, bytes], None]:
        return lambda stamp, seq, encoded: None

    def patched(sinks: bool = False, draws: bool = False, fp: bool = False, comp: str = "") -> None:
        register_trace_sink(Recorder.record, nothing if sinks else recorder_sink)
        register_trace_sink(Fingerprinter, nothing if fp else fingerprint_sink)
        Recorder._on_draw = (lambda self, *a: None) if draws else on_draw  # type: ignore[method-assign]

        def init(self: Recorder, *args: Any, **kwargs: Any) -> None:
            recorder_init(self, *args, **{**kwargs, "compression": comp or kwargs["compression"]})

        Recorder.__init__ = init  # type: ignore[method-assign]

    def run(recorded: bool, **knockout: Any) -> Callable[[], object]:
        def once() -> object:
            patched(**knockout)
            return simclock.run_scenario(scenario, out=out if recorded else None)

        return once

    ways: dict[str, Callable[[], object]] = {
        "hand-written loop": lambda: hand_written(model, scenario.seed, scenario.duration_ns),
        "run_scenario": run(False),
        "run_scenario, Fingerprinter's sinks no-op": run(False, fp=True),
        "run_scenario, recorded": run(True),
        "recorded, zstd": run(True, comp="zstd"),
        "recorded, no compression": run(True, comp="none"),
        "recorded, Recorder's sinks no-op": run(True, sinks=True),
        "recorded, sinks and draws no-op": run(True, sinks=True, draws=True),
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for _ in range(rounds):
            for name, fn in ways.items():
                times[name].append(timed(fn)[1])
    finally:
        patched()
        Recorder.__init__ = recorder_init  # type: ignore[method-assign]
    return {name: statistics.median(v) * 1e3 for name, v in times.items()}


def hand_written_seeds(model: Any, seeds: range, duration: int) -> None:
    for seed in seeds:
        hand_written(model, seed, duration)


def worker_cpu_per_run(out: Path) -> float:
    """Median CPU seconds of one run in its worker, from the sweep's ``timing.csv``."""
    with (out / "timing.csv").open(encoding="utf-8") as f:
        return statistics.median(float(row["cpu_s"]) for row in csv.DictReader(f))


def sweep_rates(n_seeds: int, repeat: int, tmp: Path) -> dict[str, tuple[float, float]]:
    """Seeds/s and CPU s per seed: the hand-written loop here, ``simclock.sweep`` on 1 and 2.

    The sweeps' CPU per seed is the median of their workers' runs (``timing.csv``):
    on a shared machine it moves far less with the load than seeds/s.
    """
    import distributed

    dask: Any = distributed
    scenario = simclock.load_scenario(PENDULUM)
    assert scenario.physics.mujoco_model is not None
    model = mujoco.MjModel.from_xml_path(str(scenario.physics.mujoco_model))
    seeds = range(1000, 1000 + n_seeds)
    duration = scenario.duration_ns
    rates: dict[str, tuple[float, float]] = {}
    clusters = {}
    for n in (1, 2):
        clusters[n] = dask.LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.ERROR,
            config=WORKER_CONFIG,
        )
    try:
        for cluster in clusters.values():  # warm-up: imports and MuJoCo in every worker
            simclock.sweep(scenario, range(0, 4), scheduler=cluster.scheduler_address)
        times: dict[str, list[float]] = {"hand-written loop, 1 process": []}
        times.update({f"simclock sweep, {n} worker{'s' * (n > 1)}": [] for n in clusters})
        cpus: dict[str, list[float]] = {name: [] for name in times}
        tables: dict[int, set[bytes]] = {n: set() for n in clusters}
        for i in range(repeat):
            wall, cpu = timed(lambda: hand_written_seeds(model, seeds, duration))
            times["hand-written loop, 1 process"].append(wall)
            cpus["hand-written loop, 1 process"].append(cpu / n_seeds)
            for n, cluster in clusters.items():
                target = tmp / f"sweep-{n}-{i}"
                address = cluster.scheduler_address
                name = f"simclock sweep, {n} worker{'s' * (n > 1)}"
                times[name].append(
                    timed(lambda a=address, t=target: simclock.sweep(  # type: ignore[misc]
                        scenario, seeds, scheduler=a, out=t
                    ))[0]
                )  # fmt: skip
                cpus[name].append(worker_cpu_per_run(target))
                tables[n].add((target / "sweep.parquet").read_bytes())
        assert len(tables[1] | tables[2]) == 1, "the sweep table differs between runs"
        for name, values in times.items():
            rates[name] = (n_seeds / statistics.median(values), statistics.median(cpus[name]))
    finally:
        for cluster in clusters.values():
            cluster.close()
    return rates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (median)")
    parser.add_argument("--seeds", type=int, default=40, help="seeds per timed sweep")
    parser.add_argument("--sweep-repeat", type=int, default=3, help="timed sweeps (median)")
    parser.add_argument("--no-sweep", action="store_true", help="only the single run")
    parser.add_argument(
        "--parts", action="store_true", help="also where the recorded run's time goes (no-op parts)"
    )
    args = parser.parse_args()
    load = os.getloadavg()
    print(
        f"simclock {'compiled' if simclock.COMPILED else 'pure Python'} core; load average "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory() as tmp:
        med = main_job(args.rounds, Path(tmp))
        hand_wall, hand_cpu = med["hand-written loop"]
        print(
            f"\nThe pendulum (10 s on the 2 ms grid), median of {args.rounds} interleaved rounds:"
        )
        print(
            markdown_table(
                ["how", "wall ms", "vs hand-written", "CPU ms", "CPU vs hand-written"],
                [
                    (k, f"{w * 1e3:.1f}", f"{w / hand_wall:.2f}x", f"{c * 1e3:.1f}",
                     f"{c / hand_cpu:.2f}x")
                    for k, (w, c) in med.items()
                ],
            )
        )  # fmt: skip
        print(
            "\nThe recorded run's records in one file: "
            + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in SIZES.items())
        )
        if args.parts:
            parts = recorder_parts(args.rounds, Path(tmp))
            hand = parts["hand-written loop"]
            print(f"\nParts (CPU ms, median of {args.rounds} interleaved rounds):")
            print(
                markdown_table(
                    ["how", "CPU ms", "CPU vs hand-written"],
                    [(k, f"{v:.1f}", f"{v / hand:.2f}x") for k, v in parts.items()],
                )
            )
            # The unrecorded run without the Fingerprinter: what both runs share.
            base = parts["run_scenario, Fingerprinter's sinks no-op"]
            shares = {
                "the Fingerprinter's sinks (unrecorded)": parts["run_scenario"] - base,
                "the Recorder's bus messages (sinks, records, lines, their ticks)": parts[
                    "run_scenario, recorded"
                ]
                - parts["recorded, Recorder's sinks no-op"],
                "the draws (records from templates, their ticks)": parts[
                    "recorded, Recorder's sinks no-op"
                ]
                - parts["recorded, sinks and draws no-op"],
                "the rest of the recorder (file, other ticks, metadata, last chunk)": parts[
                    "recorded, sinks and draws no-op"
                ]
                - base,
                "zstd instead of lz4": parts["recorded, zstd"] - parts["run_scenario, recorded"],
                "lz4 instead of no compression": parts["run_scenario, recorded"]
                - parts["recorded, no compression"],
            }
            print(
                markdown_table(
                    ["part (difference of two rows)", "CPU ms", "vs hand-written"],
                    [(k, f"{v:.1f}", f"{v / hand:.2f}x") for k, v in shares.items()],
                )
            )
        if not args.no_sweep:
            rates = sweep_rates(args.seeds, args.sweep_repeat, Path(tmp))
            base, base_cpu = rates["hand-written loop, 1 process"]
            print(f"\n{args.seeds} seeds of the pendulum, median of {args.sweep_repeat}:")
            print(
                markdown_table(
                    ["how", "seeds/s", "vs hand-written", "CPU ms per seed", "CPU vs hand-written"],
                    [
                        (k, f"{v:.2f}", f"{v / base:.2f}x", f"{c * 1e3:.0f}",
                         f"{c / base_cpu:.2f}x")
                        for k, (v, c) in rates.items()
                    ],
                )
            )  # fmt: skip
    return 0


if __name__ == "__main__":  # LocalCluster spawns workers: the guard is required
    raise SystemExit(main())
