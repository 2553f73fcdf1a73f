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

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simclock.core._bus import check_topic, is_reserved_topic
from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import check_str_matching, exact_str, safe_repr
from simclock.core._protocols import RandomSource
from simclock.core._timeint import check_positive_ns, check_time_ns
from simclock.sim._grid import Policy, check_policy, check_schedule_on_grid

__all__ = [
    "SAMPLE_SETTERS",
    "ControllerSpec",
    "ControllerStep",
    "DeviceRead",
    "Sample",
    "SensorSpec",
    "check_component_segment",
    "new_sample",
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


@dataclass(frozen=True, slots=True)
class Sample:
    """One delivered sample with its four times (C-DEV-2), all session-time int ns.

    ``episode_start_ns`` lets a reader compute EpisodeTime
    (``acquisition_ns - episode_start_ns``).
    """

    device: str
    index: int
    episode: int
    episode_start_ns: int
    nominal_acquisition_ns: int
    acquisition_ns: int
    requested_delivery_ns: int
    delivery_ns: int
    values: tuple[float, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The bus payload and trace record: JSON-friendly, keys as the field names."""
        return {
            "device": self.device,
            "index": self.index,
            "episode": self.episode,
            "episode_start_ns": self.episode_start_ns,
            "nominal_acquisition_ns": self.nominal_acquisition_ns,
            "acquisition_ns": self.acquisition_ns,
            "requested_delivery_ns": self.requested_delivery_ns,
            "delivery_ns": self.delivery_ns,
            "values": list(self.values),
        }

    def canonical_json(self, device_json: str) -> bytes | None:
        """The canonical JSON of `to_json` as bytes (C-X-FP), made without a JSON encoder.

        ``device_json`` is the canonical JSON string of `device` (made
        once per device). ``None`` unless every value is a finite ``float``:
        NaN and infinities have no canonical form, and the generic encoder
        reports the error. Equal to ``canonical_json(self.to_json()).encode()``
        otherwise (keys in sorted order, ints and floats as Python's
        ``repr``, as ``json`` writes them); the tests check it.
        """
        values = self.values
        if not all(type(v) is float and math.isfinite(v) for v in values):
            return None
        template = sample_json_template(
            device_json, self.episode, self.episode_start_ns, len(values)
        )
        return template % (
            self.acquisition_ns,
            self.delivery_ns,
            self.index,
            self.nominal_acquisition_ns,
            self.requested_delivery_ns,
            *values,
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Sample:
        """Inverse of `to_json` (used by the timeline reader).

        ``TypeError`` for a non-mapping or a field of the wrong type, ``ValueError``
        naming the first missing key; times are time-ints, never rounded floats.
        """
        if not isinstance(data, Mapping):
            raise SimclockTypeError(
                f"data must be a mapping as made by Sample.to_json(), got "
                f"{type(data).__name__} {safe_repr(data)}"
            )
        for key in _JSON_KEYS:
            if key not in data:
                raise SimclockValueError(
                    f"data has no {safe_repr(key)}; a sample needs the keys {list(_JSON_KEYS)}"
                )
        device = data["device"]
        if not isinstance(device, str):
            raise SimclockTypeError(
                f"device must be a str, got {type(device).__name__} {safe_repr(device)}"
            )
        values = data["values"]
        if not isinstance(values, list | tuple) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values
        ):
            raise SimclockTypeError(
                f"values must be a list of numbers, got {type(values).__name__} {safe_repr(values)}"
            )
        times = {key: check_time_ns(data[key], key) for key in _JSON_KEYS[1:-1]}
        return cls(device=exact_str(device), values=tuple(float(v) for v in values), **times)


_new_object = object.__new__


def new_sample(
    device: str,
    index: int,
    episode: int,
    episode_start_ns: int,
    nominal_acquisition_ns: int,
    acquisition_ns: int,
    requested_delivery_ns: int,
    delivery_ns: int,
    values: tuple[float, ...],
) -> Sample:
    """``Sample(...)`` by its nine slot stores: a frozen dataclass's ``__init__`` costs

    three times as much, and a session makes one sample per acquisition. Equal to
    ``Sample(...)`` in every field (a test compares them).
    """
    sample: Sample = _new_object(Sample)
    _set_device(sample, device)
    _set_index(sample, index)
    _set_episode(sample, episode)
    _set_episode_start(sample, episode_start_ns)
    _set_nominal(sample, nominal_acquisition_ns)
    _set_acquisition(sample, acquisition_ns)
    _set_requested(sample, requested_delivery_ns)
    _set_delivery(sample, delivery_ns)
    _set_values(sample, values)
    return sample


def sample_json_template(
    device_json: str, episode: int, episode_start_ns: int, dim: int, at_now: bool = False
) -> bytes:
    """The canonical JSON of a sample of one device and episode with ``dim`` values, as a template.

    ``template % (acquisition_ns, delivery_ns, index, nominal_acquisition_ns,
    requested_delivery_ns, *values)`` is `Sample.canonical_json` for
    finite ``float`` values (``%r`` is their ``repr``, as ``json`` writes
    them); the keys are in sorted order (C-X-FP). A session makes one per
    device, episode and number of values, then one format per sample.

    ``at_now``: for a sample whose four times are equal (acquired, requested
    and delivered at its nominal time: a sensor on the grid with no latency),
    the times are ``%s``, each given the time's decimal digits as ``bytes``:
    one conversion of the time for the whole sample, the same text.
    """
    device = device_json.replace("%", "%%")  # a literal in the template
    time = "%s" if at_now else "%d"
    return (
        f'{{"acquisition_ns":{time},"delivery_ns":{time},'
        f'"device":{device},"episode":{int(episode)},"episode_start_ns":{int(episode_start_ns)},'
        f'"index":%d,"nominal_acquisition_ns":{time},"requested_delivery_ns":{time},'
        f'"values":[{",".join(["%r"] * dim)}]}}'
    ).encode("ascii")


_JSON_KEYS = (
    "device",
    "index",
    "episode",
    "episode_start_ns",
    "nominal_acquisition_ns",
    "acquisition_ns",
    "requested_delivery_ns",
    "delivery_ns",
    "values",
)

SAMPLE_SETTERS = tuple(
    Sample.__dict__[name].__set__
    for name in _JSON_KEYS  # the fields, in their order
)
"""The slot setters of `Sample`'s fields, in their order (see `new_sample`)."""

(
    _set_device,
    _set_index,
    _set_episode,
    _set_episode_start,
    _set_nominal,
    _set_acquisition,
    _set_requested,
    _set_delivery,
    _set_values,
) = SAMPLE_SETTERS
