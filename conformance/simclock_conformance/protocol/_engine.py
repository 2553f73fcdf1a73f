"""The wire protocol executed in process: one request in, one reply out (SPEC §18).

:class:`Engine` is a driver without the pipe: it holds clocks by id, turns
each request of C-WIRE-3 into calls on a Python clock, runs the callbacks of
C-WIRE-4 (action lists) and answers with the reply the protocol prescribes.
Three things use it:

- ``python -m simclock_conformance serve MODULE:FACTORY`` wraps it in a
  stdin/stdout loop (C-WIRE-8), so any Python backend is a driver;
- the oracle: an :class:`Engine` over :class:`simclock_oracles.ReferenceClock`
  gives the expected transcript of every program (its random streams come from
  :func:`reference_raw`, the C-X-BITS derivation written out here);
- the golden vectors are those transcripts, kept only where the oracle and
  ``HeapSimClock`` agree (C-WIRE-7).

Numbers (C-WIRE-2): a time must be a string of decimal digits. A time sent
as a JSON number, or a string that is not ``[0-9]+``, is handed to the clock
as what it is (a ``float``, a ``str``), so the clock's own time-int check
(C-TIME-3) answers ``TypeError``: a Python backend that accepts floats fails
C-TIME-3 through the wire too. Times inside ``on_fire`` cannot wait for the
firing: the engine refuses the whole request itself.

Bounded (C-WIRE-5): one advance records at most :data:`MAX_FIRED` firings.
More could not be sent anyway (each record takes at least 27 bytes of a
reply line, whose limit is :data:`~simclock_conformance.protocol._driver.MAX_REPLY_BYTES`),
so a backend that never ends an advance (a periodic stuck at one time fires
forever) gets the reply ``internal`` with the count, instead of growing the
engine's memory until its deadline, or forever without one.

Order of a reply: ``ok`` first, then the op's fields, then the observation
(``now_ns``, ``next_event_ns`` with feature ``peek``, ``stored``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from simclock import EVENTS_TOPIC, Bus, EventKind, Message
from simclock.lowlevel import Handle
from simclock_conformance.kit._args import exception_text
from simclock_conformance.protocol._driver import MAX_REPLY_BYTES

__all__ = [
    "FEATURES",
    "MAX_FIRED",
    "MAX_NS",
    "PROTOCOL",
    "Engine",
    "OracleBackend",
    "PythonBackend",
    "reference_raw",
    "reference_spawn_key",
]

PROTOCOL = "1"
FEATURES = ("peek", "rate", "stats", "start_ns", "bits")
MAX_NS = 2**64 - 1
_DIGITS = re.compile(r"[0-9]+")
_SEGMENT = re.compile(r"[A-Za-z0-9_.-]+")
_DOMAIN = b"simclock.random_source.v1\x00"
_NO_STATS = Handle(cancel=lambda: None).stats
MAX_FIRED = MAX_REPLY_BYTES // len('{"entry":"a","now_ns":"0"},')
"""The most firings one advance records; a reply holding more exceeds the reply-line limit."""

Json = dict[str, Any]


class _Halt(BaseException):
    """What a ``halt`` action raises: not an ``Exception``, so it escapes ``advance`` (C-ERR-2)."""


class _TooManyFirings(BaseException):
    """Raised by a callback past :data:`MAX_FIRED` firings in one advance: it stops the advance."""


class WireCallbackError(Exception):
    """What a ``raise`` action raises (C-ERR-1): an ordinary error the clock isolates."""


class _RefusalError(Exception):
    """The engine's own refusal of a request: ``bad_request``, ``unsupported``, ``TypeError``."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def _digits(value: object, name: str) -> int:
    """A protocol integer (C-WIRE-2): a ``str`` of decimal digits; else the engine's TypeError."""
    if type(value) is str and _DIGITS.fullmatch(value):
        return int(value)
    raise _RefusalError("TypeError", f"{name} must be a string of decimal digits, got {value!r}")


def _time_arg(value: object) -> object:
    """A time for the clock: an int for digits, else the value as it came (C-WIRE-2, C-TIME-3).

    A JSON number becomes a ``float`` (the clock must refuse it); any other
    value goes as is (a ``str`` such as ``"1.5"`` or ``"-3"``, ``None``).
    """
    if type(value) is str and _DIGITS.fullmatch(value):
        return int(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:
            return 1.0
    return value


def _check_actions(actions: object, where: str) -> list[Json]:
    """Validate an ``on_fire`` list with its request (C-WIRE-4): bad times refuse it all."""
    if not isinstance(actions, list):
        raise _RefusalError("bad_request", f"{where} must be a list of actions, got {actions!r}")
    for action in actions:
        if not isinstance(action, dict):
            raise _RefusalError("bad_request", f"{where} must hold action objects, got {action!r}")
        do = action.get("do")
        if do == "schedule":
            _digits(action.get("delay_ns"), "delay_ns")
            _check_actions(action.get("on_fire", []), "on_fire")
        elif do == "advance":
            _digits(action.get("dt_ns"), "dt_ns")
        elif do == "cancel":
            if not isinstance(action.get("entry"), str):
                raise _RefusalError(
                    "bad_request", f"cancel action needs an entry id, got {action!r}"
                )
        elif do not in ("raise", "halt"):
            raise _RefusalError("bad_request", f"unknown action {do!r}")
    return actions


def normalise_path(labels: object) -> str:
    """The stream path of ``labels`` (C-RNG-3): ``["a","b"]`` and ``["/a/b"]`` are ``/a/b``."""
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise _RefusalError("TypeError", f"labels must be a list of strings, got {labels!r}")
    segments: list[str] = []
    for label in labels:
        body = label[1:] if label.startswith("/") else label
        for segment in body.split("/"):
            if not _SEGMENT.fullmatch(segment):
                raise _RefusalError("ValueError", f"label {label!r} is malformed")
            segments.append(segment)
    return "/" + "/".join(segments)


def reference_spawn_key(path: str) -> tuple[int, int, int, int]:
    """C-X-BITS: the four big-endian 32-bit words of ``blake2b(DOMAIN + path, 16)``."""
    digest = hashlib.blake2b(_DOMAIN + path.encode("ascii"), digest_size=16).digest()
    a, b, c, d = (int.from_bytes(digest[i : i + 4], "big") for i in range(0, 16, 4))
    return (a, b, c, d)


def reference_generator(seed: int, path: str) -> np.random.PCG64:
    """C-X-BITS: ``PCG64(SeedSequence(seed, spawn_key=reference_spawn_key(path)))``."""
    return np.random.PCG64(np.random.SeedSequence(seed, spawn_key=reference_spawn_key(path)))


def reference_raw(seed: int, path: str, n: int) -> list[int]:
    """The first ``n`` raw 64-bit outputs of the stream ``path`` of root ``seed`` (C-X-BITS)."""
    return [int(v) for v in reference_generator(seed, path).random_raw(n)]


@dataclass
class _Clock:
    """One clock of the engine: the clock, its entries, children counters, streams."""

    clock: Any
    failures: Callable[[], list[tuple[str, int, str]]]
    seed: int
    handles: dict[str, Handle] = field(default_factory=dict)
    known: set[str] = field(default_factory=set)
    children: dict[str, int] = field(default_factory=dict)
    streams: dict[str, Callable[[int], list[int]]] = field(default_factory=dict)
    fired: list[Json] = field(default_factory=list)
    halted: tuple[str, int] | None = None
    live: set[str] = field(default_factory=set)
    """Entries scheduled and neither cancelled nor fired once: ``stored`` without a size method."""


class PythonBackend:
    """Clocks made by a Python factory ``FACTORY(seed, bus)`` (``serve``, C-WIRE-8)."""

    def __init__(self, factory: Callable[..., Any], name: str) -> None:
        self.factory = factory
        self.name = name
        self._features: tuple[str, ...] | None = None

    def make(self, seed: int, start: int | None) -> tuple[Any, Callable[[], list[Any]]]:
        """A new clock and a function listing its failure events ``(callback, at_ns, msg)``."""
        bus = Bus()
        clock = (
            self.factory(seed, bus) if start is None else self.factory(seed, bus, start_ns=start)
        )
        if bus.clock is None:
            bus.bind(clock)
        events: list[tuple[str, int, str]] = []

        def on_event(message: Message) -> None:
            event = message.payload
            if getattr(event, "kind", None) == EventKind.SCHEDULER_CALLBACK_FAILED:
                details = event.details
                events.append(
                    (str(details.get("callback")), event.at_ns, str(details.get("error_message")))
                )

        bus.subscribe(EVENTS_TOPIC, on_event)
        return clock, lambda: events

    def features(self) -> tuple[str, ...]:
        """What the backend offers, found on a probe clock (C-WIRE-3 ``hello``)."""
        if self._features is None:
            import inspect

            clock, _ = self.make(0, None)
            found = []
            if callable(getattr(clock, "next_event_ns", None)):
                found.append("peek")
            if callable(getattr(clock, "schedule_rate", None)):
                found.append("rate")
            handle = clock.schedule_periodic(10**12, lambda: None)
            if getattr(handle, "stats", _NO_STATS) is not _NO_STATS:
                found.append("stats")
            handle.cancel()
            try:
                params = inspect.signature(self.factory).parameters
            except (TypeError, ValueError):
                params = {}  # type: ignore[assignment]
            if "start_ns" in params:
                found.append("start_ns")
            # C-X-BITS is claimed only when it holds: a probe stream's first outputs are
            # the reference derivation's (a PCG64 seeded otherwise is not enough).
            probe = clock.random_source().child("simclock-probe").numpy_rng().bit_generator
            random_raw = getattr(probe, "random_raw", None)
            if callable(random_raw) and [int(v) for v in random_raw(2)] == reference_raw(
                0, "/simclock-probe", 2
            ):
                found.append("bits")
            self._features = tuple(found)
        return self._features

    @staticmethod
    def stream(clock: Any, labels: list[str], path: str) -> Callable[[int], list[int]]:
        """The backend's stream ``child(L1).child(L2)...``; draws are its raw outputs."""
        source = clock.random_source()
        for label in labels:
            source = source.child(label)
        gen = source.numpy_rng().bit_generator

        def draw(n: int) -> list[int]:
            return [int(v) for v in gen.random_raw(n)] if n else []

        return draw


class OracleBackend:
    """The oracle: :class:`simclock_oracles.ReferenceClock` and the reference streams."""

    name = "simclock_oracles.ReferenceClock"

    def make(self, seed: int, start: int | None) -> tuple[Any, Callable[[], list[Any]]]:
        """A new reference clock; its failures are its ``failures`` records."""
        from simclock_oracles import ReferenceClock

        clock = ReferenceClock(start or 0)
        return clock, lambda: [(f.callback, f.at_ns, f.error_message) for f in clock.failures]

    def features(self) -> tuple[str, ...]:
        """Everything: the oracle keeps every clause."""
        return FEATURES

    @staticmethod
    def stream(seed: int, path: str) -> Callable[[int], list[int]]:
        """The reference derivation of C-X-BITS."""
        gen = reference_generator(seed, path)
        return lambda n: [int(v) for v in gen.random_raw(n)] if n else []


def _error_name(exc: BaseException) -> str:
    for kind in (TypeError, ValueError, RuntimeError):
        if isinstance(exc, kind):
            return kind.__name__
    return "internal"


class Engine:
    """Executes protocol requests on the clocks of one backend (C-WIRE-3, C-WIRE-4)."""

    def __init__(self, backend: PythonBackend | OracleBackend) -> None:
        self.backend = backend
        self.clocks: dict[str, _Clock] = {}
        self.features = backend.features()
        self.internal: BaseException | None = None
        """The first exception of the backend answered ``internal``: a failure's root (§14)."""

    # -- replies -----------------------------------------------------------

    def _observe(self, st: _Clock, reply: Json) -> Json:
        clock = st.clock
        reply["now_ns"] = str(clock.now_ns())
        if "peek" in self.features:
            peek = clock.next_event_ns()
            reply["next_event_ns"] = None if peek is None else str(peek)
        size = getattr(clock, "heap_size", None) or getattr(clock, "pending_count", None)
        # Without a size method the backend's own count is unknown: the live entries are
        # what it must hold at least (C-CAN-4 is then measured in process, by memory).
        reply["stored"] = str(size() if callable(size) else len(st.live))
        return reply

    def handle(self, request: object) -> Json:
        """The reply to one request; never raises for anything a request may hold."""
        if not isinstance(request, dict):
            return {"ok": False, "error": "bad_request", "message": "a request is a JSON object"}
        op = request.get("op")
        st: _Clock | None = None
        try:
            if op == "hello":
                if request.get("protocol") != PROTOCOL:
                    raise _RefusalError("unsupported", f"protocol {request.get('protocol')!r}")
                return {
                    "ok": True,
                    "protocol": PROTOCOL,
                    "backend": self.backend.name,
                    "features": list(self.features),
                }
            if op == "quit":
                return {"ok": True}
            name = request.get("clock")
            if not isinstance(name, str):
                raise _RefusalError("bad_request", f"{op!r} needs a clock id (a string)")
            if op == "create":
                return self._create(name, request)
            st = self.clocks.get(name)
            if st is None:
                raise _RefusalError("bad_request", f"no clock {name!r}")
            method = getattr(self, f"_op_{op}", None) if isinstance(op, str) else None
            if method is None:
                raise _RefusalError("bad_request", f"unknown op {op!r}")
            reply: Json = method(st, name, request)
            return self._observe(st, reply)
        except _RefusalError as refusal:
            reply = {"ok": False, "error": refusal.error, "message": refusal.message}
        except Exception as exc:  # the clock refused the call (C-WIRE-5)
            reply = {"ok": False, "error": _error_name(exc), "message": exception_text(exc)}
            if reply["error"] == "internal" and self.internal is None:
                self.internal = exc
        if st is not None:
            try:
                self._observe(st, reply)
            except Exception as exc:
                reply = {"ok": False, "error": "internal", "message": exception_text(exc)}
                self.internal = self.internal or exc
        return reply

    # -- ops -----------------------------------------------------------------

    def _create(self, name: str, request: Json) -> Json:
        if name in self.clocks:
            raise _RefusalError("bad_request", f"clock id {name!r} is in use")
        seed = _digits(request.get("seed"), "seed")
        start: int | None = None
        if "start_ns" in request:
            if "start_ns" not in self.features:
                raise _RefusalError("unsupported", "feature start_ns is not offered")
            start = _digits(request["start_ns"], "start_ns")
        clock, failures = self.backend.make(seed, start)
        st = _Clock(clock, failures, seed)
        self.clocks[name] = st
        return self._observe(st, {"ok": True})

    def _op_drop(self, st: _Clock, name: str, request: Json) -> Json:
        del self.clocks[name]
        return {"ok": True}

    def _new_entry(self, st: _Clock, request: Json) -> tuple[str, list[Json]]:
        entry = request.get("entry")
        if not isinstance(entry, str) or not entry or "." in entry:
            raise _RefusalError(
                "bad_request", f"entry id must be a string without '.', got {entry!r}"
            )
        if entry in st.known:
            raise _RefusalError("bad_request", f"entry id {entry!r} was used before on this clock")
        return entry, _check_actions(request.get("on_fire", []), "on_fire")

    def _register(
        self,
        st: _Clock,
        entry: str,
        call: Callable[[Any], Handle],
        on_fire: list[Json],
        once: bool = False,
    ) -> Json:
        handle = call(self._callback(st, entry, on_fire, once))
        st.known.add(entry)
        st.live.add(entry)
        st.handles[entry] = handle
        return {"ok": True}

    def _op_schedule(self, st: _Clock, name: str, request: Json) -> Json:
        entry, on_fire = self._new_entry(st, request)
        at = _time_arg(request.get("at_ns"))
        return self._register(st, entry, lambda cb: st.clock.schedule(at, cb), on_fire, once=True)

    def _op_schedule_periodic(self, st: _Clock, name: str, request: Json) -> Json:
        entry, on_fire = self._new_entry(st, request)
        period = _time_arg(request.get("period_ns"))
        phase = _time_arg(request.get("phase_ns", "0"))
        return self._register(
            st, entry, lambda cb: st.clock.schedule_periodic(period, cb, phase), on_fire
        )

    def _op_schedule_rate(self, st: _Clock, name: str, request: Json) -> Json:
        if "rate" not in self.features:
            raise _RefusalError("unsupported", "feature rate is not offered")
        entry, on_fire = self._new_entry(st, request)
        parts = request.get("rate_hz")
        if not isinstance(parts, list) or len(parts) != 2:
            raise _RefusalError("TypeError", f"rate_hz must be [NUM, DEN], got {parts!r}")
        num, den = (_digits(p, "rate_hz") for p in parts)
        if den == 0:
            raise _RefusalError("ValueError", "rate_hz denominator must be > 0")
        rate = Fraction(num, den)
        hz: int | Fraction = rate.numerator if rate.denominator == 1 else rate
        phase = _time_arg(request.get("phase_ns", "0"))
        return self._register(st, entry, lambda cb: st.clock.schedule_rate(hz, cb, phase), on_fire)

    def _op_cancel(self, st: _Clock, name: str, request: Json) -> Json:
        entry = request.get("entry")
        if not isinstance(entry, str) or entry not in st.known:
            raise _RefusalError("bad_request", f"no entry {entry!r}")
        st.handles[entry].cancel()
        st.live.discard(entry)
        return {"ok": True}

    def _op_advance(self, st: _Clock, name: str, request: Json) -> Json:
        dt = _time_arg(request.get("dt_ns"))
        st.fired = []
        st.halted = None
        before = len(st.failures())

        def failures() -> list[Json]:
            return [
                {"entry": cb, "at_ns": str(at), "message": msg}
                for cb, at, msg in st.failures()[before:]
            ]

        try:
            st.clock.advance(dt)
        except _TooManyFirings:
            count = len(st.fired)
            st.fired = []
            return {
                "ok": False,
                "error": "internal",
                "message": (
                    f"the advance fired more than {count} callbacks, more than one reply can "
                    "carry; it was stopped (a periodic stuck at one time fires forever)"
                ),
            }
        except _Halt:
            entry, at = st.halted or ("", 0)
            return {
                "ok": False,
                "error": "halted",
                "entry": entry,
                "at_ns": str(at),
                "fired": st.fired,
                "failures": failures(),
            }
        except Exception as exc:
            if not st.fired and not failures():
                raise  # a refused call: the plain error reply
            if _error_name(exc) == "internal" and self.internal is None:
                self.internal = exc
            return {
                "ok": False,
                "error": _error_name(exc),
                "message": exception_text(exc),
                "fired": st.fired,
                "failures": failures(),
            }
        return {"ok": True, "fired": st.fired, "failures": failures()}

    def _op_observe(self, st: _Clock, name: str, request: Json) -> Json:
        return {"ok": True}

    def _op_step_ns(self, st: _Clock, name: str, request: Json) -> Json:
        step = st.clock.step_ns()
        return {"ok": True, "step_ns": str(step) if type(step) is int else repr(step)}

    def _op_stats(self, st: _Clock, name: str, request: Json) -> Json:
        if "stats" not in self.features:
            raise _RefusalError("unsupported", "feature stats is not offered")
        entry = request.get("entry")
        if not isinstance(entry, str) or entry not in st.known:
            raise _RefusalError("bad_request", f"no entry {entry!r}")
        stats = st.handles[entry].stats()
        return {
            "ok": True,
            "fired": str(stats.fired),
            "skipped": str(stats.skipped),
            "overruns": str(stats.overrun),
        }

    def _op_draw(self, st: _Clock, name: str, request: Json) -> Json:
        labels = request.get("labels", [])
        n = _digits(request.get("n"), "n")
        try:
            path = normalise_path(labels)
        except _RefusalError as refusal:
            if isinstance(self.backend, OracleBackend) or refusal.error != "ValueError":
                raise
            # A malformed label is the backend's to refuse (C-RNG-3): it is asked, and a
            # stream it makes anyway is drawn from, never cached under a path.
            draw = self.backend.stream(st.clock, labels, "")
            return {"ok": True, "values": [str(v) for v in draw(n)]}
        stream = st.streams.get(path)
        if stream is None:
            if isinstance(self.backend, OracleBackend):
                stream = self.backend.stream(st.seed, path)
            else:
                stream = self.backend.stream(st.clock, labels, path)
            st.streams[path] = stream
        return {"ok": True, "values": [str(v) for v in stream(n)]}

    # -- callbacks -------------------------------------------------------------

    def _callback(
        self, st: _Clock, entry: str, actions: list[Json], once: bool = False
    ) -> Callable[[], None]:
        def fire() -> None:
            if len(st.fired) >= MAX_FIRED:
                raise _TooManyFirings(entry)
            clock = st.clock
            now = clock.now_ns()
            record: Json = {"entry": entry, "now_ns": str(now)}
            st.fired.append(record)
            if once:
                st.live.discard(entry)
            for action in actions:
                do = action["do"]
                if do == "schedule":
                    n = st.children.get(entry, 0)
                    child = f"{entry}.{n}"
                    at = now + int(action["delay_ns"])
                    try:
                        handle = clock.schedule(
                            at, self._callback(st, child, action.get("on_fire", []), once=True)
                        )
                    except ValueError:
                        record["refused"] = "ValueError"  # takes no number (C-WIRE-4)
                        continue
                    st.children[entry] = n + 1
                    st.known.add(child)
                    st.live.add(child)
                    st.handles[child] = handle
                elif do == "cancel":
                    target = st.handles.get(action["entry"])
                    if target is not None:
                        target.cancel()
                        st.live.discard(action["entry"])
                elif do == "advance":
                    try:
                        clock.advance(int(action["dt_ns"]))
                    except RuntimeError:
                        record["nested"] = "RuntimeError"
                    except Exception as exc:
                        record["nested"] = type(exc).__name__
                        raise
                    else:
                        record["nested"] = "accepted"
                elif do == "raise":
                    raise WireCallbackError(str(action.get("message", "")))
                elif do == "halt":
                    st.halted = (entry, now)
                    raise _Halt(entry)

        fire.__qualname__ = entry
        fire.__name__ = entry
        return fire
