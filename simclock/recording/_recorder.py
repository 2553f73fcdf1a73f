"""Record a run to one MCAP file (SPEC §6, C-MCAP-1..3, C-X-FP).

API (for scenario code)::

    bus = simclock.Bus()
    with simclock.Recorder("run.mcap", bus, seed=7, record_draws=True) as rec:
        clock = simclock.HeapSimClock(7, bus=bus, draw_observer=rec.draw_observer)
        ...  # schedule, publish, advance
    # the file is complete once the ``with`` block (or ``rec.close()``) ends
    print(rec.fingerprint())

``Recorder(path, bus, *, seed, metadata=None, record_draws=False,
clock_period_ns=None, start_ns=None, chunk_size=1 MiB, compression="zstd")``
subscribes to every topic of ``bus`` and writes each delivered message as it
arrives, so the file holds the bus total order ``(stamp_ns, sequence)``
(C-BUS-1/2). A bus already bound to a clock works too:
``Recorder(path, clock.bus, seed=...)``; only draws need the observer at
construction of the clock. ``rec.record(message)`` is the subscriber itself,
for messages that do not go through that bus (still in total order).

File layout (C-MCAP-1): see `simclock.recording._format`.

Errors: bad arguments are refused before the file is created. A payload with
no canonical JSON form is not dropped silently: the subscriber raises (so the
bus reports ``SUBSCRIBER_FAILED``, C-BUS-4, which is itself recorded), the
file is still completed on ``close()`` with the error in its metadata, and
``close()`` raises ``SimclockRuntimeError``; ``ReplayClock`` refuses such a
file. A session time ``/clock`` cannot carry (past int32 seconds) is kept
the same way but never raised into the run (a draw, a delivery).
Thread-safe: one lock around each write.
"""

from __future__ import annotations

import contextlib
import os
import platform
import threading
from collections.abc import Mapping
from typing import IO, Any

import numpy as np
from mcap.writer import LIBRARY_IDENTIFIER

from simclock.core._bus import Bus, Message, checked_message, register_trace_sink
from simclock.core._contract import CONTRACT_VERSION
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._mcap_records import DrawState, McapWriter, TopicSink, TraceRecords
from simclock.core._names import describe_exception, exact_str, safe_repr, typed_repr
from simclock.core._random import DrawObserver, check_seed
from simclock.core._readonly import ReadOnly
from simclock.core._timeint import check_positive_ns, check_time_ns
from simclock.recording._closing import Closing
from simclock.recording._fingerprint import (
    FINGERPRINT_ALGORITHM,
    FINGERPRINT_LINE,
    canonical_json,
    line_infix,
    payload_kind_and_json,
)
from simclock.recording._format import (
    CLOCK_SCHEMA_NAME,
    CLOCK_SCHEMA_TEXT,
    CLOCK_TOPIC,
    DRAW_SCHEMA,
    DRAWS_TOPIC_PREFIX,
    ENVELOPE,
    EVENT_SCHEMA,
    FORMAT,
    KIND_KEY,
    LABEL_KEY,
    LIBRARY_PREFIX,
    MAX_CLOCK_NS,
    MESSAGE_SCHEMA,
    METADATA_NAME,
    PROFILE,
    RAW_SCHEMA,
    RECORDER_TICK,
    START_METADATA_NAME,
    U32,
    USER_METADATA_NAME,
    DrawRecords,
    RecordingMetadata,
    check_user_metadata,
    clock_cdr_of,
    clock_encoder,
    draws_topic,
    encode_clock,
    package_version,
)

__all__ = [
    "CLOCK_SCHEMA_NAME",
    "CLOCK_SCHEMA_TEXT",
    "CLOCK_TOPIC",
    "DRAWS_TOPIC_PREFIX",
    "FORMAT",
    "METADATA_NAME",
    "Recorder",
    "clock_encoder",
    "draws_topic",
    "encode_clock",
]

# The compression argument -> the name the Chunk records carry (as mcap's Writer names them).
_COMPRESSION = {"zstd": "zstd", "lz4": "lz4", "none": ""}


class Recorder(Closing):
    """Write every message of a [`Bus`][simclock.Bus] to one MCAP file (SPEC §6).

    See the module docstring for the file layout and the full API. Order:
    messages are written as delivered, which is the total order
    ``(stamp_ns, sequence)``; a delivery out of that order is refused (it
    would make the file unreplayable). Complexity: O(payload size) per message.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        bus: Bus,
        *,
        seed: int,
        metadata: Mapping[str, str] | None = None,
        record_draws: bool = False,
        clock_period_ns: int | None = None,
        start_ns: int | None = None,
        chunk_size: int = 1024 * 1024,
        compression: str = "zstd",
    ) -> None:
        if not isinstance(path, str | os.PathLike):
            raise SimclockTypeError(f"path must be a str or os.PathLike, got {safe_repr(path)}")
        if not isinstance(bus, Bus):
            raise SimclockTypeError(f"bus must be a simclock.Bus, got {safe_repr(bus)}")
        self._seed = check_seed(seed)
        self._user_metadata = check_user_metadata(metadata)
        if not isinstance(record_draws, bool):
            raise SimclockTypeError(f"record_draws must be a bool, got {safe_repr(record_draws)}")
        self._period = (
            None
            if clock_period_ns is None
            else check_positive_ns(clock_period_ns, "clock_period_ns")
        )
        if start_ns is None:
            start = bus.clock.now_ns() if bus.clock is not None else 0
            what = "the bus clock's now_ns() (start_ns=None)"
        else:
            start = check_time_ns(start_ns, "start_ns")
            what = "start_ns"
        if start > MAX_CLOCK_NS:
            # /clock carries int32 seconds: a later start was accepted, then close() failed.
            raise SimclockValueError(
                f"{what} must be at most {MAX_CLOCK_NS} ns (the int32 seconds of the /clock "
                f"it records), got {safe_repr(start)}"
            )
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
            raise SimclockTypeError(
                f"chunk_size must be an int of bytes, got {typed_repr(chunk_size)}"
            )
        if chunk_size <= 0:
            raise SimclockValueError(
                f"chunk_size must be a positive int of bytes, got {safe_repr(chunk_size)}"
            )
        if not isinstance(compression, str):
            raise SimclockTypeError(
                "compression must be a str ('zstd', 'lz4' or 'none'), got "
                f"{typed_repr(compression)}"
            )
        compression = exact_str(compression)  # a str subclass's __hash__ never runs
        if compression not in _COMPRESSION:
            raise SimclockValueError(
                f"compression must be one of 'zstd', 'lz4', 'none', got {safe_repr(compression)}"
            )
        self.path = os.fspath(path)
        self._bus = bus
        self._start = start
        self._lock = threading.Lock()
        self._error: str | None = None
        self._closed = False
        self._bus_clock_infix = line_infix(CLOCK_TOPIC, "json")
        # The (topic, kind) -> channel id map.
        self._draw_channels: dict[str, int] = {}  # label -> its channel, once registered
        self._draws = DrawRecords()  # the draws' records from templates (C-REP-3)
        self._channels: dict[tuple[str, str], int] = {}
        # Invariant: one channel per topic (C-MCAP-1); the kind of payload it carries.
        self._topic_kind: dict[str, str] = {CLOCK_TOPIC: "clock"}
        # " <topic> <kind> " per channel: the middle of a fingerprint line (C-X-FP).
        self._line_infix: dict[int, bytes] = {}
        try:
            self._stream: IO[bytes] = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        except OSError as exc:
            raise SimclockValueError(
                f"path {self.path!r} cannot be written ({describe_exception(exc)}); pass a "
                "file path in an existing, writable directory"
            ) from None
        # The bytes mcap.writer.Writer(stream, chunk_size, compression, enable_data_crcs=True)
        # writes (tests/test_recording_records.py compares whole files).
        self._writer = McapWriter(self._stream, chunk_size, _COMPRESSION[compression], True)
        self._library = f"{LIBRARY_PREFIX}{package_version('simclock')} {LIBRARY_IDENTIFIER}"
        self._write(self._writer.start, profile=PROFILE, library=self._library)
        self._schemas = {
            "json": self._writer.register_schema(
                "simclock/Message", "jsonschema", canonical_json(MESSAGE_SCHEMA).encode()
            ),
            "event": self._writer.register_schema(
                "simclock/Event", "jsonschema", canonical_json(EVENT_SCHEMA).encode()
            ),
        }
        self._clock_schema = self._writer.register_schema(
            CLOCK_SCHEMA_NAME, "ros2msg", CLOCK_SCHEMA_TEXT.encode()
        )
        self._clock_channel = self._writer.register_channel(
            CLOCK_TOPIC, "cdr", self._clock_schema, {KIND_KEY: "clock"}
        )
        # The per-message work and state: order, records, fingerprint lines, counts, /clock.
        self._trace = TraceRecords(
            self._writer,
            self._lock,
            start,
            self._period or 0,
            self._clock_channel,
            encode_clock(0)[:4],  # the CDR header; encode_clock's bytes (tested)
            MAX_CLOCK_NS,
            RECORDER_TICK,
            ENVELOPE,
            FINGERPRINT_LINE,
            self._clock_overflow,
            self._write_failed,
        )
        self._draw_schema = (
            self._writer.register_schema(
                "simclock/Draw", "jsonschema", canonical_json(DRAW_SCHEMA).encode()
            )
            if record_draws
            else 0
        )
        if record_draws:  # the compiled path, and the one below for what it cannot write
            self._trace.bus = bus
            self._trace.ndarray = np.ndarray
            self._trace.float64 = np.dtype(np.float64)
            self._trace.slow_draw = self._on_draw
        self.draw_observer: DrawObserver | None = self._trace.draw if record_draws else None
        """Pass to ``HeapSimClock(..., draw_observer=...)``; ``None`` unless ``record_draws``."""
        # What the run is, written now and flushed: a crash leaves it for simclock recover.
        self._origin: RecordingMetadata | None = None
        self._recovered = ""
        start_record = self._metadata(start, bus.clock).to_mcap()
        start_record["user"] = canonical_json(self._user_metadata)
        try:
            self._write(self._writer.add_metadata, START_METADATA_NAME, start_record)
            self._write(self._stream.flush)
        except SimclockRuntimeError:
            # Nothing recorded yet and nothing subscribed: the caller gets the error now.
            self._closed = self._trace.closed = True
            # Closing flushes the same bytes again and fails the same way: already reported.
            with contextlib.suppress(OSError):
                self._stream.close()
            raise
        self._handle = bus.subscribe(None, self.record)

    # -- public ---------------------------------------------------------------

    closed = ReadOnly[bool]("_closed", "True once `close` has run.")

    message_count = ReadOnly[int]("_trace.count", "Bus messages written so far.")

    def fingerprint(self) -> str:
        """The fingerprint of the trace written so far (C-X-FP); final after ``close()``.

        Raises ``SimclockRuntimeError`` if a message could not be recorded.
        """
        with self._lock:
            if self._error is not None:
                raise SimclockRuntimeError(f"the recording has no fingerprint: {self._error}")
            return self._trace.hexdigest()

    def clock_tick(self, session_ns: int) -> None:
        """Write one ``/clock`` message carrying ``session_ns`` (C-MCAP-3).

        ``session_ns`` must not be before the last record written (the file is
        in time order) nor past int32 seconds: ``ValueError`` otherwise;
        ``RuntimeError`` once closed.
        A tick at the time of the last ``/clock`` is a no-op.
        """
        at = check_time_ns(session_ns, "session_ns")
        with self._lock:
            self._check_open("clock_tick")
            trace = self._trace
            if at < trace.last_log_time:
                raise SimclockValueError(
                    f"session_ns={at} is before the last recorded time {trace.last_log_time} ns; "
                    "/clock must not go back"
                )
            encode_clock(at)  # ValueError past int32 seconds, before anything is written
            try:
                trace.clock_to(at)
                trace.write_clock(at)
            except OSError as exc:
                raise self._write_failed(exc) from None

    def close(self) -> None:
        """Unsubscribe, write the final ``/clock`` and the metadata, finish the file.

        Idempotent. The end time is the bus clock's ``now`` (or the last stamp
        when the bus is unbound). Raises ``SimclockRuntimeError`` after
        finishing the file if a message could not be recorded.
        """
        # Unsubscribed first, outside the lock: a bus calls the recorder's trace sink
        # with its own lock held, so this lock is never held while taking the bus's.
        self._handle.cancel()
        with self._lock:
            if self._closed:
                return
            self._closed = self._trace.closed = True
            try:
                clock = self._bus.clock
                end = max(self._trace.last_log_time, clock.now_ns() if clock is not None else 0)
                self._write(self._trace.clock_to, end)
                meta = self._metadata(end, clock)
                self._write(self._writer.add_metadata, METADATA_NAME, meta.to_mcap())
                if self._user_metadata:
                    self._write(self._writer.add_metadata, USER_METADATA_NAME, self._user_metadata)
                self._write(self._writer.finish)
            finally:
                try:
                    self._stream.close()
                except OSError as exc:  # the buffered tail is written here (e.g. a full disk)
                    self._fail(f"the file could not be written ({describe_exception(exc)})")
            if self._error is not None:
                raise SimclockRuntimeError(f"recording {self.path!r} is incomplete: {self._error}")

    # -- writing --------------------------------------------------------------

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise SimclockRuntimeError(
                f"{what}() on a closed Recorder for {self.path!r}; create a new Recorder"
            )

    def _fail(self, text: str) -> None:
        if self._error is None:
            self._error = text

    def _write(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        """One call into the MCAP writer; a write error becomes the recording's error.

        C-MCAP-4: nothing is dropped silently. After an ``OSError`` (a
        transient error, a full disk) the file is known to be incomplete:
        the error is kept, ``fingerprint()`` and ``close()`` raise naming the
        file, and the caller (a delivery) gets ``SimclockRuntimeError``.
        """
        try:
            return call(*args, **kwargs)
        except OSError as exc:
            raise self._write_failed(exc) from None

    def _write_failed(self, exc: OSError) -> SimclockRuntimeError:
        text = f"the file could not be written ({describe_exception(exc)})"
        self._fail(text)
        return SimclockRuntimeError(f"recording {self.path!r} is incomplete: {text}")

    def _metadata(self, end: int, clock: Any) -> RecordingMetadata:
        step = clock.step_ns() if clock is not None else 1
        meta = RecordingMetadata(
            seed=self._seed,
            contract_version=CONTRACT_VERSION,
            library=self._library,
            versions={
                "simclock": package_version("simclock"),
                "mcap": package_version("mcap"),
                "mcap_ros2_support": package_version("mcap-ros2-support"),
                "numpy": np.__version__,
                "python": platform.python_version(),
            },
            fingerprint="" if self._error is not None else self._trace.hexdigest(),
            fingerprint_algorithm=FINGERPRINT_ALGORITHM,
            message_count=self._trace.count,
            last_sequence=self._trace.last_seq,
            start_ns=self._start,
            end_ns=end,
            step_ns=step,
            clock_period_ns=self._period,
            record_draws=self.draw_observer is not None,
            draw_labels=tuple(sorted(self._trace.draw_index)),
            topics=dict(self._trace.counts),
            error=self._error or "",
            recovered=self._recovered,
            user=self._user_metadata,
        )
        origin = self._origin
        if origin is not None:  # simclock recover: the run's own versions, library and step
            meta = meta.with_changes(
                contract_version=origin.contract_version,
                library=origin.library,
                versions=origin.versions,
                step_ns=origin.step_ns,
            )
        return meta

    def _clock_overflow(self, at: int) -> None:
        """A ``/clock`` tick past int32 seconds: not written, kept as the file's error.

        Never raised into the run (a draw, a delivery) or out of close() before
        the file is finished: the file says what is missing and close() raises.
        """
        try:
            encode_clock(at)
        except SimclockValueError as exc:
            self._fail(f"/clock at {at} ns was not recorded: {exc}")

    def _bus_clock_channel(self, payload: object, kind: str) -> int | str:
        """The ``/clock`` channel for a bus message on ``/clock`` (C-BUS-5), or why not.

        A ``Session`` publishes SessionTime there as ``{"clock": {"sec", "nanosec"}}``
        (the shape of ``rosgraph_msgs/msg/Clock``); the message is written on the
        recorder's ``rosgraph_msgs/msg/Clock`` channel with its bus sequence as the
        MCAP sequence (the recorder's own ticks carry `RECORDER_TICK`), and the
        recorder stops adding ticks of its own: ``/clock`` has one producer.
        """
        if kind != "json" or clock_cdr_of(payload) is None:
            return (
                f"a bus message on {CLOCK_TOPIC!r} must carry rosgraph_msgs/msg/Clock "
                '({"clock": {"sec": int, "nanosec": int}}, as a Session publishes); publish '
                "other payloads on a topic of their own"
            )
        self._trace.bus_clock = True
        return self._clock_channel

    def _new_channel(self, topic: str, kind: str, label: str = "") -> int | str:
        """Register the channel of ``topic`` for payloads of ``kind``.

        Returns the channel id, or the reason it is refused: one channel per
        topic (C-MCAP-1), so a topic whose channel carries another kind (or
        ``/clock``) cannot get a second one.
        """
        have = self._topic_kind.get(topic)
        if have is not None:
            return (
                f"a payload of kind {kind!r} on a topic whose channel carries kind {have!r} "
                "(one channel per topic, C-MCAP-1); publish it on a topic of its own"
            )
        if kind == "draws":
            schema, metadata = self._draw_schema, {KIND_KEY: kind, LABEL_KEY: label}
        else:
            schema = self._schemas.get(kind) or self._register_schema(kind)
            metadata = {KIND_KEY: kind}
        channel = self._writer.register_channel(topic, "json", schema, metadata)
        self._channels[(topic, kind)] = channel
        self._line_infix[channel] = infix = line_infix(topic, kind)
        self._topic_kind[topic] = kind
        if kind == "json":
            self._trace.json_channels[topic] = (channel, infix)
        return channel

    def _register_schema(self, kind: str) -> int:
        # Only a run that records RawPayloads gets this schema: other files are unchanged.
        assert kind == "raw"
        schema: int = self._writer.register_schema(
            "simclock/RawPayload", "jsonschema", canonical_json(RAW_SCHEMA).encode()
        )
        self._schemas[kind] = schema
        return schema

    def record(self, message: Message) -> None:
        """Write one bus message: the subscriber the Recorder registers on its bus.

        Call it directly only for messages that do not go through that bus
        (they must still come in total order). Raises ``SimclockRuntimeError``
        for a message out of total order or stamped before ``start_ns`` and
        ``SimclockTypeError`` / ``SimclockValueError`` for a payload with no
        canonical JSON form; these are kept and reported again by
        `close`. ``SimclockRuntimeError`` once closed (nothing written).
        """
        if not isinstance(message, Message):
            raise SimclockTypeError(
                f"message must be a simclock.Message, got {typed_repr(message)}"
            )
        stamp = message.stamp_ns
        seq = message.sequence
        topic = message.topic
        with self._lock:
            self._check_open("record")
            if type(stamp) is not int or type(seq) is not int or type(topic) is not str:
                stamp, seq, topic = self._check_fields(message)
            if seq < 0:
                text = f"message sequence must be an int >= 0, got int {seq}"
                self._fail(text)
                raise SimclockValueError(text)
            trace = self._trace
            if stamp < trace.start:
                text = (
                    f"message sequence={seq} at {stamp} ns on {topic!r}: it is before the "
                    f"recording's start_ns={trace.start}"
                )
                self._fail(text)
                raise SimclockRuntimeError(f"cannot record {text}")
            if stamp < trace.last_stamp or (stamp == trace.last_stamp and seq <= trace.last_seq):
                text = (
                    f"message sequence={seq} at {stamp} ns on {topic!r} arrived after "
                    f"sequence={trace.last_seq} at {trace.last_stamp} ns (not in total order)"
                )
                self._fail(text)
                raise SimclockRuntimeError(f"cannot record {text}")
            encoded = message.encoded  # the publisher's canonical JSON, if it made it
            try:
                if encoded is not None:
                    kind, text = "json", ""
                else:
                    kind, text = payload_kind_and_json(message.payload)
            except (SimclockTypeError, SimclockValueError) as exc:
                self._fail(
                    f"message sequence={seq} on {topic!r} at {stamp} ns was not recorded: {exc}"
                )
                raise
            except Exception as exc:  # C-MCAP-4: a payload's conversion, however it fails
                why = describe_exception(exc)
                self._fail(
                    f"message sequence={seq} on {topic!r} at {stamp} ns was not recorded: its "
                    f"payload could not be converted ({why})"
                )
                raise SimclockTypeError(
                    f"payload of message sequence={seq} on {topic!r} could not be converted to "
                    f"JSON ({why}); publish plain values, numpy values, Event or RawPayload "
                    "with bytes data"
                ) from None
            if topic == CLOCK_TOPIC:
                channel = self._bus_clock_channel(message.payload, kind)
                if channel == self._clock_channel and seq & U32 == RECORDER_TICK:
                    channel = (
                        f"its sequence is {RECORDER_TICK} modulo 2**32, the mark of the "
                        "recorder's own /clock ticks"
                    )
            else:
                channel = self._channels.get((topic, kind)) or self._new_channel(topic, kind)
            if isinstance(channel, str):
                text = f"message sequence={seq} at {stamp} ns on {topic!r}: {channel}"
                self._fail(text)
                raise SimclockRuntimeError(f"cannot record {text}")
            payload = text.encode() if encoded is None else encoded
            if channel == self._clock_channel:
                cdr = clock_cdr_of(message.payload)
                assert cdr is not None  # _bus_clock_channel accepted this payload
                self._append(channel, stamp, seq, topic, cdr, self._bus_clock_infix, payload)
            else:
                data = ENVELOPE % (payload, seq)  # encode_envelope, inlined: once per message
                self._append(channel, stamp, seq, topic, data, self._line_infix[channel], payload)

    def _append(
        self, channel: int, stamp: int, seq: int, topic: str, data: bytes, infix: bytes, line: bytes
    ) -> None:
        """Write one checked bus message and hash its line (C-X-FP); the caller holds the lock.

        ``data`` is the record's bytes, ``line`` the payload's canonical JSON.
        """
        try:
            self._trace.append(channel, stamp, seq, topic, data, infix, line)
        except OSError as exc:
            raise self._write_failed(exc) from None

    def _line_sink(self, topic: str) -> TopicSink:
        """The trace sink of `record` for ``topic`` (see ``Bus.sender``).

        The message path's work for a pre-encoded message on a topic that is
        not ``/clock``: the same checks, record and line (`TopicSink`, compiled
        with the core). Anything unusual (a closed recorder, a stamp out of
        order, the topic's first message) goes to `record` with the message
        built then, which reports it as it always does; ``record`` reads a
        payload only on ``/clock``, which never reaches a sink.
        """

        def fallback(stamp: int, seq: int, encoded: bytes) -> None:
            self.record(checked_message(topic, stamp, seq, None, encoded))

        return TopicSink(self._trace, topic, fallback)

    def _check_fields(self, message: Message) -> tuple[int, int, str]:
        """Normalise a message's fields; a malformed one is refused and kept as the error."""
        try:
            if not isinstance(message.topic, str):
                raise SimclockTypeError(
                    f"message topic must be a str, got {type(message.topic).__name__} "
                    f"{message.topic!r}"
                )
            stamp = check_time_ns(message.stamp_ns, "message stamp_ns")
            seq = message.sequence
            if isinstance(seq, bool) or not isinstance(seq, int | np.integer):
                raise SimclockTypeError(
                    f"message sequence must be an int >= 0, got {type(seq).__name__} {seq!r}"
                )
        except (SimclockTypeError, SimclockValueError) as exc:
            self._fail(str(exc))
            raise
        return stamp, int(seq), message.topic

    def _on_draw(self, label: str, method: str, args: tuple[Any, ...], value: Any) -> None:
        lock = self._lock
        lock.acquire()  # not `with`: half the cost, once per draw
        try:
            if self._closed:
                return
            clock = self._bus.clock
            trace = self._trace
            at = trace.last_log_time
            if clock is not None:
                at = max(at, clock.now_ns())
            if at > trace.clock_last:
                try:
                    trace.clock_to(at)
                except OSError as exc:
                    raise self._write_failed(exc) from None
            index = trace.draw_index.get(label, 0)
            channel = self._draw_channels.get(label)
            if channel is None:
                topic = draws_topic(label)
                found = self._channels.get((topic, "draws")) or self._new_channel(
                    topic, "draws", label
                )
                if isinstance(found, str):
                    # An observer must not break the run's draw: the file says what is missing.
                    self._fail(f"draw {index} of label {label!r} was not recorded: {found}")
                    return
                channel = self._draw_channels[label] = found
            data = self._draws.encode(label, method, args, index, value)
            try:
                trace.write_draw(channel, at, data, index)
            except OSError as exc:
                self._write_failed(exc)
                return  # kept as the recording's error; the run's draw is not broken
            trace.draw_index[label] = index + 1
            template = self._draws.template(method, args)
            if template is not None:  # the next draws like this one take TraceRecords.draw
                trace.draw_states[label] = DrawState(method, args, *template, channel)
        finally:
            lock.release()


register_trace_sink(Recorder.record, Recorder._line_sink)
