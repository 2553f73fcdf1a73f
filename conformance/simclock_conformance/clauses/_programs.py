"""The clause tests of the wire profile as programs of data (SPEC §18, C-WIRE-4, C-WIRE-6).

The programs are written one module per clause family (``_programs_time``
and its siblings, with the builder of ``_builder``); this one puts them in
report order. A ``Case`` is an id, the clauses it checks, the features it requires
and a list of protocol requests; callbacks are action lists. The expected
replies are not written here: they are the oracle's (an
:class:`~simclock_conformance.protocol._engine.Engine` over ``ReferenceClock``), so a
failure always shows the expected and the observed reply side by side. A
request carrying ``accept`` (e.g. ``["ValueError"]``) may instead be refused
with one of those errors; the case then ends there (C-TIME-4: past
``2**64 - 1`` a backend is exact or refuses).

Ids never change meaning (C-WIRE-7): a changed program gets a new id.
"""

from __future__ import annotations

from simclock_conformance.clauses import (
    _programs_cancel,
    _programs_ext,
    _programs_rng,
    _programs_schedule,
    _programs_time,
)
from simclock_conformance.clauses._builder import Case

__all__ = ["CASES", "SITUATIONS"]

# Invariant: the families' order (and each family's own order) is the report's
# order; ids and their order are pinned by the docs tables and recorded verdicts.
CASES: list[Case] = [
    *_programs_time.cases(),
    *_programs_schedule.cases(),
    *_programs_cancel.cases(),
    *_programs_rng.cases(),
    *_programs_ext.cases(),
]
"""Every clause program of the wire profile, in report order."""

SITUATIONS: dict[str, dict[str, str]] = {
    **_programs_time.SITUATIONS,
    **_programs_schedule.SITUATIONS,
    **_programs_cancel.SITUATIONS,
}
"""``clause -> situation id -> what it is``: what each clause's programs must reach.

Each family lists its own beside its programs; ``_situations.DETECTORS`` decides
them from the oracle's replies, and the self-test checks every one is reached.
"""
