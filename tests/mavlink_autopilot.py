"""A simulated autopilot on pymavlink, behind a UDP relay that delays packets (tests, benchmark).

Run as a process: ``python tests/mavlink_autopilot.py --h0-ns H --p0-ns P ...``.
It prints one JSON line ``{"port": N}`` (the relay's port on 127.0.0.1, where
a client sends with ``udpout:127.0.0.1:N``) and runs until its stdin closes
or ``--duration-s`` ends.

The autopilot answers ``TIMESYNC`` requests with its own clock, which runs
``--drift-ppb`` fast on the host's monotonic clock: `peer_clock_ns` below is
the formula, shared with the tests that check an estimate against it. With
``--restart-at-ns R`` the clock starts again from ``--restart-p0-ns`` at host
time R (a reboot); with ``--silent-from-ns S`` it stops answering at S. It
sends a heartbeat every second, as an autopilot does.

The relay holds every datagram, in each direction, for a delay drawn
uniformly from ``[--min-delay-ns, --max-delay-ns]`` (seeded), so a round
trip takes twice that range plus the processes' own time.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import select
import socket
import sys
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class PeerClock:
    """The autopilot's clock as a formula of the host's monotonic clock."""

    h0_ns: int
    p0_ns: int
    drift_ppb: int
    restart_at_ns: int | None = None
    restart_p0_ns: int = 1_000_000


def peer_clock_ns(clock: PeerClock, host_ns: int) -> int:
    """The peer's true time at host time ``host_ns`` (restart included)."""
    rate = 1_000_000_000 + clock.drift_ppb
    if clock.restart_at_ns is not None and host_ns >= clock.restart_at_ns:
        return clock.restart_p0_ns + (host_ns - clock.restart_at_ns) * rate // 1_000_000_000
    return clock.p0_ns + (host_ns - clock.h0_ns) * rate // 1_000_000_000


def _relay(
    client_side: socket.socket,
    peer_addr: tuple[str, int],
    low: int,
    high: int,
    seed: int,
    stop: threading.Event,
) -> None:
    """Forward datagrams both ways, each held for a uniform random delay."""
    rng = random.Random(seed)
    peer_side = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer_side.bind(("127.0.0.1", 0))
    client_addr: tuple[str, int] | None = None
    queue: list[tuple[int, int, bytes, int]] = []  # (due, seq, data, direction)
    seq = 0
    while not stop.is_set():
        now = time.monotonic_ns()
        while queue and queue[0][0] <= now:
            _, _, data, direction = heapq.heappop(queue)
            if direction == 0:
                peer_side.sendto(data, peer_addr)
            elif client_addr is not None:
                client_side.sendto(data, client_addr)
        timeout = 0.05 if not queue else max(0.0, (queue[0][0] - time.monotonic_ns()) / 1e9)
        readable, _, _ = select.select([client_side, peer_side], [], [], timeout)
        for sock in readable:
            data, addr = sock.recvfrom(65536)
            if sock is client_side:
                client_addr = addr
                direction = 0
            else:
                direction = 1
            due = time.monotonic_ns() + rng.randint(low, high)
            heapq.heappush(queue, (due, seq, data, direction))
            seq += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--h0-ns", type=int, required=True)
    parser.add_argument("--p0-ns", type=int, required=True)
    parser.add_argument("--drift-ppb", type=int, default=50_000)
    parser.add_argument("--restart-at-ns", type=int, default=None)
    parser.add_argument("--restart-p0-ns", type=int, default=1_000_000)
    parser.add_argument("--silent-from-ns", type=int, default=None)
    parser.add_argument("--min-delay-ns", type=int, default=1_000_000)
    parser.add_argument("--max-delay-ns", type=int, default=5_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--duration-s", type=float, default=120.0)
    args = parser.parse_args()
    os.environ["MAVLINK20"] = "1"  # this process is the autopilot: MAVLink 2 from the start
    from pymavlink import mavutil

    clock = PeerClock(
        args.h0_ns, args.p0_ns, args.drift_ppb, args.restart_at_ns, args.restart_p0_ns
    )
    peer_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer_sock.bind(("127.0.0.1", 0))
    peer_port = peer_sock.getsockname()[1]
    peer_sock.close()
    conn = mavutil.mavlink_connection(
        f"udpin:127.0.0.1:{peer_port}", source_system=1, source_component=1
    )
    client_side = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client_side.bind(("127.0.0.1", 0))
    stop = threading.Event()
    relay = threading.Thread(
        target=_relay,
        args=(
            client_side,
            ("127.0.0.1", peer_port),
            args.min_delay_ns,
            args.max_delay_ns,
            args.seed,
            stop,
        ),
        daemon=True,
    )
    relay.start()

    def watch_stdin() -> None:
        sys.stdin.read()  # the parent closed it (or died): stop
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    print(json.dumps({"port": client_side.getsockname()[1]}), flush=True)
    end = time.monotonic() + args.duration_s
    next_heartbeat = 0.0
    while not stop.is_set() and time.monotonic() < end:
        if time.monotonic() >= next_heartbeat and conn.clients:
            conn.mav.heartbeat_send(2, 12, 0, 0, 4)  # quadrotor, PX4, standby
            next_heartbeat = time.monotonic() + 1.0
        readable, _, _ = select.select([conn.port], [], [], 0.05)
        if not readable:
            continue
        while True:
            msg = conn.recv_msg()
            if msg is None:
                break
            if msg.get_type() != "TIMESYNC" or msg.tc1 != 0:
                continue
            host = time.monotonic_ns()
            if args.silent_from_ns is not None and host >= args.silent_from_ns:
                continue
            conn.mav.timesync_send(peer_clock_ns(clock, host), msg.ts1)
    stop.set()


if __name__ == "__main__":
    main()
