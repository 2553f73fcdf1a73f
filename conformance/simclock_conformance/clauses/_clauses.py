"""The registry of clauses the conformance suite reports on (SPEC §14).

Every test of the suite is named ``test_<CLAUSE>_<what>`` where ``<CLAUSE>`` is
a registered clause id with dashes turned into underscores
(``test_C_TIE_1_equal_times_fifo``); the report groups test outcomes by that
id. A suite module for another family of backends (e.g. replay, ``C-REP-*``)
calls :func:`register_clauses` at import time; see ``conformance/README.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from simclock import SimclockTypeError, SimclockValueError
from simclock_conformance.kit._args import check_str, plain_str, quote, read_iterable, typed

__all__ = [
    "CLAUSES",
    "ORACLE_CLAUSE",
    "PREREQUISITES",
    "WIRE_ONLY",
    "Clause",
    "clause_of_test",
    "prerequisites",
    "register_clauses",
]

# A registry of more rows than this is a mistake; an endless iterable is never read
# to its end.
_MAX_ROWS = 10_000

_ID = re.compile(r"C-[A-Z]+-[A-Z0-9]+|SM-[A-Z]+")


@dataclass(frozen=True, slots=True)
class Clause:
    """One row of the report: a SPEC clause id, its section and a one-line summary."""

    id: str
    section: str
    summary: str
    optional: bool = False
    """True when a backend may lack the feature: "not applicable" is then an answer (C-CONF-1)."""

    @property
    def test_prefix(self) -> str:
        """The prefix every test of this clause carries: ``test_C_TIE_1_``."""
        return "test_" + self.id.replace("-", "_") + "_"


ORACLE_CLAUSE = "SM-ORACLE"
"""Pseudo-clause of the Hypothesis state machine that compares a backend to the oracle."""

_BUILTIN: tuple[tuple[str, str, str], ...] = (
    ("C-TIME-1", "§1", "now_ns() is an int; a new clock starts at 0"),
    ("C-TIME-2", "§1", "now_ns() never decreases"),
    ("C-TIME-3", "§1", "time arguments are time-ints; floats refused, never rounded"),
    ("C-TIME-4", "§1", "times exact up to 2**64-1; beyond, exact or a clean ValueError"),
    ("C-ADV-1", "§1", "advance fires due entries in (at_ns, seq) order, then now = target"),
    ("C-ADV-2", "§1", "during a callback now_ns() equals the entry's at_ns"),
    (
        "C-ADV-3",
        "§1",
        "entries pushed by a callback at or before the target fire in the same advance",
    ),
    ("C-ADV-4", "§1", "advance from inside a callback raises RuntimeError and changes nothing"),
    ("C-ADV-5", "§1", "advance(a); advance(b) fires exactly what advance(a+b) fires"),
    ("C-SCH-1", "§1", "schedule needs at >= now; at == now fires on the next advance(0)"),
    ("C-SCH-2", "§1", "schedule* returns a frozen-dataclass Handle with cancel"),
    ("C-TIE-1", "§1", "equal at_ns fire in push order (FIFO)"),
    ("C-PER-1", "§1", "periodic grid phase + k*period, first point >= now at the call"),
    ("C-PER-2", "§1", "periodic re-pushed after its callback with a fresh seq"),
    ("C-PER-3", "§1", "no drift: n-th firing exactly at phase + n*period"),
    ("C-CAN-1", "§1", "cancel never raises, from anywhere; repeating it does nothing"),
    ("C-CAN-2", "§1", "once cancel returns the entry never fires; a periodic stops"),
    ("C-CAN-3", "§1", "cancelling an entry that already fired is a no-op"),
    ("C-CAN-4", "§1", "tombstones <= 2*live + 1024: schedule/cancel churn cannot grow memory"),
    ("C-ERR-1", "§1", "a raising callback is reported on the bus; the others still fire"),
    ("C-ERR-2", "§1", "BaseException propagates; the clock stays consistent"),
    ("C-DET-1", "§1", "same seed and calls give the same run in any process"),
    ("C-STEP-1", "§1", "step_ns() is a positive int"),
    ("C-RNG-1", "§2", "random_source() is the root: label '/', the scenario seed"),
    ("C-RNG-2", "§2", "child streams derive from a stable hash of the label path"),
    ("C-RNG-3", "§2", "hierarchical labels; child('a').child('b') == child('a/b')"),
    ("C-RNG-4", "§2", "streams are independent of creation order and of other draws"),
    ("C-RNG-5", "§2", "numpy_rng() returns the stream's Generator, the same object"),
    ("C-RNG-6", "§2", "the backend never touches global random / numpy.random state"),
    ("C-BUS-1", "§3", "one global publish sequence across topics"),
    ("C-BUS-2", "§3", "every subscriber receives the total order"),
    ("C-BUS-3", "§3", "future-stamped messages are delivered when the clock reaches them"),
    ("C-BUS-4", "§3", "a raising subscriber does not stop the others and is reported"),
    ("C-X-PEEK", "§15", "next_event_ns() is the earliest live entry or None"),
    ("C-X-RATE", "§15", "schedule_rate fires at phase + ceil(k*1e9/rate), exactly"),
    ("C-X-STATS", "§15", "periodic schedules report fired, skipped and overrun counts"),
    (
        ORACLE_CLAUSE,
        "§14",
        "Hypothesis state machine: backend and simclock_oracles.ReferenceClock agree",
    ),
)

CLAUSES: dict[str, Clause] = {}
"""Every registered clause by id, in report order."""


def register_clauses(
    clauses: Iterable[tuple[str, str, str]], *, optional: bool | None = None
) -> None:
    """Add ``(id, section, summary)`` rows to the report (idempotent for identical rows).

    Ids look like ``C-REP-1``; re-registering an id with a different summary is a
    ``ValueError`` so two suite modules cannot silently claim the same clause.
    Every row is checked before any is added: a refused call registers nothing.
    ``SimclockTypeError`` for ``clauses`` that is not an iterable of 3-tuples
    of ``str`` (or raises while read) and for an ``optional`` that is not a
    ``bool`` or ``None``; ``SimclockValueError`` for a malformed or
    conflicting id.

    ``optional``: whether a backend may be "not applicable" to these clauses
    (C-CONF-1). By default only the ``C-X-*`` clauses are; a family of clauses
    for one kind of backend (``C-REP-*`` for replay backends) passes True.
    A mandatory clause skipped for any reason makes the verdict INCOMPLETE.
    """
    if optional is not None and type(optional) is not bool:
        raise SimclockTypeError(f"optional must be True, False or None, got {typed(optional)}")
    rows = read_iterable(
        clauses,
        "clauses",
        "an iterable of (id, section, summary) rows",
        _MAX_ROWS,
        SimclockTypeError,
        SimclockValueError,
    )
    staged: dict[str, Clause] = {}
    for row in rows:
        if not isinstance(row, tuple | list) or len(row) != 3:
            raise SimclockTypeError(
                f"clauses must hold (id, section, summary) tuples of str, got {typed(row)}"
            )
        if not all(isinstance(part, str) for part in row):
            raise SimclockTypeError(
                f"clauses must hold (id, section, summary) tuples of str, got {quote(row)}"
            )
        # Plain copies: a str subclass's __hash__/__eq__ never run in the registry.
        clause_id, section, summary = (plain_str(part) for part in row)
        if not _ID.fullmatch(clause_id):
            raise SimclockValueError(
                f"clause id {quote(clause_id)} is malformed; use the SPEC form, e.g. 'C-REP-1'"
            )
        is_optional = clause_id.startswith("C-X-") if optional is None else optional
        new = Clause(clause_id, section, summary, is_optional)
        old = staged.get(clause_id) or CLAUSES.get(clause_id)
        if old is not None and old != new:
            raise SimclockValueError(
                f"clause {clause_id!r} is already registered as {quote(old.summary)}; "
                "register each clause once"
            )
        staged[clause_id] = new
    CLAUSES.update(staged)


register_clauses(_BUILTIN)

WIRE_ONLY = ("C-X-BITS", "C-WIRE-2", "C-WIRE-7")
"""Clauses only a driver run reports (SPEC §18); an in-process report leaves them out."""

register_clauses(
    [
        ("C-X-BITS", "§18", "draw returns simclock's raw PCG64 streams, bit for bit"),
        ("C-WIRE-2", "§18", "every protocol integer is a string of digits; others refused"),
        ("C-WIRE-7", "§18", "the golden vectors replay with the recorded replies"),
    ]
)


_SCHEDULING = ("C-TIE-1", "C-ADV-2", "C-ADV-1", "C-ADV-3", "C-SCH-1")
# Most clause tests schedule entries, advance and compare the firing trace, with the
# time each callback read: their expected traces hold only if ties fire in push order
# (C-TIE-1), a callback reads its entry's time (C-ADV-2), advance fires what is due
# (C-ADV-1) including what callbacks push (C-ADV-3), and schedule refuses the past
# (C-SCH-1). The order of each row is the order blocking clauses are named in: the
# callback-failure clause (C-ERR-1) before the periodic ones, whose tests raise too.

PREREQUISITES: dict[str, tuple[str, ...]] = {
    # The time clauses' tests read now_ns() inside callbacks and schedule periodics
    # to have something to fire (C-TIME-1: a periodic from numpy ints; C-TIME-2: a
    # raising callback, C-ERR-1; C-TIME-3/4: periodics at far and numpy times).
    "C-TIME-1": (*_SCHEDULING, "C-PER-1"),
    "C-TIME-2": (*_SCHEDULING, "C-ERR-1", "C-PER-1"),
    "C-TIME-3": (*_SCHEDULING, "C-PER-1", "C-TIME-1"),
    "C-TIME-4": (*_SCHEDULING, "C-PER-1"),
    # C-ADV-1's own order is (at_ns, seq): its tests break ties, so a tie defect is
    # C-TIE-1's; its advance(0) case fires a periodic's first point (C-PER-1).
    "C-ADV-1": ("C-TIE-1", "C-ADV-2", "C-ADV-3", "C-SCH-1", "C-PER-1"),
    # C-ADV-2 does not list C-ADV-1: a callback reading another time than its entry's
    # makes every trace differ in its times, C-ADV-1's too; that is C-ADV-2's defect.
    "C-ADV-2": ("C-TIE-1", "C-ADV-3", "C-SCH-1"),
    # C-ADV-3's programs push beside a later periodic (C-PER-1).
    "C-ADV-3": ("C-TIE-1", "C-ADV-2", "C-ADV-1", "C-SCH-1", "C-PER-1"),
    "C-ADV-4": _SCHEDULING,
    # Splitting time is compared on traces of periodics and raising callbacks.
    "C-ADV-5": (*_SCHEDULING, "C-ERR-1", "C-PER-1", "C-PER-3"),
    # C-SCH-1's at == now case fires on advance(0) (C-ADV-1 says so too).
    "C-SCH-1": ("C-ADV-1",),
    "C-SCH-2": (),
    # C-TIE-1's ties fire in advances (C-ADV-1; its (at_ns, seq) order holds the tie
    # order, so the two fail alike for a tie defect: the report charges that to C-TIE-1,
    # see _report), are pushed from callbacks (C-ADV-3) and far in the future
    # (C-TIME-4: a tie at 2**60 needs exact far times).
    "C-TIE-1": ("C-ADV-2", "C-ADV-1", "C-ADV-3", "C-SCH-1", "C-TIME-4"),
    "C-PER-1": _SCHEDULING,
    # A re-pushed periodic is pushed after its callback, so order at a shared instant
    # also rests on the grid (C-PER-1); one case re-pushes after a raising callback.
    "C-PER-2": (*_SCHEDULING, "C-ERR-1", "C-PER-1"),
    # C-PER-3 does not list C-PER-1: the same grid over many firings is its own subject.
    "C-PER-3": _SCHEDULING,
    "C-CAN-1": (*_SCHEDULING, "C-PER-1", "C-PER-2", "C-CAN-2"),
    "C-CAN-2": (*_SCHEDULING, "C-PER-1", "C-PER-2"),
    "C-CAN-3": (*_SCHEDULING, "C-PER-1", "C-PER-2"),
    # The bound is measured over programs whose live entries fire (in order, at their
    # times) and whose cancelled ones must not.
    "C-CAN-4": ("C-TIE-1", "C-ADV-2", "C-ADV-1", "C-CAN-2"),
    # C-ERR-1 lists no periodic clause: its periodics re-arm after a raise, which a
    # defect of C-ERR-1 breaks in C-PER-2's tests too; that defect is C-ERR-1's.
    "C-ERR-1": _SCHEDULING,
    # A halting periodic is re-armed (C-PER-2) on its grid (C-PER-1).
    "C-ERR-2": (*_SCHEDULING, "C-PER-1", "C-PER-2", "C-PER-3"),
    # The same run twice: any scheduling or callback-failure defect shows in it.
    "C-DET-1": (*_SCHEDULING, "C-ERR-1", "C-ERR-2", "C-PER-1", "C-PER-2", "C-RNG-2"),
    "C-STEP-1": (),
    "C-RNG-1": (),
    # The stability programs draw beside callbacks that schedule (C-RNG-2), the
    # label and independence programs compare draws of children (C-RNG-2 hash).
    "C-RNG-2": (*_SCHEDULING, "C-ERR-1", "C-PER-1", "C-PER-2", "C-RNG-4"),
    "C-RNG-3": ("C-RNG-2", "C-RNG-4"),
    "C-RNG-4": (),
    "C-RNG-5": (),
    # The global state is watched over a whole run with raising callbacks.
    "C-RNG-6": ("C-ERR-1",),
    "C-BUS-1": ("C-ERR-1",),
    "C-BUS-2": (),
    "C-BUS-3": _SCHEDULING,
    "C-BUS-4": (),
    "C-X-PEEK": ("C-TIME-4",),
    # A rate's firings are read in callbacks at instants shared with other entries.
    "C-X-RATE": (*_SCHEDULING, "C-PER-1", "C-PER-3"),
    # Counts of fired, skipped and overrun firings of periodics that raise.
    "C-X-STATS": (*_SCHEDULING, "C-ERR-1", "C-PER-1", "C-PER-2", "C-PER-3", "C-ADV-5"),
    # The state machine compares whole runs to the oracle: any scheduling defect is
    # its own failure too, so it lists none.
    ORACLE_CLAUSE: (),
}
"""``clause -> the clauses its tests and programs rely on`` for their expected traces.

Documentation (``docs/clauses.md``): the report does not read it. A difference is
charged to the clause whose rule decided that part of the oracle's reply
(``protocol/_reasons.py``); a clause not listed relies on none.
"""


def prerequisites(clause_id: str) -> tuple[str, ...]:
    """The clauses ``clause_id``'s tests rely on (:data:`PREREQUISITES`), in blocking order."""
    return PREREQUISITES.get(check_str(clause_id, "clause_id"), ())


def clause_of_test(test_name: str) -> str | None:
    """The clause id a test function name carries, or ``None`` (longest id wins).

    ``SimclockTypeError`` for a ``test_name`` that is not a ``str``.
    """
    test_name = check_str(test_name, "test_name")
    best: str | None = None
    for clause in CLAUSES.values():
        if test_name.startswith(clause.test_prefix) and (
            best is None or len(clause.id) > len(best)
        ):
            best = clause.id
    return best
