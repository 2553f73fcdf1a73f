"""The per-firing work of the built-in MuJoCo components, compiled with the core (C-NATIVE-1).

A session calls these at every boundary: the physics step hook, a sensor's
``read(noise)`` and the ``pd`` controller's ``step(latest)``. A run calls
the folds (`split_by_device`, `episode_times`, `acquired_after`,
`values_at`, `lateness`, `abs_errors`, `squared_errors`) once per chunk, on
the samples delivered in it: its counts and metrics. As Python
closures each call paid an interpreter frame and its attribute lookups;
here they are native objects whose state is read once, at construction.
They know nothing of MuJoCo's module or of the bus: the caller hands them
the bound functions and arrays; the folds read `Sample` fields natively
(compiled with them: no attribute lookup, no boxed int per time). The pure build runs the
same source, with the same results bit for bit: every value is a Python
float (an IEEE double) added, multiplied and compared exactly as the
closures they replace did (numpy's float64 arithmetic is that too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, final

from simclock.core._sample import Sample

__all__ = [
    "Forward",
    "PdStep",
    "SliceReader",
    "StepHook",
    "abs_errors",
    "acquired_after",
    "episode_times",
    "lateness",
    "split_by_device",
    "squared_errors",
    "values_at",
]


@final
class StepHook:
    """``hook(k)``: one ``step(model, data)`` (``mj_step``), a grid clock's ``on_step``."""

    def __init__(self, step: Callable[[Any, Any], Any], model: Any, data: Any) -> None:
        self.step = step
        self.model = model
        self.data = data

    def __call__(self, k: int) -> None:
        self.step(self.model, self.data)


@final
class Forward:
    """``forward()``: ``mj_forward`` at most once per instant of the clock (``now()``).

    ``at`` is the instant the derived quantities were last computed for (-1:
    never); a physics reset sets it to ``now()`` after its own ``mj_forward``.
    """

    def __init__(
        self, now: Callable[[], int], forward: Callable[[Any, Any], Any], model: Any, data: Any
    ) -> None:
        self.now = now
        self.forward = forward
        self.model = model
        self.data = data
        self.at = -1

    def __call__(self) -> None:
        at = self.now()
        if self.at != at:
            self.forward(self.model, self.data)
            self.at = at


@final
class SliceReader:
    """``read(noise)``: the ``dim`` values of ``sensordata[start:start + dim]`` now, as floats.

    ``forward()`` first (the values at this boundary, not the last one). With
    ``noise_std > 0``, value ``i`` is ``value + draws[i]``, the ``dim`` draws of
    one ``noise._normal_checked(0.0, noise_std, dim)`` (the caller checked
    both once). ``item`` is ``sensordata.item``: the buffer never moves.
    """

    def __init__(
        self,
        forward: Forward,
        item: Callable[[int], float],
        start: int,
        dim: int,
        noise_std: float,
    ) -> None:
        self.forward = forward
        self.item = item
        self.start = start
        self.dim = dim
        self.noise_std = noise_std

    def __call__(self, noise: Any) -> tuple[float, ...]:
        self.forward()
        item = self.item
        start = self.start
        if self.noise_std > 0:
            draws: list[float] = noise._normal_checked(0.0, self.noise_std, self.dim).tolist()
            values: list[float] = []
            for i, draw in enumerate(draws):
                value: float = item(start + i)
                values.append(value + draw)
            return tuple(values)
        if self.dim == 1:
            return (item(start),)
        return tuple([item(start + i) for i in range(self.dim)])


@final
class PdStep:
    """``step(latest)``: ``u = kp*(target - angle) - kd*rate`` written to ``ctrl[act]``.

    ``angle``/``rate`` are ``latest[angle_id].values[angle_index]`` and
    ``latest[rate_id].values[rate_index]`` (``u = 0.0`` until both were
    delivered); with ``limited`` the value is clamped to ``[lo, hi]`` as
    ``min(max(u, lo), hi)`` would (a NaN stays NaN). Returns the command and
    its canonical JSON, ``u_json % (u,)``, or ``None`` when ``u`` is not finite.
    """

    def __init__(
        self,
        ctrl: Any,
        act: int,
        kp: float,
        kd: float,
        target: float,
        angle_id: str,
        angle_index: int,
        rate_id: str,
        rate_index: int,
        limited: bool,
        lo: float,
        hi: float,
        u_json: bytes,
    ) -> None:
        self.ctrl = ctrl
        self.act = act
        self.kp = kp
        self.kd = kd
        self.target = target
        self.angle_id = angle_id
        self.angle_index = angle_index
        self.rate_id = rate_id
        self.rate_index = rate_index
        self.limited = limited
        self.lo = lo
        self.hi = hi
        self.u_json = u_json

    def __call__(self, latest: Any) -> tuple[dict[str, float], bytes | None]:
        angle = latest.get(self.angle_id)
        rate = latest.get(self.rate_id)
        u = 0.0
        if angle is not None and rate is not None:
            position: float = angle.values[self.angle_index]
            speed: float = rate.values[self.rate_index]
            u = self.kp * (self.target - position) - self.kd * speed
            if self.limited:
                # max(u, lo) then min(., hi), NaN and signed zeros included: each keeps
                # its first argument unless the second is strictly beyond it. Not max()/min():
                # compiled, those may become C's fmax/fmin, which drop a NaN.
                if self.lo > u:  # noqa: PLR1730
                    u = self.lo
                if self.hi < u:  # noqa: PLR1730
                    u = self.hi
        self.ctrl[self.act] = u
        return {"u": u}, (self.u_json % (u,) if u - u == 0.0 else None)


# The folds. Samples are any objects with `Sample`'s attributes; each fold is the list
# comprehension its docstring shows, in the same order, with the same float operations.


def split_by_device(samples: list[Sample], buckets: dict[str, list[Sample]]) -> None:
    """Append each of ``samples`` to ``buckets[s.device]``, in order; other devices' are skipped."""
    for sample in samples:
        bucket = buckets.get(sample.device)
        if bucket is not None:
            bucket.append(sample)


def episode_times(samples: list[Sample]) -> list[int]:
    """``[s.nominal_acquisition_ns - s.episode_start_ns for s in samples]``."""
    out: list[int] = []
    for sample in samples:
        nominal: int = sample.nominal_acquisition_ns
        start: int = sample.episode_start_ns
        out.append(nominal - start)
    return out


def acquired_after(samples: list[Sample], times: list[int], after_ns: int) -> list[Sample]:
    """``[s for s, t in zip(samples, times) if t >= after_ns]`` (``times``: `episode_times`)."""
    chosen: list[Sample] = []
    for i in range(len(samples)):
        if times[i] >= after_ns:
            chosen.append(samples[i])
    return chosen


def values_at(samples: list[Sample], index: int) -> list[float]:
    """``[float(s.values[index]) for s in samples]``."""
    return [float(sample.values[index]) for sample in samples]


def lateness(samples: list[Sample]) -> list[int]:
    """``[s.delivery_ns - s.requested_delivery_ns for s in samples]``."""
    out: list[int] = []
    for sample in samples:
        delivery: int = sample.delivery_ns
        requested: int = sample.requested_delivery_ns
        out.append(delivery - requested)
    return out


def abs_errors(values: list[float], target: float) -> list[float]:
    """``[abs(v - target) for v in values]``."""
    return [abs(v - target) for v in values]


def squared_errors(values: list[float], target: float) -> list[float]:
    """``[e * e for e in (v - target for v in values)]``."""
    out: list[float] = []
    for v in values:
        e = v - target
        out.append(e * e)
    return out
