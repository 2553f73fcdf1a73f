"""Accuracy of a MAVLink peer's clock estimate, and the cost of reading it (not a test; C-SYS-5).

A simulated autopilot (``tests/mavlink_autopilot.py``: pymavlink, its clock
``--drift-ppm`` fast, a relay on 127.0.0.1 holding each datagram 1-5 ms each
way, so round trips of 2-10 ms) answers ``TIMESYNC``; a ``MavlinkTimeSource``
estimates its clock for ``--seconds``. Every 10 ms the main thread reads the
host clock, ``now_ns()`` and ``peer_now_ns()``, and the host clock again,
and compares both with the peer's true time (the formula the autopilot runs
on, at the middle of the bracket; a bracket wider than 50 µs, a preemption,
is dropped). At ``--restart-at-s`` the autopilot reboots (its clock starts
again from 1 ms): the report gives when the reset was published and when
``peer_now_ns()`` was back within 1 ms for good.

The cost of ``now_ns()`` is measured against ``time.monotonic_ns()`` and
``MonotonicClock.now_ns()`` in the same run (best of 5 x 200 000 calls).

Usage::

    .venv/bin/python benchmarks/timesync.py                # 60 s, restart at 45 s
    .venv/bin/python benchmarks/timesync.py --seconds 10 --restart-at-s 7
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _common import best_of, markdown_table
from mavlink_autopilot import PeerClock, peer_clock_ns

import simclock
from simclock.core._bus import Message

MS = 1_000_000
ROOT = Path(__file__).resolve().parents[1]


def _percentile(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(seconds: float, restart_at_s: float, drift_ppm: float, seed: int) -> dict[str, Any]:
    """One run against the simulated autopilot; the figures as a dict."""
    h0 = time.monotonic_ns()
    restart_at = h0 + simclock.seconds_to_ns(restart_at_s) if restart_at_s > 0 else None
    clock = PeerClock(h0, 987_654_321_000, int(drift_ppm * 1000), restart_at)
    cmd = [
        sys.executable,
        str(ROOT / "tests" / "mavlink_autopilot.py"),
        f"--h0-ns={clock.h0_ns}",
        f"--p0-ns={clock.p0_ns}",
        f"--drift-ppb={clock.drift_ppb}",
        f"--seed={seed}",
        f"--duration-s={seconds + 30}",
    ]
    if restart_at is not None:
        cmd.append(f"--restart-at-ns={restart_at}")
    peer = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert peer.stdout is not None
        port = json.loads(peer.stdout.readline())["port"]
        events: list[Message] = []
        started = time.monotonic_ns()
        source = simclock.MavlinkTimeSource(f"udpout:127.0.0.1:{port}", source_system=2)
        ready = time.monotonic_ns()
        source.bus.subscribe("/simclock/timesync", events.append)
        rows: list[tuple[int, int, int]] = []  # (host - started, now error, peer error)
        last_now = 0
        decreases = 0
        end = started + simclock.seconds_to_ns(seconds)
        while True:
            before = time.monotonic_ns()
            now = source.now_ns()
            peer_now = source.peer_now_ns()
            after = time.monotonic_ns()
            if before >= end:
                break
            decreases += now < last_now
            last_now = now
            if after - before <= 50_000:
                host = (before + after) // 2
                truth = peer_clock_ns(clock, host)
                epoch = source.state().epoch_ns
                rows.append((host - started, now - epoch - truth, peer_now - truth))
            time.sleep(0.01)
        state = source.state()
        cost = _cost(source)
        source.close()
    finally:
        if peer.stdin is not None:
            peer.stdin.close()
        peer.wait(timeout=10)
    figures = _figures(rows, events, started, ready, restart_at, state, cost, decreases)
    figures["per_second"] = _per_second(rows, events, started)
    return figures


def _per_second(rows: list[tuple[int, int, int]], events: list[Message], started: int) -> list[Any]:
    """For each second: max |peer error| (ms), median round trip used (ms), skew (ppm)."""
    errs: dict[int, int] = {}
    for t, _, err in rows:
        errs[t // 1_000_000_000] = max(errs.get(t // 1_000_000_000, 0), abs(err))
    rtts: dict[int, list[int]] = {}
    skew: dict[int, int] = {}
    for m in events:
        state = m.payload["state"]
        if m.payload.get("verdict") != "ACCEPTED":
            continue
        second = (state["at_ns"] - started) // 1_000_000_000
        rtts.setdefault(second, []).append(state["rtt_ns"])
        skew[second] = state["skew_ppb"]
    out = []
    for second in sorted(errs):
        r = sorted(rtts.get(second, [0]))
        out.append(
            [
                second,
                round(errs[second] / MS, 3),
                round(r[len(r) // 2] / MS, 1),
                round(skew.get(second, 0) / 1000),
            ]
        )
    return out


def _cost(source: simclock.MavlinkTimeSource) -> dict[str, float]:
    n = 200_000
    mono = simclock.MonotonicClock(0)
    results = {}
    for name, fn in (
        ("time.monotonic_ns()", time.monotonic_ns),
        ("MonotonicClock.now_ns()", mono.now_ns),
        ("MavlinkTimeSource.now_ns()", source.now_ns),
        ("MavlinkTimeSource.peer_now_ns()", source.peer_now_ns),
    ):

        def loop(fn: Any = fn) -> None:
            for _ in range(n):
                fn()

        results[name] = best_of(loop, 5) / n * 1e9
    return results


def _figures(
    rows: list[tuple[int, int, int]],
    events: list[Message],
    started: int,
    ready: int,
    restart_at: int | None,
    state: Any,
    cost: dict[str, float],
    decreases: int,
) -> dict[str, Any]:
    def stats(lo_s: float, hi_s: float, col: int) -> dict[str, float]:
        vals = [abs(r[col]) for r in rows if lo_s * 1e9 <= r[0] < hi_s * 1e9]
        if not vals:
            return {}
        return {
            "n": len(vals),
            "p50_ms": _percentile(vals, 0.5) / MS,
            "p99_ms": _percentile(vals, 0.99) / MS,
            "max_ms": max(vals) / MS,
        }

    out: dict[str, Any] = {
        "constructor_ms": (ready - started) / MS,
        "now_decreases": decreases,
        "resets": state.resets,
        "samples": state.samples,
        "slow": state.slow,
        "skew_ppb": state.skew_ppb,
        "cost_ns": cost,
    }
    cut = (restart_at - started) / 1e9 if restart_at is not None else float("inf")
    last = rows[-1][0] / 1e9 if rows else 0.0
    out["first_5s"] = stats(0, min(5, cut), 1)
    out["first_5s_peer"] = stats(0, min(5, cut), 2)
    out["first_second"] = stats(0, min(1, cut), 1)
    out["after_5s"] = stats(5, min(cut, last + 1), 1)
    out["after_5s_peer"] = stats(5, min(cut, last + 1), 2)
    if restart_at is not None:
        resets = [m for m in events if m.payload.get("event") == "reset"]
        if resets:
            # The reset's state was taken at host time at_ns.
            at = resets[0].payload["state"]["at_ns"]
            out["reset_after_restart_ms"] = (at - restart_at) / MS
            out["reset_reason"] = resets[0].payload["reason"]
        after = [(r[0] + started - restart_at, r[2]) for r in rows if r[0] + started >= restart_at]
        bad = [t for t, err in after if abs(err) > MS]
        out["peer_within_1ms_after_restart_ms"] = (max(bad) / MS) if bad else 0.0
        out["after_restart_peer"] = stats(cut + 2, last + 1, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--restart-at-s", type=float, default=45.0)
    parser.add_argument("--drift-ppm", type=float, default=50.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = run(args.seconds, args.restart_at_s, args.drift_ppm, args.seed)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    rows = []
    keys = ("first_second", "first_5s", "first_5s_peer", "after_5s", "after_5s_peer")
    for key in (*keys, "after_restart_peer"):
        s = figures.get(key)
        if s:
            rows.append(
                [key, s["n"], f"{s['p50_ms']:.3f}", f"{s['p99_ms']:.3f}", f"{s['max_ms']:.3f}"]
            )
    print(markdown_table(["window", "reads", "p50 ms", "p99 ms", "max ms"], rows))
    print()
    for key in (
        "constructor_ms",
        "reset_after_restart_ms",
        "reset_reason",
        "peer_within_1ms_after_restart_ms",
        "now_decreases",
        "resets",
        "samples",
        "slow",
        "skew_ppb",
    ):
        if key in figures:
            print(f"{key}: {figures[key]}")
    base = figures["cost_ns"]["time.monotonic_ns()"]
    print()
    print(
        markdown_table(
            ["call", "ns per call", "x time.monotonic_ns()"],
            [[k, f"{v:.0f}", f"{v / base:.1f}"] for k, v in figures["cost_ns"].items()],
        )
    )


if __name__ == "__main__":
    main()
