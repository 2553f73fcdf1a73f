"""Each difference charged to the rule it breaks (C-CONF-3), not to the program that found it.

The oracle's replies carry their reasons (``protocol._reasons``): every part of
an expected reply names the clause whose rule decided it, and the first
difference of a failing program is charged there. These tests plant one defect
in a correct backend (the sorted list of ``tests/backends``), run every clause
program on it in process, through the engine ``serve`` uses, and compare the
set of clauses charged exactly; then the report's statuses (failed, blocked by)
on hand-made outcomes; then one test per entry of the precedence table.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from backends.sorted_list import SortedListClock, Timer

from simclock import Bus, SimclockValueError
from simclock_conformance import CLAUSES
from simclock_conformance.clauses._programs import CASES
from simclock_conformance.protocol._backends import PythonBackend
from simclock_conformance.protocol._engine import Engine
from simclock_conformance.protocol._precedence import PRECEDENCE, decide
from simclock_conformance.protocol._reasons import reply_reasons
from simclock_conformance.protocol._wire_core import SPLIT, expected_replies, run_program
from simclock_conformance.report._charges import settle_either
from simclock_conformance.report._outcome import Outcome
from simclock_conformance.report._report import BackendReport

_CHARGED = re.compile(r"^\s*charged to: (\S+(?: or \S+)*)", re.M)


def _charges(cls: type[SortedListClock]) -> dict[str, set[str]]:
    """``clause charged -> ids of the programs whose first difference is charged to it``."""

    def factory(seed: int, bus: Bus) -> SortedListClock:
        return cls(seed, bus)

    engine = Engine(PythonBackend(factory, "planted"))
    splits: dict[str, list[dict[str, Any]]] = {}
    found: dict[str, set[str]] = {}
    for case in sorted(CASES, key=lambda c: c.clauses != [SPLIT]):  # split-0 first
        if any(f not in engine.features for f in case.requires):
            continue
        problem, _ = run_program(engine.handle, case, engine.features, splits)
        engine.clocks.clear()
        if problem is not None:
            charged = _CHARGED.search(problem)
            assert charged, problem
            found.setdefault(charged.group(1), set()).add(case.id)
    # As the report does: a charge one reply cannot settle goes where others went.
    settled = {c for c in found if " or " not in c}
    out: dict[str, set[str]] = {}
    for charged_to, ids in found.items():
        out.setdefault(settle_either(charged_to, settled, CLAUSES), set()).update(ids)
    return out


class _RefusesNow(SortedListClock):
    def _check_not_past(self, at: int) -> None:
        if at <= self._now:  # defect: at == now refused too
            raise SimclockValueError(f"at_ns={at} is not after now={self._now}")


class _RefusesAbove63(SortedListClock):
    def _time(self, value: object, name: str) -> int:
        ns = super()._time(value, name)
        if ns > 2**63 - 1:  # defect: a signed 64-bit store
            raise SimclockValueError(f"{name} must be <= 2**63 - 1, got {ns}")
        return ns


class _NotRearmedButReported(SortedListClock):
    def _run(self, at: int, timer: Timer) -> bool:
        try:
            timer.cb()
        except Exception as exc:
            timer.failed += 1
            self._report(at, timer.cb, exc)
            timer.cancelled = True  # defect: a periodic that raised is not re-armed
        except BaseException:
            timer.cancelled = True  # defect: nor after a halting one
            raise
        return True


class _PeekRaises(SortedListClock):
    def next_event_ns(self) -> int | None:
        raise RuntimeError("no peek here")  # defect: the optional method raises


class _NowNone(SortedListClock):
    def now_ns(self) -> int:
        return None  # type: ignore[return-value]  # defect


class _CancelRaises(SortedListClock):
    def _cancel(self, timer: Timer) -> None:
        raise SimclockValueError("cancel is not supported")  # defect


def test_C_SCH_1_a_time_equal_to_now_refused_is_charged_to_C_SCH_1() -> None:
    assert set(_charges(_RefusesNow)) == {"C-SCH-1"}


def test_C_TIME_4_times_above_2_63_minus_1_refused_are_charged_to_C_TIME_4() -> None:
    assert set(_charges(_RefusesAbove63)) == {"C-TIME-4"}


def test_C_ERR_1_a_periodic_not_rearmed_after_it_raised_is_charged_to_the_error_clauses() -> None:
    # Nothing involves a past time: no C-SCH-1; an Exception leaves the periodic
    # scheduled (C-ERR-1), a halting BaseException re-arms it too (C-ERR-2).
    charges = _charges(_NotRearmedButReported)
    assert set(charges) == {"C-ERR-1", "C-ERR-2"}
    assert "per-2/repush-after-raise" in charges["C-ERR-1"]
    assert "err-2/halting-periodic-rearmed" in charges["C-ERR-2"]


def test_C_X_PEEK_a_raising_next_event_ns_is_charged_to_C_X_PEEK_only() -> None:
    assert set(_charges(_PeekRaises)) == {"C-X-PEEK"}


def test_C_TIME_1_now_ns_returning_None_is_charged_to_C_TIME_1() -> None:
    assert set(_charges(_NowNone)) == {"C-TIME-1"}


def test_C_CAN_1_a_raising_cancel_is_charged_to_C_CAN_1() -> None:
    assert set(_charges(_CancelRaises)) == {"C-CAN-1"}


def test_C_CONF_3_a_correct_backend_is_charged_nothing() -> None:
    assert _charges(SortedListClock) == {}


def test_C_CONF_3_every_reply_part_of_every_program_has_a_rule() -> None:
    for case in CASES:
        for reasons in reply_reasons(case.requests, expected_replies(case)):
            assert reasons.parts["now_ns"] and reasons.parts["stored"], case.id
            assert all(f.time and f.due for f in reasons.firings), case.id


# -- the report: failed, blocked by, the verdict --------------------------------


def _report(failures: dict[str, list[str]]) -> BackendReport:
    """Every clause passed once, then ``clause -> [the clause each failed program is charged]``."""
    rep = BackendReport("x:y")
    for clause in CLAUSES:
        rep.add(clause, Outcome(f"test_{clause.replace('-', '_')}_ok", "passed"))
    for clause, charges in failures.items():
        for i, charged in enumerate(charges):
            name = f"test_{clause.replace('-', '_')}_program[{i}]"
            text = f"{clause}: case x, request 2 of 3: ...\n  charged to: {charged}"
            rep.add(clause, Outcome(name, "failed", text))
    return rep


def test_C_CONF_1_a_clause_charged_fails_and_one_failing_only_through_others_is_blocked() -> None:
    rep = _report({"C-SCH-1": ["C-SCH-1"], "C-ADV-1": ["C-SCH-1"], "C-TIME-2": ["C-SCH-1"]})
    assert rep.failed() == ["C-SCH-1"]
    assert rep.blocked() == {"C-TIME-2": "C-SCH-1", "C-ADV-1": "C-SCH-1"}
    assert rep.verdict == "NOT CONFORMING"
    data = rep.to_json()
    assert (data["failed"], data["blocked"]) == (
        ["C-SCH-1"],
        {"C-TIME-2": "C-SCH-1", "C-ADV-1": "C-SCH-1"},
    )


def test_C_CONF_1_a_clause_charged_by_another_clauses_program_fails() -> None:
    # C-X-PEEK's own programs passed; a difference in another's is charged to it.
    rep = _report({"C-ADV-1": ["C-X-PEEK"]})
    assert (rep.status("C-X-PEEK"), rep.status("C-ADV-1")) == ("failed", "blocked")
    assert rep.blocked() == {"C-ADV-1": "C-X-PEEK"}


def test_C_CONF_1_a_charge_the_report_lacks_falls_back_in_order() -> None:
    rep = BackendReport("x:y", clause_set=["C-TIME-3", "C-SCH-1"])
    text = "C-TIME-3: case x\n  charged to: C-WIRE-2 (else C-TIME-3)"
    rep.add("C-TIME-3", Outcome("test_C_TIME_3_program[x]", "failed", text))
    assert rep.failed() == ["C-TIME-3"]


def test_C_CONF_1_a_charge_a_reply_cannot_settle_goes_to_the_rule_charged_elsewhere() -> None:
    either = "C-PER-2 or C-TIE-1"
    assert _report({"C-TIE-1": ["C-TIE-1"], "C-CAN-2": [either]}).blocked() == {
        "C-CAN-2": "C-TIE-1"
    }
    assert _report({"C-PER-2": ["C-PER-2"], "C-CAN-2": [either]}).blocked() == {
        "C-CAN-2": "C-PER-2"
    }
    assert _report({"C-CAN-2": [either]}).failed() == ["C-PER-2"]  # the first, by precedence


def test_C_CONF_1_aggregates_are_charged_to_themselves() -> None:
    rep = _report({"SM-ORACLE": ["C-TIE-1"]})
    assert rep.failed() == ["SM-ORACLE"]
    assert rep.blocked() == {}


def test_C_CONF_1_a_python_test_ending_in_a_programs_refusal_is_charged_as_that_program() -> None:
    # The same check refusing another value: the charge the oracle's reasons gave the program.
    rep = _report({})
    refused = "SimclockValueError: at_ns=9223372036854775809 does not fit a signed 64-bit time"
    program = (
        "C-TIME-4: case x, request 2 of 3: ...\n"
        "  first difference: ok: expected True, observed False\n"
        '  observed reply: {"ok":false,"error":"ValueError","message":"'
        + refused.replace("9223372036854775809", "18446744073709551615")
        + '","now_ns":"0"}\n'
        "  charged to: C-TIME-4 (else C-SCH-1)"
    )
    rep.add("C-TIME-4", Outcome("test_C_TIME_4_program[x]", "failed", program))
    root = "SimclockValueError raised in clock.py:5 (_time)"
    rep.add("C-TIE-1", Outcome("test_C_TIE_1_far", "failed", f"C-TIE-1: {refused}", root=root))
    assert rep.failed() == ["C-TIME-4"]
    assert rep.blocked() == {"C-TIE-1": "C-TIME-4"}


def test_C_ERR_1_a_callbacks_exception_let_out_of_the_backend_is_charged_to_C_ERR_1() -> None:
    from simclock_conformance.report._charges import python_charge
    from simclock_conformance.report._rootkey import FROM_CALLBACK, defect_key

    root = "ValueError raised in clock.py:9 (_fire)"
    failed = Outcome("test_C_DET_1_x", "failed", "C-DET-1: ValueError: boom", root=root)
    assert python_charge("C-DET-1", failed, root, CLAUSES, {}, None) == "C-DET-1"
    failed.root = root + FROM_CALLBACK
    assert python_charge("C-DET-1", failed, failed.root, CLAUSES, {}, None) == "C-ERR-1"
    assert defect_key(failed.root) == defect_key(root) == "raised in clock.py:9 (_fire)"


def test_C_CAN_4_memory_measured_is_charged_to_C_CAN_4_whatever_its_programs_broke() -> None:
    # No program's reply measures memory: a C-CAN-4 program charged elsewhere (its entries
    # fired out of order) does not explain tombstones that grow memory.
    rep = _report({"C-CAN-4": ["C-ADV-1"]})
    grew = "C-CAN-4: memory grew by [2169696, 2166784] bytes over two windows"
    rep.add("C-CAN-4", Outcome("test_C_CAN_4_tombstones_are_bounded", "failed", grew))
    assert rep.failed() == ["C-ADV-1", "C-CAN-4"]


# -- precedence: one test per entry ------------------------------------------------


@pytest.mark.parametrize(("winner", "loser", "why"), PRECEDENCE, ids=lambda x: str(x)[:24])
def test_C_CONF_3_precedence_entry(winner: str, loser: str, why: str) -> None:
    assert decide([loser, winner]) == (winner, loser)
    assert decide([winner, loser]) == (winner, loser)
    assert why  # each entry says why


def _firing_time_rules(requests: list[dict[str, Any]], entry: str) -> tuple[str, ...]:
    reasons = reply_reasons(requests, _replies(requests))
    return next(f.time for r in reasons for f in r.firings if f.entry == entry)


def _replies(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from simclock_conformance.protocol._backends import OracleBackend

    engine = Engine(OracleBackend())
    return [engine.handle(r) for r in requests]


def _req(op: str, **fields: Any) -> dict[str, Any]:
    return {"op": op, "clock": "c", **fields}


def test_C_TIME_4_a_firing_beyond_2_53_is_charged_to_C_TIME_4_before_its_timing_rule() -> None:
    far = 2**53 + 1
    program = [
        _req("create", seed="0"),
        _req("schedule", entry="a", at_ns=str(far), on_fire=[]),
        _req("schedule_periodic", entry="p", period_ns=str(far), phase_ns="0", on_fire=[]),
        _req("advance", dt_ns=str(far)),
    ]
    assert _firing_time_rules(program, "a") == ("C-TIME-4", "C-ADV-1")
    assert _firing_time_rules(program, "p") == ("C-PER-1",)  # at 0: near
    near = [*program[:1], _req("schedule", entry="a", at_ns="5", on_fire=[]), program[3]]
    assert _firing_time_rules(near, "a") == ("C-ADV-1",)


def test_C_SCH_1_a_refusal_of_now_beyond_2_63_is_settled_between_C_SCH_1_and_C_TIME_4() -> None:
    # at_ns == now is C-SCH-1's own wording; beyond 2**63 - 1 it is C-TIME-4's range too:
    # one refusal cannot tell which the clock broke, so the report settles it.
    start = str(2**64 - 8)
    program = [
        _req("create", seed="0", start_ns=start),
        _req("schedule", entry="a", at_ns=start, on_fire=[]),
        _req("schedule", entry="b", at_ns=str(2**64 - 4), on_fire=[]),
    ]
    now, later = reply_reasons(program, _replies(program))[1:]
    assert now.parts["ok"] == ("C-SCH-1 or C-TIME-4",)
    assert later.parts["ok"] == ("C-TIME-4", "C-SCH-1")
    assert settle_either("C-SCH-1 or C-TIME-4", {"C-SCH-1"}, CLAUSES) == "C-SCH-1"
    assert settle_either("C-SCH-1 or C-TIME-4", {"C-TIME-4"}, CLAUSES) == "C-TIME-4"


# -- reports a backend author reads once -----------------------------------------


def test_C_CONF_3_a_long_program_is_printed_in_at_most_40_lines() -> None:
    from simclock_conformance.report._rootkey import PROGRAM_LINES, program_lines

    program = "\n".join(f"request {i}" for i in range(1, 2092))
    shown = program_lines(program, "/tmp/r.json")
    assert PROGRAM_LINES == 40 and len(shown) == 40
    assert shown[:10] == [f"request {i}" for i in range(1, 11)]
    assert shown[10] == (
        "... 2052 requests left out; the whole program is in the JSON report /tmp/r.json ..."
    )
    assert shown[11:] == [f"request {i}" for i in range(2063, 2092)]  # up to the failing one
    assert program_lines(program)[10] == (
        "... 2052 requests left out; run with --json REPORT to keep the whole program ..."
    )
    short = "\n".join(f"request {i}" for i in range(40))
    assert program_lines(short) == short.splitlines()


def test_C_CONF_3_a_failure_quotes_only_the_stderr_written_during_its_test() -> None:
    import sys
    import time

    from simclock_conformance.protocol._driver import Driver, DriverError

    script = (
        "import sys\n"
        "for n, line in enumerate(sys.stdin):\n"
        "    if n == 0:\n"
        "        print('left over from an earlier test', file=sys.stderr, flush=True)\n"
        "        print('{\"ok\":true}', flush=True)\n"
        "    else:\n"
        "        print('this test: giving up', file=sys.stderr, flush=True)\n"
        "        sys.exit(3)\n"
    )
    driver = Driver([sys.executable, "-c", script], deadline_s=60)
    try:
        assert driver.request({"op": "observe", "clock": "c"}) == {"ok": True}
        for _ in range(1000):  # the stderr reader thread takes the earlier line first
            if driver.stderr_tail():
                break
            time.sleep(0.01)
        assert driver.stderr_tail() == ["left over from an earlier test"]
        driver.mark()
        assert driver.stderr_tail() == []
        with pytest.raises(DriverError) as failure:
            driver.request({"op": "observe", "clock": "c"})
    finally:
        driver.kill()
    assert failure.value.stderr == ["this test: giving up"]
    assert "left over" not in str(failure.value)


def test_C_WIRE_2_a_past_time_accepted_is_not_charged_to_C_WIRE_2() -> None:
    # Through the protocol: C-WIRE-2's program schedules in the past among its numbers;
    # the clock that accepts a past time breaks C-SCH-1 there, not the digit strings.
    from simclock_conformance.entry._wire_run import LocalDriver, run_driver
    from simclock_conformance.kit._harness import load_factory

    spec = "backends.broken:past_accepted"
    factory = load_factory(spec)
    report = run_driver(
        [spec],
        clauses=["C-WIRE-2", "C-TIME-3", "C-SCH-1"],
        vectors=False,
        make_driver=lambda: LocalDriver(factory, spec),
    )
    assert report.failed() == ["C-SCH-1"]
    assert report.blocked() == {"C-TIME-3": "C-SCH-1", "C-WIRE-2": "C-SCH-1"}
    assert report.verdict == "NOT CONFORMING"


def test_C_DET_1_a_state_machine_replayed_otherwise_is_one_nondeterminism_everywhere() -> None:
    from simclock_conformance.report._charges import REPLAYED_OTHERWISE

    rep = _report({})
    message = f"{REPLAYED_OTHERWISE} when it was replayed (...); first outcome: x"
    rep.add("SM-ORACLE", Outcome("state-machine", "failed", message))
    assert rep.failed() == ["C-DET-1", "SM-ORACLE"]
    data = rep.to_json()
    assert (data["deterministic"], data["failed"]) == (False, ["C-DET-1", "SM-ORACLE"])
    assert [e["test"] for e in data["nondeterministic"]] == ["state-machine"]
    table = rep.table()
    assert table.splitlines()[2].startswith("NOT DETERMINISTIC: 1 failed test gave")
    assert re.search(r"^C-DET-1 +failed ", table, re.M)
    # A deterministic report says so everywhere too.
    rep = _report({"C-TIE-1": ["C-TIE-1"]})
    assert rep.to_json()["deterministic"] is True and "NOT DETERMINISTIC" not in rep.table()
    assert rep.status("C-DET-1") == "passed"
