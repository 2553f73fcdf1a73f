"""The clause programs of C-CAN, C-ERR and C-DET: data, in report order (see ``_programs``)."""

from __future__ import annotations

from simclock_conformance.clauses._builder import HALT, Case, P, cancel, fail, sched

__all__ = ["SITUATIONS", "cases"]

SITUATIONS: dict[str, dict[str, str]] = {
    "C-ERR-1": {
        "err/periodic-rearmed-after-raise": "a periodic whose callback raised fires again",
    },
    "C-ERR-2": {
        "err/periodic-rearmed-after-halt": (
            "a periodic whose callback halted the advance (a BaseException) fires again"
        ),
        "err/halt-leaves-others-pending": "entries due at the halting instant fire later",
    },
}
"""``clause -> situation id -> what it is`` (see ``_programs_time.SITUATIONS``)."""


def cases() -> list[Case]:
    """The programs of C-CAN, C-ERR and C-DET, in report order."""
    out: list[Case] = []
    add = out.append

    # -- C-CAN ----------------------------------------------------------------
    # An entry cancelling itself is a one-shot here: a periodic that does is C-CAN-2's
    # subject, and a backend that keeps firing it fails there, not here.
    p = P("can-1/cancel-from-callbacks-and-between", ["C-CAN-1"]).create()
    p.at("early", 5).cancel("early").cancel("early")
    p.at("own", 1, cancel("own"), cancel("own")).at(
        "other", 4, cancel("victim"), cancel("victim"), cancel("nothing")
    )
    p.at("victim", 4).at("fired", 2).adv(3).cancel("fired").cancel("fired").adv(10)
    for e in ("early", "own", "other", "victim", "fired"):
        p.cancel(e)
    add(p.drop())
    add(
        P("can-2/periodic-cancelled-in-own-callback", ["C-CAN-2"])
        .create()
        .every("t", 2, 1)
        .at("k", 5, cancel("t"))
        .adv(100)
        .drop()
    )
    add(
        P("can-2/periodic-cancels-itself-at-first-firing", ["C-CAN-2"])
        .create()
        .every("self", 3, 2, cancel("self"))
        .at("after", 9)
        .adv(20)
        .drop()
    )
    p = (
        P("can-2/same-instant-and-between", ["C-CAN-2"])
        .create()
        .at("killer", 6, cancel("victim"), cancel("per"))
    )
    p.at("victim", 6).every("per", 3).at("never", 1).cancel("never").every("out", 4, 2).adv(
        5
    ).cancel("out")
    add(p.adv(20).drop())
    add(
        P("can-3/after-firing-no-op", ["C-CAN-3"])
        .create()
        .at("first", 1)
        .at("five", 5)
        .every("p", 3, 2)
        .adv(2)
        .cancel("first")
        .observe()
        .adv(6)
        .drop()
    )
    p = P("can-4/tombstones-bounded", ["C-CAN-4"]).create()
    for i in range(8):
        p.at(f"live{i}", 10**12 + i)
    for i in range(1500):
        p.at(f"churn{i}", 10**12 + i).cancel(f"churn{i}")
    add(p.observe().drop())

    # Live entries that fire (not only cancels) lower the live count: the far
    # tombstones left behind must still be bounded (2*live + 1024) afterwards. A live
    # entry before them keeps them from reaching the front, where a peek drops them.
    p = P("can-4/bound-kept-when-live-entries-fire", ["C-CAN-4"]).create().at("keep", 10**12 - 1)
    for i in range(1300):
        p.at(f"near{i}", 1 + i)
    for i in range(1300):
        p.at(f"far{i}", 10**12 + i).cancel(f"far{i}")
    add(p.adv(1400).observe().drop())
    # Tombstones that leave (popped by an advance, dropped at the front by a peek) must
    # leave the count of tombstones right: cancelling the rest then still compacts.
    p = P("can-4/count-kept-as-tombstones-leave", ["C-CAN-4"]).create().at("keep", 10**12 - 1)
    for i in range(1500):
        p.at(f"hold{i}", 10**12 + i)
    for i in range(750):
        p.at(f"gate{i}", 2 * i + 2).at(f"tomb{i}", 2 * i + 3).cancel(f"tomb{i}")
    p.adv(1502)
    for i in range(750):
        p.at(f"front{i}", 2000 + i)
    for i in range(750):
        p.cancel(f"front{i}")
    for i in range(1500):
        p.cancel(f"hold{i}")
    add(p.observe().drop())

    # -- C-ERR ----------------------------------------------------------------
    p = P("err-1/failure-reported-others-fire", ["C-ERR-1"]).create()
    p.at("once", 3, fail("bad reading at 3")).at("after", 3).every("per", 4, 0, fail("lost")).at(
        "later", 5
    )
    add(p.adv(9).drop())
    add(
        P("err-1/later-actions-do-not-run", ["C-ERR-1"])
        .create()
        .at("f", 1, fail("x"), sched(0))
        .adv(2)
        .drop()
    )
    p = P("err-2/halt-propagates-clock-consistent", ["C-ERR-2"]).create()
    p.at("a", 2).at("halt", 3, HALT).at("b", 3).at("c", 5).every("p", 4, 4)
    add(p.adv(10).adv(0).adv(6).drop())
    add(
        P("err-2/periodic-rearmed-after-halt", ["C-ERR-2"])
        .create()
        .every("t", 5, 1)
        .at("h", 6, HALT)
        .adv(20)
        .adv(14)
        .drop()
    )

    add(
        P("err-2/halting-periodic-rearmed", ["C-ERR-2"])
        .create()
        .every("t", 5, 1, HALT)
        .at("same", 6)
        .adv(20)
        .adv(20)
        .adv(0)
        .adv(20)
        .drop()
    )

    p = P("det-1/same-seed-same-run", ["C-DET-1"]).create(11).every("p", 7, 0, sched(3, fail("x")))
    p.at("a", 10, HALT).at("b", 10).draw(["noise"], 4).adv(30).adv(30).draw(["noise"], 2).draw(
        [], 2
    )
    add(p.drop())
    return out
