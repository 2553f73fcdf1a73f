"""The ROS 2 message types of an exported recording, and their CDR codecs (C-ROS-1).

A ROS 2 bag has one message type per topic, ``cdr`` bytes and a ``ros2msg``
definition in the file. What a simclock trace holds is mapped like this:

* ``/clock``: ``rosgraph_msgs/msg/Clock``, the standard type, bytes as recorded
  (session time, C-MCAP-3, C-EP-2);
* a topic whose every payload is a device sample (the fields of
  `Sample`, ``values`` all floats): ``simclock_msgs/msg/Sample``.
  No standard type carries the four instants of a sample (C-DEV-2) nor the
  bus sequence, which is a message's place in the total order among equal
  stamps (C-MCAP-1): ``sensor_msgs/msg/Imu`` has one stamp and fixed fields;
* `Event` (``/simclock/events``): ``simclock_msgs/msg/Event``;
* any other payload (plain JSON, `RawPayload`):
  ``simclock_msgs/msg/Message``, the canonical JSON text and its kind;
* persisted random draws (``/simclock/draws...``): ``simclock_msgs/msg/Draw``.

Every ``simclock_msgs`` type starts with ``stamp`` (the log time) and, for
bus messages, ``sequence`` (the full bus sequence as ``uint64``), so a bag
read by any tool keeps the total order ``(stamp, sequence)``, and decoding a
message gives back the exact canonical JSON the fingerprint hashes
(`decode_bus`). CDR is read with mcap-ros2-support's schema-driven codecs,
built once per type, and written by the hand-written encoders of `._cdr`,
which give the bytes of mcap-ros2-support's encoders (their reference).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from math import isfinite
from struct import error as struct_error
from typing import Any, Final

from mcap_ros2._dynamic import generate_dynamic, serialize_dynamic

from simclock.core._bus import Event
from simclock.core._errors import SimclockValueError
from simclock.recording._cdr import fast_encoder, json_message_cdr, sample_cdr
from simclock.recording._fingerprint import RawPayload, canonical_json
from simclock.recording._format import CLOCK_SCHEMA_NAME, CLOCK_SCHEMA_TEXT

__all__ = [
    "BUS_TYPES",
    "DRAW_TYPE",
    "EVENT_TYPE",
    "MESSAGE_TYPE",
    "QOS_PROFILES",
    "SAMPLE_TYPE",
    "SCHEMAS",
    "decode_bus",
    "decode_draw",
    "encode_bus",
    "encode_draw",
    "encode_json_message",
    "is_sample",
    "ros_time",
]

_TIME = (
    "================================================================================\n"
    "MSG: builtin_interfaces/Time\n"
    "int32 sec\n"
    "uint32 nanosec\n"
)
_STAMP = (
    "# The message's stamp: its log time (session time, ns = sec * 10^9 + nanosec).\n"
    "builtin_interfaces/Time stamp\n"
)
_SEQUENCE = (
    "# The bus sequence: the message's place among messages of equal stamp.\nuint64 sequence\n"
)

SAMPLE_TYPE: Final = "simclock_msgs/msg/Sample"
EVENT_TYPE: Final = "simclock_msgs/msg/Event"
MESSAGE_TYPE: Final = "simclock_msgs/msg/Message"
DRAW_TYPE: Final = "simclock_msgs/msg/Draw"

SCHEMAS: Final[Mapping[str, str]] = {
    SAMPLE_TYPE: (
        "# One sample of a simclock device: when it was due, taken and delivered.\n"
        + _STAMP
        + _SEQUENCE
        + "string device\n"
        "uint64 index\n"
        "uint64 episode\n"
        "int64 episode_start_ns\n"
        "int64 nominal_acquisition_ns\n"
        "int64 acquisition_ns\n"
        "int64 requested_delivery_ns\n"
        "int64 delivery_ns\n"
        "float64[] values\n" + _TIME
    ),
    EVENT_TYPE: (
        "# A simclock library event (a failed callback, a pacing lag, ...).\n"
        + _STAMP
        + _SEQUENCE
        + "string kind\n"
        "uint64 at_ns\n"
        "# The event's details as canonical JSON (sorted keys, no spaces).\n"
        "string details\n" + _TIME
    ),
    MESSAGE_TYPE: (
        "# A simclock bus message of any payload.\n"
        + _STAMP
        + _SEQUENCE
        + "# json: payload is the payload itself; raw: {data (hex), encoding, schema}.\n"
        "string kind\n"
        "# Canonical JSON (sorted keys, no spaces, ASCII).\n"
        "string payload\n" + _TIME
    ),
    DRAW_TYPE: (
        "# One draw of a seeded random stream, in draw order per stream.\n"
        + _STAMP
        + "uint64 index\n"
        "string method\n"
        "# Arguments and value as canonical JSON.\n"
        "string args\n"
        "string value\n" + _TIME
    ),
    CLOCK_SCHEMA_NAME: CLOCK_SCHEMA_TEXT,
}
"""Every type an export writes: name -> ``ros2msg`` definition (dependencies appended)."""

BUS_TYPES: Final = (SAMPLE_TYPE, EVENT_TYPE, MESSAGE_TYPE)

QOS_PROFILES: Final = (
    "- history: 1\n"
    "  depth: 10\n"
    "  reliability: 1\n"
    "  durability: 2\n"
    "  deadline:\n"
    "    sec: 2147483647\n"
    "    nsec: 4294967295\n"
    "  lifespan:\n"
    "    sec: 2147483647\n"
    "    nsec: 4294967295\n"
    "  liveliness: 1\n"
    "  liveliness_lease_duration:\n"
    "    sec: 2147483647\n"
    "    nsec: 4294967295\n"
    "  avoid_ros_namespace_conventions: false"
)
"""``offered_qos_profiles`` of every channel (rosbag2 metadata version 8 form).

Keep-last 10, reliable, volatile, no deadline or lifespan: a reliable
publisher matches both reliable and best-effort subscribers, so ``ros2 bag
play`` reaches a node subscribed with ``rclcpp::ClockQoS`` too.
"""

_NS = 1_000_000_000
_INT32 = 2**31 - 1
_U64 = 2**64 - 1
_I64 = 2**63 - 1


def ros_time(ns: int) -> dict[str, int]:
    """``builtin_interfaces/Time`` of ``ns``; ``SimclockValueError`` past int32 seconds."""
    sec, nanosec = divmod(ns, _NS)
    if sec > _INT32:
        raise SimclockValueError(
            f"stamp {ns} ns is past the int32 seconds of builtin_interfaces/Time; a ROS 2 "
            "bag cannot carry it"
        )
    return {"sec": sec, "nanosec": nanosec}


def _ns_of(time: Any) -> int:
    return int(time.sec) * _NS + int(time.nanosec)


_encoders: dict[str, Callable[[Any], bytes]] = {}
_decoders: dict[str, Callable[[bytes], Any]] = {}


def _encode(type_name: str, message: Mapping[str, Any]) -> bytes:
    encode = _encoders.get(type_name)
    if encode is None:
        reference = serialize_dynamic(type_name, SCHEMAS[type_name])[type_name]
        encode = _encoders[type_name] = fast_encoder(type_name, reference)
    return encode(message)


def _decode(type_name: str, data: bytes) -> Any:
    decode = _decoders.get(type_name)
    if decode is None:
        decode = _decoders[type_name] = generate_dynamic(type_name, SCHEMAS[type_name])[type_name]
    return decode(data)


_SAMPLE_INTS: Final = {
    "index": _U64,
    "episode": _U64,
    "episode_start_ns": _I64,
    "nominal_acquisition_ns": _I64,
    "acquisition_ns": _I64,
    "requested_delivery_ns": _I64,
    "delivery_ns": _I64,
}
_SAMPLE_KEYS: Final = frozenset({*_SAMPLE_INTS, "device", "values"})
_SAMPLE_INT_ITEMS: Final = tuple(_SAMPLE_INTS.items())


def is_sample(payload: object) -> bool:
    """True when ``payload`` is a device sample that ``Sample`` carries exactly.

    Exactly the keys of `simclock.Sample.to_json`, non-negative ints in
    range, a ``str`` device and ``values`` all finite floats (an int value
    would come back as a float and change the trace).
    """
    if type(payload) is not dict or payload.keys() != _SAMPLE_KEYS:
        return False
    for key, top in _SAMPLE_INT_ITEMS:
        value = payload[key]
        if type(value) is not int or not 0 <= value <= top:
            return False
    values = payload["values"]
    if type(payload["device"]) is not str or type(values) is not list:
        return False
    # A loop, not all() over a generator (a frame per call): once per exported sample.
    for v in values:  # noqa: SIM110
        if type(v) is not float or not isfinite(v):
            return False
    return True


def _check_sequence(sequence: int) -> int:
    if not 0 <= sequence <= _U64:
        raise SimclockValueError(
            f"bus sequence {sequence} does not fit the uint64 of a ROS 2 message"
        )
    return sequence


def encode_bus(type_name: str, stamp: int, sequence: int, payload: Any) -> bytes:
    """CDR of one bus message as ``type_name`` (one of `BUS_TYPES`).

    ``payload`` is the decoded payload of a recording (a JSON value, an
    `Event` or a `RawPayload`); for
    ``Sample`` it must satisfy `is_sample`.
    """
    if type_name == SAMPLE_TYPE:
        sec, nanosec = divmod(stamp, _NS)
        if 0 <= sec <= _INT32 and 0 <= sequence <= _U64:
            try:  # the common case, without the merged mapping: the same bytes (_cdr)
                return sample_cdr(sec, nanosec, sequence, payload)
            except Exception:  # anything sample_cdr does not take goes the reference's way
                pass
    head = {"stamp": ros_time(stamp), "sequence": _check_sequence(sequence)}
    if type_name == SAMPLE_TYPE:
        return _encode(type_name, {**head, **payload})
    if type_name == EVENT_TYPE:
        data = payload.to_json()
        return _encode(
            type_name,
            {
                **head,
                "kind": data["kind"],
                "at_ns": data["at_ns"],
                "details": canonical_json(data["details"]),
            },
        )
    kind = "raw" if isinstance(payload, RawPayload) else "json"
    body = payload.to_json() if kind == "raw" else payload
    return _encode(type_name, {**head, "kind": kind, "payload": canonical_json(body)})


def encode_json_message(stamp: int, sequence: int, payload_json: bytes) -> bytes:
    """``encode_bus(MESSAGE_TYPE, stamp, sequence, payload)`` from ``payload``'s canonical JSON.

    ``payload_json`` is ``canonical_json(payload).encode()``, as a recording stores
    it, so the payload is not encoded again. The same bytes and the same errors.
    """
    sec, nanosec = divmod(stamp, _NS)
    if sec > _INT32 or not 0 <= sequence <= _U64:
        ros_time(stamp)
        _check_sequence(sequence)
    return json_message_cdr(sec, nanosec, sequence, payload_json)


def decode_bus(type_name: str, data: bytes) -> tuple[int, int, Any]:
    """``(stamp, sequence, payload)`` of one message of a `BUS_TYPES` type.

    The payload is what the recording held: a JSON value, an
    `Event` or a `RawPayload`. Malformed
    bytes raise ``ValueError`` (the caller names the file and offset).
    """
    try:
        msg = _decode(type_name, data)
    except (IndexError, UnicodeDecodeError, struct_error) as exc:
        raise ValueError(f"not a CDR {type_name} ({type(exc).__name__}: {exc})") from None
    stamp = _ns_of(msg.stamp)
    if type_name == SAMPLE_TYPE:
        payload: Any = {key: getattr(msg, key) for key in _SAMPLE_INTS}
        payload["device"] = msg.device
        payload["values"] = [float(v) for v in msg.values]
    elif type_name == EVENT_TYPE:
        payload = Event.from_json(
            {"kind": msg.kind, "at_ns": msg.at_ns, "details": json.loads(msg.details)}
        )
    else:
        body = json.loads(msg.payload)
        if msg.kind == "json":
            payload = body
        elif (
            msg.kind == "raw"
            and type(body) is dict
            and body.keys()
            == {
                "data",
                "encoding",
                "schema",
            }
        ):
            payload = RawPayload(body["encoding"], body["schema"], bytes.fromhex(body["data"]))
        else:
            raise ValueError(f"unknown kind {msg.kind!r} of a {type_name}")
    return stamp, msg.sequence, payload


def encode_draw(stamp: int, draw: Mapping[str, Any]) -> bytes:
    """CDR of one persisted draw (``{"args", "index", "method", "value"}``, JSON form)."""
    return _encode(
        DRAW_TYPE,
        {
            "stamp": ros_time(stamp),
            "index": draw["index"],
            "method": draw["method"],
            "args": canonical_json(draw["args"]),
            "value": canonical_json(draw["value"]),
        },
    )


def decode_draw(data: bytes) -> dict[str, Any]:
    """Inverse of `encode_draw`: the draw's JSON form, as the Recorder wrote it."""
    try:
        msg = _decode(DRAW_TYPE, data)
    except (IndexError, UnicodeDecodeError, struct_error) as exc:
        raise ValueError(f"not a CDR {DRAW_TYPE} ({type(exc).__name__}: {exc})") from None
    return {
        "args": json.loads(msg.args),
        "index": msg.index,
        "method": msg.method,
        "value": json.loads(msg.value),
    }
