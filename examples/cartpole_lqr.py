"""A controller kind of your own: linear state feedback (LQR gains) for the cart-pole example.

Used by ``examples/cartpole.toml`` as ``kind = "cartpole_lqr:Lqr"``: this file
sits beside the scenario, so simclock finds it there. The scenario's table::

    [controllers.balance]
    kind = "cartpole_lqr:Lqr"
    period = "4 ms"
    actuator = "push"                                  # the MJCF motor to drive
    state = ["cart_x", "pole", "cart_v", "pole_rate"]  # a device per state
    gains = [-9.68, -94.7, -16.1, -20.0]               # K of u = -K (state - target)
    target = [0.0, 0.0, 0.0, 0.0]                      # optional, default zeros
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import simclock


@dataclass(frozen=True)
class Lqr(simclock.ControllerKind):
    """``u = -sum(gains[i] * (state[i] - target[i]))``, clamped to the actuator's range.

    Each state is value 0 of the last delivered sample of its device; until
    every device has delivered once, ``u = 0``. The command is written to
    ``data.ctrl`` and published as ``{"u": u}``.
    """

    actuator: int
    low: float | None
    high: float | None
    state: tuple[str, ...]
    gains: tuple[float, ...]
    target: tuple[float, ...]

    keys = ("actuator", "state", "gains", "target")

    @classmethod
    def load(cls, params: simclock.KindParams) -> Lqr:
        """Checked when the scenario is loaded: each error names its key."""
        actuator, low, high = params.actuator("actuator")
        names = params.table.get("state")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise params.error("state", f"expected a list of device ids, got {names!r}")
        for name in names:
            if name not in params.devices:
                raise params.error("state", f"{name!r} is not a device; define [devices.{name}]")
        gains = params.numbers("gains", len(names))
        target = params.numbers("target", len(names)) if "target" in params.table else None
        return cls(actuator, low, high, tuple(names), gains, target or (0.0,) * len(names))

    def controller(self, run: simclock.KindRun) -> Callable[[Mapping[str, Any]], Any]:
        """One session's step: ``latest`` maps a device id to its last delivered Sample."""
        ctrl = run.data.ctrl
        terms = list(zip(self.state, self.gains, self.target, strict=True))
        low = -float("inf") if self.low is None else self.low
        high = float("inf") if self.high is None else self.high

        def step(latest: Mapping[str, simclock.Sample]) -> dict[str, float]:
            u = 0.0
            if all(name in latest for name in self.state):
                u = -sum(k * (latest[name].values[0] - x0) for name, k, x0 in terms)
                u = min(max(u, low), high)
            ctrl[self.actuator] = u
            return {"u": u}

        return step
