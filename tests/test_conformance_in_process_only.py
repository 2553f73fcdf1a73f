"""C-WIRE-6, C-WIRE-8: a clause is checked once, by its programs; other tests say why they exist.

Every clause the protocol carries is checked by its clause programs, which run in
process and through a driver by the same runner. A hand-written in-process test is
kept only for what the protocol cannot carry (numpy integers, callback objects, the
bus, memory, subprocesses, a declared horizon's far starts), and its docstring
says which in a paragraph starting "In process only:". ``docs/clauses.md`` lists
them under their clause (``backends.matrix.clause_table``).
"""

from __future__ import annotations

from backends.matrix import in_process_only

from simclock_conformance import CLAUSES, ClockConformance, Rig


def test_C_WIRE_8_every_in_process_test_says_what_the_protocol_cannot_carry() -> None:
    tests = in_process_only()
    missing = [name for name, _, why in tests if not why]
    assert missing == []
    # Every clause named exists, and a test is listed once.
    assert {clause for _, clause, _ in tests} <= set(CLAUSES)
    assert len({name for name, _, _ in tests}) == len(tests)


def test_C_WIRE_8_the_list_holds_every_hand_written_test_and_no_program() -> None:
    names = {name for name, _, _ in in_process_only()}
    suite = {n for n in dir(ClockConformance) if n.startswith("test_")}
    programs = {n for n in suite if "_program" in n}
    assert programs, "the clause programs are tests of the suite"
    assert names == suite - programs - {"test_SM_ORACLE_backend_agrees_with_reference_clock"}


def test_C_WIRE_8_a_test_without_its_reason_is_listed_with_none() -> None:
    class Suite(ClockConformance):
        def test_C_BUS_1_one_global_sequence(self, rig: Rig) -> None:
            """Overridden, without the paragraph."""

        def test_C_BUS_1_another_check(self, rig: Rig) -> None:
            """A new test.

            In process only:   the reason,
            on two lines.
            """

    rows = {name: (clause, why) for name, clause, why in in_process_only(Suite)}
    assert rows["test_C_BUS_1_one_global_sequence"] == ("C-BUS-1", "")
    assert rows["test_C_BUS_1_another_check"] == ("C-BUS-1", "the reason, on two lines.")
    assert rows["test_C_BUS_2_every_subscriber_sees_total_order"] == (
        "C-BUS-2",
        "the bus is a Python object the protocol does not carry.",
    )
