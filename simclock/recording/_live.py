"""Show a run live in the Foxglove app: a Foxglove WebSocket server fed from the bus.

``LiveView(host="127.0.0.1", port=8765, *, clock_period_ns=None, start_ns=0)``
starts a Foxglove WebSocket server (the ``foxglove-sdk`` package, extra
``simclock[live]``) with the ``Time`` capability. Subscribe
`LiveView.record` to a bus; call `LiveView.time_to` as the
simulation advances; `LiveView.close` stops the server.

What a client sees is what the recording of the same run holds (C-MCAP-1,
C-MCAP-3), on the same channels and at the same stamps:

* every bus message on its topic's channel (one channel per topic), log time
  its ``stamp_ns``, the recording's bytes: the JSON envelope
  ``{"payload":...,"sequence":N}`` with the schema ``simclock/Message``
  (``simclock/Event``, ``simclock/RawPayload``). The WebSocket protocol has no
  sequence field: the envelope carries the bus sequence;
* ``/clock`` as ``rosgraph_msgs/msg/Clock`` (ros2msg schema, cdr), at every
  grid point ``k * clock_period_ns`` from ``start_ns`` (the recorder's ticks
  for the same period), or, without a period, at the start and at each later
  message stamp. A bus message on ``/clock`` (a Session's SessionTime) is sent
  there instead, and the view adds no tick of its own (one producer);
* the server time (``broadcast_time``): the simulated time, each time it moves.

The view never changes the run: it only reads the messages handed to it, and
`record` never raises (a bus reports a raising subscriber as an event,
which would change the trace); a message it cannot show is counted in
``skipped`` and the first reason kept in ``problem``. Pacing is the caller's:
the view sends each message when it is handed over (``run_paced``'s
``realtime_paced`` hands them over at their wall time).

Each view owns a ``foxglove.Context``: two views in one process share no
channel. The host must be a loopback address unless ``allow_remote=True``:
the protocol has no authentication, so anyone who reaches the port sees the run.
"""

from __future__ import annotations

import ipaddress
import threading
from typing import Any

from simclock.core._bus import Message
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._names import describe_exception, safe_repr
from simclock.core._timeint import check_positive_ns, check_time_ns
from simclock.recording._closing import Closing
from simclock.recording._fingerprint import canonical_json, payload_kind_and_json
from simclock.recording._format import (
    CLOCK_SCHEMA_NAME,
    CLOCK_SCHEMA_TEXT,
    CLOCK_TOPIC,
    ENVELOPE,
    EVENT_SCHEMA,
    MESSAGE_SCHEMA,
    RAW_SCHEMA,
    clock_cdr_of,
    encode_clock,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "SUBPROTOCOL",
    "LiveView",
    "is_loopback",
    "parse_address",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
"""The Foxglove app's default port for a Foxglove WebSocket connection."""

SUBPROTOCOL = "foxglove.sdk.v1"
"""The WebSocket subprotocol the server speaks (foxglove-sdk's server, the ``live`` extra).

A client must offer it in its handshake (``Sec-WebSocket-Protocol``); one that
offers only the older ``foxglove.websocket.v1`` is answered ``HTTP 400``. The
Foxglove app offers both.
"""

_SCHEMAS = {
    "json": ("simclock/Message", MESSAGE_SCHEMA),
    "event": ("simclock/Event", EVENT_SCHEMA),
    "raw": ("simclock/RawPayload", RAW_SCHEMA),
}


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve anywhere


def parse_address(text: str, option: str = "--live") -> tuple[str, int, bool]:
    """``(host, port, host_given)`` of ``HOST:PORT``, ``:PORT``, ``PORT``, ``HOST`` or ``""``.

    The missing parts are `DEFAULT_HOST` and `DEFAULT_PORT`; an
    IPv6 host is written in brackets (``[::1]:8765``). Port 0 asks the system
    for a free port. ``ValueError`` naming ``option`` and the text otherwise.
    """
    if not isinstance(text, str):
        raise SimclockTypeError(f"{option} must be a str HOST:PORT, got {safe_repr(text)}")
    host, port_text = "", ""
    if text.startswith("["):
        inner, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise SimclockValueError(
                f"{option} {text!r} is not HOST:PORT; write an IPv6 host in brackets, "
                "e.g. [::1]:8765"
            )
        host, port_text = inner, rest[1:]
    elif text.isdigit():
        port_text = text
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    elif ":" in text:
        raise SimclockValueError(
            f"{option} {text!r} is not HOST:PORT; write an IPv6 host in brackets, e.g. [::1]:8765"
        )
    else:
        host = text
    port = DEFAULT_PORT
    if port_text:
        if not port_text.isdigit() or int(port_text) > 65535:
            raise SimclockValueError(
                f"{option} {text!r}: the port must be an int from 0 to 65535 "
                f"(0: any free port), got {port_text!r}"
            )
        port = int(port_text)
    if any(c.isspace() for c in host):
        raise SimclockValueError(f"{option} {text!r}: the host contains whitespace")
    return (host or DEFAULT_HOST), port, bool(host)


class LiveView(Closing):
    """A Foxglove WebSocket server showing a run as it happens (see the module docstring).

    ``port`` 0 takes a free port (`port` says which). ``host`` other
    than loopback is refused (``ValueError``) unless ``allow_remote``. A server
    that cannot start (port taken) is ``RuntimeError`` naming the address.
    Thread-safe: one lock around each send.
    """

    def __init__(
        self,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        *,
        clock_period_ns: int | None = None,
        start_ns: int = 0,
        allow_remote: bool = False,
        name: str = "simclock",
    ) -> None:
        if not isinstance(host, str) or not host:
            raise SimclockTypeError(f"host must be a non-empty str, got {safe_repr(host)}")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise SimclockValueError(f"port must be an int from 0 to 65535, got {safe_repr(port)}")
        if not isinstance(allow_remote, bool):
            raise SimclockTypeError(f"allow_remote must be a bool, got {safe_repr(allow_remote)}")
        if not allow_remote and not is_loopback(host):
            raise SimclockValueError(
                f"host {host!r} is not a loopback address: the live view has no authentication, "
                "so anyone who reaches it sees the run; pass allow_remote=True to listen there"
            )
        self._period = (
            None
            if clock_period_ns is None
            else check_positive_ns(clock_period_ns, "clock_period_ns")
        )
        self._start = check_time_ns(start_ns, "start_ns")
        try:
            import foxglove
        except ImportError:
            from simclock.core._extras import install_command

            raise SimclockRuntimeError(
                "the live view needs the foxglove-sdk package (the 'live' extra); install it "
                f"with: {install_command('live')}"
            ) from None
        self._foxglove: Any = foxglove
        # Invariant: every channel and the server belong to this context, never the global one.
        self._context = foxglove.Context()
        try:
            self._server = foxglove.start_server(
                name=name,
                host=host,
                port=port,
                capabilities=[foxglove.Capability.Time],
                context=self._context,
            )
        except Exception as exc:
            raise SimclockRuntimeError(
                f"the live view cannot listen on {host}:{port} ({describe_exception(exc)}); "
                "pass another port, or 0 for any free port"
            ) from None
        self.host = host
        self._lock = threading.Lock()
        self._closed = False
        self._channels: dict[str, Any] = {}
        self._kinds: dict[str, str] = {}
        self._clock_channel: Any = None
        self._clock()  # /clock is there from the start, for a client to subscribe to
        self._bus_clock = False
        self._clock_last = -1  # the last /clock sent, -1 before the first
        self._time = -1  # the last server time broadcast
        self.skipped = 0
        """Messages handed to `record` that were not shown."""
        self.problem = ""
        """Why the first skipped message was not shown (``""`` when none was)."""

    @property
    def port(self) -> int:
        """The port the server listens on (the system's choice for port 0)."""
        return int(self._server.port)

    @property
    def subprotocol(self) -> str:
        """The WebSocket subprotocol a client must offer: `SUBPROTOCOL`."""
        return SUBPROTOCOL

    @property
    def url(self) -> str:
        """``ws://HOST:PORT``, what to open in the Foxglove app."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}"

    @property
    def closed(self) -> bool:
        """True once `close` has run."""
        return self._closed

    def advertise(self, topic: str, kind: str = "json") -> None:
        """Create ``topic``'s channel now (for payloads of ``kind``), before its first message.

        A client sees the topic from the start and can subscribe before the
        run publishes on it. ``kind``: ``json``, ``event`` or ``raw``.
        """
        if not isinstance(topic, str) or not topic.startswith("/") or topic == CLOCK_TOPIC:
            raise SimclockValueError(
                f"topic must be a str starting with '/', not {CLOCK_TOPIC!r}, "
                f"got {safe_repr(topic)}"
            )
        if kind not in _SCHEMAS:
            raise SimclockValueError(
                f"kind must be one of 'json', 'event', 'raw', got {safe_repr(kind)}"
            )
        with self._lock:
            have = self._kinds.get(topic)
            if have is not None and have != kind:
                raise SimclockValueError(
                    f"topic {topic!r} already has a channel for kind {have!r}, not {kind!r}"
                )
            if have is None and not self._closed:
                self._new_channel(topic, kind)

    def record(self, message: Message) -> None:
        """Send one bus message (the subscriber to put on a bus); never raises."""
        try:
            with self._lock:
                if self._closed:
                    return
                self._send(message)
        except Exception as exc:  # the run must go on, unchanged: count it, keep why
            self._skip(f"a message could not be sent ({describe_exception(exc)})")

    def time_to(self, now_ns: int) -> None:
        """The simulation reached ``now_ns``: send the ``/clock`` ticks due and the time.

        Never raises; a time before the last one sent changes nothing.
        """
        try:
            with self._lock:
                if not self._closed:
                    self._clock_to(now_ns)
        except Exception as exc:
            self._skip(f"the time could not be sent ({describe_exception(exc)})")

    def close(self) -> None:
        """Stop the server (clients are disconnected); idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._server.stop()

    # -- sending (the lock held) -----------------------------------------------------

    def _skip(self, why: str) -> None:
        self.skipped += 1
        if not self.problem:
            self.problem = why

    def _new_channel(self, topic: str, kind: str) -> Any:
        foxglove = self._foxglove
        name, schema = _SCHEMAS[kind]
        channel = foxglove.Channel(
            topic,
            schema=foxglove.Schema(
                name=name, encoding="jsonschema", data=canonical_json(schema).encode()
            ),
            message_encoding="json",
            context=self._context,
            metadata={"simclock.kind": kind},
        )
        self._channels[topic] = channel
        self._kinds[topic] = kind
        return channel

    def _clock(self) -> Any:
        if self._clock_channel is None:
            foxglove = self._foxglove
            self._clock_channel = foxglove.Channel(
                CLOCK_TOPIC,
                schema=foxglove.Schema(
                    name=CLOCK_SCHEMA_NAME, encoding="ros2msg", data=CLOCK_SCHEMA_TEXT.encode()
                ),
                message_encoding="cdr",
                context=self._context,
            )
        return self._clock_channel

    # Invariant: every log below passes log_time; the SDK stamps a log without one
    # with the wall clock, which would put a host time among simulated ones.

    def _broadcast(self, at: int) -> None:
        if at > self._time:
            self._time = at
            self._server.broadcast_time(at)

    def _tick(self, at: int) -> None:
        if at <= self._clock_last:
            return
        self._clock_last = at
        self._broadcast(at)
        self._clock().log(encode_clock(at), log_time=at)

    def _clock_to(self, at: int) -> None:
        """The ``/clock`` ticks due up to ``at``, as the recorder writes them."""
        if self._bus_clock:
            self._broadcast(at)
            return
        period = self._period
        if period is None:
            if self._clock_last < 0 and at > self._start:
                self._tick(self._start)
            self._tick(at)
            return
        first = self._start if self._clock_last < 0 else self._clock_last + 1
        t = -(-first // period) * period
        while t <= at:
            self._tick(t)
            t += period
        self._broadcast(at)

    def _send(self, message: Message) -> None:
        stamp, seq, topic = message.stamp_ns, message.sequence, message.topic
        if topic == CLOCK_TOPIC:
            cdr = clock_cdr_of(message.payload)
            if cdr is None:
                self._skip(
                    f"message sequence={seq} on {CLOCK_TOPIC!r} is not a rosgraph_msgs/msg/Clock"
                )
                return
            self._bus_clock = True
            self._broadcast(stamp)
            self._clock().log(cdr, log_time=stamp)
            return
        encoded = message.encoded
        if encoded is not None:
            kind = "json"
        else:
            kind, text = payload_kind_and_json(message.payload)
            encoded = text.encode()
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._new_channel(topic, kind)
        elif self._kinds[topic] != kind:
            self._skip(
                f"message sequence={seq} on {topic!r} carries kind {kind!r}, its channel "
                f"{self._kinds[topic]!r} (one channel per topic)"
            )
            return
        if stamp > self._clock_last:
            self._clock_to(stamp)
        channel.log(ENVELOPE % (encoded, seq), log_time=stamp)
