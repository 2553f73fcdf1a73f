"""The clause programs of C-TIME and C-ADV: data, in report order (see ``_programs``)."""

from __future__ import annotations

from simclock_conformance.clauses._builder import MAX, Case, P, cancel, fail, nested, sched

__all__ = ["SITUATIONS", "cases"]

SITUATIONS: dict[str, dict[str, str]] = {
    "C-TIME-4": {
        "time/odd-beyond-2-53": "an entry fires at an odd time above 2**53 (float64 rounds it)",
        "time/fires-at-2-64-minus-1": "an entry fires at 2**64 - 1 itself",
        "time/beyond-wrapped-ahead": (
            "a time past 2**64 - 1 whose value modulo 2**64 is after now: a wrapping clock "
            "accepts it and fires it early"
        ),
        "time/beyond-wrapped-at-now": "a time past 2**64 - 1 whose value modulo 2**64 is now",
        "time/beyond-wrapped-behind": (
            "a time past 2**64 - 1 whose value modulo 2**64 is before now (a wrapping clock "
            "refuses it as past)"
        ),
        "time/advance-beyond": "an advance whose target is past 2**64 - 1",
        "time/beyond-period": "a period past 2**64 - 1 (modulo 2**64 a short one)",
    },
}
"""``clause -> situation id -> what it is``: what the clause's programs must reach
(decided from the oracle's replies by ``_situations.DETECTORS``)."""


def cases() -> list[Case]:
    """The programs of C-TIME and C-ADV, in report order."""
    out: list[Case] = []
    add = out.append

    # -- C-TIME ---------------------------------------------------------------
    add(
        P("time-1/starts-at-zero", ["C-TIME-1"])
        .create()
        .observe()
        .at("a", 20)
        .every("p", 15, 1)
        .adv(5)
        .adv(7)
        .adv(10)
        .drop()
    )
    add(
        P("time-1/start-ns", ["C-TIME-1"], ["start_ns"])
        .create(start=1000)
        .at("a", 1000)
        .adv(0)
        .drop()
    )
    p = P("time-2/never-decreases", ["C-TIME-2"]).create()
    p.at("s", 3, sched(0), sched(2)).at("f", 3, fail("fail")).at("l", 9).every("p", 4, 2)
    for dt in (0, 2, 1, 0, 5, 30):
        p.adv(dt).adv("-1").at(f"past{dt}", 0)
    add(p.drop())
    p = P("time-3/wire-numbers-refused", ["C-TIME-3", "C-WIRE-2"]).create().adv(10)
    bad: list[object] = [5, 1.5, "1.5", "1e6", "-3", " 5", "", None, True, "0x10"]
    for i, value in enumerate(bad):
        p.adv(value).at(f"bad{i}", value).every(f"per{i}", value).every(f"ph{i}", 5, value)
    add(p.adv(100).drop())
    p = P("time-3/on-fire-times-checked-with-the-request", ["C-TIME-3", "C-WIRE-2"]).create()
    p.at("a", 5, {"do": "schedule", "delay_ns": 1}).at("b", 5, {"do": "advance", "dt_ns": "1.0"})
    add(p.at("ok", 5).adv(10).drop())
    times = [2**53 + 1, 2**53 + 3, 2**60 + 1, 2**63 - 1, 2**63 + 1, MAX - 1, MAX]
    p = P("time-4/exact-up-to-2-64-minus-1", ["C-TIME-4"]).create()
    for t in times:
        p.at(f"t{t}", t)
    p.at("tie", 2**60 + 1).every("p", 2**62 + 1, 2**53 + 1)
    grid = [2**53 + 1 + k * (2**62 + 1) for k in range(4) if 2**53 + 1 + k * (2**62 + 1) <= MAX]
    now = 0
    for stop in sorted({*times, *grid}):
        p.adv(stop - now)
        now = stop
    add(p.drop())
    p = P("time-4/beyond-2-64-exact-or-refused", ["C-TIME-4"]).create().adv(MAX - 2).at("max", MAX)
    p.adv(2).at("beyond", MAX + 1, accept=["ValueError"]).adv(1).adv(0)
    add(p.drop())
    p = P("time-4/advance-zero-at-far-instants", ["C-TIME-4"]).create()
    now = 0
    for t in (2**53 + 1, 2**63 + 1, MAX):
        p.adv(t - now).at(f"now{t}", t).at(f"tie{t}", t).adv(0)
        now = t
    add(p.drop())
    add(
        P("time-4/advance-beyond-refused-or-exact", ["C-TIME-4"])
        .create()
        .adv(MAX)
        .adv(1, accept=["ValueError"])
        .observe()
        .drop()
    )

    # Beyond 2**64 - 1 from starts where the time taken modulo 2**64 (what an unsigned
    # 64-bit counter keeps) lies ahead of now, at now and behind it: a wrapped time in
    # the past is refused as past and looks like a clean refusal; ahead, it fires.
    beyond = ["ValueError"]
    for name, start, at in (
        ("wrapped-ahead", 7, 2**64 + 12),
        ("wrapped-at-now", 7, 2**64 + 7),
        ("wrapped-behind", 7, 2**64 + 3),
        ("2-65-wrapped-ahead", 7, 2**65 + 9),
        ("wrapped-ahead-of-a-far-now", 2**63, 2**64 + 2**63 + 5),
    ):
        p = P(f"time-4/beyond-{name}", ["C-TIME-4"]).create().adv(start).at("near", start + 2)
        p.at("w", at, accept=beyond).adv(0).adv(10).observe()
        add(p.drop())
    p = P("time-4/beyond-periodic-phase-wrapped-ahead", ["C-TIME-4"]).create().adv(3)
    add(p.every("p", 5, 2**64 + 4, accept=beyond).adv(10).drop())
    p = P("time-4/beyond-period-wrapped-small", ["C-TIME-4"]).create()
    add(p.every("p", 2**64 + 2, 1, accept=beyond).adv(6).drop())
    # (A callback's child beyond 2**64 - 1 is not asked for: its refusal cannot end a
    # program, and a backend may refuse it.)

    # -- C-ADV ----------------------------------------------------------------
    p = P("adv-1/fires-due-in-order", ["C-ADV-1"]).create()
    for name, at in (("a", 5), ("b", 3), ("c", 5), ("d", 10), ("e", 11), ("f", 0)):
        p.at(name, at)
    add(p.adv(10).adv(0).adv(1).drop())
    # Cancelling many entries compacts the queue while many live ones are left: they
    # still fire in (at_ns, seq) order (scrambled times, with ties).
    p = P("adv-1/order-after-compaction", ["C-ADV-1"]).create()
    for i in range(150):
        p.at(f"live{i}", 1 + (i * 37) % 61)
    for i in range(1400):
        p.at(f"gone{i}", 1 + (i * 53) % 67).cancel(f"gone{i}")
    for i in range(150, 170):
        p.at(f"late{i}", 1 + (i * 41) % 59)
    add(p.adv(30).adv(0).adv(40).drop())
    add(
        P("adv-1/advance-zero", ["C-ADV-1"])
        .create()
        .at("z", 0)
        .adv(0)
        .adv(4)
        .at("f", 4)
        .every("p", 2, 4)
        .adv(0)
        .drop()
    )
    add(
        P("adv-2/now-in-callback", ["C-ADV-2"])
        .create()
        .at("a", 3)
        .at("b", 7)
        .every("p", 4, 1)
        .adv(20)
        .drop()
    )
    p = P("adv-3/pushed-by-callbacks", ["C-ADV-3"]).create()
    add(p.at("s", 2, sched(0), sched(3), sched(8), sched(9)).adv(10).adv(1).drop())
    p = P("adv-3/pushed-beside-a-later-periodic", ["C-ADV-3"]).create().adv(1).every("p", 3)
    add(p.at("s", 2, sched(0), sched(3), sched(8), sched(9)).adv(10).adv(1).drop())
    p = P("adv-4/nested-refused", ["C-ADV-4"]).create()
    add(p.at("n", 2, nested(5), nested(0)).at("same", 2).at("next", 3).adv(4).drop())
    for i, steps in enumerate(([5, 0, 3, 9, 16], [1] * 33, [33], [0, 13, 0, 7, 13])):
        p = P(f"adv-5/split-{i}", ["C-ADV-5"]).create().every("p4", 4, 1).every("p6", 6)
        p.at("a", 5).at("b", 5).at("sp", 7, sched(0), sched(2)).at("boom", 13, fail("boom"))
        p.at("stop", 30, cancel("p4"))
        for dt in steps:
            p.adv(dt)
        add(p.drop())
    return out
