"""C-ROS-1: the hand-written CDR encoders give mcap-ros2-support's bytes, message for message.

``serialize_dynamic`` (mcap-ros2-support's schema-driven encoder, built from
the same ``ros2msg`` text the bag carries) is the reference; rosbags reading
whole exports is checked in ``test_ros2_export.py``.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcap_ros2._dynamic import serialize_dynamic

from simclock.core._bus import Event
from simclock.recording._cdr import FAST_TYPES, fast_encoder
from simclock.recording._ros2types import (
    DRAW_TYPE,
    EVENT_TYPE,
    MESSAGE_TYPE,
    SAMPLE_TYPE,
    SCHEMAS,
    _check_sequence,
    encode_bus,
    encode_draw,
    ros_time,
)

CLOCK = "rosgraph_msgs/msg/Clock"


def _reference(type_name: str) -> Callable[[Any], Any]:
    return serialize_dynamic(type_name, SCHEMAS[type_name])[type_name]


REFERENCE = {name: _reference(name) for name in SCHEMAS}
FAST = {name: fast_encoder(name, REFERENCE[name]) for name in SCHEMAS}

# Every integer width at its extremes, plus anything between.
u32 = st.one_of(st.sampled_from([0, 1, 2**32 - 1]), st.integers(0, 2**32 - 1))
i32 = st.one_of(st.sampled_from([-(2**31), -1, 0, 2**31 - 1]), st.integers(-(2**31), 2**31 - 1))
u64 = st.one_of(st.sampled_from([0, 1, 2**64 - 1]), st.integers(0, 2**64 - 1))
i64 = st.one_of(st.sampled_from([-(2**63), 0, 2**63 - 1]), st.integers(-(2**63), 2**63 - 1))
# Lengths 0..9 in UTF-8 bytes reach every padding; non-ASCII text changes bytes vs characters.
text = st.one_of(
    st.text(max_size=9),
    st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=9),
    st.text(),
)
stamp = st.fixed_dictionaries({"sec": i32, "nanosec": u32})

MESSAGES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    CLOCK: st.fixed_dictionaries({"clock": stamp}),
    SAMPLE_TYPE: st.fixed_dictionaries(
        {
            "stamp": stamp,
            "sequence": u64,
            "device": text,
            "index": u64,
            "episode": u64,
            "episode_start_ns": i64,
            "nominal_acquisition_ns": i64,
            "acquisition_ns": i64,
            "requested_delivery_ns": i64,
            "delivery_ns": i64,
            "values": st.lists(st.floats(width=64), max_size=6),
        }
    ),
    EVENT_TYPE: st.fixed_dictionaries(
        {"stamp": stamp, "sequence": u64, "kind": text, "at_ns": u64, "details": text}
    ),
    MESSAGE_TYPE: st.fixed_dictionaries(
        {"stamp": stamp, "sequence": u64, "kind": text, "payload": text}
    ),
    DRAW_TYPE: st.fixed_dictionaries(
        {"stamp": stamp, "index": u64, "method": text, "args": text, "value": text}
    ),
}


def test_C_ROS_1_every_exported_type_has_a_hand_written_encoder() -> None:
    assert set(FAST_TYPES) == set(SCHEMAS) == set(MESSAGES)


@given(st.one_of(*(st.tuples(st.just(name), s) for name, s in MESSAGES.items())))
def test_C_ROS_1_hand_written_cdr_is_byte_identical_to_the_reference(
    case: tuple[str, dict[str, Any]],
) -> None:
    type_name, message = case
    assert FAST[type_name](message) == bytes(REFERENCE[type_name](message))


def _outcome(encode: Callable[[Any], Any], message: object) -> tuple[str, str | bytes]:
    try:
        return "bytes", bytes(encode(message))
    except Exception as exc:
        return type(exc).__name__, str(exc)


BASE: dict[str, dict[str, Any]] = {
    SAMPLE_TYPE: {
        "stamp": {"sec": 1, "nanosec": 2},
        "sequence": 3,
        "device": "imu",
        "index": 4,
        "episode": 0,
        "episode_start_ns": 0,
        "nominal_acquisition_ns": 5,
        "acquisition_ns": 6,
        "requested_delivery_ns": 7,
        "delivery_ns": 8,
        "values": [1.5, -0.0],
    },
    DRAW_TYPE: {"stamp": {"sec": 1, "nanosec": 2}, "index": 3, "method": "m", "args": "[]",
                "value": "1"},
    MESSAGE_TYPE: {"stamp": {"sec": 1, "nanosec": 2}, "sequence": 3, "kind": "json",
                   "payload": "{}"},
}  # fmt: skip

# Values the fast path does not take as they are: the reference coerces them or refuses them.
ODD: list[tuple[str, str, object]] = [
    (SAMPLE_TYPE, "index", -1),
    (SAMPLE_TYPE, "delivery_ns", 2**63),
    (SAMPLE_TYPE, "index", 1.0),
    (SAMPLE_TYPE, "index", "7"),
    (SAMPLE_TYPE, "index", True),
    (SAMPLE_TYPE, "values", (1.0, 2.0)),
    (SAMPLE_TYPE, "values", [1, "2.5"]),
    (SAMPLE_TYPE, "values", b"\x01"),
    (SAMPLE_TYPE, "values", [2**1100]),
    (SAMPLE_TYPE, "device", 42),
    (SAMPLE_TYPE, "device", "\ud800"),
    (SAMPLE_TYPE, "device", None),
    (SAMPLE_TYPE, "stamp", {"sec": 2**31, "nanosec": 0}),
    (SAMPLE_TYPE, "stamp", {"sec": 0, "nanosec": -1}),
    (DRAW_TYPE, "index", 2**64),
    (DRAW_TYPE, "value", None),
    (MESSAGE_TYPE, "payload", "\udfff"),
    (MESSAGE_TYPE, "sequence", None),
]


@pytest.mark.parametrize(("type_name", "key", "value"), ODD)
def test_C_ROS_1_odd_values_get_the_reference_bytes_or_error(
    type_name: str, key: str, value: object
) -> None:
    message = {**BASE[type_name], key: value}
    assert _outcome(FAST[type_name], message) == _outcome(REFERENCE[type_name], message)
    missing = {k: v for k, v in BASE[type_name].items() if k != key}
    assert _outcome(FAST[type_name], missing) == _outcome(REFERENCE[type_name], missing)


def test_C_ROS_1_encode_errors_are_unchanged() -> None:
    """The public encoders' refusals: exact messages, as with the reference encoder alone."""
    with pytest.raises(struct.error, match=r"^argument out of range$"):
        encode_draw(0, {"index": -1, "method": "m", "args": [], "value": 1})
    event = Event.from_json({"kind": "PACING_LAG", "at_ns": 5, "details": {"x": math.pi}})
    message = (
        "stamp 2147483648000000000 ns is past the int32 seconds of builtin_interfaces/Time; a "
        "ROS 2 bag cannot carry it"
    )
    with pytest.raises(Exception, match=f"^{re.escape(message)}$"):
        encode_bus(EVENT_TYPE, 2**31 * 10**9, 0, event)
    with pytest.raises(Exception, match=r"^bus sequence -1 does not fit the uint64 of a ROS 2 "):
        encode_bus(EVENT_TYPE, 0, -1, event)
    # And what they accept is the reference's bytes.
    stamp = {"sec": 1, "nanosec": 5}
    assert encode_bus(EVENT_TYPE, 10**9 + 5, 7, event) == bytes(
        REFERENCE[EVENT_TYPE](
            {"stamp": stamp, "sequence": 7, "kind": "PACING_LAG", "at_ns": 5,
             "details": '{"x":3.141592653589793}'}
        )
    )  # fmt: skip


def _reference_bus_sample(stamp_ns: int, sequence: int, payload: Mapping[str, Any]) -> bytes:
    """A bus sample's CDR the reference's way: the merged mapping, checked head first."""
    head = {"stamp": ros_time(stamp_ns), "sequence": _check_sequence(sequence)}
    return bytes(REFERENCE[SAMPLE_TYPE]({**head, **payload}))


@given(
    MESSAGES[SAMPLE_TYPE],
    st.one_of(st.integers(0, 2**31 * 10**9 + 10**9), st.sampled_from([2**31 * 10**9 - 1])),
    st.one_of(u64, st.sampled_from([-1, 2**64])),
    st.sampled_from([None, *((key, value) for type_name, key, value in ODD
                             if type_name == SAMPLE_TYPE and key not in ("stamp", "sequence"))]),
)  # fmt: skip
def test_C_ROS_1_a_bus_sample_gets_the_reference_bytes_or_error(
    message: dict[str, Any], stamp_ns: int, sequence: int, odd: tuple[str, object] | None
) -> None:
    """``encode_bus`` packs a sample straight from its payload: the bytes, and every refusal
    (a stamp past int32 seconds, a sequence outside uint64, an odd value), are unchanged."""
    payload = {k: v for k, v in message.items() if k not in ("stamp", "sequence")}
    if odd is not None:
        payload[odd[0]] = odd[1]
    assert _outcome(lambda p: encode_bus(SAMPLE_TYPE, stamp_ns, sequence, p), payload) == (
        _outcome(lambda p: _reference_bus_sample(stamp_ns, sequence, p), payload)
    )


def test_C_ROS_1_is_sample_takes_exactly_what_sample_carries() -> None:
    """A JSON topic is exported as ``Sample`` only when every payload is one (`is_sample`)."""
    from simclock.recording._ros2types import is_sample

    sample = {k: v for k, v in BASE[SAMPLE_TYPE].items() if k not in ("stamp", "sequence")}
    assert is_sample(sample)
    assert is_sample({**sample, "values": []})
    assert is_sample({**sample, "index": 2**64 - 1, "delivery_ns": 2**63 - 1})
    for key, value in [
        ("index", 2**64), ("delivery_ns", 2**63), ("episode", -1), ("index", True),
        ("index", 1.0), ("device", b"imu"), ("values", (1.0,)), ("values", [1.0, 2]),
        ("values", [math.nan]), ("values", [0.0, -math.inf]), ("values", [True]),
    ]:  # fmt: skip
        assert not is_sample({**sample, key: value}), (key, value)
    assert not is_sample({**sample, "extra": 1})
    assert not is_sample({k: v for k, v in sample.items() if k != "device"})
    assert not is_sample([sample])


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=8,
)


@given(
    _json_values,
    st.one_of(st.integers(0, 2**31 * 10**9 + 10**9), st.sampled_from([2**31 * 10**9 - 1])),
    st.one_of(u64, st.sampled_from([-1, 2**64])),
)
def test_C_ROS_1_a_json_message_from_its_stored_text_is_encode_bus(
    payload: Any, stamp_ns: int, sequence: int
) -> None:
    """The export writes a JSON payload's ``Message`` from the text the recording stores (its
    canonical JSON): the bytes, and each refusal, are those of encoding the payload."""
    from simclock.recording._fingerprint import canonical_json
    from simclock.recording._ros2types import encode_json_message

    stored = canonical_json(payload).encode()
    assert _outcome(lambda p: encode_json_message(stamp_ns, sequence, p), stored) == _outcome(
        lambda p: encode_bus(MESSAGE_TYPE, stamp_ns, sequence, p), payload
    )
