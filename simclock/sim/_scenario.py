"""The scenario runner behind ``simclock run``: an instance of a plan, run and fingerprinted.

`build_session` makes a fresh instance of a loaded `Scenario`
for a seed (C-SEED-2); `run_scenario` runs it, fingerprints the bus
trace (C-X-FP) and optionally records it with `Recorder`.
Loading and validating the TOML file is ``_scenario_file``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from simclock.core._bus import Bus, Message
from simclock.core._errors import SimclockTypeError
from simclock.core._kernels import split_by_device
from simclock.core._names import safe_repr
from simclock.core._protocols import PeriodicStats
from simclock.core._random import (
    DrawObserver,
    check_seed,
)
from simclock.core._timeint import check_positive_ns
from simclock.realtime._pacing import PacingMode, PacingReference, PacingReport, run_paced
from simclock.recording._fingerprint import Fingerprinter
from simclock.recording._format import MODEL_SHA256_KEY, SCENARIO_SHA256_KEY, SCENARIO_TEXT_KEY
from simclock.sim._devices import Sample
from simclock.sim._grid import GridClock
from simclock.sim._kinds import KindRun
from simclock.sim._metrics import MetricStream
from simclock.sim._mujoco import MujocoClock, compiled_model
from simclock.sim._scenario_file import MODES, Scenario, choice
from simclock.sim._session import Session

__all__ = ["RunResult", "build_session", "run_scenario"]


# -- an instance of the plan -------------------------------------------------------------


def _check_scenario(scenario: object) -> None:
    if not isinstance(scenario, Scenario):
        raise SimclockTypeError(
            f"scenario must be a simclock.Scenario (from load_scenario), got "
            f"{type(scenario).__name__} {safe_repr(scenario)}"
        )


def build_session(
    scenario: Scenario,
    seed: int | None = None,
    *,
    bus: Bus | None = None,
    draw_observer: DrawObserver | None = None,
) -> Session:
    """A fresh instance of the plan for ``seed`` (default the scenario's) (C-SEED-2).

    The clock is a [`MujocoClock`][simclock.MujocoClock] (new ``MjData``, reset to the
    keyframe at each episode start) or a [`GridClock`][simclock.GridClock]. ``/clock``
    is not put on the bus (the Recorder writes it from SessionTime, C-EP-2), so
    the bus trace is the same recorded or not. ``bus`` (unbound) and
    ``draw_observer`` let a Recorder listen from the start.
    """
    _check_scenario(scenario)
    run_seed = scenario.seed if seed is None else seed
    physics = scenario.physics
    clock: GridClock
    on_reset: Callable[[], object] | None = None
    if physics.mujoco_model is not None:
        # Compiled once per process and file (load_scenario already did): every seed
        # of a sweep on a worker shares it, with a fresh MjData each.
        model = compiled_model(physics.mujoco_model)
        mj = MujocoClock(model, run_seed, keyframe=physics.keyframe, bus=bus)
        clock = mj
        on_reset = mj.reset_physics
    else:
        clock = GridClock(run_seed, physics.step_ns, bus=bus)
    session = Session(
        clock, seed=run_seed, clock_topic=None, on_reset=on_reset, draw_observer=draw_observer
    )
    # Each kind makes its callable for this session; the built-in ones take the
    # session's fast paths (float readers, commands that carry their encoding).
    for device in scenario.devices:
        sensor = device.impl
        assert sensor is not None  # Invariant: DeviceConfig sets it
        read = sensor.reader(KindRun(clock, device.spec.component_id, run_seed))
        if sensor.floats:
            session._add_float_sensor(device.spec, read)
        else:
            session.add_sensor(device.spec, read)
    for ctl in scenario.controllers:
        controller = ctl.impl
        assert controller is not None  # Invariant: ControllerConfig sets it
        step = controller.controller(KindRun(clock, ctl.spec.component_id, run_seed))
        if controller.encodes:
            session._add_encoding_controller(ctl.spec, step)
        else:
            session.add_controller(ctl.spec, step)
    return session


@dataclass(frozen=True, slots=True)
class RunResult:
    """What [`run_scenario`][simclock.run_scenario] did: the trace's fingerprint and counts.

    ``pacing`` is the [`PacingReport`][simclock.PacingReport] of the whole run (one
    wall-clock reference): its ``lag_events`` are the run's ``PACING_LAG``
    events, ``max_lag_ns`` the worst lag, ``rtf`` the factor in force
    (``None`` in the modes that do not pace). Its ``advances`` count pacing
    steps of about 1 ms in the paced modes and chunks (``chunk_ns``) in
    ``unbounded`` and ``deterministic_ci``, which have no wall clock to follow.
    """

    seed: int
    mode: str
    fingerprint: str
    messages: int
    end_ns: int
    samples: Mapping[str, int]
    stats: Mapping[str, PeriodicStats]
    dropped_in_flight: int
    out: Path | None
    pacing: PacingReport | None = None
    metrics: Mapping[str, float | int | None] = field(default_factory=dict)
    """The scenario's ``[metrics]`` over the delivered samples, in declaration order."""


Progress = Callable[[int, int], object]
"""``progress(done_ns, total_ns)``: called after each chunk of simulated time."""


def run_scenario(
    scenario: Scenario,
    *,
    seed: int | None = None,
    mode: str | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    chunk_ns: int = 100_000_000,
    source: Callable[[], int] | None = None,
    sleep: Callable[[int], object] | None = None,
    subscriber: Callable[[Message], object] | None = None,
) -> RunResult:
    """Run every episode of ``scenario``; return its fingerprint (C-X-FP).

    ``seed``/``mode`` override the file's. The clock is driven by
    [`simclock.run_paced`][simclock.run_paced] in chunks of ``chunk_ns`` simulated time (the
    pacing of ``mode``; the trace is the same in every mode, C-MODE-1, and
    for any chunk size, C-ADV-5). With ``out`` the run is recorded by
    [`Recorder`][simclock.Recorder] (``/clock`` at every physics step, carrying
    SessionTime; every noise draw persisted per stream label, C-REP-3; lz4
    chunks) with
    metadata ``scenario``, ``mode``, ``devices`` (JSON ``{id: topic}``),
    ``step_ns``, ``scenario_text`` and ``scenario_sha256`` (the scenario's
    canonical text and its hash, `Scenario.text`) and, with MuJoCo
    physics, ``model_sha256`` (the MJCF file's hash). Episode ``n > 0`` starts with
    ``reset_episode()`` at the end of episode ``n-1``.

    Pacing: every chunk continues one [`PacingReference`][simclock.PacingReference], so
    ``realtime_paced`` keeps a single wall-clock reference for the whole run
    and catches up a stall in later chunks (a 150 ms stall in a 1 s run still
    ends at 1 s of wall time); ``source``/``sleep`` are the wall-clock pair
    of [`simclock.run_paced`][simclock.run_paced] (tests inject fake time). The run's pacing
    report, with its ``PACING_LAG`` events, is ``RunResult.pacing``.

    ``subscriber(message)`` is put on every topic of the run's bus before the
    session starts (``simclock run --live``'s view). It must not publish and
    must not raise: the bus reports a raising subscriber as an event (C-BUS-4),
    which is part of the trace.

    Memory does not grow with the run: after each chunk the session's
    delivered samples are folded into the counts and the metrics
    (`MetricStream`, bit-identical to the
    metrics over the whole list) and dropped.
    """
    import json

    from simclock.recording._recorder import Recorder

    # Every argument is checked before the Recorder creates ``out``: a refused call
    # leaves no file behind and runs nothing.
    _check_scenario(scenario)
    run_seed = scenario.seed if seed is None else check_seed(seed)
    run_mode = scenario.mode if mode is None else choice(mode, "mode", MODES)
    chunk_ns = check_positive_ns(chunk_ns, "chunk_ns")  # a Python int from here on
    for label, fn in (("source", source), ("sleep", sleep)):
        if fn is not None and not callable(fn):
            raise SimclockTypeError(f"{label} must be callable or None, got {safe_repr(fn)}")
    if subscriber is not None and not callable(subscriber):
        raise SimclockTypeError(
            "subscriber must be callable as subscriber(message) or None, got "
            f"{safe_repr(subscriber)}"
        )
    if progress is not None and not callable(progress):
        raise SimclockTypeError(
            "progress must be callable as progress(done_ns, total_ns) or None, "
            f"got {safe_repr(progress)}"
        )
    bus = Bus()
    if subscriber is not None:
        bus.subscribe(None, subscriber)
    recorder = None
    if out is not None:
        metadata = {
            "scenario": scenario.name,
            "mode": run_mode,
            "step_ns": str(scenario.physics.step_ns),
            "devices": json.dumps({d.spec.device_id: d.spec.topic for d in scenario.devices}),
            SCENARIO_TEXT_KEY: scenario.text,
            SCENARIO_SHA256_KEY: scenario.text_sha256,
        }
        if scenario.model_sha256 is not None:
            metadata[MODEL_SHA256_KEY] = scenario.model_sha256
        recorder = Recorder(
            out,
            bus,
            seed=run_seed,
            metadata=metadata,
            record_draws=True,
            clock_period_ns=scenario.physics.step_ns,
            # lz4: of the official Writer's compressions, the one that costs least per
            # run for files about 1.4x zstd's (docs/benchmarks.md, "Recording").
            compression="lz4",
        )
    session = build_session(
        scenario,
        run_seed,
        bus=bus,
        draw_observer=None if recorder is None else recorder.draw_observer,
    )
    clock = session.clock
    fingerprint: Fingerprinter | None = None
    if recorder is None:
        fingerprint = Fingerprinter()
        bus.subscribe(None, fingerprint)
    # else the recorder hashes the very lines it writes (C-X-FP): one canonical
    # encoding per message, not one for the file and another for the fingerprint.
    pacing_mode = PacingMode(run_mode)  # once, not once per chunk
    total = scenario.duration_ns * scenario.episodes
    reference = PacingReference()
    report: PacingReport | None = None
    step = clock.step_ns()
    # The modes that do not pace advance a whole chunk per call (the same trace, C-ADV-5,
    # C-MODE-1) instead of run_paced's ~1 ms pacing steps, which cost a call chain per
    # physics step; the paced modes keep those steps (the wall clock is followed per step).
    unpaced = pacing_mode in (PacingMode.UNBOUNDED, PacingMode.DETERMINISTIC_CI)
    plan_step = -(-max(chunk_ns, step) // step) * step if unpaced else None
    counts: dict[str, int] = {d.spec.device_id: 0 for d in scenario.devices}
    metrics = MetricStream(scenario.metrics)
    delivered = session.samples

    def fold_samples() -> None:
        # The chunk's samples go into the counts and metrics, then are dropped: a run's
        # memory is one chunk's samples, whatever its length. One pass splits them by
        # device (load_scenario checked that every sample's and metric's device is one).
        by_device: dict[str, list[Sample]] = {device: [] for device in counts}
        split_by_device(delivered, by_device)
        for device, of_device in by_device.items():
            counts[device] += len(of_device)
        metrics._add_by_device(by_device)
        delivered.clear()

    try:
        session.start()
        for episode in range(scenario.episodes):
            if episode:
                session.reset_episode()
            end = session.episode_start_ns + scenario.duration_ns
            while clock.now_ns() < end:
                until = min(end, clock.now_ns() + max(chunk_ns, clock.step_ns()))
                report = run_paced(
                    clock,
                    until,
                    mode=pacing_mode,
                    rtf=scenario.rtf,
                    step_ns=plan_step,
                    reference=reference,
                    source=source,
                    sleep=sleep,
                )
                fold_samples()
                if progress is not None:
                    progress(clock.now_ns(), total)
    finally:
        if recorder is not None:
            recorder.close()
    fold_samples()  # anything delivered outside a chunk (none today): counted all the same
    stats = {
        comp: session.stats(comp)
        for comp in (
            *(d.spec.component_id for d in scenario.devices),
            *(c.spec.component_id for c in scenario.controllers),
        )
    }
    if fingerprint is None:
        assert recorder is not None  # Invariant: one of the two hashes the trace
        digest, messages = recorder.fingerprint(), recorder.message_count
    else:
        digest, messages = fingerprint.hexdigest(), fingerprint.count
    return RunResult(
        seed=run_seed,
        mode=run_mode,
        fingerprint=digest,
        messages=messages,
        end_ns=clock.now_ns(),
        samples=counts,
        stats=stats,
        dropped_in_flight=session.dropped_in_flight,
        out=None if out is None else Path(out),
        pacing=report,
        metrics=metrics.values(),
    )
