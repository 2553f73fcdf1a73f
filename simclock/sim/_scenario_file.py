"""Scenario files (TOML): parsing and validation behind ``simclock run`` (SPEC §7-§11).

A scenario is a plan: physics grid, sensor devices, controllers, seed, mode
and duration. `load_scenario` parses and validates it completely before
anything runs; every error is a `ScenarioError` whose message starts
with the exact key (``devices.imu0.period: 7 ms is not on the 2 ms grid
(policy strict); ...``). `simclock.build_session` (module ``_scenario``) makes a fresh
instance of the plan for a seed (C-SEED-2) and `simclock.run_scenario`
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
    kind = "basic"             # default; or a kind of your own (below)
    period = "7 ms"            # required
    phase = "0 ms"             # default 0
    latency = "3 ms"           # default 0
    policy = "next_boundary"   # default next_boundary (sensors)
    sensor = "gyro"            # an MJCF sensor (mujoco physics only)
    dim = 1                    # values per sample without a sensor, default 1
    noise_std = 0.02           # Gaussian noise from /sensors/imu0/noise, default 0
    topic = "/sensors/imu0"    # default

    [controllers.pd]
    kind = "pd"                # "pd" (mujoco physics), "tick" (publishes a counter),
                               # or a kind of your own (below)
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

Kinds: a table's ``kind`` names a class (``simclock.sim._kinds``): a built-in
one, ``"module:Class"`` (a Python module beside the scenario or importable),
or a name of the entry point group ``simclock.components``. The loader checks
the common keys (schedule, topic); the kind's ``load`` checks its own keys.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import pickle
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from simclock.core._bus import is_reserved_topic
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._names import safe_repr
from simclock.realtime._pacing import PacingMode
from simclock.recording._fingerprint import canonical_json
from simclock.sim._devices import ControllerSpec, SensorSpec
from simclock.sim._grid import Policy, format_ns
from simclock.sim._kinds import (
    BUILTIN,
    ControllerKind,
    KindParams,
    SensorKind,
    check_picklable,
    resolve_kind,
    restore_kind,
)
from simclock.sim._kinds._basic import BasicSensor
from simclock.sim._kinds._pd import PdConfig
from simclock.sim._kinds._tick import Tick
from simclock.sim._metrics import MetricConfig, load_metrics
from simclock.sim._mujoco import compiled_model, keyframe_id, model_step_ns
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

    ``kind`` is the table's ``kind`` as written (default ``"basic"``) and
    ``impl`` what that kind's ``load`` returned (a `SensorKind`).
    For ``basic``, ``sensor``, ``noise_std`` and ``sensor_range`` (where the
    MuJoCo sensor lives in ``data.sensordata``, ``(start, stop)``, resolved
    once when the file is loaded) repeat its keys; ``None``/0 for other kinds.
    """

    spec: SensorSpec
    sensor: str | None
    dim: int
    noise_std: float
    sensor_range: tuple[int, int] | None = None
    kind: str = "basic"
    impl: SensorKind | None = None
    base_dir: str = ""
    """The scenario's directory: where a ``module:Class`` kind's module is looked for."""

    def __post_init__(self) -> None:
        if self.impl is None:  # made by hand, as before kinds: the basic kind of these fields
            basic = BasicSensor(self.sensor, self.dim, self.noise_std, self.sensor_range)
            object.__setattr__(self, "impl", basic)

    def __reduce__(self) -> tuple[Any, ...]:
        # The kind's module is made importable before its configuration is unpickled
        # (a sweep worker has not loaded the scenario); see restore_kind.
        return (
            _device_config,
            (*_fields(self, "impl"), _Kind(self.kind, self.base_dir, self.impl)),
        )


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    """One ``[controllers.<id>]`` table; ``params`` holds the kind's own keys as written.

    ``impl`` is what the kind's ``load`` returned (a `ControllerKind`);
    ``pd`` is the same for ``kind = "pd"``, typed and resolved (``None`` otherwise).
    """

    spec: ControllerSpec
    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)
    pd: PdConfig | None = None
    impl: ControllerKind | None = None
    base_dir: str = ""
    """The scenario's directory: where a ``module:Class`` kind's module is looked for."""

    def __post_init__(self) -> None:
        if self.impl is None:  # made by hand, as before kinds
            object.__setattr__(self, "impl", self.pd if self.kind == "pd" else Tick())

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _controller_config,
            (*_fields(self, "impl"), _Kind(self.kind, self.base_dir, self.impl)),
        )


def _fields(config: Any, last: str) -> list[Any]:
    names = [f.name for f in fields(config)]
    assert names[-2:] == [last, "base_dir"]  # Invariant: impl, then base_dir, come last
    return [getattr(config, name) for name in names[:-2]] + [config.base_dir]


def _device_config(*args: Any) -> DeviceConfig:
    """Inverse of `DeviceConfig.__reduce__`: the fields, then base_dir, then impl."""
    return DeviceConfig(*args[:-2], impl=args[-1], base_dir=args[-2])  # type: ignore[misc]


def _controller_config(*args: Any) -> ControllerConfig:
    """Inverse of `ControllerConfig.__reduce__`."""
    return ControllerConfig(*args[:-2], impl=args[-1], base_dir=args[-2])  # type: ignore[misc]


class _Kind:
    """A kind's configuration in a pickle: unpickled by `restore_kind`."""

    __slots__ = ("base_dir", "impl", "kind")

    def __init__(self, kind: str, base_dir: str, impl: object) -> None:
        self.kind, self.base_dir, self.impl = kind, base_dir, impl

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore_kind, (self.kind, self.base_dir, pickle.dumps(self.impl)))


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
    text: str = ""
    """The file's TOML document as canonical JSON (sorted keys, no spaces): comments,
    whitespace, key order and quoting do not change it; any value that does, does."""
    text_sha256: str = ""
    """SHA-256 (hex) of `text`: two runs share it exactly when their files say the same."""
    model_sha256: str | None = None
    """SHA-256 (hex) of the MJCF file's bytes (``None`` without MuJoCo physics); files
    pulled in with ``<include>`` are not covered."""


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
_DEVICE_KEYS = ("period", "phase", "latency", "policy")
_DEVICE_TAIL = ("topic", "kind")
_CONTROLLER_KEYS = ("kind", "period", "phase", "policy")


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
    physics, model, model_digest = _load_physics(
        subtable(require(data, "physics", ""), "physics"), file
    )
    step = physics.step_ns
    if duration == 0 or duration % step:
        raise ScenarioError(
            "duration",
            f"{format_ns(duration)} must be a positive multiple of the "
            f"{format_ns(step)} physics step",
        )
    base_dir = file.parent.resolve()
    devices = tuple(
        _load_device(dev_id, subtable(table, f"devices.{dev_id}"), step, model, base_dir)
        for dev_id, table in subtable(data.get("devices", {}), "devices").items()
    )
    by_id = {d.spec.device_id: d for d in devices}
    controllers = tuple(
        _load_controller(
            ctl_id, subtable(table, f"controllers.{ctl_id}"), step, model, by_id, base_dir
        )
        for ctl_id, table in subtable(data.get("controllers", {}), "controllers").items()
    )
    text = _canonical_text(data)
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
        text=text,
        text_sha256=hashlib.sha256(text.encode("ascii")).hexdigest(),
        model_sha256=model_digest,
    )


def _canonical_text(data: Mapping[str, Any]) -> str:
    """The TOML document as canonical JSON; a TOML date or time is refused, naming its key.

    TOML's date and time values have no JSON form, and no scenario key takes one.
    """

    def check(value: object, key: str) -> None:
        if isinstance(value, Mapping):
            for sub, item in value.items():
                check(item, f"{key}.{sub}" if key else str(sub))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                check(item, f"{key}[{index}]")
        elif isinstance(value, datetime.date | datetime.time):
            raise ScenarioError(
                key, f"a TOML date or time is not a scenario value; quote it: {str(value)!r}"
            )

    check(data, "")
    return canonical_json(data, "the scenario")


def _load_physics(table: Mapping[str, Any], file: Path) -> tuple[PhysicsConfig, Any, str | None]:
    check_keys(table, "physics.", ("mujoco", "step", "keyframe"))
    if ("mujoco" in table) == ("step" in table):
        raise ScenarioError("physics", 'give exactly one of mujoco = "model.xml" or step = "2 ms"')
    if "step" in table:
        if "keyframe" in table:
            raise ScenarioError("physics.keyframe", "needs a mujoco model")
        step = parse_duration(table["step"], "physics.step")
        if step == 0:
            raise ScenarioError("physics.step", "must be > 0")
        return PhysicsConfig(step_ns=step), None, None

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
    try:
        digest = hashlib.sha256(model_path.read_bytes()).hexdigest()
    except OSError as exc:  # compiled, then removed or unreadable: say so, as for the TOML
        raise ScenarioError(
            "physics.mujoco", f"cannot read {str(model_path)!r}: {exc.strerror}"
        ) from None
    if keyframe is not None:
        try:
            keyframe_id(model, keyframe)
        except SimclockValueError as exc:
            raise ScenarioError("physics.keyframe", str(exc)) from None
    return PhysicsConfig(step, model_path, keyframe), model, digest


def _load_device(
    dev_id: str, table: Mapping[str, Any], step: int, model: Any, base_dir: Path
) -> DeviceConfig:
    prefix = f"devices.{dev_id}."
    check_id(dev_id, f"devices.{dev_id}")
    kind_name = string(table.get("kind", "basic"), prefix + "kind")
    kind = resolve_kind(kind_name, prefix + "kind", SensorKind, base_dir)
    check_keys(table, prefix, (*_DEVICE_KEYS, *kind.keys, *_DEVICE_TAIL))
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
    params = _params(kind_name, prefix, table, kind.keys, model, {}, step)
    impl = _run_load(kind, params, kind_name, prefix, SensorKind)
    dim = getattr(impl, "dim", None)
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ScenarioError(
            prefix + "kind",
            f"{kind_name!r} gave dim = {safe_repr(dim)}; a sensor kind's dim is an int >= 1, "
            "its number of values per sample",
        )
    spec = SensorSpec(dev_id, period, phase, latency, policy, topic)
    if isinstance(impl, BasicSensor):
        return DeviceConfig(
            spec, impl.sensor, dim, impl.noise_std, impl.sensor_range, kind_name, impl
        )
    return DeviceConfig(spec, None, dim, 0.0, None, kind_name, impl, str(base_dir))


def _params(
    kind: str,
    prefix: str,
    table: Mapping[str, Any],
    keys: Sequence[str],
    model: Any,
    devices: Mapping[str, int],
    step: int,
) -> KindParams:
    own = {k: v for k, v in table.items() if k in keys}
    return KindParams(kind, prefix, MappingProxyType(own), model, devices, step)


def _run_load(kind: type[Any], params: KindParams, value: str, prefix: str, family: type) -> Any:
    """``kind.load(params)``: its `ScenarioError` as is, anything else as one line."""
    try:
        impl = kind.load(params)
    except ScenarioError:
        raise
    except Exception as exc:
        raise ScenarioError(
            prefix + "kind", f"{value!r}.load() failed: {type(exc).__name__}: {exc}"
        ) from None
    method = "reader" if family is SensorKind else "controller"
    if not callable(getattr(impl, method, None)):
        raise ScenarioError(
            prefix + "kind",
            f"{value!r}.load() returned {type(impl).__name__} {safe_repr(impl)}, which has no "
            f"{method}(); return an instance of the kind",
        )
    if kind not in BUILTIN.values():
        check_picklable(impl, value, prefix + "kind")
    return impl


def _load_controller(
    ctl_id: str,
    table: Mapping[str, Any],
    step: int,
    model: Any,
    devices: Mapping[str, DeviceConfig],
    base_dir: Path,
) -> ControllerConfig:
    prefix = f"controllers.{ctl_id}."
    check_id(ctl_id, f"controllers.{ctl_id}")
    kind_name = string(require(table, "kind", prefix), prefix + "kind")
    kind = resolve_kind(kind_name, prefix + "kind", ControllerKind, base_dir)
    check_keys(table, prefix, (*_CONTROLLER_KEYS, *kind.keys))
    period = parse_duration(require(table, "period", prefix), prefix + "period")
    if period == 0:
        raise ScenarioError(prefix + "period", "must be > 0")
    phase = parse_duration(table.get("phase", "0 s"), prefix + "phase")
    policy = Policy(choice(table.get("policy", "strict"), prefix + "policy", tuple(Policy)))
    for key, value in (("period", period), ("phase", phase)):
        check_on_grid(prefix + key, value, step, policy)
    spec = ControllerSpec(ctl_id, period, phase, policy)
    dims = {d: c.dim for d, c in devices.items()}
    params = _params(kind_name, prefix, table, kind.keys, model, dims, step)
    impl = _run_load(kind, params, kind_name, prefix, ControllerKind)
    return ControllerConfig(
        spec=spec,
        kind=kind_name,
        params=dict(params.table),
        pd=impl if isinstance(impl, PdConfig) else None,
        impl=impl,
        base_dir=str(base_dir),
    )
