"""MavlinkTimeSource against real peers on 127.0.0.1 (C-SYS-5, C-SYS-1, C-SYS-2).

Three peers, none of them simclock: a simulated autopilot process on pymavlink
behind a relay that delays every datagram 1-5 ms each way, its clock 50 ppm
fast (``tests/mavlink_autopilot.py``); an autopilot the test plays itself on
pymavlink, to send exactly the bad input a case needs; and MAVSDK's C++ core
(the ``mavsdk`` package), which synchronises to us and answers us.

The assertions are on the estimate's error against the peer's true time
(the formula the peer runs on), never on how long anything took; the waits
below only bound a hang.
"""

from __future__ import annotations

import json
import select
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "pymavlink", reason="MavlinkTimeSource needs pymavlink: pip install 'simclock[mavlink]'"
)

from mavlink_autopilot import PeerClock, peer_clock_ns
from pymavlink import mavutil
from pymavlink.dialects.v20 import ardupilotmega as v20

import simclock
from simclock import (
    TIMESYNC_TOPIC,
    MavlinkTimeSource,
    Message,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
    TimesyncFilter,
)

MS = 1_000_000
S = 1_000_000_000
HERE = Path(__file__).resolve().parent
OFFSET = 1_234_567_890_123  # the scripted autopilot's clock minus the host's


def wait_for(what: str, predicate: Callable[[], bool], limit_s: float = 20.0) -> None:
    """Poll ``predicate``; the limit only turns a hang into a failure naming ``what``."""
    end = time.monotonic() + limit_s
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for: {what}")
        time.sleep(0.002)


def free_port() -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


def v2_connection(device: str, sysid: int, compid: int) -> Any:
    """A pymavlink connection speaking MAVLink 2 from its first message."""
    conn = mavutil.mavlink_connection(device, source_system=sysid, source_component=compid)
    conn.mav = v20.MAVLink(conn, srcSystem=sysid, srcComponent=compid)
    conn.WIRE_PROTOCOL_VERSION = "2.0"
    return conn


def payload_of(msg: Any) -> bytes:
    buf = bytes(msg.get_msgbuf())
    return buf[10 : 10 + buf[1]]


@dataclass
class Request:
    ts1: int
    src: tuple[int, int]
    received_ns: int


class ScriptedPeer:
    """An autopilot the test plays on pymavlink: its clock is the host's plus ``offset``.

    ``mode``: ``"answer"`` replies to each request at once, ``"hold"`` queues it
    for the test to answer with `reply`, ``"silent"`` drops it. Replies to the
    peer's own requests are kept in ``replies``.
    """

    def __init__(self, offset: int = OFFSET, sysid: int = 1, compid: int = 1) -> None:
        self.port = free_port()
        self.conn = v2_connection(f"udpin:127.0.0.1:{self.port}", sysid, compid)
        self.offset = offset
        self.mode = "answer"
        self.held: list[Request] = []
        self.replies: list[Any] = []
        self.others: list[Any] = []  # every other message received
        self.requests_seen = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def clock_ns(self) -> int:
        return time.monotonic_ns() + self.offset

    def _run(self) -> None:
        while not self._stop.is_set():
            readable, _, _ = select.select([self.conn.port], [], [], 0.02)
            if not readable:
                continue
            while (msg := self.conn.recv_msg()) is not None:
                if msg.get_type() != "TIMESYNC":
                    self.others.append(msg)
                    continue
                if msg.tc1 != 0:
                    self.replies.append(msg)
                    continue
                self.requests_seen += 1
                src = (msg.get_srcSystem(), msg.get_srcComponent())
                if self.mode == "answer":
                    self.reply(self.clock_ns(), msg.ts1)
                elif self.mode == "hold":
                    with self._lock:
                        self.held.append(Request(msg.ts1, src, time.monotonic_ns()))

    def reply(self, tc1: int, ts1: int) -> None:
        with self._lock:
            self.conn.mav.timesync_send(tc1, ts1)

    def send_bytes(self, data: bytes) -> None:
        with self._lock:
            self.conn.write(data)

    def take_held(self, n: int = 1) -> list[Request]:
        wait_for(f"{n} held request(s)", lambda: len(self.held) >= n)
        with self._lock:
            taken, self.held = self.held[:n], self.held[n:]
        return taken

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.conn.close()


@pytest.fixture
def peer() -> Iterator[ScriptedPeer]:
    p = ScriptedPeer()
    yield p
    p.close()


@dataclass
class Link:
    peer: ScriptedPeer
    source: MavlinkTimeSource
    messages: list[Message]

    def payloads(self, event: str) -> list[dict[str, Any]]:
        return [m.payload for m in list(self.messages) if m.payload["event"] == event]


@pytest.fixture
def link(peer: ScriptedPeer) -> Iterator[Link]:
    source = MavlinkTimeSource(
        f"udpout:127.0.0.1:{peer.port}",
        source_system=2,
        interval_ns=10 * MS,
        initial_interval_ns=5 * MS,
        silence_ns=200 * MS,
    )
    messages: list[Message] = []
    source.bus.subscribe(TIMESYNC_TOPIC, messages.append)
    yield Link(peer, source, messages)
    source.close()


def true_error(source: MavlinkTimeSource, truth: Callable[[int], int]) -> int | None:
    """now_ns() minus the peer's true time, or None when a preemption blurred the read."""
    before = time.monotonic_ns()
    now = source.peer_now_ns()
    after = time.monotonic_ns()
    if after - before > 50_000:
        return None
    return now - truth((before + after) // 2)


# -- the estimate against a drifting autopilot behind a jittery link ------------------------


@pytest.fixture
def autopilot() -> Iterator[tuple[PeerClock, int]]:
    h0 = time.monotonic_ns()
    clock = PeerClock(h0, 987_654_321_000, 50_000)  # 50 ppm fast
    proc = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "mavlink_autopilot.py"),
            f"--h0-ns={h0}",
            f"--p0-ns={clock.p0_ns}",
            f"--drift-ppb={clock.drift_ppb}",
            "--duration-s=60",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    port = json.loads(proc.stdout.readline())["port"]
    yield clock, port
    proc.stdin.close()
    proc.wait(timeout=30)


def test_C_SYS_5_estimate_of_a_drifting_autopilot_behind_a_jittery_relay(
    autopilot: tuple[PeerClock, int],
) -> None:
    clock, port = autopilot
    rtts: list[int] = []  # the round trip of every exchange used

    def note(message: Message) -> None:
        if message.payload.get("verdict") == "ACCEPTED":
            rtts.append(message.payload["state"]["rtt_ns"])

    bus = simclock.Bus()
    bus.subscribe(TIMESYNC_TOPIC, note)
    with MavlinkTimeSource(
        f"udpout:127.0.0.1:{port}", interval_ns=20 * MS, initial_interval_ns=10 * MS, bus=bus
    ) as source:
        assert source.state().converged
        errors: list[int] = []
        last = source.now_ns()
        while len(errors) < 300:  # ~3 s of reads, every 10 ms
            err = true_error(source, lambda h: peer_clock_ns(clock, h))
            if err is not None:
                errors.append(err)
            now = source.now_ns()
            assert now >= last  # C-SYS-1
            last = now
            time.sleep(0.01)
        state = source.state()
    magnitudes = sorted(abs(e) for e in errors)
    # The relay makes round trips of 2-10 ms (median about 6 ms), so one exchange can be
    # 5 ms off; the estimate is promised within 1 ms: most reads (the median) within
    # 1 ms, none beyond 3 ms. On a loaded 2-core machine the processes' own delays
    # stretch round trips to tens of ms and make them lopsided, which no two-way
    # exchange can see: the margins grow with the round trips the link gave, beyond a
    # 90th percentile of 15 ms (docs/benchmarks.md has the figures of loaded runs).
    p90_rtt = sorted(rtts)[len(rtts) * 9 // 10]
    scale = max(1.0, p90_rtt / (15 * MS))
    evidence = (magnitudes[-5:], f"p90 round trip {p90_rtt / MS:.1f} ms")
    assert magnitudes[len(magnitudes) // 2] < 1 * MS * scale, evidence
    assert magnitudes[-1] < 3 * MS * scale, evidence
    assert state.resets == 0 and state.malformed == 0 and state.unmatched == 0
    assert state.requests >= state.accepted > 0


# -- the peer's own requests are answered --------------------------------------------------


def test_C_SYS_5_a_request_of_the_peer_is_answered_with_targets(link: Link) -> None:
    peer, source = link.peer, link.source
    before = source.now_ns()
    peer.reply(0, 777_000)  # tc1 = 0: a request, ts1 = the peer's stamp
    wait_for("our answer", lambda: any(m.ts1 == 777_000 for m in peer.replies))
    after = source.now_ns()
    answer = next(m for m in peer.replies if m.ts1 == 777_000)
    assert before <= answer.tc1 <= after  # answered with now_ns(): the peer's own time
    assert (answer.get_srcSystem(), answer.get_srcComponent()) == (2, 191)
    # The MAVLink 2 extension fields carry the requester's ids (bytes 16, 17), whether
    # or not this pymavlink generates them.
    payload = payload_of(answer)
    assert len(payload) == 18 and struct.unpack("<qqBB", payload)[2:] == (1, 1)
    # Counted once the answer is sent: the peer may read it before the count is made.
    wait_for("the answer counted", lambda: source.counters["answered"] >= 1)
    assert source.counters["answered"] == 1


@pytest.mark.parametrize("answer", ["host", "none"])
def test_the_answer_option_chooses_the_clock_answered_with(peer: ScriptedPeer, answer: str) -> None:
    with MavlinkTimeSource(
        f"udpout:127.0.0.1:{peer.port}",
        answer=answer,
        heartbeat_ns=20 * MS,
        interval_ns=10 * MS,
        initial_interval_ns=5 * MS,
    ) as source:
        before = time.monotonic_ns()
        peer.reply(0, 555_000)
        peer.reply(0, 556_000)
        # Datagrams are handled in order: once a later reply of the peer is a sample,
        # both requests were handled, and a heartbeat sent after that reaches the peer
        # after any answer to them.
        peer.mode = "hold"
        (request,) = peer.take_held()
        base = source.state().accepted
        peer.reply(peer.clock_ns(), request.ts1)
        wait_for("the later sample", lambda: source.state().accepted > base)
        after = time.monotonic_ns()
        heartbeats = len(peer.others)
        wait_for("a later heartbeat", lambda: len(peer.others) > heartbeats)
        answers = [m for m in peer.replies if m.ts1 in (555_000, 556_000)]
        if answer == "none":
            assert answers == [] and source.counters["answered"] == 0
        else:
            # "host": the host's monotonic clock, not the autopilot's time.
            assert [m.ts1 for m in answers] == [555_000, 556_000]
            assert all(before <= m.tc1 <= after for m in answers)
            assert source.counters["answered"] == 2
    heartbeat = peer.others[-1]
    assert heartbeat.get_type() == "HEARTBEAT"
    assert (heartbeat.get_srcSystem(), heartbeat.get_srcComponent()) == (1, 191)
    assert heartbeat.type == 18  # MAV_TYPE_ONBOARD_CONTROLLER


def test_a_request_targeted_at_another_system_is_not_answered(link: Link) -> None:
    peer, source = link.peer, link.source
    msg = v20.MAVLink_timesync_message(0, 888_000)
    data = msg._pack(peer.conn.mav, msg.crc_extra, struct.pack("<qqBB", 0, 888_000, 9, 0))
    peer.send_bytes(data)
    peer.reply(0, 889_000)  # then one for everyone: answered, so the first was seen
    wait_for("the broadcast request's answer", lambda: any(m.ts1 == 889_000 for m in peer.replies))
    assert [m.ts1 for m in peer.replies if m.ts1 in (888_000, 889_000)] == [889_000]
    wait_for("the answer counted", lambda: source.counters["answered"] >= 1)
    assert source.counters["answered"] == 1


# -- bad input, each with its exact outcome -----------------------------------------------


def test_C_SYS_5_malformed_reply_is_dropped(link: Link) -> None:
    peer, source = link.peer, link.source
    peer.mode = "hold"
    (request,) = peer.take_held()
    before = source.state()
    peer.reply(-5, request.ts1)  # a reply whose peer time is no time
    wait_for("the verdict", lambda: source.state().malformed == 1)
    after = source.state()
    assert after.accepted == before.accepted and after.samples == before.samples
    assert [p["verdict"] for p in link.payloads("sample")][-1] == "MALFORMED"
    assert source.now_ns() >= before.at_ns  # never raises, carries on
    peer.mode = "answer"


def test_C_SYS_5_unmatched_duplicate_and_out_of_order_replies(link: Link) -> None:
    peer, source = link.peer, link.source
    peer.mode = "hold"
    first, second = peer.take_held(2)
    base = source.state()
    # Out of order: the second request is answered before the first; both are samples.
    peer.reply(peer.clock_ns(), second.ts1)
    peer.reply(peer.clock_ns(), first.ts1)
    wait_for("two samples", lambda: source.state().accepted == base.accepted + 2)
    # A duplicate of an answered reply, and a reply to a request never sent: unmatched.
    peer.reply(peer.clock_ns(), first.ts1)
    peer.reply(peer.clock_ns(), 12_345)
    wait_for("two unmatched", lambda: source.state().unmatched == base.unmatched + 2)
    state = source.state()
    assert state.accepted == base.accepted + 2
    assert (state.malformed, state.outliers, state.resets) == (0, 0, 0)
    peer.mode = "answer"


def test_C_SYS_5_foreign_replies_are_counted_not_used(link: Link) -> None:
    peer, source = link.peer, link.source
    assert source.peer == (1, 1)  # the first system that answered
    peer.mode = "hold"
    (request,) = peer.take_held()
    base = source.state()
    # Another system (id 7) answers our request: foreign; the request is still pending.
    stranger = v20.MAVLink(None, srcSystem=7, srcComponent=1)
    peer.send_bytes(v20.MAVLink_timesync_message(peer.clock_ns(), request.ts1).pack(stranger))
    # The peer's reply targeted at system 99: not for us.
    msg = v20.MAVLink_timesync_message(peer.clock_ns(), request.ts1)
    body = struct.pack("<qqBB", peer.clock_ns(), request.ts1, 99, 0)
    peer.send_bytes(msg._pack(peer.conn.mav, msg.crc_extra, body))
    wait_for("two foreign", lambda: source.state().foreign == base.foreign + 2)
    assert source.state().accepted == base.accepted
    # The real answer, in the MAVLink 2 form with our ids as targets, is still matched.
    msg = v20.MAVLink_timesync_message(peer.clock_ns(), request.ts1)
    body = struct.pack("<qqBB", peer.clock_ns(), request.ts1, 2, 191)
    peer.send_bytes(msg._pack(peer.conn.mav, msg.crc_extra, body))
    wait_for("the sample", lambda: source.state().accepted == base.accepted + 1)
    peer.mode = "answer"


def test_bytes_that_are_not_mavlink_are_counted(link: Link) -> None:
    source = link.source
    link.peer.send_bytes(b"\xfd\x10garbage that is not a MAVLink frame" * 3)
    wait_for("bad data", lambda: source.counters["bad_data"] >= 1)
    assert source.counters["link_errors"] == 0
    last = source.now_ns()
    wait_for("more samples", lambda: source.state().accepted > 30)
    assert source.now_ns() >= last


def test_C_SYS_5_a_silent_peer_is_published_and_the_clock_carries_on(link: Link) -> None:
    peer, source = link.peer, link.source
    peer.mode = "silent"
    wait_for("the silent event", lambda: bool(link.payloads("silent")))
    assert source.state().silent
    a = source.now_ns()
    time.sleep(0.02)
    b = source.now_ns()
    assert b > a  # extrapolated on the last estimate
    err = true_error(source, lambda h: h + OFFSET)
    assert err is None or abs(err) < 2 * MS
    peer.mode = "answer"
    wait_for("the resumed event", lambda: bool(link.payloads("resumed")))
    assert not source.state().silent
    assert [p["event"] for p in link.payloads("silent") + link.payloads("resumed")] == [
        "silent",
        "resumed",
    ]


def test_C_SYS_5_a_restarted_peer_is_a_reset_and_now_ns_carries_on(link: Link) -> None:
    peer, source = link.peer, link.source
    wait_for("converged", lambda: source.state().converged)
    before = source.now_ns()
    uptime = peer.clock_ns()
    # The autopilot reboots: its clock starts again from 1 ms.
    peer.offset = 1 * MS - time.monotonic_ns()
    reads = [before]
    while not link.payloads("reset"):
        reads.append(source.now_ns())
        time.sleep(0.001)
        assert len(reads) < 20_000, "no reset published"
    reads.append(source.now_ns())
    assert reads == sorted(reads)  # C-SYS-1 through the restart
    (reset,) = link.payloads("reset")
    assert reset["reason"] == "restart"
    assert abs(reset["jump_ns"] + uptime) < 100 * MS  # back by about its uptime
    assert reset["state"]["resets"] == 1
    # The estimate of the peer's own clock follows the restart ...
    wait_for("a few samples after the reset", lambda: source.state().samples >= 5)
    err = true_error(source, lambda h: h + peer.offset)
    assert err is None or abs(err) < 2 * MS
    # ... while now_ns() carried on from where it was, the jump absorbed in the epoch.
    assert source.now_ns() > reads[-1] > before
    assert source.state().epoch_ns > 0


def test_no_reply_at_all_is_refused_when_built() -> None:
    port = free_port()
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", port))  # receives our requests and never answers
    try:
        with pytest.raises(
            SimclockRuntimeError,
            match=rf"^no TIMESYNC reply on 'udpout:127\.0\.0\.1:{port}' within 0\.3 s "
            r"\(\d+ requests sent, 0 unmatched and 0 foreign replies, 0 bad bytes\); check "
            r"that the connection reaches the autopilot and that it answers TIMESYNC$",
        ):
            MavlinkTimeSource(f"udpout:127.0.0.1:{port}", wait_ns=300 * MS)
    finally:
        silent.close()
    names = [t.name for t in threading.enumerate()]
    assert f"simclock-mavlink:udpout:127.0.0.1:{port}" not in names  # the link was closed


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"connection": ""},
            SimclockTypeError,
            r"^connection must be a pymavlink connection string such as "
            r"'udpin:0\.0\.0\.0:14540', got ''$",
        ),
        (
            {"connection": "udpout:no-port"},
            SimclockRuntimeError,
            r"^cannot open MAVLink connection 'udpout:no-port': ValueError: UDP ports must be "
            r"specified as host:port; check the connection string \(udpin:HOST:PORT, "
            r"udpout:HOST:PORT, tcp:HOST:PORT or a serial device\)$",
        ),
        (
            {"source_system": 0},
            SimclockValueError,
            r"^source_system must be an int in \[1, 255\] \(a MAVLink id\), got 0$",
        ),
        (
            {"interval_ns": 0.05},
            SimclockTypeError,
            r"^interval_ns must be an int of ns > 0, got float 0\.05$",
        ),
        (
            {"answer": "always"},
            SimclockValueError,
            r"^answer must be one of \['timeline', 'host', 'none'\], got 'always'$",
        ),
        (
            {"filter": "px4"},
            SimclockTypeError,
            r"^filter must be a simclock\.TimesyncFilter or None, got 'px4'$",
        ),
    ],
)
def test_bad_arguments_are_refused_before_anything_opens(
    kwargs: dict[str, Any], error: type, message: str
) -> None:
    args = {"connection": "udpout:127.0.0.1:9", "wait_ns": 1_000_000, **kwargs}
    threads = threading.active_count()
    with pytest.raises(error, match=message):
        MavlinkTimeSource(**args)
    assert threading.active_count() == threads


# -- recording the synchronisation ----------------------------------------------------------


def test_C_SYS_5_a_recording_shows_the_synchronisation(link: Link, tmp_path: Path) -> None:
    source = link.source
    path = tmp_path / "flight.mcap"
    with simclock.Recorder(path, source.bus, seed=7):
        start = source.state().accepted
        wait_for("ten more samples", lambda: source.state().accepted >= start + 10)
    with simclock.open_recording(path) as recording:
        messages = list(recording.messages())
        info = recording.info
    assert set(info.topic_counts) == {TIMESYNC_TOPIC}
    assert len(messages) >= 10
    stamps = [m.stamp_ns for m in messages]
    assert stamps == sorted(stamps)  # stamped with now_ns(), the autopilot's time
    assert all(abs(m.stamp_ns - m.payload["state"]["at_ns"] - OFFSET) < 5 * MS for m in messages)
    accepted = [m.payload["state"]["accepted"] for m in messages]
    assert accepted == sorted(accepted) and accepted[-1] >= start + 10
    assert {m.payload["event"] for m in messages} == {"sample"}


# -- periodic threads on the peer's time ---------------------------------------------------


def test_C_SYS_2_periodic_thread_keeps_its_deadlines_in_the_peers_time(link: Link) -> None:
    source = link.source
    clock = source.clock(seed=3)
    assert clock.bus is source.bus
    fired: list[tuple[int, int]] = []  # (clock's now, host's now)

    def tick() -> None:
        fired.append((clock.now_ns(), time.monotonic_ns()))

    start = clock.now_ns()
    handle = simclock.schedule_periodic_thread(10 * MS, tick, clock)
    wait_for("20 ticks", lambda: len(fired) >= 20)
    handle.cancel()
    stats = handle.stats()
    values = [v for v, _ in fired]
    # Each tick is on the peer's time (the host's plus OFFSET), not the host's.
    assert all(abs(v - h - OFFSET) < 5 * MS for v, h in fired)
    # The grid start + k*period, in that time: one firing per deadline at most.
    slots = [(v - start) // (10 * MS) for v in values]
    assert slots == sorted(set(slots))
    assert stats.fired == len(fired)
    assert stats.fired + stats.skipped in (slots[-1], slots[-1] + 1)


# -- MAVSDK, both ways ---------------------------------------------------------------------


def test_C_SYS_5_mavsdk_synchronises_to_us_and_answers_us() -> None:
    mavsdk = pytest.importorskip("mavsdk", reason="the mavsdk package (a dev dependency)")
    port = free_port()
    system = mavsdk.Mavsdk(
        mavsdk.Configuration.create_with_component_type(mavsdk.ComponentType.GROUND_STATION)
    )
    enabled = threading.Event()

    def enable() -> None:
        # MAVSDK sees us through our heartbeat, then synchronises to the system it found.
        end = time.monotonic() + 20
        while time.monotonic() < end and not enabled.is_set():
            for found in system.get_systems():
                if found.get_system_id() == 1:
                    found.enable_timesync()
                    enabled.set()
            time.sleep(0.01)

    try:
        assert system.add_any_connection(f"udpin://127.0.0.1:{port}") == 0
        threading.Thread(target=enable, daemon=True).start()
        # MAVSDK answers only once it has synchronised to us: answer with the host clock.
        with MavlinkTimeSource(
            f"udpout:127.0.0.1:{port}",
            answer="host",
            heartbeat_ns=100 * MS,
            wait_ns=20 * S,
        ) as source:
            assert enabled.is_set()
            # Us -> MAVSDK: it asked, we answered, it took our time: after its shift its
            # clock reads our host clock, so the offset we estimate back is near 0.
            assert source.counters["answered"] >= 1
            state = source.state()
            assert state.converged and state.accepted >= 10
            assert abs(state.offset_ns) < 5 * MS
            # MAVSDK -> us: its replies are samples from its system and component.
            assert source.peer == (245, 190)
            assert (state.unmatched, state.foreign, state.malformed) == (0, 0, 0)
    finally:
        system.destroy()


# -- the filter can be chosen -------------------------------------------------------------


def test_a_filter_of_ones_own_is_used(peer: ScriptedPeer) -> None:
    chosen = TimesyncFilter(converge_samples=3)
    with MavlinkTimeSource(f"udpout:127.0.0.1:{peer.port}", filter=chosen) as source:
        assert source.state().samples >= 3
        assert chosen.model is not None
        err = true_error(source, lambda h: h + OFFSET)
        assert err is None or abs(err) < 2 * MS
