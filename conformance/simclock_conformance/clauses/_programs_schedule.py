"""The clause programs of C-SCH, C-TIE and C-PER: data, in report order (see ``_programs``)."""

from __future__ import annotations

from simclock_conformance.clauses._builder import MAX, Case, P, fail, sched

__all__ = ["SITUATIONS", "cases"]

SITUATIONS: dict[str, dict[str, str]] = {
    "C-SCH-1": {
        "sch/past-refused": "a time before now is refused",
        "sch/at-now-fires-on-advance-zero": "a time equal to now fires on the next advance(0)",
        "sch/at-now-from-a-callback": "a callback's child at its own instant fires then",
    },
    "C-TIE-1": {
        "tie/top-level": "a tie of entries scheduled by requests",
        "tie/from-callbacks": "a tie holding an entry pushed by a callback",
        "tie/periodic-repush": "a tie holding a periodic's re-push",
        "tie/across-advances": "a tie whose entries were pushed in different advances",
        "tie/near-2-64": "a tie near 2**64 - 1",
        "tie/callback-before-later-top-level": (
            "an entry pushed by a callback or a re-push ties with a later top-level one "
            "(an 'outside first' tie-break differs)"
        ),
        "tie/top-level-before-callback": (
            "a top-level entry ties with a later callback child and a later re-push "
            "(a 'callbacks first' tie-break differs)"
        ),
        "tie/all-origins-mixed": (
            "one tie of top-level, callback and re-pushed entries pushed over three or more "
            "advances"
        ),
    },
    "C-PER-2": {
        "per/repush-ties-an-entry-pushed-since": "a re-push ties with another entry",
        "err/periodic-rearmed-after-raise": "a periodic whose callback raised fires again",
    },
}
"""``clause -> situation id -> what it is`` (see ``_programs_time.SITUATIONS``)."""


def cases() -> list[Case]:
    """The programs of C-SCH, C-TIE and C-PER, in report order."""
    out: list[Case] = []
    add = out.append

    # -- C-SCH, C-TIE -------------------------------------------------------
    add(
        P("sch-1/past-refused-now-allowed", ["C-SCH-1"])
        .create()
        .adv(10)
        .at("p9", 9)
        .at("p0", 0)
        .at("now", 10)
        .adv(0)
        .adv(50)
        .drop()
    )
    p = P("sch-1/at-now-from-a-callback", ["C-SCH-1"]).create().adv(2)
    add(p.at("a", 4, sched(0, sched(0))).at("b", 5).adv(2).adv(0).adv(1).drop())
    p = P("tie-1/push-order", ["C-TIE-1"]).create()
    p.at("zeta", 5).at("shared", 5).at("alpha", 3, sched(2)).every("periodic", 5, 5)
    add(p.at("m", 5).at("shared2", 5).at("a", 5).adv(5).drop())
    p = P("tie-1/far-ties", ["C-TIE-1"]).create()
    instants = [5_000, 70_001, 2**40 + 3, 2**63 + 1]
    for r in range(3):
        for at in instants:
            p.at(f"t{at}r{r}", at)
    p.at("late", 5_000)
    now = 0
    for at in instants:
        p.adv(at - now)
        now = at
    add(p.drop())

    # Ties whose entries were pushed at top level, by callbacks and by a periodic's
    # re-push, across several advances, each kind both before and after the others:
    # push order is the only order (an "outside first" or "callbacks first" tie-break
    # differs). The same program again just below 2**64 - 1.
    for name, base in (("mixed-origins", 0), ("mixed-origins-near-2-64", MAX - 40)):
        p = P(f"tie-1/{name}", ["C-TIE-1"]).create()
        if base:
            p.adv(base)
        t = base + 20
        p.at("top1", t).every("per", 5, base).at("spawner", base + 3, sched(17))
        p.adv(4).at("top2", t).at("late", base + 16, sched(4)).adv(12).at("top3", t)
        p.at("now16", base + 16, sched(4)).adv(0).at("top4", t).adv(4).cancel("per").adv(0)
        add(p.drop())

    # -- C-PER ----------------------------------------------------------------
    add(
        P("per-1/bad-arguments", ["C-PER-1"])
        .create()
        .every("z", 0)
        .every("neg", "-3")
        .every("ph", 5, "-1")
        .adv(50)
        .drop()
    )
    p = P("per-1/grid-first-point-at-or-after-now", ["C-PER-1"]).create().adv(7)
    add(p.every("a", 5, 3).every("b", 4, 7).every("c", 4, 20).every("d", 10).adv(0).adv(14).drop())
    phase, period = 3 * 10**15 + 11, 1_000_000_007
    add(
        P("per-1/large-grid", ["C-PER-1"])
        .create()
        .adv(phase + 2 * period + 1)
        .every("p", period, phase)
        .adv(3 * period)
        .drop()
    )
    add(
        P("per-2/earlier-previous-first", ["C-PER-2"])
        .create()
        .every("p2", 2)
        .every("p3", 3)
        .adv(6)
        .drop()
    )
    p = (
        P("per-2/repush-after-raise", ["C-PER-2"])
        .create()
        .every("r", 2, 0, fail("periodic failure"))
    )
    add(p.at("one", 2).every("plan", 5, 0, sched(5)).adv(5).drop())
    p = (
        P("per-3/no-drift", ["C-PER-3"])
        .create()
        .every("p", 333_333_333, 10**15 + 7)
        .adv(10**15 + 7)
    )
    for _ in range(4):
        p.adv(500 * 333_333_333)
    add(p.drop())
    return out
