"""The clause programs of C-X, the optional extensions: data, in report order."""

from __future__ import annotations

from simclock_conformance.clauses._builder import MAX, Case, P, fail

__all__ = ["cases"]


def cases() -> list[Case]:
    """The programs of C-X, in report order."""
    out: list[Case] = []
    add = out.append

    # -- C-X ------------------------------------------------------------------
    p = (
        P("x-peek/earliest-live", ["C-X-PEEK"], ["peek"])
        .create()
        .observe()
        .at("ten", 10)
        .at("fifteen", 15)
    )
    add(
        p.at("cx", 2)
        .every("p", 7, 3)
        .cancel("cx")
        .observe()
        .adv(3)
        .cancel("ten")
        .observe()
        .adv(7)
        .cancel("p")
        .adv(5)
        .drop()
    )
    p = P("x-peek/exact-far", ["C-X-PEEK"], ["peek"]).create()
    ats = (MAX, 2**63 + 7, 2**40 + 12_345, 70_001, 5_003)
    for at in ats:
        p.at(f"e{at}", at)
    now = 0
    for at in sorted(ats):
        p.adv(at - now)
        now = at
    add(p.drop())
    add(
        P("x-rate/exact-ceil-grid", ["C-X-RATE"], ["rate"])
        .create()
        .rate("r30", 30)
        .rate("ntsc", 30000, 1001, 5)
        .adv(50_000_000)
        .rate("late", 30)
        .adv(10**9 - 50_000_000)
        .drop()
    )
    # Phases a period or more after now: the first firing is the phase itself (k = 0),
    # for whole and fractional rates.
    p = P("x-rate/phase-periods-after-now", ["C-X-RATE"], ["rate"]).create().adv(7)
    p.rate("three", 3, 1, 10**9 + 11).rate("half", 7, 2, 2 * 10**9).rate("ntsc", 30000, 1001, 10**8)
    add(p.adv(3 * 10**9).drop())
    add(
        P("x-rate/bad-rates", ["C-X-RATE"], ["rate"])
        .create()
        .rate("z", 0)
        .rate("n", "-5")
        .rate("f", "30.0")
        .rate("d", 1, 0)
        .rate("big", 10**9 * 7 + 1, 7)
        .adv(10**9)
        .drop()
    )
    p = (
        P("x-stats/counts", ["C-X-STATS"], ["stats"])
        .create()
        .every("p", 3, 1, fail("x"))
        .at("o", 4)
        .adv(10)
        .stats("p")
        .stats("o")
    )
    add(p.cancel("p").adv(10).stats("p").drop())
    return out
