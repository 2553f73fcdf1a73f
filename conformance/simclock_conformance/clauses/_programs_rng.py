"""The clause programs of C-STEP and C-RNG: data, in report order (see ``_programs``)."""

from __future__ import annotations

from simclock_conformance.clauses._builder import Case, P, fail, sched

__all__ = ["cases"]


def cases() -> list[Case]:
    """The programs of C-STEP and C-RNG, in report order."""
    out: list[Case] = []
    add = out.append

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
    return out
