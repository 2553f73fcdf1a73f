"""No blind situation (SPEC §14): each clause's programs reach every situation listed for it.

The situations are data beside the programs (``SITUATIONS`` of each program
family); whether a program reaches one is decided from the oracle's replies
(``_situations.DETECTORS``), never declared by the program. The state machine
must draw the tie and beyond-``2**64 - 1`` situations too. Each detector is
shown to tell a program that reaches its situation from one that does not.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis.stateful import run_state_machine_as_test

from simclock_conformance import heap_factory
from simclock_conformance.clauses._builder import MAX, Case, P, sched
from simclock_conformance.clauses._programs import CASES, SITUATIONS
from simclock_conformance.clauses._situations import DETECTORS, Walk, covered, walk
from simclock_conformance.kit._suite_support import hypothesis_settings
from simclock_conformance.machine._machine import make_machine
from simclock_conformance.machine._strategies import private_hypothesis_home
from simclock_conformance.protocol._backends import OracleBackend
from simclock_conformance.protocol._engine import Engine
from simclock_conformance.protocol._wire_core import expected_replies

ROWS = [(clause, sid) for clause, sits in SITUATIONS.items() for sid in sits]


def _walk(case: Case) -> Walk:
    return walk(case.requests, expected_replies(case))


def test_every_listed_situation_has_a_detector_and_every_detector_a_clause() -> None:
    listed = {sid for _, sid in ROWS}
    assert sorted(listed - set(DETECTORS)) == []
    assert sorted(set(DETECTORS) - listed) == []
    assert {"C-TIE-1", "C-TIME-4", "C-SCH-1", "C-ERR-2"} <= set(SITUATIONS)


@pytest.mark.parametrize(("clause", "situation"), ROWS, ids=[f"{c}-{s}" for c, s in ROWS])
def test_C_CONF_1_a_clauses_programs_reach_each_of_its_situations(
    clause: str, situation: str
) -> None:
    walks = [_walk(case) for case in CASES if clause in case.clauses]
    assert covered(situation, walks), f"no {clause} program reaches {situation}"


def _case(build: P) -> Walk:
    return _walk(build.drop())


def test_detectors_tell_a_reaching_program_from_one_that_does_not() -> None:
    base = P("t/wrap", ["C-TIME-4"]).create().adv(7)
    ahead = _case(P("t/a", ["C-TIME-4"]).create().adv(7).at("w", 2**64 + 9).adv(5))
    behind = _case(base.at("w", 2**64 + 3).adv(5))
    assert DETECTORS["time/beyond-wrapped-ahead"](ahead)
    assert not DETECTORS["time/beyond-wrapped-ahead"](behind)
    assert DETECTORS["time/beyond-wrapped-behind"](behind)
    assert not DETECTORS["time/beyond-wrapped-at-now"](ahead)
    # A callback's child tied with a later top-level entry; and only top-level ties.
    mixed = _case(P("t/m", ["C-TIE-1"]).create().at("s", 1, sched(4)).adv(2).at("t", 5).adv(5))
    plain = _case(P("t/p", ["C-TIE-1"]).create().at("a", 5).at("b", 5).adv(5))
    late = "tie/callback-before-later-top-level"
    assert DETECTORS[late](mixed) and not DETECTORS[late](plain)
    assert DETECTORS["tie/top-level"](plain) and not DETECTORS["tie/top-level"](mixed)
    assert DETECTORS["tie/across-advances"](mixed) and not DETECTORS["tie/across-advances"](plain)
    near = _case(P("t/n", ["C-TIE-1"]).create().adv(MAX - 9).at("a", MAX).at("b", MAX).adv(9))
    assert DETECTORS["tie/near-2-64"](near) and not DETECTORS["tie/near-2-64"](plain)


MACHINE_SITUATIONS = (
    "tie/top-level",
    "tie/from-callbacks",
    "tie/periodic-repush",
    "tie/across-advances",
    "tie/callback-before-later-top-level",
    "tie/top-level-before-callback",
    "tie/all-origins-mixed",
    "time/beyond-wrapped-ahead",
    "time/beyond-wrapped-at-now",
    "time/beyond-wrapped-behind",
)
"""What the state machine's ``ci`` programs must draw (C-TIE-1's mixes, C-TIME-4's wraps)."""


def test_SM_ORACLE_the_state_machine_draws_the_tie_and_wrap_situations() -> None:
    programs: list[list[dict[str, Any]]] = []
    base = make_machine(heap_factory)

    class Recording(base):  # type: ignore[valid-type, misc]
        def teardown(self) -> None:
            name = self.names[0]
            programs.append([r for r in self.sent if r.get("clock") == name])
            super().teardown()

    with private_hypothesis_home():
        run_state_machine_as_test(Recording, settings=hypothesis_settings("ci", stateful=True))
    walks = []
    for requests in programs:
        oracle = Engine(OracleBackend())
        walks.append(walk(requests, [oracle.handle(r) for r in requests]))
    missing = [s for s in MACHINE_SITUATIONS if not covered(s, walks)]
    assert missing == [], f"{len(programs)} programs drawn"
