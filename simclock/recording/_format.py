"""The simclock recording format, in one place (SPEC §6, C-MCAP-1..4, C-REP-6).

Both `Recorder` (writing) and the reader (replay) import
their layout from here, so a change of layout is a one-file edit tied to
`FORMAT`:

* the MCAP header: profile `PROFILE`, library ``simclock/<version> ...``;
* the channels: `KIND_KEY` in each channel's metadata names what it
  carries (``json``, ``event``, ``raw`` bus messages, ``clock``, ``draws``);
  the JSON schemas below;
* the envelope of a bus message (`encode_envelope`,
  `envelope_payload`): ``{"payload":<canonical JSON>,"sequence":N}``;
* the metadata record `METADATA_NAME` (`RecordingMetadata`,
  ``to_mcap``/``from_mcap``), sealed by a SHA-256 digest over every field
  and over the user metadata record, so a changed byte there is refused
  (C-REP-6) instead of silently changing the seed, the end time or the
  fingerprint replay checks against.

File layout (C-MCAP-1):

* one channel per topic, message encoding ``json``, a ``jsonschema`` schema
  per message type: ``simclock/Message`` (any JSON payload),
  ``simclock/Event`` (`Event`, decoded back to an ``Event``
  on replay) and ``simclock/RawPayload`` (`RawPayload`, e.g.
  a foreign file's replay recorded again; registered only when one is
  recorded). A channel carries one kind: a message of another kind on its
  topic, or a bus message on ``/clock``, is refused like an unserialisable
  payload (see Errors).
* every message: ``log_time = publish_time = stamp_ns``; the MCAP
  ``sequence`` is the bus sequence mod 2**32 and the data is the canonical
  JSON envelope ``{"payload": ..., "sequence": <full bus sequence>}``, so the
  order survives past 2**32 messages. Messages are written in total order;
  MCAP readers break ``log_time`` ties by file position, so they see the same
  order.
* ``/clock`` as ``rosgraph_msgs/msg/Clock`` (``ros2msg`` schema, ``cdr``
  encoding, encoded with mcap-ros2-support) carrying session time, always with
  an explicit ``log_time`` equal to that time (C-MCAP-3, C-EP-2). Default: one
  ``/clock`` message at ``start_ns`` and each time the stamp of delivered
  messages moves forward, plus one at the end time on ``close()``. With
  ``clock_period_ns=P`` instead: one at every grid point ``k*P`` from
  ``start_ns`` to the end, emitted lazily as stamps pass them (no clock entry
  is scheduled, so the run itself is untouched). ``clock_tick(session_ns)``
  adds one explicitly. ``/clock`` is not part of the bus trace.
* with ``record_draws=True``, every draw of a random stream created with
  ``draw_observer=rec.draw_observer`` goes to channel
  ``/simclock/draws<label>`` (``/simclock/draws`` for the root ``/``) as
  ``simclock/Draw`` JSON ``{"args", "index", "method", "value"}``; arrays are
  ``{"data", "dtype", "shape"}``. ``ReplayClock.random_source()`` hands them
  back per label (C-REP-3).
* chunked (``chunk_size``) and compressed (``zstd`` by default, ``lz4`` or
  ``none``), with chunk and data-section CRCs and the full summary/indexes.
* on ``close()``: a metadata record ``simclock`` (C-MCAP-2) with ``format``,
  ``seed``, ``contract_version``, package versions (``simclock``, ``mcap``,
  ``mcap_ros2_support``, ``numpy``, ``python``), ``fingerprint`` (C-X-FP,
  see `simclock.recording._fingerprint`), ``fingerprint_algorithm``,
  ``message_count``, ``last_sequence``, ``start_ns``, ``end_ns``, ``step_ns``,
  ``clock_period_ns``, ``record_draws``, ``draw_labels``, ``topics`` (JSON
  message counts per topic) and ``error`` (empty
  unless something could not be recorded); and a metadata record
  ``simclock.user`` with ``metadata`` if given. The file contains no
  wall-clock time: the same run gives a byte-identical file.
* when recording begins: a metadata record ``simclock.start`` (the same
  fields, sealed, with the user metadata under ``user``), flushed at once, so
  ``simclock recover`` can rebuild a run killed before ``close()`` (C-REP-7);
* a bus message on ``/clock`` (a ``Session``'s SessionTime, C-BUS-5) is
  written on the ``/clock`` channel with its bus sequence as MCAP sequence;
  the recorder's own ticks carry `RECORDER_TICK` and stop once the bus
  publishes ``/clock`` itself.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

import numpy as np
from mcap_ros2._cdr import CdrWriter
from mcap_ros2._dynamic import serialize_dynamic

from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._mcap_records import draw_value_json, same_json
from simclock.core._names import exact_str, safe_repr, typed_repr
from simclock.recording._fingerprint import canonical_json

__all__ = [
    "CLOCK_SCHEMA_NAME",
    "CLOCK_SCHEMA_TEXT",
    "CLOCK_TOPIC",
    "DRAWS_TOPIC_PREFIX",
    "DRAW_SCHEMA",
    "ENVELOPE",
    "ENVELOPE_PREFIX",
    "EVENT_SCHEMA",
    "FORMAT",
    "KIND_KEY",
    "LABEL_KEY",
    "LIBRARY_PREFIX",
    "MAX_CLOCK_NS",
    "MESSAGE_SCHEMA",
    "METADATA_NAME",
    "MODEL_SHA256_KEY",
    "PROFILE",
    "RAW_SCHEMA",
    "RECORDER_TICK",
    "SCENARIO_SHA256_KEY",
    "SCENARIO_TEXT_KEY",
    "START_METADATA_NAME",
    "U32",
    "USER_METADATA_NAME",
    "DrawRecords",
    "RecordingMetadata",
    "check_user_metadata",
    "clock_cdr_of",
    "clock_encoder",
    "clock_payload_of",
    "decode_draw_value",
    "draw_record",
    "draws_topic",
    "encode_clock",
    "encode_draw_value",
    "encode_envelope",
    "envelope_payload",
    "package_version",
    "seal_metadata",
]

FORMAT: Final = "simclock-recording/2"
METADATA_NAME: Final = "simclock"
USER_METADATA_NAME: Final = "simclock.user"
START_METADATA_NAME: Final = "simclock.start"
"""Written (and flushed) when recording begins: what ``simclock recover`` needs (C-REP-7)."""
KIND_KEY: Final = "simclock.kind"
LABEL_KEY: Final = "simclock.label"
CLOCK_TOPIC: Final = "/clock"
DRAWS_TOPIC_PREFIX: Final = "/simclock/draws"
CLOCK_SCHEMA_NAME: Final = "rosgraph_msgs/msg/Clock"
CLOCK_SCHEMA_TEXT: Final = (
    "builtin_interfaces/Time clock\n"
    "================================================================================\n"
    "MSG: builtin_interfaces/Time\n"
    "int32 sec\n"
    "uint32 nanosec\n"
)
PROFILE: Final = "simclock"
"""The MCAP header's profile of every simclock recording (C-REP-6: never mistaken)."""
LIBRARY_PREFIX: Final = "simclock/"
"""The MCAP header's library string starts with this in every simclock recording."""
U32: Final = 0xFFFFFFFF
_SCHEMA_URI = "https://json-schema.org/draft/2020-12/schema"


def _envelope_schema(title: str, description: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The ``jsonschema`` of a bus message envelope ``{"payload", "sequence"}``."""
    return {
        "$schema": _SCHEMA_URI,
        "title": title,
        "description": description,
        "type": "object",
        "properties": {"payload": payload, "sequence": {"type": "integer", "minimum": 0}},
        "required": ["payload", "sequence"],
        "additionalProperties": False,
    }


def _object_schema(properties: dict[str, Any]) -> dict[str, Any]:
    """A closed JSON object with every one of ``properties`` required."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


MESSAGE_SCHEMA = _envelope_schema(
    "simclock/Message", "A bus message: any JSON payload and the full bus sequence.", {}
)
EVENT_SCHEMA = _envelope_schema(
    "simclock/Event",
    "A simclock.Event published on /simclock/events, with its bus sequence.",
    _object_schema(
        {
            "kind": {"type": "string"},
            "at_ns": {"type": "integer", "minimum": 0},
            "details": {"type": "object"},
        }
    ),
)
RAW_SCHEMA = _envelope_schema(
    "simclock/RawPayload",
    "A simclock.RawPayload (bytes of an encoding simclock does not decode).",
    _object_schema(
        {
            "data": {"type": "string", "pattern": "^([0-9a-f]{2})*$"},
            "encoding": {"type": "string"},
            "schema": {"type": "string"},
        }
    ),
)
DRAW_SCHEMA = {
    "$schema": _SCHEMA_URI,
    "title": "simclock/Draw",
    "description": "One draw of a simclock random stream, in draw order per label.",
    "type": "object",
    "properties": {
        "index": {"type": "integer", "minimum": 0},
        "method": {"enum": ["uniform", "normal", "integers"]},
        "args": {"type": "array"},
        "value": {
            "oneOf": [
                {"type": "number"},
                {
                    "type": "object",
                    "properties": {"float": {"enum": ["nan", "inf", "-inf"]}},
                    "required": ["float"],
                },
                {
                    "type": "object",
                    "properties": {
                        "dtype": {"type": "string"},
                        "shape": {"type": "array", "items": {"type": "integer"}},
                        "data": {"type": "array"},
                    },
                    "required": ["dtype", "shape", "data"],
                },
            ]
        },
    },
    "required": ["index", "method", "args", "value"],
    "additionalProperties": False,
}


def draws_topic(label: str) -> str:
    """The channel topic of the draws of stream ``label`` (``/`` → ``/simclock/draws``)."""
    return DRAWS_TOPIC_PREFIX if label == "/" else DRAWS_TOPIC_PREFIX + label


# -- /clock ----------------------------------------------------------------------------

_NS_PER_S = 1_000_000_000


def clock_encoder() -> Any:
    """mcap-ros2-support's schema-driven CDR encoder of ``rosgraph_msgs/msg/Clock``."""
    return serialize_dynamic(CLOCK_SCHEMA_NAME, CLOCK_SCHEMA_TEXT)[CLOCK_SCHEMA_NAME]


_INT32_MAX = 2**31 - 1

MAX_CLOCK_NS: Final = _INT32_MAX * _NS_PER_S + _NS_PER_S - 1
"""The latest session time ``/clock`` can carry (``int32 sec``, ``uint32 nanosec``)."""


def encode_clock(session_ns: int) -> bytes:
    """CDR bytes of ``rosgraph_msgs/msg/Clock`` carrying ``session_ns`` (C-MCAP-3).

    Clock is ``builtin_interfaces/Time clock`` = ``int32 sec, uint32 nanosec``;
    the fields are written with mcap-ros2-support's ``CdrWriter``, which gives
    the same bytes as `clock_encoder` (tested) at a third of the cost,
    and this runs once per recorded instant. ``ValueError`` past int32 seconds.
    """
    sec, nanosec = divmod(session_ns, _NS_PER_S)
    if sec > _INT32_MAX:
        raise SimclockValueError(
            f"session time {session_ns} ns is past the int32 seconds of "
            "builtin_interfaces/Time; /clock cannot carry it"
        )
    # The CdrWriter's header, then the two fields it writes (aligned, little-endian):
    # the same bytes (tested) for a tenth of the cost, once per recorded step.
    return _CLOCK_HEADER + _CLOCK_FIELDS.pack(sec, nanosec)


def _cdr_clock(sec: int, nanosec: int) -> bytes:
    out = io.BytesIO()
    writer = CdrWriter(out)
    writer.write_int32(sec)
    writer.write_uint32(nanosec)
    return out.getvalue()


_CLOCK_FIELDS = struct.Struct("<iI")
_CLOCK_HEADER = _cdr_clock(0, 0)[:4]
# Invariant: the header is CdrWriter's own and the fields follow it unpadded.
assert _cdr_clock(_INT32_MAX, _NS_PER_S - 1) == _CLOCK_HEADER + _CLOCK_FIELDS.pack(
    _INT32_MAX, _NS_PER_S - 1
)


RECORDER_TICK: Final = 0xFFFFFFFF
"""MCAP ``sequence`` of the recorder's own ``/clock`` ticks.

Other messages on the ``/clock`` channel are bus messages (a ``Session``'s
SessionTime, C-BUS-5) whose MCAP sequence is their bus sequence mod 2**32;
replay delivers those and skips the ticks.
"""


def clock_cdr_of(payload: object) -> bytes | None:
    """CDR bytes of a bus ``/clock`` payload ``{"clock": {"sec", "nanosec"}}``, else None."""
    if type(payload) is not dict or payload.keys() != {"clock"}:
        return None
    inner = payload["clock"]
    if type(inner) is not dict or inner.keys() != {"sec", "nanosec"}:
        return None
    sec, nanosec = inner["sec"], inner["nanosec"]
    if type(sec) is not int or type(nanosec) is not int:
        return None
    if not (0 <= sec <= _INT32_MAX and 0 <= nanosec < _NS_PER_S):
        return None
    return encode_clock(sec * _NS_PER_S + nanosec)


def clock_payload_of(data: bytes) -> dict[str, dict[str, int]]:
    """Inverse of `clock_cdr_of`; ``ValueError`` for bytes it does not write."""
    if len(data) != 12:
        raise ValueError(f"a /clock message has 12 bytes, this one {len(data)}")
    sec, nanosec = struct.unpack_from("<iI", data, 4)
    payload = {"clock": {"sec": sec, "nanosec": nanosec}}
    if clock_cdr_of(payload) != data:
        raise ValueError(f"/clock bytes {data.hex()} are not a canonical rosgraph Clock")
    return payload


# -- persisted draws ----------------------------------------------------------------------


def _json_floats(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": repr(value)}  # 'nan', 'inf' or '-inf': JSON has no such numbers
    if isinstance(value, list | tuple):
        if all(type(v) is float and v - v == 0.0 for v in value):
            return list(value)  # finite floats only (a draw's values): nothing to replace
        return [_json_floats(v) for v in value]
    return value


def _plain_floats(value: Any) -> Any:
    if isinstance(value, dict) and value.keys() == {"float"}:
        return float(value["float"])
    if isinstance(value, list):
        return [_plain_floats(v) for v in value]
    return value


# id(dtype) -> (dtype, str(dtype)): numpy's str of a dtype costs microseconds, and a
# sensor's draws share one dtype object. The entry keeps the dtype alive, so its id
# is never reused while cached; bounded, as the dtypes of a run are few.
_DTYPE_NAMES: dict[int, tuple[np.dtype[Any], str]] = {}


def _dtype_name(dtype: np.dtype[Any]) -> str:
    entry = _DTYPE_NAMES.get(id(dtype))
    if entry is None or entry[0] is not dtype:
        entry = (dtype, str(dtype))
        if len(_DTYPE_NAMES) < 256:
            _DTYPE_NAMES[id(dtype)] = entry
    return entry[1]


def encode_draw_value(value: Any) -> Any:
    """JSON form of a draw's value or arguments (arrays as ``{"data", "dtype", "shape"}``).

    A NaN or infinite float becomes ``{"float": "nan"}`` (or ``"inf"``,
    ``"-inf"``), so a draw that returns NaN is recorded like any other.
    """
    if isinstance(value, np.ndarray):
        return {
            "data": _json_floats(value.tolist()),
            "dtype": _dtype_name(value.dtype),
            "shape": list(value.shape),
        }
    if isinstance(value, np.floating):
        value = float(value)
    return _json_floats(value)


def draw_record(method: str, args: tuple[Any, ...], index: int, value: Any) -> bytes:
    """The record of one persisted draw: its canonical JSON (C-REP-3). What `DrawRecords` makes."""
    return canonical_json(
        {
            "args": encode_draw_value(list(args)),
            "index": index,
            "method": method,
            "value": encode_draw_value(value),
        },
        "random draw",
    ).encode()


_FLOAT64: Final = np.dtype(np.float64)
"""numpy's native float64 dtype: the arrays whose values `draw_value_json` writes directly."""


class DrawRecords:
    """`draw_record`, byte for byte, from a template per (label, method, arguments) (C-REP-3).

    A sensor draws with the same arguments every time: the text around the
    index and the value is made once, and the value of a finite float, an int
    or a 1-D float64 array is written directly. Arguments are matched by
    their JSON text (``same_json`` of the compiled core, which the recorder's
    own draw path uses too: ``0.0`` and ``-0.0``, ``1`` and ``1.0`` never
    share a template); unhashable arguments, other values and the
    first draw of a template go through the generic encoder. At most
    ``limit`` templates are kept.
    """

    def __init__(self, limit: int = 1024) -> None:
        self._templates: dict[tuple[str, str, tuple[Any, ...]], tuple[Any, bytes, bytes]] = {}
        self._limit = limit

    def encode(
        self, label: str, method: str, args: tuple[Any, ...], index: int, value: Any
    ) -> bytes:
        """The record of draw ``index`` of ``label``: `draw_record`'s bytes."""
        key = (label, method, args)
        try:
            entry = self._templates.get(key)
        except TypeError:  # unhashable arguments (an array): no template
            return draw_record(method, args, index, value)
        value_json = draw_value_json(value, np.ndarray, _FLOAT64)
        if entry is None or value_json is None or not same_json(entry[0], args):
            data = draw_record(method, args, index, value)  # raises as it always did
            if entry is None and len(self._templates) < self._limit:
                self._templates[key] = (args, *_template(method, args))
            return data
        return b"%s%d%s%s}" % (entry[1], index, entry[2], value_json)

    def template(self, method: str, args: tuple[Any, ...]) -> tuple[bytes, bytes] | None:
        """The text before the index and between index and value of a draw's record.

        ``None`` for arguments that cannot be matched (unhashable, or no JSON form).
        Call it after `encode` succeeded for these arguments.
        """
        try:
            hash(args)
            return _template(method, args)
        except (TypeError, SimclockTypeError, SimclockValueError):
            return None


def _template(method: str, args: tuple[Any, ...]) -> tuple[bytes, bytes]:
    head = b'{"args":' + canonical_json(encode_draw_value(list(args)), "random draw").encode()
    middle = b',"method":' + canonical_json(method).encode()
    return head + b',"index":', middle + b',"value":'


def decode_draw_value(value: Any) -> Any:
    """Inverse of `encode_draw_value` for a recorded value."""
    if isinstance(value, dict) and value.keys() != {"float"}:
        data = _plain_floats(value["data"])
        return np.asarray(data, dtype=value["dtype"]).reshape(value["shape"])
    return _plain_floats(value)


# -- run metadata -----------------------------------------------------------------------


@functools.cache
def package_version(name: str) -> str:
    """The installed version of distribution ``name``, or ``"unknown"``.

    Read once per process: reading a distribution's metadata costs milliseconds
    (an email-format parse), and a recording reads several at its start and end.
    """
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


SCENARIO_TEXT_KEY: Final = "scenario_text"
"""User metadata of a ``simclock run`` recording: the scenario's canonical text (JSON)."""
SCENARIO_SHA256_KEY: Final = "scenario_sha256"
"""User metadata of a ``simclock run`` recording: SHA-256 (hex) of the scenario's canonical text."""
MODEL_SHA256_KEY: Final = "model_sha256"
"""User metadata of a ``simclock run`` recording: SHA-256 (hex) of its MJCF file (MuJoCo only)."""


def check_user_metadata(metadata: object) -> dict[str, str]:
    """The Recorder's ``metadata=`` argument as a dict of str (MCAP metadata is text)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise SimclockTypeError(
            f"metadata must be a mapping of str to str or None, got {typed_repr(metadata)}"
        )
    out: dict[str, str] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise SimclockTypeError(
                f"metadata must map str to str (MCAP metadata is text), got {safe_repr(key)}: "
                f"{safe_repr(value)}; convert values with str() or json.dumps()"
            )
        # Plain copies: a str subclass's __hash__/__eq__ never run in the dict.
        out[exact_str(key)] = exact_str(value)
    return out


# -- the envelope of a bus message ------------------------------------------------------

ENVELOPE_PREFIX: Final = b'{"payload":'
_ENVELOPE_SEQUENCE: Final = b',"sequence":'


ENVELOPE: Final = ENVELOPE_PREFIX + b"%s" + _ENVELOPE_SEQUENCE + b"%d}"
"""``ENVELOPE % (payload_json, sequence)`` is `encode_envelope` (for hot loops)."""


def encode_envelope(payload_json: bytes, sequence: int) -> bytes:
    """The data of one bus message: canonical payload text and the full bus sequence.

    Keys sorted, no spaces: the envelope is itself canonical JSON, and the
    payload text inside it is byte-for-byte the one the fingerprint hashes.
    """
    return ENVELOPE % (payload_json, sequence)


def envelope_payload(data: bytes) -> bytes:
    """The canonical payload text inside an envelope (inverse of `encode_envelope`).

    Only called on data already decoded as a JSON object with exactly the
    keys ``payload`` and ``sequence`` and an int sequence; ``ValueError`` if
    the bytes are not laid out as `encode_envelope` writes them.
    """
    if not data.startswith(ENVELOPE_PREFIX):
        raise ValueError("envelope does not start with the payload")
    return data[len(ENVELOPE_PREFIX) : data.rindex(_ENVELOPE_SEQUENCE)]


# -- the metadata record ------------------------------------------------------------------


_VERSION_KEYS: Final = ("simclock", "mcap", "mcap_ros2_support", "numpy", "python")
_KEYS: Final = (
    "format",
    "seed",
    "contract_version",
    "library",
    *_VERSION_KEYS,
    "fingerprint",
    "fingerprint_algorithm",
    "message_count",
    "last_sequence",
    "start_ns",
    "end_ns",
    "step_ns",
    "clock_period_ns",
    "record_draws",
    "draw_labels",
    "topics",
    "error",
    "recovered",
)
"""Every key of the ``simclock`` metadata record except ``digest``, in the order written."""


def _int(meta: Mapping[str, str], key: str) -> int:
    text = meta[key]
    # int() accepts " 7", "+7", "0_7": none of them is written by to_mcap.
    if not text.isascii() or not text.isdigit() or str(int(text)) != text:
        raise ValueError(f"{key}={text!r} is not a canonical non-negative int")
    return int(text)


@dataclass(frozen=True, slots=True)
class RecordingMetadata:
    """The ``simclock`` metadata record of a recording (C-MCAP-2, C-REP-6, C-REP-7).

    ``to_mcap()`` gives the record's string map, with ``digest``: the
    SHA-256 of the canonical JSON of every other key together with the user
    metadata. ``from_mcap(record, user)`` is its inverse and raises
    ``ValueError`` for a missing or malformed key or a digest that does not
    match (any changed byte of either record).
    """

    seed: int
    contract_version: str
    library: str
    versions: Mapping[str, str]
    fingerprint: str
    fingerprint_algorithm: str
    message_count: int
    last_sequence: int
    start_ns: int
    end_ns: int
    step_ns: int
    clock_period_ns: int | None
    record_draws: bool
    draw_labels: tuple[str, ...]
    topics: Mapping[str, int]
    error: str = ""
    recovered: str = ""
    format: str = FORMAT
    user: Mapping[str, str] = field(default_factory=dict)

    def to_mcap(self) -> dict[str, str]:
        """The ``simclock`` metadata record, digest included."""
        out = {
            "format": self.format,
            "seed": str(self.seed),
            "contract_version": self.contract_version,
            "library": self.library,
            **{key: self.versions.get(key, "unknown") for key in _VERSION_KEYS},
            "fingerprint": self.fingerprint,
            "fingerprint_algorithm": self.fingerprint_algorithm,
            "message_count": str(self.message_count),
            "last_sequence": str(self.last_sequence),
            "start_ns": str(self.start_ns),
            "end_ns": str(self.end_ns),
            "step_ns": str(self.step_ns),
            "clock_period_ns": "" if self.clock_period_ns is None else str(self.clock_period_ns),
            "record_draws": "true" if self.record_draws else "false",
            "draw_labels": json.dumps(sorted(self.draw_labels)),
            "topics": canonical_json(dict(sorted(self.topics.items()))),
            "error": self.error,
            "recovered": self.recovered,
        }
        out["digest"] = _digest(out, self.user)
        return out

    @classmethod
    def from_mcap(cls, meta: Mapping[str, str], user: Mapping[str, str]) -> RecordingMetadata:
        """Parse and check a ``simclock`` record and the user record (``{}`` if none)."""
        if meta.get("format") != FORMAT:
            raise ValueError(
                f"format is {meta.get('format')!r}, this version reads {FORMAT!r}; replay it "
                "with the simclock version that wrote it"
            )
        body = {k: v for k, v in meta.items() if k != "digest"}
        if meta.get("digest") != _digest(body, user):
            raise ValueError(
                "its digest does not match its content (a metadata record was changed)"
            )
        expected = {*_KEYS, "digest"}
        if set(meta) != expected:
            raise ValueError(f"keys {sorted(set(meta) ^ expected)} are missing or unknown")
        draws = meta["record_draws"]
        if draws not in ("true", "false"):
            raise ValueError(f"record_draws={draws!r} is not 'true' or 'false'")
        labels = json.loads(meta["draw_labels"])
        topics = json.loads(meta["topics"])
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise ValueError(f"draw_labels={meta['draw_labels']!r} is not a list of str")
        if not isinstance(topics, dict) or not all(type(v) is int for v in topics.values()):
            raise ValueError(f"topics={meta['topics']!r} is not a map of counts")
        period = meta["clock_period_ns"]
        return cls(
            seed=_int(meta, "seed"),
            contract_version=meta["contract_version"],
            library=meta["library"],
            versions={key: meta[key] for key in _VERSION_KEYS},
            fingerprint=meta["fingerprint"],
            fingerprint_algorithm=meta["fingerprint_algorithm"],
            message_count=_int(meta, "message_count"),
            last_sequence=int(meta["last_sequence"]),
            start_ns=_int(meta, "start_ns"),
            end_ns=_int(meta, "end_ns"),
            step_ns=_int(meta, "step_ns"),
            clock_period_ns=None if period == "" else _int(meta, "clock_period_ns"),
            record_draws=draws == "true",
            draw_labels=tuple(labels),
            topics=dict(topics),
            error=meta["error"],
            recovered=meta["recovered"],
            user=dict(user),
        )

    def with_changes(self, **changes: Any) -> RecordingMetadata:
        """A copy with ``changes`` (the digest follows in ``to_mcap``)."""
        return replace(self, **changes)


def seal_metadata(record: Mapping[str, str], user: Mapping[str, str]) -> dict[str, str]:
    """``record`` with its ``digest`` recomputed over it and ``user`` (C-REP-6).

    For tools that rewrite a recording's metadata on purpose (``simclock
    recover``); anything else that changes a byte of it is refused.
    """
    body = {k: v for k, v in record.items() if k != "digest"}
    return {**body, "digest": _digest(body, user)}


def _digest(body: Mapping[str, str], user: Mapping[str, str]) -> str:
    text = canonical_json({"simclock": dict(body), "user": dict(user)}, "recording metadata")
    return hashlib.sha256(text.encode()).hexdigest()
