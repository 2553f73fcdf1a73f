"""What a component kind is: the classes a sensor or controller kind subclasses (SPEC §8).

A kind is one class with a name, its own scenario keys, a `load` that
checks them when the scenario file is loaded (before anything runs) and
returns the kind's configuration (an instance of the class, picklable: sweeps
ship it to their workers), and a method that makes, for each session, the
callable the session fires: a sensor's ``read(noise)`` or a controller's
``step(latest)``. The built-in kinds (``basic`` sensors, ``pd`` and ``tick``
controllers) are written this way, and so is a kind of your own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from simclock.core._errors import SimclockValueError
from simclock.core._names import safe_repr
from simclock.sim._grid import GridClock
from simclock.sim._mujoco import actuator_of, sensor_range
from simclock.sim._toml import ScenarioError, integer, number, require, string

__all__ = ["ControllerKind", "KindParams", "KindRun", "SensorKind"]

_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class KindParams:
    """A kind's own keys of one ``[devices.<id>]`` or ``[controllers.<id>]`` table, to check.

    ``kind`` is the table's ``kind`` as written; ``prefix`` is the table's
    dotted key with a trailing dot (``controllers.pole.``); ``table`` holds
    only the kind's keys (the common ones, ``kind``, ``period``, ``phase``,
    ``policy`` and for devices
    ``latency``, ``topic``, are checked by the loader); ``model`` is the
    compiled ``mujoco.MjModel`` or ``None`` on a pure grid; ``devices`` maps
    each device defined so far to its number of values (a controller sees
    every device); ``step_ns`` is the physics step. Each getter raises
    `ScenarioError` naming the key at fault.
    """

    kind: str
    prefix: str
    table: Mapping[str, Any]
    model: Any
    devices: Mapping[str, int]
    step_ns: int

    def key(self, name: str) -> str:
        """The full dotted key of ``name`` (``controllers.pole.kp``), for your own errors."""
        return self.prefix + name

    def error(self, name: str, problem: str) -> ScenarioError:
        """A `ScenarioError` at key ``name``: ``raise params.error(...)``."""
        return ScenarioError(self.prefix + name, problem)

    def _get(self, name: str, default: Any) -> Any:
        if default is _MISSING:
            return require(self.table, name, self.prefix)
        return self.table.get(name, default)

    def number(
        self, name: str, default: float = _MISSING, *, minimum: float | None = None
    ) -> float:
        """Key ``name`` as a float (an int or float in the file); required without ``default``."""
        return number(self._get(name, default), self.key(name), minimum)

    def integer(self, name: str, default: int = _MISSING, *, minimum: int = 0) -> int:
        """Key ``name`` as an int ``>= minimum``; required without ``default``."""
        return integer(self._get(name, default), self.key(name), minimum)

    def string(self, name: str, default: str = _MISSING) -> str:
        """Key ``name`` as a str; required without ``default``."""
        return string(self._get(name, default), self.key(name))

    def numbers(self, name: str, length: int | None = None) -> tuple[float, ...]:
        """Key ``name``, a required list of numbers (of ``length`` numbers if given), as floats."""
        value = self._get(name, _MISSING)
        if not isinstance(value, list):
            raise self.error(
                name, f"expected a list of numbers, got {type(value).__name__} {safe_repr(value)}"
            )
        out = tuple(number(v, f"{self.key(name)}[{i}]") for i, v in enumerate(value))
        if length is not None and len(out) != length:
            raise self.error(name, f"expected {length} numbers, got {len(out)}")
        return out

    def need_model(self, name: str = "kind") -> Any:
        """The MuJoCo model; refused at key ``name`` on a pure grid."""
        if self.model is None:
            what = f'kind "{self.kind}" needs' if name == "kind" else "needs"
            raise self.error(name, f'{what} [physics] mujoco = "model.xml"')
        return self.model

    def device(self, name: str, index_name: str | None = None) -> tuple[str, int]:
        """Key ``name`` naming a device, and key ``index_name`` (default 0) a value index in it.

        Returns ``(device id, index)``; refused if the device is not defined or
        has no value at that index.
        """
        dev = self.string(name)
        if dev not in self.devices:
            raise self.error(
                name, f"{safe_repr(dev)} is not a device; define [devices.{dev}] first"
            )
        if index_name is None:
            return dev, 0
        index = self.integer(index_name, 0)
        if index >= self.devices[dev]:
            raise self.error(
                index_name,
                f"{index} is out of range: device {safe_repr(dev)} has {self.devices[dev]} values",
            )
        return dev, index

    def actuator(self, name: str) -> tuple[int, float | None, float | None]:
        """Key ``name`` naming an MJCF actuator: ``(index in data.ctrl, low, high)``.

        ``low``/``high`` are the ``ctrlrange`` when the actuator is ctrl-limited,
        else ``None``.
        """
        model = self.need_model(name)
        actuator = self.string(name)
        try:
            return actuator_of(model, actuator)
        except SimclockValueError as exc:
            raise self.error(name, str(exc)) from None

    def sensor(self, name: str) -> tuple[int, int]:
        """Key ``name`` naming an MJCF sensor: ``(start, stop)`` in ``data.sensordata``."""
        model = self.need_model(name)
        sensor = self.string(name)
        try:
            return sensor_range(model, sensor)
        except SimclockValueError as exc:
            raise self.error(name, str(exc)) from None


@dataclass(frozen=True, slots=True)
class KindRun:
    """What a kind's callable is made with, once per session (`simclock.build_session`).

    ``clock`` is the session's clock; with MuJoCo physics it is a
    `MujocoClock` and ``data``/``model`` are its ``MjData``
    and ``MjModel`` (``None`` on a pure grid). A controller acts on the
    physics by writing ``data.ctrl``. ``component_id`` is ``sensors/<id>`` or
    ``controllers/<id>``.
    """

    clock: GridClock
    component_id: str
    seed: int

    @property
    def data(self) -> Any:
        """The session's ``mujoco.MjData`` (``None`` without MuJoCo physics)."""
        return getattr(self.clock, "data", None)

    @property
    def model(self) -> Any:
        """The session's ``mujoco.MjModel`` (``None`` without MuJoCo physics)."""
        return getattr(self.clock, "model", None)


class ControllerKind:
    """Base of a controller kind: ``kind = "<name>"`` in a ``[controllers.<id>]`` table.

    Subclass it, list your keys in ``keys``, check them in `load` (a
    classmethod returning an instance: your configuration), and return the
    per-session ``step(latest)`` from `controller`. ``latest`` maps each
    device id to its last *delivered* `Sample` (absent until
    the first delivery; read ``latest["enc"].values[0]``); a returned mapping
    is published on ``/controllers/<id>`` and recorded, ``None`` publishes
    nothing. The instance is pickled to sweep workers: keep plain values in it.
    """

    name: ClassVar[str] = ""
    """The kind's registered name (built-in and entry-point kinds); ``module:Class`` otherwise."""
    keys: ClassVar[Sequence[str]] = ()
    """The kind's own keys, besides ``kind``, ``period``, ``phase``, ``policy``."""
    encodes: ClassVar[bool] = False
    # Built-in kinds only: step returns (command, its canonical JSON or None).

    @classmethod
    def load(cls, params: KindParams) -> ControllerKind:
        """Check the kind's keys (``params``) and return its configuration."""
        raise NotImplementedError

    def controller(self, run: KindRun) -> Callable[[Any], Any]:
        """The ``step(latest) -> command or None`` of one session."""
        raise NotImplementedError


class SensorKind:
    """Base of a sensor kind: ``kind = "<name>"`` in a ``[devices.<id>]`` table.

    Subclass it, list your keys in ``keys``, check them in `load`, give
    the number of values per sample in ``dim`` (metrics and controllers check
    their indexes against it), and return the per-session ``read(noise)`` from
    `reader`. ``noise`` is the device's stream ``/sensors/<id>/noise`` of
    the episode (C-SEED-1); ``read`` returns ``dim`` numbers.
    """

    name: ClassVar[str] = ""
    keys: ClassVar[Sequence[str]] = ()
    """The kind's own keys, besides ``kind``, ``period``, ``phase``, ``latency``,
    ``policy``, ``topic``."""
    floats: ClassVar[bool] = False
    # Built-in kinds only: read returns a tuple of Python floats (no conversion).

    @property
    def dim(self) -> int:
        """Values per sample."""
        raise NotImplementedError

    @classmethod
    def load(cls, params: KindParams) -> SensorKind:
        """Check the kind's keys (``params``) and return its configuration."""
        raise NotImplementedError

    def reader(self, run: KindRun) -> Callable[[Any], Any]:
        """The ``read(noise) -> values`` of one session."""
        raise NotImplementedError
