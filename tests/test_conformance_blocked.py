"""Charges of failures to clauses (C-CONF-1, C-CONF-3): "blocked by C-..." in every report.

A failed program names the clause its first difference is charged to (the rule
that decided that part of the oracle's reply, ``protocol._reasons``); a clause
fails when a difference is charged to it and is blocked by the charged clause
when its tests failed only through differences charged elsewhere; the verdict
stays NOT CONFORMING. A Python-only test is charged by what it observed
(``report._charges``). Unit tests on hand-made reports; the self-check
(``test_conformance_selfcheck.py``) compares every broken backend's failed and
blocked clauses exactly.
"""

from __future__ import annotations

import re

import pytest

from simclock_conformance import CLAUSES
from simclock_conformance.report._html import render_matrix
from simclock_conformance.report._outcome import Outcome
from simclock_conformance.report._report import BackendReport
from simclock_conformance.report._rootkey import defect_key, driver_failure_key, root_key

ORDER = "first differing reply: fired order differs at equal now_ns"
TIME = "first differing reply: fired now_ns differs"
MISSING = "first differing reply: fired: an expected entry is missing"


def _report(
    charged: dict[str, list[str]], python: dict[str, list[tuple[str, str]]] | None = None
) -> BackendReport:
    """Every clause passed once; ``clause -> [charge of each failed program]``; then
    ``clause -> [(message, root) of each failed Python-only test]``."""
    rep = BackendReport("x:y")
    for clause in CLAUSES:
        rep.add(clause, Outcome(f"test_{clause.replace('-', '_')}_ok", "passed"))
    for clause, charges in charged.items():
        for i, to in enumerate(charges):
            name = f"test_{clause.replace('-', '_')}_program[p{i}]"
            text = f"{clause}: case p{i}, request 2 of 3: x\n  charged to: {to}"
            root = "NameError raised in clock.py:9 (_report)" if to == "C-ERR-1" else ""
            rep.add(clause, Outcome(name, "failed", text, root=root))
    for clause, tests in (python or {}).items():
        for i, (message, root) in enumerate(tests):
            name = f"test_{clause.replace('-', '_')}_bad{i}"
            rep.add(clause, Outcome(name, "failed", f"{clause}: {message}", root=root))
    return rep


def test_C_CONF_1_a_clause_charged_fails_the_others_are_blocked_by_it() -> None:
    rep = _report({"C-TIE-1": ["C-TIE-1"], "C-ADV-1": ["C-TIE-1", "C-TIE-1"], "SM-ORACLE": ["x"]})
    assert rep.blocked() == {"C-ADV-1": "C-TIE-1"}
    assert (rep.status("C-ADV-1"), rep.status("C-TIE-1")) == ("blocked", "failed")
    assert rep.failed() == ["C-TIE-1", "SM-ORACLE"]  # the state machine is its own
    assert rep.verdict == "NOT CONFORMING"
    data = rep.to_json()
    assert (data["failed"], data["blocked"]) == (["C-TIE-1", "SM-ORACLE"], {"C-ADV-1": "C-TIE-1"})
    assert (data["counts"]["failed"], data["counts"]["blocked"]) == (2, 1)
    row = next(r for r in data["clauses"] if r["id"] == "C-ADV-1")
    assert (row["status"], row["blocked_by"]) == ("blocked", "C-TIE-1")
    assert "blocked_by" not in next(r for r in data["clauses"] if r["id"] == "C-TIE-1")
    table = rep.table()
    assert re.search(r"^C-ADV-1 +blocked by C-TIE-1 +advance fires due entries", table, re.M)
    assert re.search(r"^C-TIE-1 +failed +equal at_ns", table, re.M)
    assert "2 failed, 1 blocked, 0 incomplete" in table


def test_C_CONF_1_one_difference_of_its_own_keeps_a_clause_failed() -> None:
    rep = _report({"C-TIE-1": ["C-TIE-1"], "C-PER-1": ["C-TIE-1", "C-PER-1"]})
    assert (rep.blocked(), rep.failed()) == ({}, ["C-TIE-1", "C-PER-1"])


def test_C_CONF_1_no_prerequisite_list_decides_who_blocks_whom() -> None:
    # C-SCH-1's rule decided the difference in C-ADV-1's program: C-SCH-1 fails though
    # its own programs passed, and C-ADV-1, which C-SCH-1's programs rely on, is blocked.
    rep = _report({"C-ADV-1": ["C-SCH-1"]})
    assert (rep.failed(), rep.blocked()) == (["C-SCH-1"], {"C-ADV-1": "C-SCH-1"})
    # The blocking clause is the one the clause's first failed test is charged to.
    rep = _report({"C-ERR-2": ["C-PER-2", "C-TIE-1"], "C-TIE-1": ["C-TIE-1"]})
    assert rep.blocked() == {"C-ERR-2": "C-PER-2"}
    assert rep.failed() == ["C-TIE-1", "C-PER-2"]


def test_C_CONF_1_python_only_tests_are_charged_by_what_they_observed() -> None:
    place = "NameError raised in clock.py:9 (_report)"
    # The same raising line as a program charged to C-ERR-1.
    rep = _report({"C-ERR-1": ["C-ERR-1"]}, {"C-BUS-1": [("broken", place)]})
    assert (rep.failed(), rep.blocked()) == (["C-ERR-1"], {"C-BUS-1": "C-ERR-1"})
    # A backend method that raised: the rule of what it returns.
    rep = _report({}, {"C-BUS-3": [("broken", "ValueError raised in clock.py:5 (cancel)")]})
    assert (rep.failed(), rep.blocked()) == (["C-CAN-1"], {"C-BUS-3": "C-CAN-1"})
    # Entries of one instant in another order: the tie rule.
    order = "firings: first difference at item 1: expected ('a', 5), observed ('b', 5)"
    rep = _report({}, {"C-BUS-3": [(order, "")]})
    assert (rep.failed(), rep.blocked()) == (["C-TIE-1"], {"C-BUS-3": "C-TIE-1"})
    # A far time that differs: exact times (C-TIME-4).
    far = (
        "firing times: first difference at item 0: expected 9007199254740993, "
        "observed 9007199254740992"
    )
    rep = _report({}, {"C-TIE-1": [(far, "")]})
    assert (rep.failed(), rep.blocked()) == (["C-TIME-4"], {"C-TIE-1": "C-TIME-4"})
    # Otherwise as the clause's programs were, else its own.
    near = "firing times: first difference at item 0: expected 5, observed 4"
    rep = _report({"C-PER-3": ["C-ADV-2"]}, {"C-PER-3": [(near, "")]})
    assert (rep.failed(), rep.blocked()) == (["C-ADV-2"], {"C-PER-3": "C-ADV-2"})
    rep = _report({}, {"C-PER-3": [(near, "")]})
    assert (rep.failed(), rep.blocked()) == (["C-PER-3"], {})


def test_C_CONF_1_exceptions_raised_at_one_place_are_one_defect() -> None:
    assert defect_key("ValueError raised in clock.py:78 (_run)") == "raised in clock.py:78 (_run)"
    assert defect_key(ORDER) == ORDER
    rep = _report(
        {"C-ERR-1": ["C-ERR-1"]},
        {
            "C-BUS-1": [("x", "ValueError raised in clock.py:9 (_report)")],
            "C-RNG-6": [("x", "ValueError raised in clock.py:10 (_report)")],
        },
    )
    assert rep.blocked() == {"C-BUS-1": "C-ERR-1"}
    assert rep.failed() == ["C-ERR-1", "C-RNG-6"]


def test_C_CONF_3_a_driver_fault_is_one_root_cause_whatever_test_it_ends() -> None:
    def crash(case: str, request: str) -> str:
        return (
            f"C-ERR-2: case {case}: driver failure: the driver exited with status 2 while "
            f"answering the request {request}\nlast lines of the driver's stderr:\n"
            "  | panic: halt at 0xc000012345 [recovered]\n  | goroutine 1 [running]:"
        )

    one = crash("err-2/a", '{"op":"advance","clock":"c","dt_ns":"10"}')
    two = crash("det-1/b", '{"op":"advance","clock":"c","dt_ns":"30"}')
    key = "driver failure: the driver exited with status N (panic: halt at N [recovered])"
    assert driver_failure_key(one) == driver_failure_key(two) == root_key(one) == key
    hang = "C-X: case y: driver failure: the driver gave no reply within 10 s to the request {}"
    assert root_key(hang) == "driver failure: the driver gave no reply within N s"


@pytest.mark.parametrize(
    ("message", "key"),
    [
        (
            "C-TIME-2: schedule(now - 1) raised nothing (it was accepted); expected ValueError",
            "first differing reply: ok true where false expected",
        ),
        (
            "C-X-RATE: firing times of 30 Hz over 1 s: expected [0, 33333334], observed "
            "[0, 33333333]; first difference at item 1: expected 33333334, observed 33333333",
            TIME,
        ),
        (
            "C-X-RATE: firing times of 30 Hz over 1 s: expected [0, 33333334], observed [0]; "
            "first difference at item 1: expected 33333334, observed nothing",
            MISSING,
        ),
        (
            "C-PER-3: 3 firings off the grid; first: firing 7 expected at 70 ns, observed at "
            "71 ns; program: a clock at 0 ns",
            TIME,
        ),
        ("C-PER-3: 5 firings, expected 7; program: a clock at 0 ns", MISSING),
        (
            "C-X-RATE: 30002 firings in 1001 s, expected 30001",
            "first differing reply: fired: an entry too many",
        ),
        (
            "C-ADV-5: case adv-5/split-1: advanced in other steps than case adv-5/split-0, the "
            "program fired otherwise: item 0 of the firings is {'fired': {'entry': 'p6', "
            "'now_ns': '1'}} here, {'fired': {'entry': 'p6', 'now_ns': '5'}} there",
            TIME,
        ),
        (
            'C-ERR-2: case err-2/x, request 4 of 6: {"op":"advance","clock":"c","dt_ns":"9"}\n'
            "  first difference: at_ns: expected '3', observed '9'",
            TIME,
        ),
        (
            "C-TIE-1: C-TIME-4: advance to 9223372036854775809 ns left now_ns() at "
            "9223372036854775808 ns; expected 9223372036854775809 ns",
            "first differing reply: now_ns differs",
        ),
    ],
)
def test_C_CONF_3_in_process_wordings_share_the_programs_keys(message: str, key: str) -> None:
    assert root_key(message) == key


def test_C_CONF_1_the_matrix_shows_a_blocked_cell_with_its_blocker() -> None:
    data = _report({"C-TIE-1": ["C-TIE-1"], "C-ADV-1": ["C-TIE-1"]}).to_json()
    page = render_matrix([data])
    assert '<span class="blk">blocked</span>' in page
    assert '<td class="blk"><a href="#b0-C-ADV-1">blocked by C-TIE-1</a></td>' in page
    assert "<h3>C-ADV-1 blocked by C-TIE-1: x:y</h3>" in page
    row = next(r for r in data["clauses"] if r["id"] == "C-ADV-1")
    del row["blocked_by"]
    with pytest.raises(
        ValueError,
        match=r"^reports\[0\] is not a conformance report: clauses\[4\] \(C-ADV-1\) is blocked "
        r"but has no 'blocked_by'$",
    ):
        render_matrix([data])


def test_C_CONF_3_a_blocked_clauses_lone_failure_says_what_blocks_it() -> None:
    table = _report({"C-TIE-1": ["C-TIE-1"], "C-BUS-1": ["C-TIE-1"]}).table()
    assert "\nFAILED C-BUS-1 (blocked by C-TIE-1): test_C_BUS_1_program[p0]\n  C-BUS-1: " in table
    assert "\nFAILED C-TIE-1: test_C_TIE_1_program[p0]\n" in table
