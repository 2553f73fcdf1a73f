"""Hand-written CDR encoders for exactly the message types of `._ros2types` (C-ROS-1).

Little-endian CDR (encapsulation header ``00 01 00 00``), every primitive
aligned to its size relative to the end of that header, a string as
``uint32`` length (bytes + 1) then its UTF-8 bytes and a NUL, a sequence as
``uint32`` count then its elements (the padding before the first element is
written only when there is one). Where a layout is fixed the fields go out
through one precompiled `struct.Struct`.

Each encoder takes the same mapping as ``mcap_ros2``'s schema-driven encoder
(``serialize_dynamic``), which stays the reference: the output is byte for
byte the reference's (``tests/test_ros2_cdr.py`` checks it on generated
messages), and any message the fast path does not take as it is (a missing
key, a value of another type, a number out of range, text that is not
UTF-8-encodable) is handed to the reference, so coercions and errors are the
reference's own.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["FAST_TYPES", "fast_encoder", "json_message_cdr", "sample_cdr"]

Encoder = Callable[[Mapping[str, Any]], bytes]

# Invariant: every offset below counts from the end of this 4-byte header.
_HEADER: Final = b"\x00\x01\x00\x00"
# Header, stamp (int32 sec, uint32 nanosec), uint64 sequence, then a string's uint32 length:
# offsets 0, 4, 8 and 16, so the string's bytes start at offset 20. Draw has its uint64
# index where the others have the sequence: the same layout.
_HEAD_SEQ_LEN: Final = struct.Struct("<4siIQI")
# rosgraph_msgs/Clock: the header and one builtin_interfaces/Time.
_CLOCK: Final = struct.Struct("<4siI")
# Sample: seven 8-byte integers then the uint32 count of values (8-aligned, so no padding).
_SAMPLE_INTS: Final = struct.Struct("<QQqqqqqI")
_U64_LEN: Final = struct.Struct("<QI")
_U32: Final = struct.Struct("<I").pack
_ZEROS: Final = b"\0" * 8


def _nul_and_pad(end: int, align: int) -> bytes:
    """The NUL of a string whose bytes end at ``end`` plus padding to ``align``."""
    return _ZEROS[: 1 + (-(end + 1) % align)]


def _clock(message: Mapping[str, Any]) -> bytes:
    clock = message["clock"]
    return _CLOCK.pack(_HEADER, clock["sec"], clock["nanosec"])


def _sample(message: Mapping[str, Any]) -> bytes:
    stamp = message["stamp"]
    return sample_cdr(stamp["sec"], stamp["nanosec"], message["sequence"], message)


def sample_cdr(sec: int, nanosec: int, sequence: int, sample: Mapping[str, Any]) -> bytes:
    """A ``Sample``'s CDR from its stamp, sequence and the sample's own keys.

    What `_sample` writes, without building the merged mapping (``export
    ros2`` encodes a recording's samples this way). Raises where the
    reference might coerce instead (callers then go to the reference).
    """
    device: bytes = sample["device"].encode()
    values = sample["values"]
    if type(values) is not list:  # the reference takes tuples and arrays, and refuses bytes
        raise TypeError(values)
    n = len(device)
    count = len(values)
    out = (
        _HEAD_SEQ_LEN.pack(_HEADER, sec, nanosec, sequence, n + 1)
        + device
        + _nul_and_pad(20 + n, 8)
        + _SAMPLE_INTS.pack(
            sample["index"],
            sample["episode"],
            sample["episode_start_ns"],
            sample["nominal_acquisition_ns"],
            sample["acquisition_ns"],
            sample["requested_delivery_ns"],
            sample["delivery_ns"],
            count,
        )
    )
    if not count:
        return out
    # The count ends 4 bytes past an 8-byte boundary: 4 bytes of padding, then the doubles.
    return out + b"\0\0\0\0" + struct.pack(f"<{count}d", *values)


def _stamp_sequence_kind(message: Mapping[str, Any], align: int) -> bytes:
    """Stamp, sequence and ``kind`` (its bytes from offset 20), padded to ``align``."""
    stamp = message["stamp"]
    kind: bytes = message["kind"].encode()
    n = len(kind)
    return (
        _HEAD_SEQ_LEN.pack(_HEADER, stamp["sec"], stamp["nanosec"], message["sequence"], n + 1)
        + kind
        + _nul_and_pad(20 + n, align)
    )


def _event(message: Mapping[str, Any]) -> bytes:
    details: bytes = message["details"].encode()
    return (
        _stamp_sequence_kind(message, 8)
        + _U64_LEN.pack(message["at_ns"], len(details) + 1)
        + details
        + b"\0"
    )


def _message(message: Mapping[str, Any]) -> bytes:
    payload: bytes = message["payload"].encode()
    return _stamp_sequence_kind(message, 4) + _U32(len(payload) + 1) + payload + b"\0"


_JSON_KIND: Final = b"json\0\0\0\0"  # kind "json": its bytes from offset 20, NUL, pad to 4


def json_message_cdr(sec: int, nanosec: int, sequence: int, payload: bytes) -> bytes:
    """A ``Message`` of kind ``json`` whose payload text is ``payload`` (its canonical JSON).

    What `_message` writes for ``kind="json"`` and ``payload=payload.decode()``
    when that text is ASCII, as canonical JSON always is.
    """
    return (
        _HEAD_SEQ_LEN.pack(_HEADER, sec, nanosec, sequence, 5)
        + _JSON_KIND
        + _U32(len(payload) + 1)
        + payload
        + b"\0"
    )


def _draw(message: Mapping[str, Any]) -> bytes:
    stamp = message["stamp"]
    method: bytes = message["method"].encode()
    args: bytes = message["args"].encode()
    value: bytes = message["value"].encode()
    n = len(method)
    m = len(args)
    # Offsets: method's bytes at 20; args' length after padding to 4, its bytes 4 later.
    args_at = 20 + n + 1
    args_at += -args_at % 4
    return (
        _HEAD_SEQ_LEN.pack(_HEADER, stamp["sec"], stamp["nanosec"], message["index"], n + 1)
        + method
        + _nul_and_pad(20 + n, 4)
        + _U32(m + 1)
        + args
        + _nul_and_pad(args_at + 4 + m, 4)
        + _U32(len(value) + 1)
        + value
        + b"\0"
    )


_FAST: Final[Mapping[str, Encoder]] = {
    "rosgraph_msgs/msg/Clock": _clock,
    "simclock_msgs/msg/Sample": _sample,
    "simclock_msgs/msg/Event": _event,
    "simclock_msgs/msg/Message": _message,
    "simclock_msgs/msg/Draw": _draw,
}


FAST_TYPES: Final = frozenset(_FAST)
"""The types with a hand-written encoder."""


def fast_encoder(type_name: str, reference: Callable[[Any], Any]) -> Encoder:
    """The hand-written encoder of ``type_name``, handing what it does not take to ``reference``."""
    fast = _FAST[type_name]

    def encode(message: Mapping[str, Any]) -> bytes:
        try:
            return fast(message)
        except Exception:  # the reference coerces what it can, or raises its own error
            pass
        return bytes(reference(message))  # outside the handler: the reference's error, unchained

    return encode
