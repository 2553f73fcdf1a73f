"""Sensor devices with acquisition and delivery, and periodic controllers (SPEC §8).

A sensor device acquires on its own schedule (``period``, ``phase``,
``policy``) and delivers each sample after a requested ``latency``. Both times
are quantised by the device's policy (C-DEV-1)::

    nominal acquisition   a_k = episode_start + phase + k*period
    actual acquisition        = first boundary >= a_k     (strict: exactly a_k)
    requested delivery    d_k = a_k + latency             (from the *nominal* a_k)
    actual delivery           = first boundary >= d_k     (strict: exactly d_k)

Every sample is published on the bus at its actual delivery, stamped then,
carrying all four times (C-DEV-2) as a `Sample`. Controllers run on
their own schedule, ``strict`` by default: applying an actuator command is a
contract about *which* boundary it lands on.

Ids: a device id is one label segment (``imu0``); its component id is
``sensors/<id>`` and its noise stream ``/sensors/<id>/noise`` (C-SEED-1). A
controller's component id is ``controllers/<id>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simclock.core._bus import check_topic, is_reserved_topic
from simclock.core._errors import SimclockValueError
from simclock.core._names import check_str_matching
from simclock.core._protocols import RandomSource
from simclock.core._sample import Sample, sample_json_template
from simclock.core._timeint import check_positive_ns, check_time_ns
from simclock.sim._grid import Policy, check_policy, check_schedule_on_grid

__all__ = [
    "ControllerSpec",
    "ControllerStep",
    "DeviceRead",
    "Sample",
    "SensorSpec",
    "check_component_segment",
    "sample_json_template",
]

_SEGMENT = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")

DeviceRead = Callable[[RandomSource], Sequence[float]]
"""``read(noise) -> values``: called at the actual acquisition boundary.

``noise`` is the device's stream ``/sensors/<id>/noise`` of the current episode.
"""

ControllerStep = Callable[[Mapping[str, "Sample"]], Mapping[str, Any] | None]
"""``step(latest) -> command``: ``latest`` maps device id to its last *delivered* sample.

A returned mapping is published on the controller's command topic; ``None``
publishes nothing.
"""


def check_component_segment(value: object, name: str) -> str:
    """Validate one id segment: ``[A-Za-z][A-Za-z0-9_.-]*`` (so it is a random label segment)."""
    return check_str_matching(
        value, name, _SEGMENT, "start with a letter and use only [A-Za-z0-9_.-]"
    )


def _check_spec_topic(topic: object, default: str) -> str:
    """``topic`` checked now, not at the first delivery inside a run; ``""`` is ``default``.

    A reserved topic (``/clock``, ``/simclock/...``) is refused (C-BUS-5): the
    recorder writes those itself and a component publishing there would break
    the recording only when it closes.
    """
    if isinstance(topic, str) and not topic:
        return default
    checked = check_topic(topic)
    if is_reserved_topic(checked):
        raise SimclockValueError(
            f"topic {checked!r} is reserved for the library (/clock and /simclock/...); "
            f"publish on another topic, e.g. the default {default!r}"
        )
    return checked


def _normalise_spec(spec: Any, id_field: str, kind: str, *times: str) -> None:
    """Check and store a frozen spec's id, period, phase, ``times``, policy and topic.

    Normalised, not only checked: a numpy.int64 period would make every time
    derived from it a numpy.int64 (§0: stamps are Python ints) and wrap at
    2**63. The id is stored first (the default topic is built from it); the
    rest is all checked before any of it is set.
    """
    ident = check_component_segment(getattr(spec, id_field), id_field)
    object.__setattr__(spec, id_field, ident)
    values = {
        "period_ns": check_positive_ns(spec.period_ns, "period_ns"),
        "phase_ns": check_time_ns(spec.phase_ns, "phase_ns"),
        **{name: check_time_ns(getattr(spec, name), name) for name in times},
        "policy": check_policy(spec.policy),
        "topic": _check_spec_topic(spec.topic, f"/{kind}/{ident}"),
    }
    for name, value in values.items():
        object.__setattr__(spec, name, value)


def _check_spec_grid(spec: Any, step_ns: int, **times: int) -> None:
    """C-GRID-3 for a spec: its period, phase and ``times`` on the grid of ``step_ns``."""
    check_schedule_on_grid(
        spec.component_id,
        check_positive_ns(step_ns, "step_ns"),
        spec.policy,
        period=spec.period_ns,
        phase=spec.phase_ns,
        **times,
    )


@dataclass(frozen=True, slots=True)
class SensorSpec:
    """A sensor's schedule (C-DEV-1). Times are int ns; ``topic`` defaults to ``/sensors/<id>``.

    ``policy`` defaults to ``next_boundary``: a sensor's sampling instant is
    physical, and quantising it to the grid is the honest model of a
    simulator that only has state at boundaries.
    """

    device_id: str
    period_ns: int
    phase_ns: int = 0
    latency_ns: int = 0
    policy: Policy = Policy.NEXT_BOUNDARY
    topic: str = ""

    def __post_init__(self) -> None:
        _normalise_spec(self, "device_id", "sensors", "latency_ns")

    @property
    def component_id(self) -> str:
        """``sensors/<id>``: the key of the device's random streams (C-SEED-1)."""
        return f"sensors/{self.device_id}"

    def check_grid(self, step_ns: int) -> None:
        """Refuse an off-grid period, phase or latency under ``strict`` (C-GRID-3).

        ``step_ns`` is a time-int > 0 (``TypeError``/``ValueError`` otherwise).
        """
        _check_spec_grid(self, step_ns, latency=self.latency_ns)


@dataclass(frozen=True, slots=True)
class ControllerSpec:
    """A controller's schedule; ``policy`` defaults to ``strict``. Topic: ``/controllers/<id>``."""

    controller_id: str
    period_ns: int
    phase_ns: int = 0
    policy: Policy = Policy.STRICT
    topic: str = ""

    def __post_init__(self) -> None:
        _normalise_spec(self, "controller_id", "controllers")

    @property
    def component_id(self) -> str:
        """``controllers/<id>``."""
        return f"controllers/{self.controller_id}"

    def check_grid(self, step_ns: int) -> None:
        """Refuse an off-grid period or phase under ``strict`` (C-GRID-3).

        ``step_ns`` is a time-int > 0 (``TypeError``/``ValueError`` otherwise).
        """
        _check_spec_grid(self, step_ns)
