"""`Sample`, a delivered sample with its four times (SPEC §8, C-DEV-2), compiled with the core.

A session makes one `Sample` per acquisition, in the phases' loop
(`simclock.core._phases`). Compiled with the core (C-NATIVE-1), `Sample` is a
native class: that loop builds one with a direct C call and nine stores,
where a frozen dataclass's ``__init__`` costs ten times as much. The class
keeps what a frozen dataclass gives its users: ``dataclasses.fields`` and
``replace``, equality, hashing, ``repr``, ``__match_args__``, pickling, and
``FrozenInstanceError`` on any assignment. The pure build runs the same
source.

The public home of `Sample` is ``simclock.sim`` (and ``simclock``); the
module is in the core only to be compiled with the phases that build it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import FrozenInstanceError, dataclass
from typing import Any, final

from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import exact_str, safe_repr
from simclock.core._timeint import check_time_ns

__all__ = ["Sample", "sample_json_template"]

_INT_FIELDS = (
    "index",
    "episode",
    "episode_start_ns",
    "nominal_acquisition_ns",
    "acquisition_ns",
    "requested_delivery_ns",
    "delivery_ns",
)


@final
@dataclass(init=False, unsafe_hash=True, slots=True)
class Sample:
    """One delivered sample with its four times (C-DEV-2), all session-time int ns.

    ``episode_start_ns`` lets a reader compute EpisodeTime
    (``acquisition_ns - episode_start_ns``). Immutable: assigning or deleting
    an attribute raises ``dataclasses.FrozenInstanceError``; not subclassable.

    The constructor checks the fields' types, not their values: ``device`` a
    ``str``, the index, episode and times ``int`` (not ``bool``, not a numpy
    integer: convert with ``int()``), ``values`` a ``tuple`` (of floats for a
    session's samples; other items are kept as given). ``TypeError`` names
    the first wrong field.
    """

    device: str
    index: int
    episode: int
    episode_start_ns: int
    nominal_acquisition_ns: int
    acquisition_ns: int
    requested_delivery_ns: int
    delivery_ns: int
    values: tuple[float, ...]

    def __init__(
        self,
        device: object,
        index: object,
        episode: object,
        episode_start_ns: object,
        nominal_acquisition_ns: object,
        acquisition_ns: object,
        requested_delivery_ns: object,
        delivery_ns: object,
        values: object = (),
    ) -> None:
        # object.__setattr__: the class refuses every other assignment (frozen); compiled,
        # each is a direct store. Every field is checked before the first store: compiled,
        # nine type comparisons, which the phases' per-sample path pays too (a Sample is
        # public and immutable: one constructor, checked, for every caller).
        if type(device) is not str:
            if not isinstance(device, str):
                raise SimclockTypeError(
                    f"device must be a str, got {type(device).__name__} {safe_repr(device)}"
                )
            device = exact_str(device)
        if (
            type(index) is not int
            or type(episode) is not int
            or type(episode_start_ns) is not int
            or type(nominal_acquisition_ns) is not int
            or type(acquisition_ns) is not int
            or type(requested_delivery_ns) is not int
            or type(delivery_ns) is not int
        ):
            _refuse_field(
                index,
                episode,
                episode_start_ns,
                nominal_acquisition_ns,
                acquisition_ns,
                requested_delivery_ns,
                delivery_ns,
            )
        if type(values) is not tuple:
            raise SimclockTypeError(
                f"values must be a tuple, got {type(values).__name__} {safe_repr(values)}; "
                "pass tuple(values)"
            )
        object.__setattr__(self, "device", device)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "episode", episode)
        object.__setattr__(self, "episode_start_ns", episode_start_ns)
        object.__setattr__(self, "nominal_acquisition_ns", nominal_acquisition_ns)
        object.__setattr__(self, "acquisition_ns", acquisition_ns)
        object.__setattr__(self, "requested_delivery_ns", requested_delivery_ns)
        object.__setattr__(self, "delivery_ns", delivery_ns)
        object.__setattr__(self, "values", values)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The compiled class cannot have Python subclasses; the pure one refuses the same.
        raise SimclockTypeError("simclock.Sample cannot be subclassed; wrap a Sample instead")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its constructor call: ``Sample(*fields)``."""
        return (
            Sample,
            (
                self.device,
                self.index,
                self.episode,
                self.episode_start_ns,
                self.nominal_acquisition_ns,
                self.acquisition_ns,
                self.requested_delivery_ns,
                self.delivery_ns,
                self.values,
            ),
        )

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
        items: tuple[object, ...] = values  # as given: compiled, a float item would be unboxed
        for v in items:
            if type(v) is not float or not math.isfinite(v):
                return None
        template = sample_json_template(
            device_json, self.episode, self.episode_start_ns, len(values)
        )
        fields: tuple[Any, ...] = (
            self.acquisition_ns,
            self.delivery_ns,
            self.index,
            self.nominal_acquisition_ns,
            self.requested_delivery_ns,
        )
        return template % (fields + values)

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
        t = [check_time_ns(data[key], key) for key in _INT_FIELDS]
        return Sample(
            exact_str(device), t[0], t[1], t[2], t[3], t[4], t[5], t[6], tuple(map(float, values))
        )


def _refuse_field(*ints: object) -> None:
    """Raise the ``TypeError`` of the first of the seven int fields that is not an ``int``."""
    for name, value in zip(_INT_FIELDS, ints, strict=True):
        if type(value) is not int:
            raise SimclockTypeError(
                f"{name} must be an int, got {type(value).__name__} {safe_repr(value)}"
                + ("" if isinstance(value, bool) else "; convert it with int()")
            )


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


_JSON_KEYS = ("device", *_INT_FIELDS, "values")
"""The keys of `Sample.to_json`: the fields, in their order."""
