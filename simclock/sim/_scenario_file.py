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

import math
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from simclock.core._bus import is_reserved_topic
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._names import exact_str, safe_repr
from simclock.realtime._pacing import PacingMode
from simclock.sim._devices import ControllerSpec, SensorSpec
from simclock.sim._grid import Policy, format_ns
from simclock.sim._metrics import MetricConfig, load_metrics
from simclock.sim._mujoco import MujocoClock

__all__ = [
    "MODES",
    "ControllerConfig",
    "DeviceConfig",
    "PhysicsConfig",
    "Scenario",
    "ScenarioError",
    "choice",
    "load_scenario",
    "parse_duration",
]

_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ns|us|µs|ms|s)\s*")
# C-TIME-4: every time fits the MCAP log time; checked on the digits before any
# arithmetic, so a 10**6-digit duration is refused at the cost of reading it.
_MAX_NS = 2**64 - 1
_MAX_DURATION_TEXT = 64
_SCALE = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_TOPIC = re.compile(r"/[A-Za-z0-9_./-]*")
MODES = tuple(m.value for m in PacingMode)


class ScenarioError(SimclockValueError):
    """A scenario file that cannot run; ``key`` is the dotted key at fault (``""``: the file)."""

    def __init__(self, key: str, problem: str) -> None:
        self.key = key
        self.problem = problem
        super().__init__(f"{key}: {problem}" if key else problem)


# -- value parsing ------------------------------------------------------------------


def parse_duration(value: object, key: str = "duration") -> int:
    """``"7 ms"`` -> ``7_000_000``; exact or :class:`ScenarioError` at ``key`` (C-GRID-4)."""
    if not isinstance(value, str):
        raise ScenarioError(
            key,
            f'expected a duration string with a unit such as "7 ms", got '
            f"{type(value).__name__} {safe_repr(value)}",
        )
    match = _DURATION.fullmatch(value) if len(value) <= _MAX_DURATION_TEXT else None
    if match is None:
        raise ScenarioError(
            key,
            f'expected a duration such as "7 ms" (units ns, us, ms, s), got {safe_repr(value)}',
        )
    # Fraction, not Decimal: Decimal arithmetic rounds to 28 digits, so a 29-digit
    # value would load rounded (C-GRID-4: exact or refused).
    exact = Fraction(match.group(1)) * _SCALE[match.group(2)]
    if exact.denominator != 1:
        raise ScenarioError(
            key, f"{safe_repr(value)} is not a whole number of nanoseconds; refusing to round it"
        )
    if exact > _MAX_NS:
        raise ScenarioError(
            key,
            f"{safe_repr(value)} is beyond 2**64 - 1 ns (about 584 years), the largest time-int",
        )
    return int(exact)


def _int(value: object, key: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(
            key, f"expected an integer, got {type(value).__name__} {safe_repr(value)}"
        )
    if value < minimum:
        raise ScenarioError(key, f"must be >= {minimum}, got {value}")
    return value


def _number(value: object, key: str, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(
            key, f"expected a number, got {type(value).__name__} {safe_repr(value)}"
        )
    number = float(value)
    if not math.isfinite(number):
        raise ScenarioError(key, f"must be finite, got {safe_repr(value)}")
    if minimum is not None and number < minimum:
        raise ScenarioError(key, f"must be >= {minimum:g}, got {safe_repr(value)}")
    return number


def _str(value: object, key: str) -> str:
    if not isinstance(value, str):
        raise ScenarioError(
            key, f"expected a string, got {type(value).__name__} {safe_repr(value)}"
        )
    return value


def choice(value: object, key: str, choices: Sequence[str]) -> str:
    text = exact_str(_str(value, key))
    if text not in choices:
        listed = ", ".join(f'"{c}"' for c in choices)
        raise ScenarioError(key, f"must be one of {listed}, got {safe_repr(text)}")
    return text


def _table(value: object, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScenarioError(key, f"expected a table, got {type(value).__name__} {safe_repr(value)}")
    return value


def _check_keys(table: Mapping[str, Any], prefix: str, allowed: Sequence[str]) -> None:
    for name in table:
        if name not in allowed:
            listed = ", ".join(allowed)
            raise ScenarioError(f"{prefix}{name}", f"unknown key; expected one of {listed}")


def _require(table: Mapping[str, Any], name: str, prefix: str) -> Any:
    if name not in table:
        raise ScenarioError(f"{prefix}{name}", "required key is missing")
    return table[name]


def _check_id(name: str, key: str) -> str:
    if not _ID.fullmatch(name):
        raise ScenarioError(
            key, f"id {safe_repr(name)} must start with a letter and use only [A-Za-z0-9_.-]"
        )
    return name


def _check_on_grid(key: str, value: int, step: int, policy: Policy) -> None:
    """C-GRID-3 with the scenario's wording: the error names the exact key."""
    if policy is Policy.STRICT and value % step:
        raise ScenarioError(
            key,
            f"{format_ns(value)} is not on the {format_ns(step)} grid (policy strict); "
            f'use a multiple of {format_ns(step)} or policy = "next_boundary"',
        )


# -- the plan ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PhysicsConfig:
    """The grid: ``step_ns`` and, for MuJoCo, the resolved model path and keyframe."""

    step_ns: int
    mujoco_model: Path | None = None
    keyframe: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceConfig:
    """One ``[devices.<id>]`` table: its schedule plus how to read it."""

    spec: SensorSpec
    sensor: str | None
    dim: int
    noise_std: float


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    """One ``[controllers.<id>]`` table; ``params`` holds the kind's own keys."""

    spec: ControllerSpec
    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)


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
    """Read and validate a scenario file; :class:`ScenarioError` names the key at fault.

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
    _check_keys(data, "", _TOP_KEYS)
    name = _str(data.get("name", file.stem), "name")
    seed = _int(data.get("seed", 0), "seed")
    mode = choice(data.get("mode", PacingMode.UNBOUNDED.value), "mode", MODES)
    rtf = _number(data.get("rtf", 1), "rtf")
    if rtf <= 0:
        raise ScenarioError("rtf", f"must be > 0, got {data['rtf']!r}")
    duration = parse_duration(_require(data, "duration", ""), "duration")
    episodes = _int(data.get("episodes", 1), "episodes", minimum=1)
    physics, model = _load_physics(_table(_require(data, "physics", ""), "physics"), file)
    step = physics.step_ns
    if duration == 0 or duration % step:
        raise ScenarioError(
            "duration",
            f"{format_ns(duration)} must be a positive multiple of the "
            f"{format_ns(step)} physics step",
        )
    devices = tuple(
        _load_device(dev_id, _table(table, f"devices.{dev_id}"), step, model)
        for dev_id, table in _table(data.get("devices", {}), "devices").items()
    )
    by_id = {d.spec.device_id: d for d in devices}
    controllers = tuple(
        _load_controller(ctl_id, _table(table, f"controllers.{ctl_id}"), step, model, by_id)
        for ctl_id, table in _table(data.get("controllers", {}), "controllers").items()
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
    _check_keys(table, "physics.", ("mujoco", "step", "keyframe"))
    if ("mujoco" in table) == ("step" in table):
        raise ScenarioError("physics", 'give exactly one of mujoco = "model.xml" or step = "2 ms"')
    if "step" in table:
        if "keyframe" in table:
            raise ScenarioError("physics.keyframe", "needs a mujoco model")
        step = parse_duration(table["step"], "physics.step")
        if step == 0:
            raise ScenarioError("physics.step", "must be > 0")
        return PhysicsConfig(step_ns=step), None

    model_path = (file.parent / _str(table["mujoco"], "physics.mujoco")).resolve()
    keyframe = None
    if "keyframe" in table:
        keyframe = _str(table["keyframe"], "physics.keyframe")
    try:
        probe = MujocoClock(model_path, 0, keyframe=keyframe)
    except (SimclockValueError, SimclockRuntimeError) as exc:
        key = "physics.keyframe" if "keyframe" in str(exc) else "physics.mujoco"
        raise ScenarioError(key, str(exc)) from None
    return PhysicsConfig(probe.step_ns(), model_path, keyframe), probe


def _load_device(dev_id: str, table: Mapping[str, Any], step: int, model: Any) -> DeviceConfig:
    prefix = f"devices.{dev_id}."
    _check_id(dev_id, f"devices.{dev_id}")
    _check_keys(table, prefix, _DEVICE_KEYS)
    period = parse_duration(_require(table, "period", prefix), prefix + "period")
    if period == 0:
        raise ScenarioError(prefix + "period", "must be > 0")
    phase = parse_duration(table.get("phase", "0 s"), prefix + "phase")
    latency = parse_duration(table.get("latency", "0 s"), prefix + "latency")
    policy = Policy(choice(table.get("policy", "next_boundary"), prefix + "policy", tuple(Policy)))
    for key, value in (("period", period), ("phase", phase), ("latency", latency)):
        _check_on_grid(prefix + key, value, step, policy)
    topic = _str(table.get("topic", f"/sensors/{dev_id}"), prefix + "topic")
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
    noise_std = _number(table.get("noise_std", 0.0), prefix + "noise_std", minimum=0.0)
    sensor: str | None = None
    if "sensor" in table:
        sensor = _str(table["sensor"], prefix + "sensor")
        if model is None:
            raise ScenarioError(prefix + "sensor", 'needs [physics] mujoco = "model.xml"')
        if "dim" in table:
            raise ScenarioError(prefix + "dim", "comes from the MuJoCo sensor; remove it")
        try:
            where = model.sensor_slice(sensor)
        except SimclockValueError as exc:
            raise ScenarioError(prefix + "sensor", str(exc)) from None
        dim = where.stop - where.start
    else:
        dim = _int(table.get("dim", 1), prefix + "dim", minimum=1)
    spec = SensorSpec(dev_id, period, phase, latency, policy, topic)
    return DeviceConfig(spec=spec, sensor=sensor, dim=dim, noise_std=noise_std)


def _load_controller(
    ctl_id: str,
    table: Mapping[str, Any],
    step: int,
    model: Any,
    devices: Mapping[str, DeviceConfig],
) -> ControllerConfig:
    prefix = f"controllers.{ctl_id}."
    _check_id(ctl_id, f"controllers.{ctl_id}")
    kind = choice(_require(table, "kind", prefix), prefix + "kind", ("pd", "tick"))
    _check_keys(table, prefix, _CONTROLLER_KEYS + (_PD_KEYS if kind == "pd" else ()))
    period = parse_duration(_require(table, "period", prefix), prefix + "period")
    if period == 0:
        raise ScenarioError(prefix + "period", "must be > 0")
    phase = parse_duration(table.get("phase", "0 s"), prefix + "phase")
    policy = Policy(choice(table.get("policy", "strict"), prefix + "policy", tuple(Policy)))
    for key, value in (("period", period), ("phase", phase)):
        _check_on_grid(prefix + key, value, step, policy)
    spec = ControllerSpec(ctl_id, period, phase, policy)
    if kind == "tick":
        return ControllerConfig(spec=spec, kind=kind)
    if model is None:
        raise ScenarioError(prefix + "kind", 'kind "pd" needs [physics] mujoco = "model.xml"')
    actuator = _str(_require(table, "actuator", prefix), prefix + "actuator")
    try:
        model.actuator(actuator)
    except SimclockValueError as exc:
        raise ScenarioError(prefix + "actuator", str(exc)) from None
    params: dict[str, Any] = {"actuator": actuator}
    for role in ("angle", "rate"):
        dev = _str(_require(table, role, prefix), prefix + role)
        if dev not in devices:
            raise ScenarioError(
                prefix + role, f"{safe_repr(dev)} is not a device; define [devices.{dev}] first"
            )
        index = _int(table.get(f"{role}_index", 0), f"{prefix}{role}_index")
        if index >= devices[dev].dim:
            raise ScenarioError(
                f"{prefix}{role}_index",
                f"{index} is out of range: device {safe_repr(dev)} has {devices[dev].dim} values",
            )
        params[role] = dev
        params[f"{role}_index"] = index
    for gain in ("kp", "kd", "target"):
        params[gain] = _number(table.get(gain, 0.0), prefix + gain)
    return ControllerConfig(spec=spec, kind=kind, params=params)
