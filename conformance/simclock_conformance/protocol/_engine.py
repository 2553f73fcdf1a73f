"""The wire protocol executed in process: one request in, one reply out (SPEC §18).

:class:`Engine` is a driver without the pipe: it holds clocks by id, turns
each request of C-WIRE-3 into calls on a Python clock, runs the callbacks of
C-WIRE-4 (action lists) and answers with the reply the protocol prescribes.
Three things use it:

- ``python -m simclock_conformance serve MODULE:FACTORY`` wraps it in a
  stdin/stdout loop (C-WIRE-8), so any Python backend is a driver;
- the oracle: an :class:`Engine` over :class:`simclock_oracles.ReferenceClock`
  gives the expected transcript of every program (its random streams come from
  :func:`~simclock_conformance.protocol._backends.reference_raw`, the
  C-X-BITS derivation written out);
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

This engine is the reference every driver kit reports like ("What a kit reports" in
``docs/kits.md``; ``conformance/transcripts/careless.*`` checks them byte for byte): a
child the clock refuses with ``ValueError`` is marked ``refused`` and the callback goes
on, another error fails it; a nested advance is marked ``nested`` (``"accepted"`` or the
wire kind of its error) and only a ``RuntimeError`` lets the callback go on; a ``raise``
action is a ``RuntimeError``; ``failures`` are what the clock reported isolating, so an
error it lets out of a call is not one of them; an error class outside ``TypeError``,
``ValueError`` and ``RuntimeError`` is ``internal``, described ``Name: text``; the
reply to an advance, and to a ``schedule*`` or ``cancel`` when there are any, carries
the firings since the last reply that carried them (a callback the clock ran inside
``schedule`` shows in that reply, out of place, as the suite must see it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from simclock.lowlevel import Handle
from simclock_conformance.kit._args import exception_text
from simclock_conformance.protocol._backends import OracleBackend, PythonBackend
from simclock_conformance.protocol._driver import MAX_REPLY_BYTES
from simclock_conformance.protocol._requests import (
    Json,
    _check_actions,
    _digits,
    _RefusalError,
    _time_arg,
    normalise_path,
)

__all__ = [
    "MAX_FIRED",
    "MAX_NS",
    "PROTOCOL",
    "Engine",
]

PROTOCOL = "1"
MAX_NS = 2**64 - 1
MAX_FIRED = MAX_REPLY_BYTES // len('{"entry":"a","now_ns":"0"},')
"""The most firings one advance records; a reply holding more exceeds the reply-line limit."""


_CARRIERS = frozenset({"schedule", "schedule_periodic", "schedule_rate", "cancel"})
"""The ops whose reply carries the firings since the last reply that carried them, if any."""


class _Halt(BaseException):
    """What a ``halt`` action raises: not an ``Exception``, so it escapes ``advance`` (C-ERR-2)."""


class _TooManyFirings(BaseException):
    """Raised by a callback past :data:`MAX_FIRED` firings in one advance: it stops the advance."""


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
    reported: int = 0
    """How many of the clock's failure events earlier advance replies carried."""
    live: set[str] = field(default_factory=set)
    """Entries scheduled and neither cancelled nor fired once: ``stored`` without a size method."""


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
            # An optional method that raises answers its own field only (C-X-PEEK): the
            # field is compared in C-X-PEEK's programs alone, the reply stays the op's.
            try:
                peek = clock.next_event_ns()
            except Exception as exc:
                reply["next_event_ns"] = f"raised {exception_text(exc)}"
            else:
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
            if op in _CARRIERS:
                self._carry(st, reply)
            return self._observe(st, reply)
        except _RefusalError as refusal:
            reply = {"ok": False, "error": refusal.error, "message": refusal.message}
        except Exception as exc:  # the clock refused the call (C-WIRE-5)
            reply = {"ok": False, "error": _error_name(exc), "message": exception_text(exc)}
            if reply["error"] == "internal" and self.internal is None:
                self.internal = exc
        if st is not None:
            if op in _CARRIERS:
                self._carry(st, reply)
            try:
                self._observe(st, reply)
            except Exception as exc:
                reply = {"ok": False, "error": "internal", "message": exception_text(exc)}
                self.internal = self.internal or exc
        return reply

    @staticmethod
    def _carry(st: _Clock, reply: Json) -> None:
        """Put the firings and failures not yet reported into ``reply`` (a ``schedule*`` or
        ``cancel`` reply), if there are any: a callback the clock ran inside that call (or
        on a thread of its own since the last reply) shows where the suite sees it."""
        listed = st.failures()
        if not st.fired and len(listed) == st.reported:
            return
        reply["fired"], st.fired = st.fired, []
        reply["failures"] = [
            {"entry": cb, "at_ns": str(at), "message": msg} for cb, at, msg in listed[st.reported :]
        ]
        st.reported = len(listed)

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
        st.halted = None
        # The firings and failures since the last reply that carried them: a callback the
        # clock ran on a thread of its own between requests is reported here, never lost.
        fired, st.fired = st.fired, []
        before = st.reported

        def failures() -> list[Json]:
            listed = st.failures()
            st.reported = len(listed)
            return [
                {"entry": cb, "at_ns": str(at), "message": msg} for cb, at, msg in listed[before:]
            ]

        def taken() -> list[Json]:
            fired.extend(st.fired)
            st.fired = []
            return fired

        try:
            st.clock.advance(dt)
        except _TooManyFirings:
            count = len(taken())
            st.reported = len(st.failures())
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
                "fired": taken(),
                "failures": failures(),
            }
        except Exception as exc:
            if not fired and not st.fired and len(st.failures()) == before:
                raise  # a refused call: the plain error reply
            if _error_name(exc) == "internal" and self.internal is None:
                self.internal = exc
            return {
                "ok": False,
                "error": _error_name(exc),
                "message": exception_text(exc),
                "fired": taken(),
                "failures": failures(),
            }
        return {"ok": True, "fired": taken(), "failures": failures()}

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
                        record["nested"] = _error_name(exc)
                        raise
                    else:
                        record["nested"] = "accepted"
                elif do == "raise":
                    raise RuntimeError(str(action.get("message", "")))
                elif do == "halt":
                    st.halted = (entry, now)
                    raise _Halt(entry)

        fire.__qualname__ = entry
        fire.__name__ = entry
        return fire
