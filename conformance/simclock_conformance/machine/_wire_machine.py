"""The oracle state machine over the wire: the same machine, its requests sent to a driver.

:class:`~simclock_conformance.machine._machine.OracleMachine` with a driver session as
its transport: every request goes to the driver and to the oracle's engine,
and the replies must agree (SPEC §18). A divergence is shrunk by Hypothesis
to a minimal program, reported as the protocol lines that reproduce it. A
driver failure stops the machine: it is reported once, with its evidence,
not shrunk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from simclock_conformance.machine._machine import OracleMachine
from simclock_conformance.machine._requests import PROGRAM_MARK
from simclock_conformance.machine._strategies import private_hypothesis_home
from simclock_conformance.machine._transport import OverWire, Transport
from simclock_conformance.protocol._driver import DriverError
from simclock_conformance.report._charges import REPLAYED_OTHERWISE

if TYPE_CHECKING:
    from simclock_conformance.protocol._wire_core import Session

__all__ = ["machine_settings", "run_wire_machine"]


def machine_settings(profile: str, shrink: bool = True) -> settings:
    """Hypothesis budget of the wire machine: ``ci`` (derandomised) or ``thorough``.

    ``shrink=False`` leaves out Hypothesis's shrink phase: a failure is reported with
    its first failing program, the same verdict sooner (every shrinking step is a
    round trip to the driver).
    """
    ci = profile == "ci"
    phases = tuple(Phase) if shrink else tuple(p for p in Phase if p is not Phase.shrink)
    return settings(
        phases=phases,
        max_examples=40 if ci else 1000,
        stateful_step_count=25 if ci else 60,
        derandomize=ci,
        database=None,
        deadline=None,
        print_blob=False,
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


def run_wire_machine(session: Session, profile: str, shrink: bool = True) -> tuple[str, str] | None:
    """Run the machine; ``None`` or ``(message, failing program as protocol lines)``.

    The program is the minimal one Hypothesis shrank to, or with ``shrink=False`` the
    first failing one.
    """
    failures: list[DriverError] = []

    class WireMachine(OracleMachine):
        """One clock on the driver, one on the oracle; every reply must agree."""

        def new_transport(self) -> Transport:
            return OverWire(session, failures)

        def teardown(self) -> None:
            if not self.dead:
                try:
                    for name in self.names:
                        session.send({"op": "drop", "clock": name})
                    session.drain()
                except DriverError as failure:
                    failures.append(failure)
                    session.failed()

    try:
        with private_hypothesis_home():
            run_state_machine_as_test(WireMachine, settings=machine_settings(profile, shrink))
    except AssertionError as exc:
        message, _, program = str(exc).partition(PROGRAM_MARK)
        return message, program
    except Flaky as exc:
        # The same program gave another outcome when Hypothesis replayed it: the
        # driver is not deterministic, or hit its deadline only on one of the runs.
        # The first outcome in full: its expected and observed replies are the evidence.
        inner = [str(e) for e in getattr(exc, "exceptions", ()) if str(e)]
        return (
            f"{REPLAYED_OTHERWISE} when it was replayed (not deterministic, or a reply "
            "deadline hit on one run only; reported as C-DET-1's failure)"
            + (f"; first outcome: {inner[0]}" if inner else ""),
            "",
        )
    if failures:
        raise failures[0]
    return None
