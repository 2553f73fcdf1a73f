"""``MavlinkTimeSource``: a MAVLink peer's clock (an autopilot's) as a time source (C-SYS-5).

This module reads the host clock on purpose: it is the hardware side of the
contract. The estimate itself is `TimesyncFilter` (pure, tested apart); this
module is the link: it sends ``TIMESYNC`` requests, matches the replies to
them, feeds the filter, answers the peer's own requests and publishes what
happened on the bus (``/simclock/timesync``).

MAVLink ``TIMESYNC`` (common set): ``tc1`` and ``ts1`` are int64 ns. A
request has ``tc1 == 0`` and ``ts1`` = the requester's time; the reply has
``tc1`` = the responder's time and ``ts1`` echoed, and (MAVLink 2 extension
fields) ``target_system``/``target_component`` = the requester's ids. Some
pymavlink releases (2.4.50 among them) generate ``TIMESYNC`` without those
two extension fields: the targets are then read from the message's raw
payload (bytes 16 and 17, 0 when truncated, as MAVLink 2 rules) and written
by packing the 18-byte payload ourselves, so both forms interoperate.
"""

from __future__ import annotations

import contextlib
import select
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from simclock.core._bus import Bus
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._extras import require_extra
from simclock.core._names import exact_str, safe_repr
from simclock.realtime._monotonic import MonotonicClock
from simclock.realtime._timesync_filter import TimesyncFilter, TimesyncState, TimesyncVerdict

__all__ = ["TIMESYNC_TOPIC", "MavlinkTimeSource"]

TIMESYNC_TOPIC = "/simclock/timesync"
"""Where a [`MavlinkTimeSource`][simclock.MavlinkTimeSource] publishes its estimate (C-SYS-5)."""

_ANSWERS = ("timeline", "host", "none")
_monotonic_ns = time.monotonic_ns
# A request's reply is matched for this long; later it is unmatched.
_PENDING_NS = 1_000_000_000
_PUBLISH_ATTEMPTS = 3
_MAV_TYPE_ONBOARD_CONTROLLER = 18
_MAV_AUTOPILOT_INVALID = 8


def _check_ns(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SimclockTypeError(
            f"{name} must be an int of ns > 0, got {type(value).__name__} {safe_repr(value)}"
        )
    if not 0 < value < 2**62:
        raise SimclockValueError(
            f"{name} must be an int of ns in [1, 2**62), got {safe_repr(value)}"
        )
    return int(value)


def _check_id(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SimclockTypeError(
            f"{name} must be an int in [{low}, 255] (a MAVLink id), got "
            f"{type(value).__name__} {safe_repr(value)}"
        )
    if not low <= value <= 255:
        raise SimclockValueError(
            f"{name} must be an int in [{low}, 255] (a MAVLink id), got {safe_repr(value)}"
        )
    return int(value)


def _targets(msg: Any) -> tuple[int, int]:
    """A TIMESYNC's (target_system, target_component), with or without generated fields."""
    tsys = getattr(msg, "target_system", None)
    tcomp = getattr(msg, "target_component", None)
    if isinstance(tsys, int) and isinstance(tcomp, int):
        return tsys, tcomp
    buf = bytes(msg.get_msgbuf())
    if not buf or buf[0] != 0xFD:  # MAVLink 1: no extension fields
        return 0, 0
    payload = buf[10 : 10 + buf[1]]
    return (
        payload[16] if len(payload) > 16 else 0,
        payload[17] if len(payload) > 17 else 0,
    )


class MavlinkTimeSource:
    """A MAVLink peer's clock estimated over ``TIMESYNC``, as a time source (C-SYS-5).

    ``MavlinkTimeSource(connection, *, baud=115200, source_system=1,
    source_component=191, target_system=0, target_component=0,
    interval_ns=50 ms, initial_interval_ns=20 ms, wait_ns=5 s,
    silence_ns=1 s, answer="timeline", heartbeat_ns=None, bus=None,
    filter=None)``. ``connection`` is a pymavlink connection string
    (``udpin:0.0.0.0:14540``, ``udpout:127.0.0.1:14580``, ``tcp:…``,
    ``/dev/ttyACM0`` with ``baud``); needs the ``mavlink`` extra.

    A thread sends a request every ``interval_ns`` (every
    ``initial_interval_ns`` until the estimate has converged, and again after a
    reset), matches replies by their echoed ``ts1`` and feeds them to the
    filter (a [`TimesyncFilter`][simclock.TimesyncFilter], defaults unless
    ``filter`` is given). The constructor returns once the estimate has
    converged, or after ``wait_ns`` with at least one sample; with none it
    closes the link and raises ``RuntimeError``.

    ``now_ns()`` (also ``source()``: the object is callable, so it plugs into
    ``MonotonicClock(seed, source=...)``; `clock` does that) is the peer's
    time as a never-decreasing timeline (C-SYS-1): corrections are slewed; a
    peer that restarts is published as a reset and the timeline carries on.
    ``peer_now_ns()`` is the estimate of the peer's own clock, which follows a
    restart. ``state()`` is a [`TimesyncState`][simclock.TimesyncState].

    The peer's requests are answered (targets set to the requester) with
    ``now_ns()`` (``answer="timeline"``, once the constructor has returned), with the
    host's monotonic clock (``"host"``, from the start: for a peer that, like
    MAVSDK, answers only once it has synchronised to us), or not at all
    (``"none"``). ``heartbeat_ns`` sends a ``HEARTBEAT`` (onboard controller)
    at that period, for peers that talk only to components they have seen.

    Bus (``bus``, an unbound [`Bus`][simclock.Bus] by default; stamped with
    ``now_ns()``), topic ``/simclock/timesync``, payloads
    ``{"event": "sample", "verdict": …, "state": {…}}`` per reply,
    ``{"event": "reset", "reason": "restart"|"jump", "jump_ns": …, "state"}``,
    ``{"event": "silent", …}`` after ``silence_ns`` without a sample and
    ``{"event": "resumed", …}`` at the next one. Subscribers run on the link's
    thread.

    Bad input never raises out of ``now_ns()``: a reply whose ``ts1`` matches
    no request of the last second is ``unmatched`` (a duplicate, or a reply to
    someone else); a reply from another system than the first that answered,
    or targeted at another system, is ``foreign``; bytes that are not MAVLink
    count in ``bad_data``; out-of-order replies are samples like any other
    (each carries its own round trip); a silent peer leaves the estimate
    extrapolating on its last line. See ``docs/real-vehicle.md``.
    """

    def __init__(
        self,
        connection: str,
        *,
        baud: int = 115200,
        source_system: int = 1,
        source_component: int = 191,
        target_system: int = 0,
        target_component: int = 0,
        interval_ns: int = 50_000_000,
        initial_interval_ns: int = 20_000_000,
        wait_ns: int = 5_000_000_000,
        silence_ns: int = 1_000_000_000,
        answer: str = "timeline",
        heartbeat_ns: int | None = None,
        bus: Bus | None = None,
        filter: TimesyncFilter | None = None,
    ) -> None:
        if not isinstance(connection, str) or not connection:
            raise SimclockTypeError(
                f"connection must be a pymavlink connection string such as "
                f"'udpin:0.0.0.0:14540', got {safe_repr(connection)}"
            )
        connection = exact_str(connection)
        if isinstance(baud, bool) or not isinstance(baud, int):
            raise SimclockTypeError(
                f"baud must be an int > 0, got {type(baud).__name__} {safe_repr(baud)}"
            )
        if not 0 < baud < 2**31:
            raise SimclockValueError(f"baud must be an int in [1, 2**31), got {safe_repr(baud)}")
        self._sysid = _check_id(source_system, "source_system", 1)
        self._compid = _check_id(source_component, "source_component", 1)
        self._target = (
            _check_id(target_system, "target_system", 0),
            _check_id(target_component, "target_component", 0),
        )
        self._interval = _check_ns(interval_ns, "interval_ns")
        self._initial_interval = _check_ns(initial_interval_ns, "initial_interval_ns")
        wait = _check_ns(wait_ns, "wait_ns")
        self._silence = _check_ns(silence_ns, "silence_ns")
        self._heartbeat = None if heartbeat_ns is None else _check_ns(heartbeat_ns, "heartbeat_ns")
        if not isinstance(answer, str) or exact_str(answer) not in _ANSWERS:
            raise SimclockValueError(
                f"answer must be one of {list(_ANSWERS)}, got {safe_repr(answer)}"
            )
        self._answer = exact_str(answer)
        if bus is not None and not isinstance(bus, Bus):
            raise SimclockTypeError(f"bus must be a simclock.Bus or None, got {safe_repr(bus)}")
        if filter is not None and not isinstance(filter, TimesyncFilter):
            raise SimclockTypeError(
                f"filter must be a simclock.TimesyncFilter or None, got {safe_repr(filter)}"
            )
        require_extra("mavlink", "MavlinkTimeSource")
        from pymavlink import mavutil

        self.connection = connection
        self.bus = bus if bus is not None else Bus()
        self._filter = filter if filter is not None else TimesyncFilter()
        self._host: Callable[[], int] = _monotonic_ns
        self._flock = threading.Lock()  # guards the filter and the counters
        self._glock = threading.Lock()  # guards _last (the never-decreasing guard)
        self._last = 0
        self._pending: dict[int, int] = {}
        self._peer: tuple[int, int] | None = None
        self._requests = 0
        self._unmatched = 0
        self._foreign = 0
        self._bad_data = 0
        self._answered = 0
        self._link_errors = 0
        self._unreported = 0
        self._silent = False
        # Until the constructor returns, nobody reads the timeline: events wait here,
        # requests are answered only with answer="host", and the timeline is then
        # anchored on the converged estimate (no slewing off the first samples).
        self._anchored = False
        self._early: list[dict[str, Any]] = []
        self._last_ts1 = 0
        self._stop = threading.Event()
        try:
            self._conn: Any = mavutil.mavlink_connection(
                connection,
                baud=baud,
                source_system=self._sysid,
                source_component=self._compid,
                autoreconnect=True,
            )
        except Exception as exc:
            raise SimclockRuntimeError(
                f"cannot open MAVLink connection {safe_repr(connection)}: "
                f"{type(exc).__name__}: {exc}; check the connection string "
                "(udpin:HOST:PORT, udpout:HOST:PORT, tcp:HOST:PORT or a serial device)"
            ) from None
        if self._conn.WIRE_PROTOCOL_VERSION != "2.0":
            # Speak MAVLink 2 from the first message (pymavlink switches only once it
            # has received one); the parser still reads MAVLink 1.
            from pymavlink.dialects.v20 import ardupilotmega

            self._conn.mav = ardupilotmega.MAVLink(
                self._conn, srcSystem=self._sysid, srcComponent=self._compid
            )
            self._conn.WIRE_PROTOCOL_VERSION = "2.0"
        self._conn.mav.robust_parsing = True
        # Whether this pymavlink's TIMESYNC has the target extension fields.
        fields = type(self._conn.mav.timesync_encode(0, 0)).fieldnames
        self._generated_targets = "target_system" in fields
        self._thread = threading.Thread(
            target=self._run, name=f"simclock-mavlink:{connection}", daemon=True
        )
        self._thread.start()
        deadline = self._host() + wait
        while True:
            with self._flock:
                converged = self._filter.converged
                have = self._filter.model is not None
            if converged or self._host() >= deadline or not self._thread.is_alive():
                break
            time.sleep(0.005)
        if not have:
            requests = self._requests
            self.close()
            raise SimclockRuntimeError(
                f"no TIMESYNC reply on {safe_repr(connection)} within {wait / 1e9:g} s "
                f"({requests} requests sent, {self._unmatched} unmatched and "
                f"{self._foreign} foreign replies, {self._bad_data} bad bytes); check that "
                "the connection reaches the autopilot and that it answers TIMESYNC"
            )
        with self._flock:
            self._filter._anchor()
            self._anchored = True
            early, self._early = self._early, []
        for event in early:
            self._publish(event)

    # -- readings ---------------------------------------------------------------

    def now_ns(self) -> int:
        """The peer's time as a never-decreasing timeline, int ns (C-SYS-1, C-SYS-5)."""
        m = self._filter.model
        assert m is not None  # the constructor returns only with an estimate
        # _Model.timeline inlined: this is the clock's hot path.
        h = _monotonic_ns()
        d = h - m.base_host
        value = m.base_peer + d + int(m.skew * d) + m.epoch
        if h < m.slew_end:
            value += m.slew0 - int(m.slew_signed * max(0, h - m.slew_at))
        with self._glock:
            # Invariant: _last is the largest value ever returned.
            if value < self._last:
                return self._last
            self._last = value
            return value

    __call__ = now_ns

    def peer_now_ns(self) -> int:
        """The estimate of the peer's own clock now; it follows a restart (can go back)."""
        model = self._filter.model
        assert model is not None
        return model.peer(self._host())

    def state(self) -> TimesyncState:
        """The estimate's state now, with the link's counters."""
        with self._flock:
            return self._state_locked(self._host())

    def clock(self, seed: int) -> MonotonicClock:
        """A [`MonotonicClock`][simclock.MonotonicClock] on this source and its bus."""
        return MonotonicClock(seed, source=self.now_ns, bus=self.bus)

    @property
    def counters(self) -> dict[str, int]:
        """Link counters not in the state: ``answered`` (the peer's requests), ``bad_data``,
        ``link_errors`` (exceptions from the link, survived), ``unreported`` (bus publications
        that failed)."""
        with self._flock:
            return {
                "answered": self._answered,
                "bad_data": self._bad_data,
                "link_errors": self._link_errors,
                "unreported": self._unreported,
            }

    @property
    def peer(self) -> tuple[int, int] | None:
        """The (system, component) whose replies are used: the first that answered."""
        return self._peer

    def close(self) -> None:
        """Stop the link's thread and close the connection; idempotent.

        ``now_ns()`` keeps extrapolating the last estimate afterwards.
        """
        self._stop.set()
        if self._thread.ident is not None and self._thread is not threading.current_thread():
            self._thread.join()
        with contextlib.suppress(Exception):
            self._conn.close()

    def __enter__(self) -> MavlinkTimeSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the link's thread --------------------------------------------------------

    def _state_locked(self, host: int) -> TimesyncState:
        return replace(
            self._filter.state(host),
            requests=self._requests,
            unmatched=self._unmatched,
            foreign=self._foreign,
            silent=self._silent,
        )

    def _run(self) -> None:
        conn = self._conn
        fd = getattr(conn, "fd", None)
        next_request = self._host()
        next_heartbeat = next_request
        while not self._stop.is_set():
            try:
                now = self._host()
                if now >= next_request:
                    self._send_request()
                    with self._flock:
                        fast = not self._filter.converged and not self._silent
                    next_request = max(
                        next_request + (self._initial_interval if fast else self._interval),
                        now,
                    )
                    self._check_silence(now)
                if self._heartbeat is not None and now >= next_heartbeat:
                    conn.mav.heartbeat_send(
                        _MAV_TYPE_ONBOARD_CONTROLLER, _MAV_AUTOPILOT_INVALID, 0, 0, 0
                    )
                    next_heartbeat = now + self._heartbeat
                wait = max(0, min(next_request, next_heartbeat) - self._host())
                wait = min(wait, 50_000_000)  # wake up for close() at least every 50 ms
                if fd is not None:
                    readable, _, _ = select.select([fd], [], [], wait / 1e9)
                    if not readable:
                        continue
                else:
                    time.sleep(min(wait, 1_000_000) / 1e9)
                # Receive stamps are never before the arrival (the hard bound of each
                # exchange, rtt/2, holds): the first datagram arrived before select
                # returned; a later one may arrive during the loop, so it is stamped
                # after it was read.
                recv = self._host()
                msg = conn.recv_msg()
                for _ in range(64):
                    if msg is None:
                        break
                    self._handle(msg, recv)
                    msg = conn.recv_msg()
                    recv = self._host()
            except Exception:
                # A dead socket, a parser failure: counted, and the loop goes on.
                with self._flock:
                    self._link_errors += 1
                self._stop.wait(0.01)

    def _send_request(self) -> None:
        ts1 = self._host()
        if ts1 <= self._last_ts1:
            ts1 = self._last_ts1 + 1  # each request's ts1 is unique: replies match by it
        self._last_ts1 = ts1
        with self._flock:
            self._requests += 1
            self._pending[ts1] = ts1
            stale = [k for k in self._pending if k < ts1 - _PENDING_NS]
            for k in stale:
                del self._pending[k]
        self._send_timesync(0, ts1, *self._target)

    def _send_timesync(self, tc1: int, ts1: int, tsys: int, tcomp: int) -> None:
        mav = self._conn.mav
        if self._generated_targets:
            mav.send(mav.timesync_encode(tc1, ts1, tsys, tcomp))
            return
        msg = mav.timesync_encode(tc1, ts1)
        payload = struct.pack("<qqBB", tc1, ts1, tsys, tcomp)

        def pack(mav_: Any, force_mavlink1: bool = False) -> bytes:
            body = payload[:16] if force_mavlink1 else payload
            return bytes(msg._pack(mav_, msg.crc_extra, body, force_mavlink1=force_mavlink1))

        # This pymavlink has no extension fields: pack the 18-byte MAVLink 2 payload
        # (the CRC extra is the same; MAVLink 1 drops the extension bytes by itself).
        msg.pack = pack
        mav.send(msg)

    def _handle(self, msg: Any, recv: int) -> None:
        kind = msg.get_type()
        if kind == "BAD_DATA":
            with self._flock:
                self._bad_data += 1
            return
        if kind != "TIMESYNC":
            return
        src = (msg.get_srcSystem(), msg.get_srcComponent())
        if src == (self._sysid, self._compid):
            return  # our own message, looped back
        tsys, tcomp = _targets(msg)
        for_us = tsys in (0, self._sysid) and tcomp in (0, self._compid)
        tc1 = msg.tc1
        ts1 = msg.ts1
        if tc1 == 0:
            if for_us:
                self._answer_request(ts1, src)
            return
        with self._flock:
            if not for_us or (self._peer is not None and src != self._peer):
                self._foreign += 1
                return
            if self._pending.pop(ts1, None) is None:
                self._unmatched += 1
                return
            if self._peer is None:
                self._peer = src
            at = self._host()
            verdict = self._filter.add_sample(ts1, tc1, recv, at_ns=at)
            events: list[dict[str, Any]] = []
            if verdict is TimesyncVerdict.RESET:
                jump = self._filter.last_jump_ns
                events.append(
                    {
                        "event": "reset",
                        "reason": "restart" if jump < 0 else "jump",
                        "jump_ns": jump,
                    }
                )
            used = verdict is TimesyncVerdict.ACCEPTED or verdict is TimesyncVerdict.RESET
            if used and self._silent:
                self._silent = False
                events.append({"event": "resumed"})
            events.append({"event": "sample", "verdict": str(verdict)})
            state = self._state_locked(at).to_json()
            for event in events:
                event["state"] = state
            if not self._anchored:
                self._early.extend(events)
                return
        for event in events:
            self._publish(event)

    def _answer_request(self, ts1: int, src: tuple[int, int]) -> None:
        if self._answer == "none":
            return
        if self._answer == "host":
            tc1 = self._host()
        else:
            if not self._anchored:
                return  # the timeline starts when the constructor returns
            tc1 = self.now_ns()
        self._send_timesync(tc1, ts1, src[0], src[1])
        with self._flock:
            self._answered += 1

    def _check_silence(self, now: int) -> None:
        with self._flock:
            last = self._filter.state(now).last_sample_ns
            if not self._anchored or self._silent or last is None or now - last < self._silence:
                return
            self._silent = True
            state = self._state_locked(now).to_json()
        self._publish({"event": "silent", "state": state})

    def _publish(self, payload: dict[str, Any]) -> None:
        bus = self.bus
        for _ in range(_PUBLISH_ATTEMPTS):
            try:
                if bus.clock is not None:
                    bus.publish(TIMESYNC_TOPIC, payload)
                else:
                    bus.publish(TIMESYNC_TOPIC, payload, stamp_ns=self.now_ns())
                return
            except SimclockValueError:
                continue  # another thread published a later stamp first
            except Exception:
                break
        with self._flock:
            self._unreported += 1
