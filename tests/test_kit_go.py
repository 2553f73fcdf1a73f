"""The Go driver kit (``conformance/drivers/go``) from ``make test`` (SPEC §18, C-WIRE-6/7).

The kit's own ``go test ./...`` must pass; its reference heap clock must be CONFORMING
(wire profile 1) and replay every golden vector, its minimal clock CONFORMING without the
optional features; the two Go fake clocks adapted through it must keep their verdicts,
clause by clause, at the pinned versions (the reasons are in
``conformance/drivers/go/README.md``). ``go`` is found by ``tests/kit_go.py``, which
skips with one reason where it is missing. A warm run takes about 65 s of wall time.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from kit_go import GO_DIR, go_build, go_test

from simclock_conformance.entry._wire_run import WIRE_CLAUSES, run_driver


def test_C_WIRE_7_the_go_kit_unit_tests_pass() -> None:
    out = go_test()
    packages = ("", "/drivertest", "/examples/careless", "/examples/heapclock", "/examples/minimal")
    for package in packages:
        pattern = rf"^ok\s+simclock\.example/driver{re.escape(package)}\s"
        assert re.search(pattern, out, re.M), out


def test_C_TIME_4_the_go_peers_build_on_the_kits_time_helpers() -> None:
    # The time helpers (NsOf, TimeOf, GoDuration, FirstGridPoint) are the kit's own, tested
    # in its package; the peers' module builds and tests on them.
    out = go_test(GO_DIR / "peers")
    for package in ("clockwork", "k8sclock"):
        assert re.search(rf"^\S+\s+simclock\.example/driver/peers/{package}\s", out, re.M), out


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "simclock_conformance", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_C_WIRE_6_the_go_heap_clock_is_conforming_wire_profile_1() -> None:
    proc = _cli("--driver", "--", *go_build("heapclock"))
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert proc.stdout.rstrip().endswith(
        f"{len(WIRE_CLAUSES)} passed, 0 failed, 0 incomplete, 0 not applicable, 0 not run: "
        "CONFORMING (wire profile 1)"
    )


def test_C_WIRE_6_the_minimal_go_clock_is_conforming_without_the_optional_features() -> None:
    # 78 lines of code: the mandatory interface and simclock's streams; peek, rate and
    # stats are not implemented, so their clauses are not applicable.
    proc = _cli("--driver", "--", *go_build("minimal"))
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert proc.stdout.rstrip().endswith(
        f"{len(WIRE_CLAUSES) - 3} passed, 0 failed, 0 incomplete, 3 not applicable, 0 not run: "
        "CONFORMING (wire profile 1)"
    )


def test_C_WIRE_7_the_go_heap_clock_replays_every_golden_vector() -> None:
    proc = _cli("vectors", "--driver", "--", *go_build("heapclock"))
    assert proc.returncode == 0, proc.stdout[-4000:]
    last = proc.stdout.rstrip().splitlines()[-1]
    assert re.fullmatch(
        r"golden vectors: [1-9][0-9]* passed, 0 failed \(0 expected\), 0 not applicable "
        r"\(features peek, rate, stats, start_ns, bits\)",
        last,
    ), last


# What the Go fake clocks do not keep (failed or blocked), as conformance/drivers/go/README.md
# explains clause by clause.
GO_PEERS_FAILED = {
    name: [
        "C-TIME-1", "C-TIME-2", "C-TIME-3", "C-TIME-4", "C-ADV-1", "C-ADV-2", "C-ADV-3",
        "C-ADV-4", "C-ADV-5", "C-SCH-1", "C-TIE-1", "C-PER-1", "C-PER-2", "C-PER-3",
        "C-CAN-1", "C-CAN-2", "C-CAN-3", "C-CAN-4", "C-ERR-1", "C-ERR-2", "C-DET-1", "C-RNG-1",
        "C-RNG-2", "C-RNG-3", "C-RNG-4", "C-WIRE-2", "SM-ORACLE", "C-WIRE-7",
    ]
    for name in ("clockwork", "k8sclock")
}  # fmt: skip


GO_PEERS_BLOCKED = {
    # Callbacks on goroutines reading the target (C-ADV-2) and due timers run in creation
    # or sorted-slice order (C-ADV-1); past times accepted (C-SCH-1). A ticker's first
    # tick comes a period after its start, never at its phase: C-PER-1 fails on its own
    # (per-1/grid-first-point's ticker), and the tie, error and split programs whose
    # first difference is that missing first tick are blocked by it. C-CAN-4's programs
    # fire their live entries in one advance: the first difference is their order.
    "clockwork": {
        **dict.fromkeys(
            ["C-ADV-4", "C-TIE-1", "C-CAN-1", "C-CAN-2", "C-CAN-3", "C-CAN-4"], "C-ADV-1"
        ),
        **dict.fromkeys(["C-TIME-1", "C-ADV-3", "C-PER-2", "C-PER-3"], "C-ADV-2"),
        **dict.fromkeys(["C-TIME-2", "C-TIME-3", "C-WIRE-2"], "C-SCH-1"),
        **dict.fromkeys(["C-RNG-3", "C-RNG-4"], "C-RNG-2"),
        **dict.fromkeys(["C-ADV-5", "C-ERR-1"], "C-PER-1"),
    },
    # C-CAN-4: its programs' entries fire read at the advance's target (C-ADV-2) first.
    "k8sclock": {
        **dict.fromkeys(["C-TIME-2", "C-TIME-3", "C-ADV-3", "C-TIE-1", "C-WIRE-2"], "C-SCH-1"),
        **dict.fromkeys(["C-TIME-1", "C-PER-2", "C-PER-3", "C-CAN-3", "C-CAN-4"], "C-ADV-2"),
        **dict.fromkeys(["C-DET-1", "C-RNG-3", "C-RNG-4"], "C-RNG-2"),
        **dict.fromkeys(["C-ADV-5", "C-ERR-1"], "C-PER-1"),
        "C-CAN-2": "C-CAN-1",
        "C-ERR-2": "C-ADV-1",
    },
}
"""The clauses of :data:`GO_PEERS_FAILED` (not kept) reported as blocked, by what."""

GO_PEERS_RACING: dict[str, dict[str, tuple[str, ...]]] = {
    # clockwork runs each callback on a goroutine of its own: which one records first is
    # the Go scheduler's choice. The first difference of a program whose callbacks fire in
    # one advance is then another entry first (C-ADV-1) or the expected one read at the
    # target (C-ADV-2); det-1's halting callback panics on its goroutine and ends the
    # process (C-ERR-2), unless the race first made the state machine's replay differ
    # ("failed": C-DET-1's own).
    "clockwork": {
        **dict.fromkeys(
            ["C-ADV-4", "C-TIE-1", "C-CAN-1", "C-CAN-2", "C-CAN-3", "C-CAN-4"],
            ("C-ADV-1", "C-ADV-2"),
        ),
        "C-DET-1": ("C-ERR-2", "failed"),
    },
    "k8sclock": {},
}
"""Clauses whose status the peer's own scheduling race decides: the statuses each may take."""


@pytest.mark.parametrize("name", sorted(GO_PEERS_FAILED))
def test_C_WIRE_6_go_fake_clocks_are_judged_clause_by_clause(name: str) -> None:
    report = run_driver(go_build(name), deadline_s=5.0, shrink=False)
    assert report.verdict == "NOT CONFORMING"
    racing = GO_PEERS_RACING[name]
    blocked = report.blocked()
    for clause, statuses in racing.items():
        status = blocked.pop(clause, "failed" if clause in report.failed() else "passed")
        assert status in statuses, (clause, status)
    assert blocked == {c: b for c, b in GO_PEERS_BLOCKED[name].items() if c not in racing}
    assert [c for c in report.failed() if c not in racing] == [
        c for c in GO_PEERS_FAILED[name] if c not in GO_PEERS_BLOCKED[name] and c not in racing
    ]
    not_applicable = [c for c in report.clause_ids() if report.status(c) == "not applicable"]
    assert not_applicable == ["C-X-PEEK", "C-X-RATE", "C-X-STATS", "C-X-BITS"]
    # Every failure quotes its evidence: both replies, the two runs (C-ADV-5), or the driver's.
    evidence = ("expected", "driver failure", "fired otherwise")
    for clause in report.failed():
        for test in report.tests[clause]:
            if test.outcome == "failed":
                assert test.message.startswith(clause)
                assert any(mark in test.message for mark in evidence), test.message[:400]
