"""The drivers of conformance/drivers/ spoken to directly over pipes (SPEC §18).

Expected replies come from simclock itself: :class:`Mirror` runs the same request on
``oracles.ReferenceClock`` (times, firing order, failures, peek) and ``HeapSimClock``
(``stored``, the tombstones included, and stats), and the two must agree before a reply
is used. The C++ driver must give exactly those replies; ``message`` texts are not
compared (C-WIRE-7). The broken variants must each visibly break their one point, and
the two JavaScript clocks are checked for the handshake and a simple program, plus the
deviations from the contract that their pinned versions show.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from wire_drivers import (
    BROKEN_VARIANTS,
    cpp_driver,
    node_test_driver,
    sinon_driver,
)

from simclock import HeapSimClock
from simclock_oracles import ReferenceClock

U64_MAX = 2**64 - 1
FEATURES = ["peek", "rate", "stats", "start_ns", "bits"]


class DriverGoneError(Exception):
    """The driver exited or closed stdout instead of replying."""


class Driver:
    """One driver process; :meth:`ask` sends a request and reads its one reply line."""

    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._buffer = b""

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def read_line(self, timeout: float = 20.0) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                raise TimeoutError(f"no reply within {timeout} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise DriverGoneError(f"stdout closed, exit status {self.proc.wait(timeout=10)}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def ask(self, request: dict[str, Any], timeout: float = 20.0) -> dict[str, Any]:
        self.send_line(json.dumps(request).encode())
        reply = json.loads(self.read_line(timeout))
        assert isinstance(reply, dict), reply
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def open_driver() -> Iterator[Callable[[list[str]], Driver]]:
    started: list[Driver] = []

    def start(cmd: list[str]) -> Driver:
        driver = Driver(cmd)
        started.append(driver)
        return driver

    yield start
    for driver in started:
        driver.close()


@pytest.fixture
def cpp(open_driver: Callable[[list[str]], Driver]) -> Driver:
    driver = open_driver(cpp_driver())
    assert driver.ask({"op": "hello", "protocol": "1"})["ok"] is True
    return driver


# -- the mirror: expected replies from simclock's own clocks ------------------------------


class Halt(BaseException):
    """The ``halt`` action: not an ``Exception``, so no clock isolates it (C-ERR-2)."""

    def __init__(self, entry: str, at_ns: int) -> None:
        super().__init__(entry)
        self.entry = entry
        self.at_ns = at_ns


class _Side:
    """One simclock clock driven by the wire's data callbacks."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.handles: dict[str, Any] = {}
        self.children: dict[str, int] = {}
        self.fired: list[dict[str, str]] = []
        self.failures: list[dict[str, str]] = []
        self.streams: dict[str, Any] = {}

    def callback(self, entry: str, actions: list[dict[str, Any]]) -> Callable[[], None]:
        def fire() -> None:
            now = self.clock.now_ns()
            record = {"entry": entry, "now_ns": str(now)}
            self.fired.append(record)
            for action in actions:
                what = action["do"]
                if what == "schedule":
                    n = self.children.get(entry, 0)
                    child = f"{entry}.{n}"
                    handle = self.clock.schedule(
                        now + int(action["delay_ns"]),
                        self.callback(child, action.get("on_fire", [])),
                    )
                    self.children[entry] = n + 1
                    self.handles[child] = handle
                elif what == "cancel":
                    if action["entry"] in self.handles:
                        self.handles[action["entry"]].cancel()
                elif what == "advance":
                    try:
                        self.clock.advance(int(action["dt_ns"]))
                    except RuntimeError:
                        record["nested"] = "RuntimeError"
                elif what == "raise":
                    self.failures.append(
                        {"entry": entry, "at_ns": str(now), "message": action["message"]}
                    )
                    raise ValueError(action["message"])
                elif what == "halt":
                    raise Halt(entry, now)

        return fire


class Mirror:
    """The reply simclock gives for a request, on ReferenceClock and HeapSimClock at once."""

    def __init__(self) -> None:
        self.sides: dict[str, tuple[_Side, _Side]] = {}

    def observation(self, clock_id: str) -> dict[str, Any]:
        ref, heap = self.sides[clock_id]
        peek = ref.clock.next_event_ns()
        assert heap.clock.next_event_ns() == peek
        assert heap.clock.now_ns() == ref.clock.now_ns()
        return {
            "now_ns": str(ref.clock.now_ns()),
            "next_event_ns": None if peek is None else str(peek),
            "stored": str(heap.clock.heap_size()),
        }

    def ask(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req["op"]
        if op == "create":
            start = int(req.get("start_ns", "0"))
            self.sides[req["clock"]] = (
                _Side(ReferenceClock(start_ns=start)),
                _Side(HeapSimClock(int(req["seed"]), start_ns=start)),
            )
            return {"ok": True, **self.observation(req["clock"])}
        pair = self.sides[req["clock"]]
        reply: dict[str, Any] = {"ok": True}
        try:
            reply.update(self._apply(pair[0], req))
        except (TypeError, ValueError) as exc:
            # A refusal by the reference; the heap clock must refuse alike (C-WIRE-5).
            kind = "TypeError" if isinstance(exc, TypeError) else "ValueError"
            with pytest.raises(TypeError if kind == "TypeError" else ValueError):
                self._apply(pair[1], req)
            return {"ok": False, "error": kind, **self.observation(req["clock"])}
        for key, value in self._apply(pair[1], req).items():
            # Both clocks must agree on what both report (firings, failures, a halt).
            assert reply.setdefault(key, value) == value, f"reference and heap differ on {key}"
        reply.update(self.observation(req["clock"]))
        return reply

    def _apply(self, side: _Side, req: dict[str, Any]) -> dict[str, Any]:
        op, clock = req["op"], side.clock
        if op == "schedule":
            side.handles[req["entry"]] = clock.schedule(
                int(req["at_ns"]), side.callback(req["entry"], req.get("on_fire", []))
            )
        elif op == "schedule_periodic":
            side.handles[req["entry"]] = clock.schedule_periodic(
                int(req["period_ns"]),
                side.callback(req["entry"], req.get("on_fire", [])),
                int(req.get("phase_ns", "0")),
            )
        elif op == "schedule_rate":
            from fractions import Fraction

            num, den = (int(part) for part in req["rate_hz"])
            side.handles[req["entry"]] = clock.schedule_rate(
                Fraction(num, den),
                side.callback(req["entry"], req.get("on_fire", [])),
                int(req.get("phase_ns", "0")),
            )
        elif op == "cancel":
            side.handles[req["entry"]].cancel()
        elif op == "advance":
            side.fired, side.failures = [], []
            out: dict[str, Any] = {}
            try:
                clock.advance(int(req["dt_ns"]))
            except Halt as halt:
                out = {
                    "ok": False,
                    "error": "halted",
                    "entry": halt.entry,
                    "at_ns": str(halt.at_ns),
                }
            return {**out, "fired": side.fired, "failures": side.failures}
        elif op == "stats":
            if isinstance(clock, HeapSimClock):
                stats = side.handles[req["entry"]].stats()
                assert stats.skipped == 0 and stats.overrun == 0
                return {"fired": str(stats.fired), "skipped": "0", "overruns": "0"}
        elif op == "step_ns":
            return {"step_ns": "1"}
        elif op == "draw":
            if isinstance(clock, HeapSimClock):
                source = clock.random_source()
                for label in req["labels"]:
                    source = source.child(label)
                stream = side.streams.setdefault(source.label, source.numpy_rng())
                raw = stream.bit_generator.random_raw(int(req["n"]))
                return {"values": [str(int(v)) for v in np.atleast_1d(raw)]}
        elif op != "observe":
            raise AssertionError(f"the mirror has no op {op}")
        return {}


def without_messages(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply with its ``message`` texts dropped: they are not part of the comparison."""
    out = {k: v for k, v in reply.items() if k != "message"}
    if "failures" in out:
        out["failures"] = [{k: v for k, v in f.items()} for f in out["failures"]]
    return out


def run_both(driver: Driver, program: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run ``program`` on the driver and the mirror; assert every reply equal; the replies."""
    mirror = Mirror()
    replies = []
    for req in program:
        got = driver.ask(req)
        expected = mirror.ask(req)
        assert without_messages(got) == expected, f"request {req}"
        replies.append(got)
    return replies


def create(clock: str = "c", seed: str = "7", **extra: str) -> dict[str, Any]:
    return {"op": "create", "clock": clock, "seed": seed, **extra}


def sched(entry: str, at: int, on_fire: list[Any] | None = None) -> dict[str, Any]:
    return {
        "op": "schedule",
        "clock": "c",
        "entry": entry,
        "at_ns": str(at),
        "on_fire": on_fire or [],
    }


def periodic(
    entry: str, period: int, phase: int = 0, on_fire: list[Any] | None = None
) -> dict[str, Any]:
    return {
        "op": "schedule_periodic",
        "clock": "c",
        "entry": entry,
        "period_ns": str(period),
        "phase_ns": str(phase),
        "on_fire": on_fire or [],
    }


def adv(dt: int) -> dict[str, Any]:
    return {"op": "advance", "clock": "c", "dt_ns": str(dt)}


def cancel(entry: str) -> dict[str, Any]:
    return {"op": "cancel", "clock": "c", "entry": entry}


def fired_of(reply: dict[str, Any]) -> list[tuple[str, int]]:
    return [(f["entry"], int(f["now_ns"])) for f in reply["fired"]]


# -- handshake ------------------------------------------------------------------------------


def test_C_WIRE_3_hello_reply_and_other_protocol_unsupported(
    open_driver: Callable[[list[str]], Driver],
) -> None:
    driver = open_driver(cpp_driver())
    assert driver.ask({"op": "hello", "protocol": "1"}) == {
        "ok": True,
        "protocol": "1",
        "backend": "simclock-cpp-heap",
        "features": FEATURES,
    }
    reply = driver.ask({"op": "hello", "protocol": "2"})
    assert (reply["ok"], reply["error"]) == (False, "unsupported")


def test_C_WIRE_1_quit_replies_then_exits_0_and_end_of_input_exits_0(
    open_driver: Callable[[list[str]], Driver],
) -> None:
    driver = open_driver(cpp_driver())
    assert driver.ask({"op": "quit"}) == {"ok": True}
    assert driver.proc.wait(timeout=10) == 0
    other = open_driver(cpp_driver())
    assert other.proc.stdin is not None
    other.proc.stdin.close()
    assert other.proc.wait(timeout=10) == 0
    assert other.proc.stdout is not None and other.proc.stdout.read() == b""


# -- worked programs, exact against simclock ------------------------------------------------

PROGRAMS: dict[str, list[dict[str, Any]]] = {
    "C-TIE-1 ties fire in push order": [
        create(),
        sched("b", 5),
        sched("a", 5),
        sched("c", 5),
        sched("z", 4),
        adv(5),
    ],
    "C-PER-2 period 3 fires before period 2 at t=6": [
        create(),
        periodic("two", 2),
        periodic("three", 3),
        adv(12),
        {"op": "stats", "clock": "c", "entry": "two"},
    ],
    "C-PER-1 first grid point at or after now": [
        create(start_ns="10"),
        periodic("p", 4, 1),
        adv(9),
    ],
    "C-X-RATE 30 Hz exact over one second": [
        create(),
        {
            "op": "schedule_rate",
            "clock": "c",
            "entry": "r",
            "rate_hz": ["30", "1"],
            "phase_ns": "0",
            "on_fire": [],
        },
        adv(1_000_000_000),
        {"op": "stats", "clock": "c", "entry": "r"},
    ],
    "C-X-RATE 30000/1001 Hz started late": [
        create(start_ns="5000000000"),
        {
            "op": "schedule_rate",
            "clock": "c",
            "entry": "r",
            "rate_hz": ["60000", "2002"],
            "phase_ns": "7",
            "on_fire": [],
        },
        adv(200_000_000),
    ],
    "C-CAN-1 cancel self, other at the same instant, and after firing": [
        create(),
        periodic("p", 10, 0, [{"do": "cancel", "entry": "p"}]),
        sched("a", 20, [{"do": "cancel", "entry": "b"}, {"do": "cancel", "entry": "nope"}]),
        sched("b", 20),
        adv(30),
        cancel("a"),
        cancel("p"),
        {"op": "stats", "clock": "c", "entry": "p"},
    ],
    "C-WIRE-4 children named per parent over all firings": [
        create(),
        periodic(
            "p",
            5,
            5,
            [
                {"do": "schedule", "delay_ns": "0"},
                {
                    "do": "schedule",
                    "delay_ns": "1",
                    "on_fire": [{"do": "schedule", "delay_ns": "0"}],
                },
            ],
        ),
        adv(10),
        cancel("p.3"),
        cancel("p.1.0"),
        adv(5),
    ],
    "C-ADV-4 nested advance refused, the callback goes on": [
        create(),
        sched("a", 3, [{"do": "advance", "dt_ns": "100"}, {"do": "schedule", "delay_ns": "2"}]),
        sched("b", 50),
        adv(10),
    ],
    "C-ERR-1 raise isolated, periodic stays scheduled, later actions skipped": [
        create(),
        periodic(
            "p", 4, 0, [{"do": "raise", "message": "boom"}, {"do": "schedule", "delay_ns": "0"}]
        ),
        sched("a", 4),
        adv(9),
        {"op": "stats", "clock": "c", "entry": "p"},
    ],
    "C-ERR-2 halt stops the advance at the halting entry": [
        create(),
        periodic("p", 5, 0, [{"do": "schedule", "delay_ns": "0"}]),
        sched("h", 5, [{"do": "halt"}, {"do": "schedule", "delay_ns": "0"}]),
        sched("later", 5),
        adv(20),
        adv(0),
        {"op": "stats", "clock": "c", "entry": "h"},
    ],
    "C-TIME-4 far times up to 2**64-1": [
        create(start_ns=str(2**64 - 10)),
        sched("last", U64_MAX),
        sched("tie1", 2**64 - 3),
        sched("tie2", 2**64 - 3),
        periodic("p", 2**63, 2**63 + 1),
        adv(9),
        {"op": "observe", "clock": "c"},
    ],
    "C-TIME-4 2**53+1 stays exact": [
        create(),
        sched("odd", 2**53 + 1),
        sched("even", 2**53),
        adv(2**60),
    ],
    "C-CAN-4 churn: stored follows HeapSimClock's compaction": [
        create(),
        *[sched(f"e{i}", 1000 + i) for i in range(200)],
        *[cancel(f"e{i}") for i in range(0, 200, 3)],
        *[cancel(f"e{i}") for i in range(1, 200, 3)],
        {"op": "observe", "clock": "c"},
        adv(1050),
        *[cancel(f"e{i}") for i in range(2, 200, 3)],
        adv(10_000),
    ],
    "C-STEP-1 step_ns and drop": [
        create(),
        sched("a", 9),
        {"op": "step_ns", "clock": "c"},
    ],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_worked_program_matches_simclock(cpp: Driver, name: str) -> None:
    run_both(cpp, PROGRAMS[name])


def test_C_TIE_1_and_C_PER_2_exact_orders(cpp: Driver) -> None:
    ties = run_both(cpp, PROGRAMS["C-TIE-1 ties fire in push order"])
    assert fired_of(ties[-1]) == [("z", 4), ("b", 5), ("a", 5), ("c", 5)]
    cpp.ask({"op": "drop", "clock": "c"})
    grid = run_both(cpp, PROGRAMS["C-PER-2 period 3 fires before period 2 at t=6"])
    at6 = [entry for entry, t in fired_of(grid[-2]) if t == 6]
    assert at6 == ["three", "two"]
    assert grid[-1]["fired"] == "7"


def test_C_X_RATE_30_hz_times_exact(cpp: Driver) -> None:
    replies = run_both(cpp, PROGRAMS["C-X-RATE 30 Hz exact over one second"])
    times = [t for _, t in fired_of(replies[2])]
    assert times == [-(-k * 10**9 // 30) for k in range(31)]
    assert times[:4] == [0, 33_333_334, 66_666_667, 100_000_000] and times[-1] == 10**9


def test_C_WIRE_4_children_nested_raise_halt_records(cpp: Driver) -> None:
    kids = run_both(cpp, PROGRAMS["C-WIRE-4 children named per parent over all firings"])
    assert fired_of(kids[2]) == [
        ("p", 5),
        ("p.0", 5),
        ("p.1", 6),
        ("p.1.0", 6),
        ("p", 10),
        ("p.2", 10),
    ]
    cpp.ask({"op": "drop", "clock": "c"})
    nested = run_both(cpp, PROGRAMS["C-ADV-4 nested advance refused, the callback goes on"])
    assert nested[-1]["fired"] == [
        {"entry": "a", "now_ns": "3", "nested": "RuntimeError"},
        {"entry": "a.0", "now_ns": "5"},
    ]
    assert nested[-1]["now_ns"] == "10" and nested[-1]["next_event_ns"] == "50"
    cpp.ask({"op": "drop", "clock": "c"})
    raised = run_both(
        cpp, PROGRAMS["C-ERR-1 raise isolated, periodic stays scheduled, later actions skipped"]
    )
    assert raised[-2]["failures"] == [
        {"entry": "p", "at_ns": "0", "message": "boom"},
        {"entry": "p", "at_ns": "4", "message": "boom"},
        {"entry": "p", "at_ns": "8", "message": "boom"},
    ]
    cpp.ask({"op": "drop", "clock": "c"})
    halted = run_both(cpp, PROGRAMS["C-ERR-2 halt stops the advance at the halting entry"])
    first = halted[4]
    assert {k: first[k] for k in ("ok", "error", "entry", "at_ns", "now_ns")} == {
        "ok": False,
        "error": "halted",
        "entry": "h",
        "at_ns": "5",
        "now_ns": "5",
    }
    # p, re-pushed after its firing at 0 (C-PER-2), waits behind h and later at 5.
    assert fired_of(first) == [("p", 0), ("p.0", 0), ("h", 5)]
    assert fired_of(halted[5]) == [("later", 5), ("p", 5), ("p.1", 5)]


def test_C_TIME_4_far_times_exact(cpp: Driver) -> None:
    replies = run_both(cpp, PROGRAMS["C-TIME-4 far times up to 2**64-1"])
    assert fired_of(replies[5]) == [("tie1", 2**64 - 3), ("tie2", 2**64 - 3), ("last", U64_MAX)]
    assert replies[5]["now_ns"] == str(U64_MAX)
    assert replies[6]["next_event_ns"] == str(2**63 + 1 + 2**63)  # held beyond 2**64-1


# -- refusals (C-WIRE-2, C-WIRE-5): exact kinds, nothing changed ----------------------------

BAD_TIME_STRINGS = ["1.5", "1e6", "-3", " 5", "", "5 ", "+5", "0x10", "\u0663"]
TYPE_ERRORS: list[Any] = [5, 0, 1.5, None, True, [], {}, *BAD_TIME_STRINGS]


def assert_refused(driver: Driver, req: dict[str, Any], kind: str) -> None:
    before = driver.ask({"op": "observe", "clock": "c"})
    reply = driver.ask(req)
    assert (reply["ok"], reply["error"]) == (False, kind), reply
    assert isinstance(reply["message"], str) and reply["message"]
    observed = {k: before[k] for k in ("now_ns", "next_event_ns", "stored")}
    assert {k: reply[k] for k in observed} == observed
    after = driver.ask({"op": "observe", "clock": "c"})
    assert after == before


@pytest.mark.parametrize("value", TYPE_ERRORS, ids=repr)
def test_C_WIRE_2_time_not_a_digit_string_is_TypeError(cpp: Driver, value: Any) -> None:
    cpp.ask(create())
    cpp.ask(sched("keep", 3))
    assert_refused(cpp, {**sched("x", 0), "at_ns": value}, "TypeError")
    assert_refused(cpp, {**adv(0), "dt_ns": value}, "TypeError")
    assert_refused(cpp, {**periodic("p", 2), "period_ns": value}, "TypeError")
    assert_refused(cpp, {**periodic("p", 2), "phase_ns": value}, "TypeError")
    # a bad time inside on_fire refuses the whole request
    assert_refused(cpp, sched("y", 5, [{"do": "schedule", "delay_ns": value}]), "TypeError")
    assert_refused(
        cpp,
        sched(
            "y",
            5,
            [{"do": "schedule", "delay_ns": "1", "on_fire": [{"do": "advance", "dt_ns": value}]}],
        ),
        "TypeError",
    )
    assert_refused(cpp, {"op": "draw", "clock": "c", "labels": [], "n": value}, "TypeError")
    reply = cpp.ask(adv(10))
    assert fired_of(reply) == [("keep", 3)]


def test_C_WIRE_2_digits_beyond_2_64_minus_1_are_ValueError(cpp: Driver) -> None:
    cpp.ask(create())
    for value in (str(2**64), "1" + "0" * 40, "9" * 400):
        assert_refused(cpp, {**sched("x", 0), "at_ns": value}, "ValueError")
        assert_refused(cpp, {**adv(0), "dt_ns": value}, "ValueError")
        assert_refused(cpp, sched("y", 5, [{"do": "schedule", "delay_ns": value}]), "ValueError")
    assert cpp.ask({**sched("x", 0), "at_ns": "000" + str(U64_MAX)})["ok"] is True
    assert cpp.ask(create("d", start_ns=str(2**64)))["error"] == "ValueError"
    assert cpp.ask(create("d", seed=5))["error"] == "TypeError"  # type: ignore[arg-type]


def test_C_WIRE_5_value_errors_and_bad_requests(cpp: Driver) -> None:
    cpp.ask(create(start_ns="100"))
    cpp.ask(sched("a", 150))
    assert_refused(cpp, sched("x", 99), "ValueError")  # C-SCH-1: the past
    assert_refused(cpp, periodic("x", 0), "ValueError")
    for rate in (["0", "1"], ["1", "0"], ["1000000001", "1"], ["3000000001", "3"]):
        req = {"op": "schedule_rate", "clock": "c", "entry": "x", "rate_hz": rate, "phase_ns": "0"}
        assert_refused(cpp, req, "ValueError")
    rate_num = {
        "op": "schedule_rate",
        "clock": "c",
        "entry": "x",
        "rate_hz": [30, "1"],
        "phase_ns": "0",
    }
    assert_refused(cpp, rate_num, "TypeError")
    assert_refused(cpp, adv(U64_MAX), "ValueError")  # now would pass 2**64-1
    for labels in (["a//b"], ["a b"], [""], ["/"], ["é"], ["a", "b/"]):
        assert_refused(cpp, {"op": "draw", "clock": "c", "labels": labels, "n": "1"}, "ValueError")
    assert_refused(cpp, {"op": "draw", "clock": "c", "labels": [3], "n": "1"}, "TypeError")
    assert_refused(
        cpp, {"op": "draw", "clock": "c", "labels": [], "n": str(2**20 + 1)}, "ValueError"
    )
    assert_refused(cpp, sched("a", 200), "bad_request")  # reused id
    assert_refused(cpp, sched("a.0", 200), "bad_request")  # ids have no '.'
    assert_refused(cpp, cancel("ghost"), "bad_request")
    assert_refused(cpp, {"op": "stats", "clock": "c", "entry": "ghost"}, "bad_request")
    assert_refused(cpp, sched("x", 200, [{"do": "dance"}]), "bad_request")
    assert_refused(cpp, create(), "bad_request")  # clock id in use
    bad: list[dict[str, Any]] = [
        {"op": "advance", "clock": "nope", "dt_ns": "1"},
        {"op": "jump"},
        {"clock": "c"},
    ]
    for req in bad:
        reply = cpp.ask(req)
        assert (reply["ok"], reply["error"]) == (False, "bad_request")
    cpp.send_line(b"this is not json")
    assert json.loads(cpp.read_line())["error"] == "bad_request"
    cpp.send_line(b"[1, 2]")
    assert json.loads(cpp.read_line())["error"] == "bad_request"
    assert fired_of(cpp.ask(adv(100))) == [("a", 150)]


def test_C_WIRE_3_drop_replies_with_the_last_observation_and_frees_the_id(cpp: Driver) -> None:
    cpp.ask(create(start_ns="4"))
    cpp.ask(sched("a", 9))
    assert cpp.ask({"op": "drop", "clock": "c"}) == {
        "ok": True,
        "now_ns": "4",
        "next_event_ns": "9",
        "stored": "1",
    }
    assert cpp.ask({"op": "observe", "clock": "c"})["error"] == "bad_request"
    assert cpp.ask(create())["ok"] is True


# -- C-X-BITS: bit for bit simclock's streams -----------------------------------------------

SEEDS = [0, 1, 42, 2**32 - 1, 2**32, 2**64 - 1, 2**64, 10**30, 2**200 + 12345]
LABELS: list[list[str]] = [
    [],
    ["a"],
    ["a", "b"],
    ["sensors", "imu0", "noise"],
    ["x.y-z_1"],
    ["/deep/er"],
]


@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_C_X_BITS_draw_equals_simclock_streams(cpp: Driver, seed: int) -> None:
    program = [create(seed=str(seed))]
    for labels in LABELS:
        program.append({"op": "draw", "clock": "c", "labels": labels, "n": "5"})
    for labels in LABELS:  # each stream continues where it stopped
        program.append({"op": "draw", "clock": "c", "labels": labels, "n": "3"})
    replies = run_both(cpp, program)
    assert len(replies[1]["values"]) == 5 and replies[1]["values"] != replies[2]["values"]


def test_C_RNG_3_one_stream_under_three_spellings(cpp: Driver) -> None:
    cpp.ask(create(seed="99"))
    root = HeapSimClock(99).random_source().child("a").child("b").numpy_rng().bit_generator
    expected = [str(int(v)) for v in root.random_raw(6)]
    got = []
    for labels in (["a", "b"], ["a/b"], ["/a/b"]):
        got += cpp.ask({"op": "draw", "clock": "c", "labels": labels, "n": "2"})["values"]
    assert got == expected
    assert cpp.ask({"op": "draw", "clock": "c", "labels": ["a"], "n": "0"})["values"] == []


# -- broken variants: each breaks its one point ---------------------------------------------


def test_broken_variant_table_is_complete() -> None:
    assert set(BROKEN_VARIANTS) >= {
        "BROKEN_FLOAT64",
        "BROKEN_LIFO_TIES",
        "BROKEN_NUMBER_TIMES",
        "BROKEN_NESTED_ADVANCE",
        "BROKEN_CRASH",
        "BROKEN_HANG",
    }
    with pytest.raises(ValueError, match=r"^variant must be None or one of \["):
        cpp_driver("BROKEN_NOTHING")


def broken(open_driver: Callable[[list[str]], Driver], variant: str) -> Driver:
    driver = open_driver(cpp_driver(variant))
    hello = driver.ask({"op": "hello", "protocol": "1"})
    assert hello["backend"] == f"simclock-cpp-heap+{variant}"
    assert driver.ask(create())["ok"] is True
    return driver


def test_BROKEN_FLOAT64_rounds_above_2_53(open_driver: Callable[[list[str]], Driver]) -> None:
    driver = broken(open_driver, "BROKEN_FLOAT64")
    driver.ask(sched("odd", 2**53 + 1))
    reply = driver.ask(adv(2**60))
    assert fired_of(reply) == [("odd", 2**53)]  # C-TIME-4: rounded, not exact


def test_BROKEN_LIFO_TIES_reverses_ties(open_driver: Callable[[list[str]], Driver]) -> None:
    driver = broken(open_driver, "BROKEN_LIFO_TIES")
    for entry in ("a", "b", "c"):
        driver.ask(sched(entry, 5))
    assert fired_of(driver.ask(adv(5))) == [("c", 5), ("b", 5), ("a", 5)]


def test_BROKEN_NUMBER_TIMES_accepts_json_numbers(
    open_driver: Callable[[list[str]], Driver],
) -> None:
    driver = broken(open_driver, "BROKEN_NUMBER_TIMES")
    assert driver.ask({**sched("a", 0), "at_ns": 5})["ok"] is True
    assert driver.ask({**adv(0), "dt_ns": 5.7})["fired"] == [{"entry": "a", "now_ns": "5"}]


def test_BROKEN_NESTED_ADVANCE_runs_the_nested_advance(
    open_driver: Callable[[list[str]], Driver],
) -> None:
    driver = broken(open_driver, "BROKEN_NESTED_ADVANCE")
    driver.ask(sched("a", 1, [{"do": "advance", "dt_ns": "10"}]))
    driver.ask(sched("b", 5))
    reply = driver.ask(adv(2))
    # The nested advance ran (fired b inside a): the record says it was accepted.
    assert reply["fired"] == [
        {"entry": "a", "now_ns": "1", "nested": "accepted"},
        {"entry": "b", "now_ns": "5"},
    ]


def test_BROKEN_NO_COMPACT_lets_tombstones_grow(open_driver: Callable[[list[str]], Driver]) -> None:
    driver = broken(open_driver, "BROKEN_NO_COMPACT")
    for i in range(1100):
        driver.ask(sched(f"e{i}", 10**6 + i))
    for i in range(1, 1100):
        reply = driver.ask(cancel(f"e{i}"))
    assert reply["stored"] == "1100"  # one live entry: the bound is 2*1 + 1024


def test_BROKEN_BITS_differs_from_simclock(open_driver: Callable[[list[str]], Driver]) -> None:
    driver = broken(open_driver, "BROKEN_BITS")
    got = driver.ask({"op": "draw", "clock": "c", "labels": ["a"], "n": "2"})["values"]
    good = HeapSimClock(7).random_source().child("a").numpy_rng().bit_generator.random_raw(2)
    assert got != [str(int(v)) for v in good]


def test_BROKEN_CRASH_aborts_on_the_fourth_advance(
    open_driver: Callable[[list[str]], Driver],
) -> None:
    driver = broken(open_driver, "BROKEN_CRASH")
    for _ in range(3):
        assert driver.ask(adv(1))["ok"] is True
    with pytest.raises(DriverGoneError, match=r"^stdout closed, exit status "):
        driver.ask(adv(1))
    assert driver.proc.returncode == -signal.SIGABRT


def test_BROKEN_HANG_stops_answering_far_in_time(
    open_driver: Callable[[list[str]], Driver],
) -> None:
    driver = broken(open_driver, "BROKEN_HANG")
    assert driver.ask(adv(2**62 - 1))["ok"] is True
    with pytest.raises(TimeoutError, match=r"^no reply within 1.0 s$"):
        driver.ask(adv(1), timeout=1.0)
    assert driver.proc.poll() is None  # alive, silent


# -- the JavaScript clocks ------------------------------------------------------------------

SIMPLE = [
    create(),
    sched("a", 5),
    sched("b", 5),
    sched("c", 3),
    adv(10),
]


def js(open_driver: Callable[[list[str]], Driver], cmd: list[str]) -> tuple[Driver, dict[str, Any]]:
    driver = open_driver(cmd)
    hello = driver.ask({"op": "hello", "protocol": "1"}, timeout=30)
    assert (hello["ok"], hello["protocol"], hello["features"]) == (True, "1", ["start_ns"])
    return driver, hello


def test_sinon_fake_timers_hello_and_a_simple_program(
    open_driver: Callable[[list[str]], Driver],
) -> None:
    driver, hello = js(open_driver, sinon_driver())
    assert hello["backend"].startswith("@sinonjs/fake-timers 15.5.0 (node ")
    replies = [driver.ask(req) for req in SIMPLE]
    assert replies[-1] == {
        "ok": True,
        "fired": [
            {"entry": "c", "now_ns": "3"},
            {"entry": "a", "now_ns": "5"},
            {"entry": "b", "now_ns": "5"},
        ],
        "failures": [],
        "now_ns": "10",
        "stored": "0",
    }
    assert (
        driver.ask({"op": "draw", "clock": "c", "labels": [], "n": "1"})["error"] == "unsupported"
    )


def test_sinon_fake_timers_observed_deviations(open_driver: Callable[[list[str]], Driver]) -> None:
    """What @sinonjs/fake-timers 15.5.0 does where the contract says otherwise."""
    driver, _ = js(open_driver, sinon_driver())
    driver.ask(create())
    # C-SCH-1: a past time is not refused (a negative delay is clamped to 0).
    driver.ask(adv(10))
    assert driver.ask(sched("past", 4))["ok"] is True
    # C-ADV-3: a zero-delay timer set during tick() fires 1 unit later.
    driver.ask(sched("p", 12, [{"do": "schedule", "delay_ns": "0"}]))
    assert fired_of(driver.ask(adv(5))) == [("past", 10), ("p", 12), ("p.0", 13)]
    # C-ADV-4: a nested tick() runs (the record says so); C-TIME-2/C-ADV-1: the outer tick
    # then overshoots.
    driver.ask(sched("n", 20, [{"do": "advance", "dt_ns": "3"}]))
    driver.ask(sched("m", 22))
    reply = driver.ask(adv(6))  # target 21
    assert reply["fired"] == [
        {"entry": "n", "now_ns": "20", "nested": "accepted"},
        {"entry": "m", "now_ns": "22"},
    ]
    assert reply["now_ns"] == "24"
    # C-ERR-1: the others fire, but tick() then rethrows the callback's error.
    driver.ask(sched("r", 30, [{"do": "raise", "message": "boom"}]))
    driver.ask(sched("s", 30))
    reply = driver.ask(adv(10))
    assert (reply["ok"], reply["error"]) == (False, "RuntimeError")
    assert fired_of(reply) == [("r", 30), ("s", 30)]
    # C-TIME-4: times above 2**53 are rounded by the clock's float arithmetic.
    driver.ask(create("far"))
    driver.ask({**sched("odd", 2**53 + 1), "clock": "far"})
    reply = driver.ask({**adv(2**60), "clock": "far"})
    assert reply["ok"] is True and reply["fired"] != [{"entry": "odd", "now_ns": str(2**53 + 1)}]


def test_node_test_mock_timers_hello_and_a_simple_program(
    open_driver: Callable[[list[str]], Driver],
) -> None:
    driver, hello = js(open_driver, node_test_driver())
    assert hello["backend"].startswith("node:test mock.timers (node ")
    replies = [driver.ask(req) for req in SIMPLE]
    last = replies[-1]
    assert [f["entry"] for f in last["fired"]] == ["c", "a", "b"]
    assert (last["ok"], last["now_ns"], last["stored"], last["failures"]) == (True, "10", "0", [])
    assert driver.ask({"op": "stats", "clock": "c", "entry": "a"})["error"] == "unsupported"


def test_node_test_mock_timers_observed_deviations(
    open_driver: Callable[[list[str]], Driver],
) -> None:
    """What node:test's MockTimers (Node 20) does where the contract says otherwise."""
    driver, hello = js(open_driver, node_test_driver())
    if "(node 20." not in hello["backend"]:
        pytest.skip(f"deviations were observed on Node 20; this is {hello['backend']}")
    driver.ask(create())
    # C-ADV-2: a callback reads the tick's target, not its own time.
    driver.ask(sched("a", 3))
    reply = driver.ask(adv(10))
    assert reply["fired"] == [{"entry": "a", "now_ns": "10"}]
    # C-ERR-1: a raising callback aborts tick(): later timers do not fire.
    driver.ask(sched("r", 12, [{"do": "raise", "message": "boom"}]))
    driver.ask(sched("s", 12))
    reply = driver.ask(adv(5))
    assert (reply["ok"], reply["error"]) == (False, "RuntimeError")
    assert [f["entry"] for f in reply["fired"]] == ["r"]


# -- seeded random programs: the driver against simclock, request by request ---------------


def random_program(seed: int, length: int = 250) -> list[dict[str, Any]]:
    """A program of ties, far times, grids, rates, cancels and data callbacks."""
    import random

    rng = random.Random(seed)
    far = rng.random() < 0.5
    start = rng.choice([0, 2**64 - 10**6]) if far else rng.choice([0, 17])
    program: list[dict[str, Any]] = [create(seed=str(seed), start_ns=str(start))]
    now, names = start, [f"n{i}" for i in range(length)]
    made: list[str] = []

    def actions(depth: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for _ in range(rng.choice([0, 0, 1, 2])):
            kind = rng.choice(["schedule", "schedule", "cancel", "advance", "raise", "halt"])
            if kind == "schedule" and depth < 3:
                delay = str(rng.choice([0, 1, 3, 50]))
                out.append({"do": "schedule", "delay_ns": delay, "on_fire": actions(depth + 1)})
            elif kind == "cancel" and made:
                target = rng.choice(made) + rng.choice(["", ".0", ".1"])
                out.append({"do": "cancel", "entry": target})
            elif kind == "advance":
                out.append({"do": "advance", "dt_ns": "5"})
            elif kind == "raise":
                out.append({"do": "raise", "message": f"boom {rng.randrange(9)}"})
            elif kind == "halt" and rng.random() < 0.2:
                out.append({"do": "halt"})
        return out

    for name in names:
        choice = rng.random()
        if choice < 0.35:
            at = now + rng.choice([0, 0, 1, 2, 10, 100, 1000])
            program.append(sched(name, min(at, U64_MAX), actions(0)))
        elif choice < 0.45:
            period = rng.choice([1, 2, 3, 7, 100]) if not far else rng.choice([3, 2**40])
            phase = rng.choice([0, now, now + 5, max(now - 11, 0)])
            program.append(periodic(name, period, phase, actions(0)))
        elif choice < 0.5:
            num, den = rng.choice([(30, 1), (30000, 1001), (7, 3), (10**6, 1), (1, 2)])
            req = {
                "op": "schedule_rate",
                "clock": "c",
                "entry": name,
                "rate_hz": [str(num), str(den)],
                "phase_ns": str(rng.choice([0, now, now + 3])),
                "on_fire": actions(0),
            }
            program.append(req)
        elif choice < 0.7 and made:
            program.append(cancel(rng.choice(made) + rng.choice(["", "", ".0"])))
            continue
        elif choice < 0.95:
            dt = rng.choice([0, 1, 2, 5, 40, 400])
            if now + dt <= U64_MAX:
                now += dt
                program.append(adv(dt))
            continue
        else:
            program.append({"op": "draw", "clock": "c", "labels": ["s", name], "n": "2"})
            continue
        made.append(name)
    return program


@pytest.mark.parametrize("seed", range(10))
def test_random_programs_match_simclock(cpp: Driver, seed: int) -> None:
    program = random_program(seed)
    mirror = Mirror()
    for req in program:
        got = cpp.ask(req)
        if req["op"] == "cancel" and got.get("error") == "bad_request":
            # a child that never came to exist: simclock has no handle for it either
            assert req["entry"] not in mirror.sides["c"][0].handles
            continue
        expected = mirror.ask(req)
        assert without_messages(got) == expected, f"request {req}"


# -- the helpers skip with one clear reason when a tool is missing --------------------------


def test_cpp_driver_skips_without_a_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    import wire_drivers

    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(
        pytest.skip.Exception, match=r"^no C\+\+ compiler \(g\+\+ or c\+\+\) on PATH$"
    ):
        wire_drivers._build.__wrapped__(None)


def test_js_drivers_skip_without_node(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    import wire_drivers

    monkeypatch.setattr(shutil, "which", lambda name: None)
    reason = r"^node is not on PATH \(the JavaScript drivers need Node\.js >= 20\)$"
    with pytest.raises(pytest.skip.Exception, match=reason):
        wire_drivers.node_test_driver()
    with pytest.raises(pytest.skip.Exception, match=reason):
        wire_drivers._node_modules.__wrapped__()


def test_sinon_driver_skips_when_npm_ci_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    import shutil

    import wire_drivers

    fake_npm = tmp_path / "npm"
    fake_npm.write_text("#!/bin/sh\necho 'npm error code ENOTFOUND' >&2\nexit 1\n")
    fake_npm.chmod(0o755)
    real_which = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name: str(fake_npm) if name == "npm" else real_which(name)
    )
    if real_which("node") is None:
        pytest.skip("node is not on PATH (the JavaScript drivers need Node.js >= 20)")
    monkeypatch.setenv("SIMCLOCK_DRIVER_CACHE", str(tmp_path / "cache"))
    with pytest.raises(
        pytest.skip.Exception,
        match=r"^npm ci of the JavaScript drivers' packages failed \(offline or no registry\?\): "
        r"npm error code ENOTFOUND$",
    ):
        wire_drivers._node_modules.__wrapped__()
    assert [p.name for p in (tmp_path / "cache").iterdir()] == []  # nothing half-installed
