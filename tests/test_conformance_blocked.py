"""Attribution of failures to clauses (C-CONF-1, C-CONF-3): "blocked by C-..." in every report.

A failed clause whose every failure is the defect (the same root key) of a failed
clause it relies on (``_clauses.PREREQUISITES``) is reported as blocked by that
clause; the verdict stays NOT CONFORMING. Unit tests on hand-made reports; the
self-check (``test_conformance_selfcheck.py``) compares every broken backend's
failed clauses exactly.
"""

from __future__ import annotations

import re

import pytest

from simclock_conformance import CLAUSES
from simclock_conformance.clauses._clauses import PREREQUISITES, prerequisites
from simclock_conformance.report._html import render_matrix
from simclock_conformance.report._outcome import Outcome
from simclock_conformance.report._report import BackendReport
from simclock_conformance.report._rootkey import defect_key, root_key

ORDER = "first differing reply: fired order differs at equal now_ns"
TIME = "first differing reply: fired now_ns differs"
MISSING = "first differing reply: fired: an expected entry is missing"


def _report(failures: dict[str, list[str]]) -> BackendReport:
    """Every clause passed once, then ``clause -> [root of each failed test]``."""
    rep = BackendReport("x:y")
    for clause in CLAUSES:
        rep.add(clause, Outcome(f"test_{clause.replace('-', '_')}_ok", "passed"))
    for clause, roots in failures.items():
        for i, root in enumerate(roots):
            name = f"test_{clause.replace('-', '_')}_bad{i}"
            rep.add(clause, Outcome(name, "failed", f"{clause}: broken", root=root))
    return rep


def test_C_CONF_1_prerequisites_are_registered_clauses_in_no_self_loop() -> None:
    assert {c for reqs in PREREQUISITES.values() for c in reqs} - set(CLAUSES) == set()
    assert set(PREREQUISITES) - set(CLAUSES) == set()
    assert [c for c, reqs in PREREQUISITES.items() if c in reqs] == []
    assert prerequisites("SM-ORACLE") == ()  # the state machine fails for any defect
    assert prerequisites("C-REP-9") == ()  # a clause without a row relies on none
    assert prerequisites("C-TIE-1") == ("C-ADV-2", "C-ADV-1", "C-ADV-3", "C-SCH-1", "C-TIME-4")
    with pytest.raises(TypeError, match=r"^clause_id must be a str, got int 1$"):
        prerequisites(1)  # type: ignore[arg-type]


def test_C_CONF_1_a_failure_of_a_prerequisites_defect_is_blocked_by_it() -> None:
    rep = _report({"C-TIE-1": [ORDER], "C-ADV-1": [ORDER, ORDER], "SM-ORACLE": [ORDER]})
    assert rep.blocked() == {"C-ADV-1": "C-TIE-1"}
    assert (rep.status("C-ADV-1"), rep.status("C-TIE-1")) == ("blocked", "failed")
    assert rep.failed() == ["C-TIE-1", "SM-ORACLE"]  # SM-ORACLE relies on nothing
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
    # The root-cause block still lists every failed test once, blocked clauses' too.
    (cause,) = rep.root_causes()
    assert cause["clauses"] == ["C-ADV-1", "C-TIE-1", "SM-ORACLE"] and len(cause["tests"]) == 4
    assert table.count("ROOT CAUSE") == 1


def test_C_CONF_1_a_failure_of_its_own_keeps_a_clause_failed() -> None:
    # C-PER-1 also misses an entry: a defect C-TIE-1 does not show.
    rep = _report({"C-TIE-1": [ORDER], "C-PER-1": [ORDER, MISSING]})
    assert (rep.blocked(), rep.failed()) == ({}, ["C-TIE-1", "C-PER-1"])
    # The other way round the evidence holds: C-TIE-1 relies on C-ADV-1 (its ties fire
    # in advances), and C-ADV-1 shows C-TIE-1's one defect too.
    rep = _report({"C-TIE-1": [ORDER], "C-ADV-1": [ORDER, MISSING]})
    assert (rep.blocked(), rep.failed()) == ({"C-TIE-1": "C-ADV-1"}, ["C-ADV-1"])
    # The same defect in a clause that is not a prerequisite blocks nothing.
    rep = _report({"C-RNG-4": [ORDER], "C-ADV-1": [ORDER]})
    assert (rep.blocked(), rep.failed()) == ({}, ["C-ADV-1", "C-RNG-4"])


def test_C_CONF_1_two_clauses_failing_alike_never_block_each_other() -> None:
    # C-ADV-1 and C-SCH-1 rely on each other and fail alike: a missing firing is
    # C-ADV-1's subject, so it fails.
    rep = _report({"C-SCH-1": [MISSING], "C-ADV-1": [MISSING], "C-TIME-4": [MISSING]})
    assert rep.failed() == ["C-ADV-1"]
    assert rep.blocked() == {"C-TIME-4": "C-ADV-1", "C-SCH-1": "C-ADV-1"}
    # Firings at other times are C-ADV-2's subject (a callback reading another time).
    five = ("C-ADV-1", "C-ADV-2", "C-ADV-3", "C-TIE-1", "C-PER-1")
    rep = _report({c: [TIME] for c in five})
    assert rep.failed() == ["C-ADV-2"]
    assert set(rep.blocked().values()) == {"C-ADV-2"}
    # Ties in another order are C-TIE-1's, though C-ADV-1 comes first in the report.
    rep = _report({c: [ORDER] for c in five})
    assert rep.failed() == ["C-TIE-1"]
    assert set(rep.blocked().values()) == {"C-TIE-1"}
    # Missing firings are C-ADV-1's, though C-TIE-1 relies on it too.
    rep = _report({c: [MISSING] for c in five if c != "C-ADV-2"})
    assert rep.failed() == ["C-ADV-1"]
    # A kind no clause owns: the most basic clause of the cycle (C-ADV-2 here).
    odd = "first differing reply: nested differs"
    rep = _report({c: [odd] for c in five})
    assert rep.failed() == ["C-ADV-2"]
    # now_ns() elsewhere than an advance's target is C-TIME-4's (far times not exact),
    # though C-TIE-1 is the more basic clause: Drake's far ties in float seconds.
    now = "first differing reply: now_ns differs"
    rep = _report({"C-TIME-4": [now, TIME], "C-TIE-1": [now, TIME]})
    assert (rep.failed(), rep.blocked()) == (["C-TIME-4"], {"C-TIE-1": "C-TIME-4"})


def test_C_CONF_1_a_clause_whose_explainers_are_all_blocked_fails() -> None:
    # C-RNG-3 relies on C-RNG-2 only through RNG-2's defect, blocked by C-RNG-4; C-RNG-3
    # does not list C-ERR-1, so it is not blocked by what blocks C-RNG-2.
    key = "ValueError raised in clock.py:9 (_run)"
    rep = _report({"C-ERR-1": [key], "C-RNG-2": [key], "C-RNG-3": [key]})
    assert rep.blocked() == {"C-RNG-2": "C-ERR-1"}
    assert rep.failed() == ["C-ERR-1", "C-RNG-3"]


def test_C_CONF_1_exceptions_raised_at_one_place_are_one_defect() -> None:
    assert defect_key("ValueError raised in clock.py:78 (_run)") == "raised in clock.py:78 (_run)"
    assert defect_key(ORDER) == ORDER
    rep = _report(
        {
            "C-ERR-1": ["LookupError raised in clock.py:78 (_run)"],
            "C-BUS-1": ["ValueError raised in clock.py:78 (_run)"],
            "C-RNG-6": ["ValueError raised in clock.py:79 (_run)"],
        }
    )
    assert rep.blocked() == {"C-BUS-1": "C-ERR-1"}
    assert rep.failed() == ["C-ERR-1", "C-RNG-6"]


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
    data = _report({"C-TIE-1": [ORDER], "C-ADV-1": [ORDER]}).to_json()
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
    # Two exceptions raised at one place are one defect, but two root causes of one test.
    rep = _report(
        {
            "C-ERR-1": ["LookupError raised in clock.py:78 (_run)"],
            "C-BUS-1": ["ValueError raised in clock.py:78 (_run)"],
        }
    )
    table = rep.table()
    assert "\nFAILED C-BUS-1 (blocked by C-ERR-1): test_C_BUS_1_bad0\n  C-BUS-1: broken" in table
    assert "\nFAILED C-ERR-1: test_C_ERR_1_bad0\n" in table
