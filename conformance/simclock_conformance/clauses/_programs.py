"""The clause tests of the wire profile as programs of data (SPEC §18, C-WIRE-4, C-WIRE-6).

A :class:`Case` is an id, the clauses it checks, the features it requires
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

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CASES", "Case", "P"]

MAX = 2**64 - 1
Json = dict[str, Any]


@dataclass
class Case:
    """One program: ``steps`` are ``(request, accept)`` pairs."""

    id: str
    clauses: list[str]
    requires: list[str] = field(default_factory=list)
    steps: list[tuple[Json, list[str]]] = field(default_factory=list)

    @property
    def requests(self) -> list[Json]:
        """The requests alone, in order."""
        return [r for r, _ in self.steps]


def _s(value: int | str) -> str:
    return str(value)


def sched(delay: int, *then: Json) -> Json:
    """Action: a child entry ``delay`` ns from now (C-WIRE-4)."""
    action: Json = {"do": "schedule", "delay_ns": _s(delay)}
    if then:
        action["on_fire"] = list(then)
    return action


def cancel(entry: str) -> Json:
    """Action: cancel ``entry``."""
    return {"do": "cancel", "entry": entry}


def nested(dt: int) -> Json:
    """Action: a nested advance, which the backend must refuse (C-ADV-4)."""
    return {"do": "advance", "dt_ns": _s(dt)}


def fail(message: str) -> Json:
    """Action: raise an ordinary error (C-ERR-1)."""
    return {"do": "raise", "message": message}


HALT: Json = {"do": "halt"}


class P:
    """A builder of one case on clock ``c`` (and more clocks by name)."""

    def __init__(self, case_id: str, clauses: list[str], requires: list[str] | None = None):
        self.case = Case(case_id, clauses, list(requires or []))

    def _add(self, request: Json, accept: list[str] | None = None) -> P:
        self.case.steps.append((request, list(accept or [])))
        return self

    def create(self, seed: int = 0, clock: str = "c", start: int | None = None) -> P:
        req: Json = {"op": "create", "clock": clock, "seed": _s(seed)}
        if start is not None:
            req["start_ns"] = _s(start)
        return self._add(req)

    def at(
        self,
        entry: str,
        at: int | object,
        *on_fire: Json,
        clock: str = "c",
        accept: list[str] | None = None,
    ) -> P:
        value = _s(at) if isinstance(at, int) else at
        req = {
            "op": "schedule",
            "clock": clock,
            "entry": entry,
            "at_ns": value,
            "on_fire": list(on_fire),
        }
        return self._add(req, accept)

    def every(
        self,
        entry: str,
        period: int | object,
        phase: int | object = 0,
        *on_fire: Json,
        clock: str = "c",
    ) -> P:
        req = {
            "op": "schedule_periodic",
            "clock": clock,
            "entry": entry,
            "period_ns": _s(period) if isinstance(period, int) else period,
            "phase_ns": _s(phase) if isinstance(phase, int) else phase,
            "on_fire": list(on_fire),
        }
        return self._add(req)

    def rate(
        self, entry: str, num: int | object, den: int | object = 1, phase: int = 0, clock: str = "c"
    ) -> P:
        parts = [_s(num) if isinstance(num, int) else num, _s(den) if isinstance(den, int) else den]
        req = {
            "op": "schedule_rate",
            "clock": clock,
            "entry": entry,
            "rate_hz": parts,
            "phase_ns": _s(phase),
            "on_fire": [],
        }
        return self._add(req)

    def cancel(self, entry: str, clock: str = "c") -> P:
        return self._add({"op": "cancel", "clock": clock, "entry": entry})

    def adv(self, dt: int | object, clock: str = "c", accept: list[str] | None = None) -> P:
        return self._add(
            {"op": "advance", "clock": clock, "dt_ns": _s(dt) if isinstance(dt, int) else dt},
            accept,
        )

    def observe(self, clock: str = "c") -> P:
        return self._add({"op": "observe", "clock": clock})

    def stats(self, entry: str, clock: str = "c") -> P:
        return self._add({"op": "stats", "clock": clock, "entry": entry})

    def step(self, clock: str = "c") -> P:
        return self._add({"op": "step_ns", "clock": clock})

    def draw(self, labels: list[str], n: int, clock: str = "c") -> P:
        return self._add({"op": "draw", "clock": clock, "labels": labels, "n": _s(n)})

    def drop(self, clock: str = "c") -> Case:
        self._add({"op": "drop", "clock": clock})
        return self.case


def _cases() -> list[Case]:
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

    # -- C-ADV ----------------------------------------------------------------
    p = P("adv-1/fires-due-in-order", ["C-ADV-1"]).create()
    for name, at in (("a", 5), ("b", 3), ("c", 5), ("d", 10), ("e", 11), ("f", 0)):
        p.at(name, at)
    add(p.adv(10).adv(0).adv(1).drop())
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

    # -- C-CAN ----------------------------------------------------------------
    p = P("can-1/cancel-from-anywhere", ["C-CAN-1"]).create()
    p.at("early", 5).cancel("early").cancel("early")
    p.every("own", 3, 1, cancel("own"), cancel("own")).at(
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

    # -- C-STEP, C-RNG ------------------------------------------------------
    add(P("step-1/positive", ["C-STEP-1"]).create().step().adv(3).step().drop())
    p = P("rng-1/root", ["C-RNG-1"])
    for i, seed in enumerate((5, 5, 6, 2**40)):
        p.create(seed, clock=f"r{i}").draw([], 3, clock=f"r{i}")
    for i in range(4):
        p._add({"op": "drop", "clock": f"r{i}"})
    add(p.case)
    p = P("rng-2/children-stable", ["C-RNG-2"]).create(3).create(3, clock="d")
    p.draw(["x"], 4).draw(["x"], 4, clock="d").draw(["y"], 4).draw([], 4)
    p._add({"op": "drop", "clock": "d"})
    add(p.drop())
    p = P("rng-2/children-stable-beside-callbacks", ["C-RNG-2"]).create(3).create(3, clock="d")
    p.at("f", 1, fail("x"), sched(1)).every("p", 2, 0, sched(1)).adv(6).draw(["x"], 4)
    p.draw(["x"], 4, clock="d").at("g", 7, fail("y"), clock="d").adv(9, clock="d")
    p.draw(["x", "y"], 3).draw(["x/y"], 3, clock="d")
    p._add({"op": "drop", "clock": "d"})
    add(p.drop())
    p = (
        P("rng-3/hierarchical-labels", ["C-RNG-3"])
        .create(9)
        .create(9, clock="d")
        .create(9, clock="e")
    )
    p.draw(["a", "b"], 3).draw(["a/b"], 3, clock="d").draw(["/a/b"], 3, clock="e").draw(["a/b"], 2)
    for label in ["", "a//b", "a/", "a b", " a", "a\tb", "é", "a*b", "a/../b?"]:
        p.draw([label], 1)
    for c in ("d", "e"):
        p._add({"op": "drop", "clock": c})
    add(p.drop())
    p = P("rng-4/independent-of-order", ["C-RNG-4"]).create(21).create(21, clock="d")
    p.draw(["a"], 5).draw(["b"], 100, clock="d").draw(["z"], 1, clock="d").draw([], 1, clock="d")
    p.draw(["a"], 5, clock="d")
    p._add({"op": "drop", "clock": "d"})
    add(p.drop())
    p = P("x-bits/reference-streams", ["C-X-BITS"], ["bits"]).create(0).create(2**63 + 5, clock="d")
    for labels in ([], ["sensors"], ["sensors", "imu0"], ["a/b/c"], ["x.y-z_1"]):
        p.draw(labels, 3).draw(labels, 2, clock="d")
    p._add({"op": "drop", "clock": "d"})
    add(p.drop())

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


CASES: list[Case] = _cases()
"""Every clause program of the wire profile, in report order."""
