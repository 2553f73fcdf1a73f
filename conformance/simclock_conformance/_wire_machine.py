"""The state machine over the wire: generated request programs, every reply against the oracle.

The programs are data (C-WIRE-4): Hypothesis draws requests (schedules with
action-list callbacks, periodics, rates, cancels, advances, leaps to the
next entry, entries at far anchors and bursts of ties, C-CONF-4), each is
sent to the driver and to an :class:`~simclock_conformance._engine.Engine`
over the oracle, and the two replies must agree (the rules of
:mod:`~simclock_conformance._compare`). A divergence is shrunk by Hypothesis
to a minimal program, reported as the protocol lines that reproduce it.
A request past ``2**64 - 1`` that the driver refuses with ``ValueError`` is
not sent to the oracle (C-TIME-4: exact or refused). A driver failure stops
the machine: it is reported once, with its evidence, not shrunk.

The strategies (delays, anchors, periods, phases, rates, advances, leaps) are
those of the in-process :class:`~simclock_conformance._machine.OracleMachine`;
the rules are the same kinds of request, with callbacks as action lists,
including its two targeted ones: ties just past a wheel's first level reached
by one advance (C-TIE-1) and a periodic cancelling itself at its first firing
(C-CAN-2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from simclock_conformance._machine import (
    ADVANCES,
    ANCHORS,
    BEYOND_OFFSETS,
    DELAYS,
    FAR_OFFSETS,
    FAR_TIE_DELAYS,
    LEAP_OFFSETS,
    PERIODS,
    PHASES,
    QUIET,
    RATE_DENOMINATORS,
    RATE_NUMERATORS,
    RATE_PHASES,
    private_hypothesis_home,
)
from simclock_conformance.protocol._backends import OracleBackend
from simclock_conformance.protocol._compare import first_difference
from simclock_conformance.protocol._driver import DriverError, protocol_line
from simclock_conformance.protocol._engine import MAX_NS, Engine

if TYPE_CHECKING:
    from simclock_conformance.protocol._wire_core import Session

__all__ = ["machine_settings", "run_wire_machine"]

Json = dict[str, Any]

_KINDS = ("plain", "raise", "cancel_self", "spawn", "cancel_other", "nested", "halt")


def machine_settings(profile: str) -> settings:
    """Hypothesis budget of the wire machine: ``ci`` (derandomised) or ``thorough``."""
    ci = profile == "ci"
    return settings(
        max_examples=40 if ci else 1000,
        stateful_step_count=25 if ci else 60,
        derandomize=ci,
        database=None,
        deadline=None,
        print_blob=False,
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


def run_wire_machine(session: Session, profile: str) -> tuple[str, str] | None:
    """Run the machine; ``None`` or ``(message, minimal program as protocol lines)``."""
    failures: list[DriverError] = []
    counter = [0]

    class WireMachine(RuleBasedStateMachine):
        """One clock on the driver, one on the oracle; every reply must agree."""

        def __init__(self) -> None:
            super().__init__()
            counter[0] += 1
            self.clock = f"sm{counter[0]}"
            self.oracle = Engine(OracleBackend())
            self.sent: list[Json] = []
            self.entries: list[str] = []
            self.dead = bool(failures)
            self._send({"op": "create", "clock": self.clock, "seed": "0"})

        def _send(self, request: Json, far: int = 0) -> Json | None:
            if self.dead:
                return None
            self.sent.append(request)
            try:
                got = session.send(request)
            except DriverError as failure:
                failures.append(failure)
                session.failed()
                self.dead = True
                return None
            if far > MAX_NS and got.get("ok") is False and got.get("error") == "ValueError":
                return got  # refused past 2**64 - 1: allowed, and the oracle is not asked
            want = self.oracle.handle(request)
            diff = first_difference(got, want, session.features)
            if diff:
                lines = "\n".join(protocol_line(r) for r in self.sent)
                raise AssertionError(
                    f"SM-ORACLE: the driver and the oracle disagree on request "
                    f"{len(self.sent)}: {protocol_line(request)}\n  first difference: {diff}\n"
                    f"  expected reply: {protocol_line(want)}\n  observed reply: "
                    f"{protocol_line(got)}\nminimal failing program (protocol lines):\n{lines}"
                )
            return want

        def _now(self) -> int:
            return (
                int(self.oracle.clocks[self.clock].clock.now_ns())
                if self.clock in self.oracle.clocks
                else 0
            )

        def _actions(self, kind: str, arg: int, at: int | None) -> list[Json]:
            if kind == "raise":
                return [{"do": "raise", "message": "boom"}]
            if kind == "halt":
                return [{"do": "halt"}]
            if kind == "nested":
                return [{"do": "advance", "dt_ns": str(arg % 6)}]
            if kind == "spawn":
                # A child past 2**64 - 1 may be refused: near there it goes at now.
                delay = arg if at is not None and at + arg <= MAX_NS else 0
                return [{"do": "schedule", "delay_ns": str(delay)}]
            if kind == "cancel_other" and self.entries:
                return [{"do": "cancel", "entry": self.entries[arg % len(self.entries)]}]
            return []

        def _entry(
            self, op: str, fields: Json, kind: str, arg: int, at: int | None, far: int = 0
        ) -> None:
            entry = f"e{len(self.entries)}"
            actions = self._actions(kind, arg, at)
            if kind == "cancel_self":
                actions = [{"do": "cancel", "entry": entry}]
            request = {"op": op, "clock": self.clock, "entry": entry, **fields, "on_fire": actions}
            self.entries.append(entry)
            self._send(request, far)

        @rule(delay=DELAYS, kind=st.sampled_from(_KINDS), arg=st.integers(0, 70_000))
        def schedule(self, delay: int, kind: str, arg: int) -> None:
            at = self._now() + delay
            self._entry("schedule", {"at_ns": str(at)}, kind, arg, at, at)

        @rule(anchor=st.sampled_from(ANCHORS), offset=FAR_OFFSETS, kind=st.sampled_from(_KINDS))
        def schedule_far(self, anchor: int, offset: int, kind: str) -> None:
            at = max(self._now(), anchor + offset)
            self._entry("schedule", {"at_ns": str(at)}, kind, 3, at, at)

        @rule(k=BEYOND_OFFSETS)
        def schedule_beyond(self, k: int) -> None:
            at = max(self._now(), MAX_NS + k)
            self._entry("schedule", {"at_ns": str(at)}, "plain", 0, at, at)

        @rule(
            delay=st.one_of(st.integers(0, 40), st.integers(1025, 2**20)), count=st.integers(2, 8)
        )
        def burst(self, delay: int, count: int) -> None:
            at = self._now() + delay
            for _ in range(count):
                self._entry("schedule", {"at_ns": str(at)}, "plain", 0, at, at)

        @rule(delay=FAR_TIE_DELAYS, count=st.integers(2, 6), kind=st.sampled_from(_KINDS))
        def far_ties(self, delay: int, count: int, kind: str) -> None:
            """Ties past a wheel's first level, reached by one advance (C-TIE-1, C-CONF-4)."""
            now = self._now()
            at = now + delay
            for _ in range(count):
                self._entry("schedule", {"at_ns": str(at)}, kind, 0, at, at)
            self._send({"op": "advance", "clock": self.clock, "dt_ns": str(delay)}, at)

        @rule(period=st.integers(1, 25))
        def periodic_cancelling_itself(self, period: int) -> None:
            """A periodic that cancels itself in its first firing fires once (C-CAN-2)."""
            fields = {"period_ns": str(period), "phase_ns": "0"}
            self._entry("schedule_periodic", fields, "cancel_self", 0, None)
            dt = 3 * period
            self._send({"op": "advance", "clock": self.clock, "dt_ns": str(dt)}, self._now() + dt)

        @rule(period=PERIODS, phase=PHASES, kind=st.sampled_from(_KINDS))
        def schedule_periodic(self, period: int, phase: int, kind: str) -> None:
            fields = {"period_ns": str(period), "phase_ns": str(phase)}
            self._entry("schedule_periodic", fields, "plain" if kind == "halt" else kind, 0, None)

        @precondition(lambda self: "rate" in session.features)
        @rule(num=RATE_NUMERATORS, den=RATE_DENOMINATORS, phase=RATE_PHASES)
        def schedule_rate(self, num: int, den: int, phase: int) -> None:
            # A period of num/den ns: often not a whole number of ns.
            fields = {"rate_hz": [str(1_000_000_000 * den), str(num)], "phase_ns": str(phase)}
            self._entry("schedule_rate", fields, "plain", 0, None)

        @precondition(lambda self: bool(self.entries))
        @rule(i=st.integers(0, 10**6))
        def cancel(self, i: int) -> None:
            self._send(
                {"op": "cancel", "clock": self.clock, "entry": self.entries[i % len(self.entries)]}
            )

        @rule(dt=ADVANCES)
        def advance(self, dt: int) -> None:
            target = self._now() + dt
            self._send({"op": "advance", "clock": self.clock, "dt_ns": str(dt)}, target)

        @rule(offset=LEAP_OFFSETS, quiet=QUIET)
        def leap(self, offset: int, quiet: int) -> None:
            """A long advance to just before, at or after the next entry (C-CONF-4)."""
            if self.clock not in self.oracle.clocks:
                return
            now = self._now()
            upcoming = self.oracle.clocks[self.clock].clock.next_event_ns()
            dt = quiet if upcoming is None else max(0, upcoming - now + offset)
            self._send({"op": "advance", "clock": self.clock, "dt_ns": str(dt)}, now + dt)

        @invariant()
        def observe(self) -> None:
            self._send({"op": "observe", "clock": self.clock})

        def teardown(self) -> None:
            if not self.dead:
                try:
                    session.send({"op": "drop", "clock": self.clock})
                    session.drain()
                except DriverError as failure:
                    failures.append(failure)
                    session.failed()

    try:
        with private_hypothesis_home():
            run_state_machine_as_test(WireMachine, settings=machine_settings(profile))
    except AssertionError as exc:
        text = str(exc)
        message, _, program = text.partition("\nminimal failing program (protocol lines):\n")
        return message, program
    except Flaky as exc:
        # The same program gave another outcome when Hypothesis replayed it: the
        # driver is not deterministic, or hit its deadline only on one of the runs.
        # The first outcome in full: its expected and observed replies are the evidence.
        inner = [str(e) for e in getattr(exc, "exceptions", ()) if str(e)]
        return (
            "SM-ORACLE: the driver answered the same program differently when it was "
            "replayed (not deterministic, or a reply deadline hit on one run only)"
            + (f"; first outcome: {inner[0]}" if inner else ""),
            "",
        )
    if failures:
        raise failures[0]
    return None
