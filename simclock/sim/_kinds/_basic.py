"""The ``basic`` sensor kind (the default): an MJCF sensor's values or ``dim`` zeros, plus noise."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from simclock.core._random import SeededRandomSource, check_sigma, check_size
from simclock.sim._kinds._base import KindParams, KindRun, SensorKind
from simclock.sim._mujoco import MujocoClock

__all__ = ["BasicSensor"]


@dataclass(frozen=True, slots=True)
class BasicSensor(SensorKind):
    """``sensor = "gyro"`` (an MJCF sensor, MuJoCo physics only) or ``dim = n`` zeros.

    ``noise_std`` (default 0) adds Gaussian noise from ``/sensors/<id>/noise``
    to each value. ``sensor_range`` is where the sensor lives in
    ``data.sensordata`` (``None`` without a sensor).
    """

    sensor: str | None
    values: int
    noise_std: float
    sensor_range: tuple[int, int] | None

    name: ClassVar[str] = "basic"
    keys: ClassVar[tuple[str, ...]] = ("sensor", "dim", "noise_std")
    floats: ClassVar[bool] = True

    @property
    def dim(self) -> int:
        """Values per sample: the sensor's dimension, or ``dim``."""
        return self.values

    @classmethod
    def load(cls, params: KindParams) -> BasicSensor:
        """``sensor`` and ``dim`` exclude each other; the sensor must be in the model."""
        noise_std = params.number("noise_std", 0.0, minimum=0.0)
        if "sensor" not in params.table:
            return cls(None, params.integer("dim", 1, minimum=1), noise_std, None)
        sensor = params.string("sensor")
        params.need_model("sensor")
        if "dim" in params.table:
            raise params.error("dim", "comes from the MuJoCo sensor; remove it")
        where = params.sensor("sensor")
        return cls(sensor, where[1] - where[0], noise_std, where)

    def reader(self, run: KindRun) -> Callable[[SeededRandomSource], tuple[float, ...]]:
        """The device's ``read(noise)``, resolved once: the sensor's slice, its dim, its noise.

        Per sample it does only the sample's work: ``mj_forward`` once per boundary
        (see `MujocoClock.forward`), one slice of ``sensordata``, one draw of
        ``dim`` normals (its arguments checked here, once). The values are a tuple
        of Python floats; with noise, each is ``value + draw`` in float64, the same
        sum as Python's ``float`` addition.
        """
        std = self.noise_std
        dim = self.values
        # Once, not per draw: the checks SeededRandomSource.normal makes on every call.
        check_sigma(std)
        check_size(dim)
        where = self.sensor_range
        clock = run.clock
        # Invariant: load_scenario only resolves a sensor with MuJoCo physics.
        assert where is None or isinstance(clock, MujocoClock)
        if where is None or not isinstance(clock, MujocoClock):
            zeros = (0.0,) * dim

            def read_zeros(noise: SeededRandomSource) -> tuple[float, ...]:
                if std > 0:
                    return tuple([0.0 + d for d in noise._normal_checked(0.0, std, dim).tolist()])
                return zeros

            return read_zeros
        start, stop = where
        return clock._sensor_reader(start, stop, std, dim)
