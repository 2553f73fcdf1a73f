"""Scenario files (TOML): parsing and validation behind ``simclock run`` (SPEC §7-§11).

A scenario is a plan: physics grid, sensor devices, controllers, seed, mode
and duration. :func:`load_scenario` parses and validates it completely before
anything runs; every error is a :class:`ScenarioError` whose message starts
with the exact key (``devices.imu0.period: 7 ms is not on the 2 ms grid
(policy strict); ...``). :func:`simclock.build_session` (module ``_scenario``) makes a fresh
instance of the plan for a seed (C-SEED-2) and :func:`simclock.run_scenario`
runs it.

Format (times are strings with a unit, ``ns``/``us``/``ms``/``s``, converted
exactly: ``"0.5 ns"`` is refused, floats and bare ints are refused)::

    name = "pendulum"          # optional, default: the file name
    seed = 7                   # int >= 0, default 0
    mode = "deterministic_ci"  # unbounded (default), realtime_paced, deterministic_ci,
                               # rendered, operator_training (C-MODE-1: pacing only)
    rtf = 1                    # real-time factor of the paced modes, default 1
    duration = "10 s"          # per episode, a multiple of the physics step
    episodes = 1               # default 1; episode n > 0 gets episode_seed(seed, n)

    [physics]                  # exactly one of:
    mujoco = "pendulum.xml"    #   an MJCF file, relative to the scenario; step = timestep
    keyframe = "start"         #   optional: the initial state of every episode
    # step = "2 ms"            #   or a pure grid with no physics engine

    [devices.imu0]             # id: [A-Za-z][A-Za-z0-9_.-]*
    period = "7 ms"            # required
    phase = "0 ms"             # default 0
    latency = "3 ms"           # default 0
    policy = "next_boundary"   # default next_boundary (sensors)
    sensor = "gyro"            # an MJCF sensor (mujoco physics only)
    dim = 1                    # values per sample without a sensor, default 1
    noise_std = 0.02           # Gaussian noise from /sensors/imu0/noise, default 0
    topic = "/sensors/imu0"    # default

    [controllers.pd]
    kind = "pd"                # "pd" (mujoco physics) or "tick" (publishes a counter)
    period = "4 ms"            # required
    phase = "0 ms"
    policy = "strict"          # default strict (controllers)
    actuator = "motor"         # pd: MJCF actuator
    angle = "encoder0"         # pd: device whose values[angle_index] is the angle
    angle_index = 0
    rate = "imu0"              # pd: device whose values[rate_index] is the rate
    rate_index = 1
    kp = 8.0
    kd = 0.8
    target = 0.0

    [metrics.angle_rms]        # numbers for sweeps: see simclock/sim/_metrics.py
    kind = "rms_error"
    device = "encoder0"

The PD law is ``u = kp*(target - angle) - kd*rate`` on the last *delivered*
samples (0 until both have arrived), clamped to the actuator's ``ctrlrange``;
each command is written to ``data.ctrl`` and published on
``/controllers/<id>`` as ``{"u": ...}``.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simclock.core._bus import is_reserved_topic
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._names import safe_repr
from simclock.realtime._pacing import PacingMode
from simclock.sim._devices import ControllerSpec, SensorSpec
from simclock.sim._grid import Policy, format_ns
from simclock.sim._metrics import MetricConfig, load_metrics
from simclock.sim._mujoco import (
    actuator_of,
    compiled_model,
    keyframe_id,
    model_step_ns,
    sensor_range,
)
from simclock.sim._toml import (
    ScenarioError,
    check_id,
    check_keys,
    check_on_grid,
    choice,
    integer,
    number,
    parse_duration,
    require,
    string,
    subtable,
)

__all__ = [
    "MODES",
    "ControllerConfig",
    "DeviceConfig",
    "PdConfig",
    "PhysicsConfig",
    "Scenario",
    "ScenarioError",
    "choice",
    "load_scenario",
    "parse_duration",
]

_TOPIC = re.compile(r"/[A-Za-z0-9_./-]*")
MODES = tuple(m.value for m in PacingMode)


# -- the plan ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PhysicsConfig:
    """The grid: ``step_ns`` and, for MuJoCo, the resolved model path and keyframe."""

    step_ns: int
    mujoco_model: Path | None = None
    keyframe: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceConfig:
    """One ``[devices.<id>]`` table: its schedule plus how to read it.

    ``sensor_range`` is where the MuJoCo sensor lives in ``data.sensordata``
    (``(start, stop)``, resolved once when the file is loaded), ``None``
    without a sensor.
    """

    spec: SensorSpec
    sensor: str | None
    dim: int
    noise_std: float
    sensor_range: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class PdConfig:
    """A ``kind = "pd"`` controller, resolved when the file is loaded.

    ``u = kp*(target - angle.values[angle_index]) - kd*rate.values[rate_index]``
    written to ``data.ctrl[actuator_index]``, clamped to ``[low, high]`` when
    the actuator is ctrl-limited (both ``None`` otherwise).
    """

    actuator: str
    actuator_index: int
    low: float | None
    high: float | None
    angle: str
    angle_index: int
    rate: str
    rate_index: int
    kp: float
    kd: float
    target: float


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    """One ``[controllers.<id>]`` table; ``params`` holds the kind's own keys.

    ``pd`` is the same for ``kind = "pd"``, typed and resolved (``None`` for ``tick``).
    """

    spec: ControllerSpec
    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)
    pd: PdConfig | None = None


@dataclass(frozen=True, slots=True)
class Scenario:
    """A validated scenario file (the plan of C-SEED-2)."""

    path: Path
    name: str
    seed: int
    mode: str
    rtf: float
    duration_ns: int
    episodes: int
    physics: PhysicsConfig
    devices: tuple[DeviceConfig, ...]
    controllers: tuple[ControllerConfig, ...]
    metrics: tuple[MetricConfig, ...] = ()
    """The ``[metrics]`` table (``simclock.sim._metrics``): what a sweep reports per seed."""


_TOP_KEYS = (
    "name",
    "seed",
    "mode",
    "rtf",
    "duration",
    "episodes",
    "physics",
    "devices",
    "controllers",
    "metrics",
)
_DEVICE_KEYS = ("period", "phase", "latency", "policy", "sensor", "dim", "noise_std", "topic")
_CONTROLLER_KEYS = ("kind", "period", "phase", "policy")
_PD_KEYS = ("actuator", "angle", "angle_index", "rate", "rate_index", "kp", "kd", "target")


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Read and validate a scenario file; `ScenarioError` names the key at fault.

    Validation is complete before anything runs: unknown keys, types, exact
    durations, ids, C-GRID-3 (strict schedules on the grid), MJCF sensors and
    actuators that exist, and controller inputs that name real devices.
    """
    if not isinstance(path, str | os.PathLike):
        raise SimclockTypeError(
            f"path must be a str or os.PathLike, got {type(path).__name__} {safe_repr(path)}"
        )
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScenarioError("", f"cannot read scenario {str(file)!r}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ScenarioError("", f"{str(file)!r} is not valid TOML: {exc}") from None
    except RecursionError:
        # tomllib recurses once per nesting level: a hostile file must not be a traceback.
        raise ScenarioError(
            "", f"{str(file)!r} is nested too deeply to be a scenario; flatten its tables"
        ) from None
    check_keys(data, "", _TOP_KEYS)
    name = string(data.get("name", file.stem), "name")
    seed = integer(data.get("seed", 0), "seed")
    mode = choice(data.get("mode", PacingMode.UNBOUNDED.value), "mode", MODES)
    rtf = number(data.get("rtf", 1), "rtf")
    if rtf <= 0:
        raise ScenarioError("rtf", f"must be > 0, got {data['rtf']!r}")
    duration = parse_duration(require(data, "duration", ""), "duration")
    episodes = integer(data.get("episodes", 1), "episodes", minimum=1)
    physics, model = _load_physics(subtable(require(data, "physics", ""), "physics"), file)
    step = physics.step_ns
    if duration == 0 or duration % step:
        raise ScenarioError(
            "duration",
            f"{format_ns(duration)} must be a positive multiple of the "
            f"{format_ns(step)} physics step",
        )
    devices = tuple(
        _load_device(dev_id, subtable(table, f"devices.{dev_id}"), step, model)
        for dev_id, table in subtable(data.get("devices", {}), "devices").items()
    )
    by_id = {d.spec.device_id: d for d in devices}
    controllers = tuple(
        _load_controller(ctl_id, subtable(table, f"controllers.{ctl_id}"), step, model, by_id)
        for ctl_id, table in subtable(data.get("controllers", {}), "controllers").items()
    )
    return Scenario(
        path=file,
        name=name,
        seed=seed,
        mode=mode,
        rtf=rtf,
        duration_ns=duration,
        episodes=episodes,
        physics=physics,
        devices=devices,
        controllers=controllers,
        metrics=load_metrics(data.get("metrics", {}), {d: c.dim for d, c in by_id.items()}),
    )


def _load_physics(table: Mapping[str, Any], file: Path) -> tuple[PhysicsConfig, Any]:
    check_keys(table, "physics.", ("mujoco", "step", "keyframe"))
    if ("mujoco" in table) == ("step" in table):
        raise ScenarioError("physics", 'give exactly one of mujoco = "model.xml" or step = "2 ms"')
    if "step" in table:
        if "keyframe" in table:
            raise ScenarioError("physics.keyframe", "needs a mujoco model")
        step = parse_duration(table["step"], "physics.step")
        if step == 0:
            raise ScenarioError("physics.step", "must be > 0")
        return PhysicsConfig(step_ns=step), None

    model_path = (file.parent / string(table["mujoco"], "physics.mujoco")).resolve()
    keyframe = None
    if "keyframe" in table:
        keyframe = string(table["keyframe"], "physics.keyframe")
    try:
        # The process's compiled model: the sessions built from this plan reuse it.
        model = compiled_model(model_path)
        step = model_step_ns(model)
    except (SimclockValueError, SimclockRuntimeError) as exc:
        raise ScenarioError("physics.mujoco", str(exc)) from None
    if keyframe is not None:
        try:
            keyframe_id(model, keyframe)
        except SimclockValueError as exc:
            raise ScenarioError("physics.keyframe", str(exc)) from None
    return PhysicsConfig(step, model_path, keyframe), model


def _load_device(dev_id: str, table: Mapping[str, Any], step: int, model: Any) -> DeviceConfig:
    prefix = f"devices.{dev_id}."
    check_id(dev_id, f"devices.{dev_id}")
    check_keys(table, prefix, _DEVICE_KEYS)
    period = parse_duration(require(table, "period", prefix), prefix + "period")
    if period == 0:
        raise ScenarioError(prefix + "period", "must be > 0")
    phase = parse_duration(table.get("phase", "0 s"), prefix + "phase")
    latency = parse_duration(table.get("latency", "0 s"), prefix + "latency")
    policy = Policy(choice(table.get("policy", "next_boundary"), prefix + "policy", tuple(Policy)))
    for key, value in (("period", period), ("phase", phase), ("latency", latency)):
        check_on_grid(prefix + key, value, step, policy)
    topic = string(table.get("topic", f"/sensors/{dev_id}"), prefix + "topic")
    if not _TOPIC.fullmatch(topic):
        raise ScenarioError(
            prefix + "topic",
            f"must start with '/' and use only [A-Za-z0-9_./-], got {safe_repr(topic)}",
        )
    if is_reserved_topic(topic):
        # C-BUS-5: refused at load time, not when the recorder closes the file.
        raise ScenarioError(
            prefix + "topic",
            f"{topic!r} is reserved for the library (/clock and /simclock/...); "
            f"use another topic, e.g. the default '/sensors/{dev_id}'",
        )
    noise_std = number(table.get("noise_std", 0.0), prefix + "noise_std", minimum=0.0)
    sensor: str | None = None
    where: tuple[int, int] | None = None
    if "sensor" in table:
        sensor = string(table["sensor"], prefix + "sensor")
        if model is None:
            raise ScenarioError(prefix + "sensor", 'needs [physics] mujoco = "model.xml"')
        if "dim" in table:
            raise ScenarioError(prefix + "dim", "comes from the MuJoCo sensor; remove it")
        try:
            where = sensor_range(model, sensor)
        except SimclockValueError as exc:
            raise ScenarioError(prefix + "sensor", str(exc)) from None
        dim = where[1] - where[0]
    else:
        dim = integer(table.get("dim", 1), prefix + "dim", minimum=1)
    spec = SensorSpec(dev_id, period, phase, latency, policy, topic)
    return DeviceConfig(spec=spec, sensor=sensor, dim=dim, noise_std=noise_std, sensor_range=where)


def _load_controller(
    ctl_id: str,
    table: Mapping[str, Any],
    step: int,
    model: Any,
    devices: Mapping[str, DeviceConfig],
) -> ControllerConfig:
    prefix = f"controllers.{ctl_id}."
    check_id(ctl_id, f"controllers.{ctl_id}")
    kind = choice(require(table, "kind", prefix), prefix + "kind", ("pd", "tick"))
    check_keys(table, prefix, _CONTROLLER_KEYS + (_PD_KEYS if kind == "pd" else ()))
    period = parse_duration(require(table, "period", prefix), prefix + "period")
    if period == 0:
        raise ScenarioError(prefix + "period", "must be > 0")
    phase = parse_duration(table.get("phase", "0 s"), prefix + "phase")
    policy = Policy(choice(table.get("policy", "strict"), prefix + "policy", tuple(Policy)))
    for key, value in (("period", period), ("phase", phase)):
        check_on_grid(prefix + key, value, step, policy)
    spec = ControllerSpec(ctl_id, period, phase, policy)
    if kind == "tick":
        return ControllerConfig(spec=spec, kind=kind)
    if model is None:
        raise ScenarioError(prefix + "kind", 'kind "pd" needs [physics] mujoco = "model.xml"')
    actuator = string(require(table, "actuator", prefix), prefix + "actuator")
    try:
        act, low, high = actuator_of(model, actuator)
    except SimclockValueError as exc:
        raise ScenarioError(prefix + "actuator", str(exc)) from None
    params: dict[str, Any] = {"actuator": actuator}
    for role in ("angle", "rate"):
        dev = string(require(table, role, prefix), prefix + role)
        if dev not in devices:
            raise ScenarioError(
                prefix + role, f"{safe_repr(dev)} is not a device; define [devices.{dev}] first"
            )
        index = integer(table.get(f"{role}_index", 0), f"{prefix}{role}_index")
        if index >= devices[dev].dim:
            raise ScenarioError(
                f"{prefix}{role}_index",
                f"{index} is out of range: device {safe_repr(dev)} has {devices[dev].dim} values",
            )
        params[role] = dev
        params[f"{role}_index"] = index
    for gain in ("kp", "kd", "target"):
        params[gain] = number(table.get(gain, 0.0), prefix + gain)
    pd = PdConfig(
        actuator=actuator,
        actuator_index=act,
        low=low,
        high=high,
        angle=params["angle"],
        angle_index=params["angle_index"],
        rate=params["rate"],
        rate_index=params["rate_index"],
        kp=params["kp"],
        kd=params["kd"],
        target=params["target"],
    )
    return ControllerConfig(spec=spec, kind=kind, params=params, pd=pd)
