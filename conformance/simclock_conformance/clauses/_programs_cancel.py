"""The clause programs of C-CAN, C-ERR and C-DET: data, in report order (see ``_programs``)."""

from __future__ import annotations

from simclock_conformance.clauses._builder import HALT, Case, P, cancel, fail, sched

__all__ = ["cases"]


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
