"""Run fingerprints: a stable hash of the ordered bus trace (C-X-FP).

A run's fingerprint is the SHA-256 of one line per bus message, in the order
the messages were delivered (the total order ``(stamp_ns, sequence)``,
C-BUS-1/2)::

    <stamp_ns> <sequence> <topic> <kind> <canonical JSON of the payload>\\n

``kind`` is ``json`` for plain payloads, ``event`` for `Event`
payloads (hashed through ``Event.to_json()``) and ``raw`` for
`RawPayload` (bytes of an encoding simclock does not decode, hashed as
``{"data": <hex>, "encoding": ..., "schema": ...}``). Canonical JSON is
``json`` with sorted keys, no whitespace, ASCII only and no NaN/Infinity, so
the line never contains a raw newline. ``<topic>`` is the topic itself when
it is made of ``[A-Za-z0-9_./-]`` (every bus topic) and otherwise its
canonical JSON string (a replayed foreign file may have any topic, e.g.
``"/cam\u00e9ra"``); a bare topic has no space and never starts with ``"``,
so the encoding is unambiguous. numpy scalars and arrays are
hashed as their ``tolist()``; tuples as lists. Anything else is refused.

The hash depends only on the trace, never on wall-clock time, object
identities, ``PYTHONHASHSEED`` or the platform (C-DET-1), so two processes, two
execution modes (C-MODE-1) or a run and its replay (C-REP-4) can be compared by
one string. Decoding canonical JSON and encoding it again gives the same text,
which is why a recorded run and its replay have the same fingerprint.

Usage, without recording anything::

    fp = simclock.Fingerprinter()
    clock.bus.subscribe(None, fp)
    ...  # run
    print(fp.hexdigest())

Only bus messages count: the recording's ``/clock`` channel and persisted
random draws are not part of the trace.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from simclock.core._bus import Event, Message, register_trace_sink
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._mcap_records import LineHash, LineSink
from simclock.core._names import exact_str, safe_repr
from simclock.core._readonly import ReadOnly

__all__ = [
    "FINGERPRINT_ALGORITHM",
    "FINGERPRINT_LINE",
    "Fingerprinter",
    "RawPayload",
    "canonical_json",
    "fast_canonical_bytes",
    "line_infix",
    "payload_kind_and_json",
    "topic_token",
    "trace_fingerprint",
    "trace_line",
]

FINGERPRINT_ALGORITHM = "simclock-trace-v1/sha256"
"""Name and version of the line format above; stored next to every fingerprint."""


@dataclass(frozen=True, slots=True)
class RawPayload:
    """A replayed message whose encoding simclock does not decode (foreign recordings).

    ``encoding`` is the MCAP channel's message encoding (e.g. ``"cdr"``,
    ``"protobuf"``), ``schema`` the schema name (``""`` when there is none) and
    ``data`` the message bytes exactly as stored.
    """

    encoding: str
    schema: str
    data: bytes

    def __post_init__(self) -> None:
        # Checked here, not when the payload is first hashed (to_json would fail there).
        for name in ("encoding", "schema"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise SimclockTypeError(
                    f"{name} must be a str, got {type(value).__name__} {safe_repr(value)}"
                )
            object.__setattr__(self, name, exact_str(value))
        if type(self.data) is not bytes:
            if not isinstance(self.data, bytes | bytearray | memoryview):
                raise SimclockTypeError(
                    f"data must be bytes, got {type(self.data).__name__} {safe_repr(self.data)}"
                )
            object.__setattr__(self, "data", bytes(self.data))

    def to_json(self) -> dict[str, str]:
        """The JSON form used in fingerprints and ``simclock replay --json``."""
        return {"data": self.data.hex(), "encoding": self.encoding, "schema": self.schema}


def _default(obj: object) -> Any:
    """Convert the few non-JSON types a simulation payload commonly holds."""
    if isinstance(obj, np.ndarray | np.generic):
        return obj.tolist()
    if isinstance(obj, Event | RawPayload):
        return obj.to_json()
    raise TypeError(f"{type(obj).__name__} {safe_repr(obj)}")


# One encoder, built once: json.dumps with options builds a new encoder per call.
_ENCODER = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=True,
    allow_nan=False,
    default=_default,
)


def _make_fast_encode() -> Callable[[object], str]:
    """The C encoder built once with the options above (``JSONEncoder`` rebuilds it per call).

    No circular-reference markers: a circular payload ends in ``RecursionError``,
    reported like any other value with no JSON form.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pure-Python json build
        return _ENCODER.encode
    encode = make(
        None, _default, json.encoder.encode_basestring_ascii, None, ":", ",", True, False, False
    )
    return lambda value: "".join(encode(value, 0))


_fast_encode = _make_fast_encode()


def canonical_json(value: object, what: str = "payload") -> str:
    """Canonical JSON text of ``value`` (sorted keys, no spaces, ASCII, no NaN).

    Raises ``SimclockTypeError`` for a value with no JSON form (name the
    ``what``) and ``SimclockValueError`` for NaN/Infinity or a dict whose keys
    cannot be sorted. Canonical text decoded and encoded again is unchanged.
    """
    try:
        return _fast_encode(value)
    except RecursionError:
        raise SimclockValueError(
            f"{what} is nested too deeply or refers to itself; publish a tree of plain values"
        ) from None
    except TypeError as exc:
        raise SimclockTypeError(
            f"{what} is not JSON-serialisable ({exc}); publish dicts, lists, str, int, "
            "float, bool, None, numpy values or simclock.Event"
        ) from None
    except ValueError as exc:
        raise SimclockValueError(
            f"{what} has no canonical JSON form ({exc}); replace NaN/Infinity with None or a string"
        ) from None


def fast_canonical_bytes(payload: object) -> bytes | None:
    """`canonical_json` of a plain payload as bytes, or ``None`` where it would raise.

    For a publisher that hands the bus its payload's encoding (``Bus.sender``):
    on ``None`` the message takes the generic path, whose subscribers report
    the error as they always did. An `Event` or
    `RawPayload` payload is ``None`` too (its kind is not ``json``).
    """
    if isinstance(payload, Event | RawPayload):
        return None
    try:
        return _fast_encode(payload).encode("ascii")
    except Exception:  # no canonical form: the subscribers' own encoding reports it
        return None


def payload_kind_and_json(payload: object) -> tuple[str, str]:
    """``(kind, canonical JSON)`` of a bus payload: kind is ``event``, ``raw`` or ``json``."""
    if isinstance(payload, Event):
        return "event", canonical_json(payload.to_json())
    if isinstance(payload, RawPayload):
        return "raw", canonical_json(payload.to_json())
    return "json", canonical_json(payload)


_PLAIN_TOPIC = re.compile(r"[A-Za-z0-9_./-]+")


def topic_token(topic: str) -> str:
    """``topic`` as written in a trace line: bare for bus topics, else a JSON string."""
    return topic if _PLAIN_TOPIC.fullmatch(topic) else canonical_json(topic, "topic")


FINGERPRINT_LINE = b"%d %d%s%s\n"
"""``FINGERPRINT_LINE % (stamp_ns, sequence, line_infix(topic, kind), payload_json)``.

The one definition of a trace line (see the module docstring), used by
`trace_line`, the Recorder and the reader (which keep the infix per
channel, so their hot loops format one line per message with no call).
"""


def line_infix(topic: str, kind: str) -> bytes:
    """The middle of a trace line, ``b" <topic> <kind> "``: fixed per channel."""
    return f" {topic_token(topic)} {kind} ".encode("ascii")


def trace_line(stamp_ns: int, sequence: int, topic: str, kind: str, payload_json: str) -> bytes:
    """One line of the fingerprinted trace (see the module docstring)."""
    return FINGERPRINT_LINE % (
        stamp_ns,
        sequence,
        line_infix(topic, kind),
        payload_json.encode("ascii"),
    )


class Fingerprinter:
    """A bus subscriber hashing every message it receives, in delivery order (C-X-FP).

    ``bus.subscribe(None, fp)`` then ``fp.hexdigest()``. ``count`` is the number
    of messages hashed. A payload with no canonical JSON form is not skipped
    silently: the error is kept and ``hexdigest()`` raises
    ``SimclockRuntimeError`` naming the first such message. Thread-safe; O(size
    of the payload) per message.
    """

    __slots__ = ("_error", "_infix", "_lines", "_lock")

    def __init__(self) -> None:
        # The lines, hashed in batches (compiled with the core: LineHash, LineSink).
        self._lines = LineHash(FINGERPRINT_LINE)
        self._lock = threading.Lock()
        self._error: str | None = None
        # (topic, kind) -> the middle of its trace lines: made once per topic.
        self._infix: dict[tuple[str, str], bytes] = {}

    count = ReadOnly[int]("_lines.count", "Messages hashed so far.")

    def __call__(self, message: Message) -> None:
        """Hash ``message`` (the subscriber entry point).

        ``TypeError`` for anything but a [`Message`][simclock.Message], before the
        hash or the count changes.
        """
        if not isinstance(message, Message):
            raise SimclockTypeError(
                f"message must be a simclock.Message, got {type(message).__name__} "
                f"{safe_repr(message)}"
            )
        data = message.encoded  # the publisher's canonical JSON, if it made it
        if data is not None:
            kind = "json"
        else:
            try:
                kind, text = payload_kind_and_json(message.payload)
            except (SimclockTypeError, SimclockValueError) as exc:
                with self._lock:
                    if self._error is None:
                        self._error = (
                            f"message sequence={message.sequence} on {safe_repr(message.topic)} "
                            f"at {message.stamp_ns} ns: {exc}"
                        )
                raise
            data = text.encode("ascii")
        key = (message.topic, kind)
        infix = self._infix.get(key)
        if infix is None:
            infix = self._infix[key] = line_infix(message.topic, kind)
        line = FINGERPRINT_LINE % (message.stamp_ns, message.sequence, infix, data)
        with self._lock:
            self._lines.add(line)

    def _line_sink(self, topic: str) -> Callable[[int, int, bytes], None]:
        """The trace sink of `__call__` for ``topic`` (see ``Bus.sender``): json lines."""
        return LineSink(self._lines, self._lock, line_infix(topic, "json"))

    def hexdigest(self) -> str:
        """The fingerprint so far: 64 lower-case hex digits.

        Raises ``SimclockRuntimeError`` if a message could not be hashed.
        """
        with self._lock:
            if self._error is not None:
                raise SimclockRuntimeError(
                    f"the trace has no fingerprint: {self._error}; make that payload "
                    "JSON-serialisable"
                )
            return self._lines.hexdigest()


register_trace_sink(Fingerprinter, Fingerprinter._line_sink)


def trace_fingerprint(messages: Iterable[Message]) -> str:
    """Fingerprint of ``messages`` taken in the given order (C-X-FP).

    Equal to a [`Fingerprinter`][simclock.Fingerprinter] subscribed to the bus that delivered them.
    """
    try:
        iterator = iter(messages)
    except Exception:  # not iterable, or an __iter__ that raises
        raise SimclockTypeError(
            f"messages must be an iterable of simclock.Message, got "
            f"{type(messages).__name__} {safe_repr(messages)}"
        ) from None
    fp = Fingerprinter()
    for message in iterator:
        fp(message)
    return fp.hexdigest()
