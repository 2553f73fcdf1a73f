"""The ``pd`` controller kind: ``u = kp*(target - angle) - kd*rate`` on an MJCF actuator."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from simclock.core._kernels import PdStep
from simclock.sim._kinds._base import ControllerKind, KindParams, KindRun

__all__ = ["PdConfig"]

_U_JSON = b'{"u":%r}'  # canonical JSON of {"u": <a finite float>}: %r is its repr


@dataclass(frozen=True, slots=True)
class PdConfig(ControllerKind):
    """A ``kind = "pd"`` controller, resolved when the file is loaded.

    ``u = kp*(target - angle.values[angle_index]) - kd*rate.values[rate_index]``
    on the last *delivered* samples (0 until both have arrived), written to
    ``data.ctrl[actuator_index]``, clamped to ``[low, high]`` when the
    actuator is ctrl-limited (both ``None`` otherwise), and published as
    ``{"u": u}``.
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

    name: ClassVar[str] = "pd"
    keys: ClassVar[tuple[str, ...]] = (
        "actuator",
        "angle",
        "angle_index",
        "rate",
        "rate_index",
        "kp",
        "kd",
        "target",
    )
    encodes: ClassVar[bool] = True

    @classmethod
    def load(cls, params: KindParams) -> PdConfig:
        """The actuator and both devices must exist; gains default to 0."""
        params.need_model("kind")
        act, low, high = params.actuator("actuator")
        angle, angle_index = params.device("angle", "angle_index")
        rate, rate_index = params.device("rate", "rate_index")
        return cls(
            actuator=params.string("actuator"),
            actuator_index=act,
            low=low,
            high=high,
            angle=angle,
            angle_index=angle_index,
            rate=rate,
            rate_index=rate_index,
            kp=params.number("kp", 0.0),
            kd=params.number("kd", 0.0),
            target=params.number("target", 0.0),
        )

    def controller(
        self, run: KindRun
    ) -> Callable[[Mapping[str, Any]], tuple[dict[str, float], bytes | None]]:
        """The step of one session: reads ``latest``, writes ``data.ctrl``, returns the command."""
        low, high = self.low, self.high
        limited = low is not None and high is not None
        # A compiled step (simclock.core._kernels): it runs at every firing.
        return PdStep(
            run.data.ctrl,
            self.actuator_index,
            self.kp,
            self.kd,
            self.target,
            self.angle,
            self.angle_index,
            self.rate,
            self.rate_index,
            limited,
            -math.inf if low is None else low,
            math.inf if high is None else high,
            _U_JSON,
        )
