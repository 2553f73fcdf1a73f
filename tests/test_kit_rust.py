"""The Rust driver kit (SPEC §18, C-WIRE-6, C-WIRE-7) and tokio's paused time through it.

The kit's unit tests run in ``cargo test``; its example heap clock must be CONFORMING
(wire profile 1) and replay every golden vector, its minimal example (no optional
feature) CONFORMING too, under 80 lines of code as rustfmt lays it out, and shown in
the README as it is; the tokio peer's verdicts, pinned at
tokio 1.54.1, are explained clause by clause in ``conformance/drivers/rust/README.md``.
The five suite runs start together (one module fixture) and each test waits for its
own: the tokio runs spend most of their time waiting on the driver, not computing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kit_rust import KIT_DIR, cargo_test, rust_binaries

from simclock_conformance.entry._wire_run import WIRE_CLAUSES

VECTORS = (
    Path(__file__).resolve().parent.parent / "conformance" / "simclock_conformance" / "vectors"
)
_SUITE_TIMEOUT_S = 600

# What tokio 1.54.1's paused time does not keep (failed or blocked), as the kit's README
# explains clause by clause.
# Both runs leave out the golden-vector replay (C-WIRE-7, which both fail: see the
# README): in nanoseconds an interval far behind its grid bursts a million firings per
# tokio millisecond into multi-megabyte replies, and the replay alone takes minutes.
TOKIO_FAILED = {
    "ns": [
        "C-TIME-1", "C-TIME-2", "C-TIME-3", "C-TIME-4", "C-ADV-1", "C-ADV-2", "C-ADV-3",
        "C-ADV-4", "C-ADV-5", "C-SCH-1", "C-TIE-1", "C-PER-1", "C-PER-2", "C-PER-3",
        "C-CAN-1", "C-CAN-2", "C-CAN-3", "C-CAN-4", "C-ERR-1", "C-ERR-2", "C-DET-1",
        "C-STEP-1", "C-RNG-1", "C-RNG-2", "C-RNG-3", "C-RNG-4", "C-WIRE-2", "SM-ORACLE",
    ],
    "ms": [
        "C-TIME-2", "C-TIME-3", "C-TIME-4", "C-ADV-1", "C-ADV-4", "C-SCH-1", "C-TIE-1", "C-PER-1",
        "C-PER-2", "C-PER-3", "C-CAN-4", "C-ERR-2", "C-DET-1", "C-RNG-1", "C-RNG-2",
        "C-RNG-3", "C-RNG-4", "C-WIRE-2", "SM-ORACLE",
    ],
}  # fmt: skip


TOKIO_BLOCKED = {
    "ns": {
        **dict.fromkeys(
            [
                "C-TIME-1",
                "C-TIME-2",
                "C-TIME-3",
                "C-ADV-2",
                "C-ADV-3",
                "C-ADV-4",
                "C-ADV-5",
                "C-SCH-1",
                "C-TIE-1",
                "C-PER-2",
                "C-CAN-1",
                "C-CAN-3",
                "C-STEP-1",
                "C-WIRE-2",
            ],
            "C-ADV-1",
        ),
        **dict.fromkeys(["C-PER-3", "C-CAN-2"], "C-PER-1"),
        **dict.fromkeys(["C-RNG-3", "C-RNG-4"], "C-RNG-2"),
        # det-1/same-seed-same-run's first advance, which a halting callback ends at 10 ns,
        # gets a reply over the line limit (an interval's burst, the README's row): a
        # driver failure is charged to the rule of the request it ended, C-ERR-2 here.
        "C-DET-1": "C-ERR-2",
    },
    "ms": {
        **dict.fromkeys(["C-TIME-2", "C-TIME-3", "C-WIRE-2"], "C-SCH-1"),
        **dict.fromkeys(["C-TIE-1", "C-PER-3"], "C-ADV-1"),
        **dict.fromkeys(["C-DET-1", "C-RNG-3", "C-RNG-4"], "C-RNG-2"),
    },
}
"""The clauses of :data:`TOKIO_FAILED` (not kept) reported as blocked, by what."""


class SuiteRun:
    """One ``python -m simclock_conformance`` process, started now, awaited on demand."""

    def __init__(self, args: list[str], report: Path | None) -> None:
        self.report = report
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "simclock_conformance", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def result(self) -> tuple[int, str, dict[str, Any] | None]:
        try:
            out, _ = self.proc.communicate(timeout=_SUITE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
            pytest.fail(f"the suite took over {_SUITE_TIMEOUT_S} s:\n{out[-4000:]}", pytrace=False)
        report = None
        if self.report is not None and self.report.exists():
            report = json.loads(self.report.read_text())
        return self.proc.returncode, out, report


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, SuiteRun]]:
    built = rust_binaries()
    tmp = tmp_path_factory.mktemp("kit_rust")
    started = {
        "heap": SuiteRun(["--driver", "--", built.heap_clock], None),
        "minimal": SuiteRun(["--driver", "--", built.minimal_clock], None),
        "vectors": SuiteRun(["vectors", "--driver", "--", built.heap_clock], None),
        "ns": SuiteRun(
            [
                "--driver",
                "--no-vectors",
                "--no-shrink",
                "--json",
                str(tmp / "ns.json"),
                "--",
                built.tokio_driver,
            ],
            tmp / "ns.json",
        ),
        "ms": SuiteRun(
            [
                "--driver",
                "--no-vectors",
                "--no-shrink",
                "--json",
                str(tmp / "ms.json"),
                "--",
                built.tokio_driver,
                "--wire-unit",
                "ms",
            ],
            tmp / "ms.json",
        ),
    }
    yield started
    for run in started.values():
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.communicate()


def test_C_WIRE_6_the_kit_s_unit_tests_pass_in_cargo_test() -> None:
    done = cargo_test()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    counts = [
        tuple(map(int, m))
        for m in re.findall(r"test result: ok\. (\d+) passed; (\d+) failed", done.stdout)
    ]
    # lib (wire, bits, grid), tests/heap_clock.rs, tests/no_hiding.rs, tests/streams.rs,
    # the doc example.
    assert counts == [(14, 0), (3, 0), (4, 0), (2, 0), (1, 0)], done.stdout[-4000:]


def test_C_WIRE_6_the_example_heap_clock_is_conforming_wire_profile_1(
    runs: dict[str, SuiteRun],
) -> None:
    code, out, _ = runs["heap"].result()
    assert code == 0, out[-4000:]
    assert out.rstrip().endswith(
        f"{len(WIRE_CLAUSES)} passed, 0 failed, 0 incomplete, 0 not applicable, 0 not run: "
        "CONFORMING (wire profile 1)"
    ), out[-4000:]


def test_C_WIRE_6_the_minimal_example_clock_is_conforming_without_optional_features(
    runs: dict[str, SuiteRun],
) -> None:
    code, out, _ = runs["minimal"].result()
    assert code == 0, out[-4000:]
    assert out.rstrip().endswith(
        f"{len(WIRE_CLAUSES) - 3} passed, 0 failed, 0 incomplete, 3 not applicable, 0 not run: "
        "CONFORMING (wire profile 1)"
    ), out[-4000:]


MINIMAL = KIT_DIR / "simclock-driver" / "examples" / "minimal_clock.rs"


def test_C_WIRE_6_the_minimal_example_clock_is_under_80_lines_of_code_as_rustfmt_leaves_it() -> (
    None
):
    source = MINIMAL.read_text()
    code = [
        line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("//")
    ]
    assert len(code) < 80, len(code)
    assert f"in {len(code)} lines of code" in (KIT_DIR / "README.md").read_text()
    if shutil.which("rustfmt") is None:
        pytest.skip("rustfmt is not on PATH (the line count is of rustfmt's layout)")
    done = subprocess.run(
        ["rustfmt", "--check", "--edition", "2021", str(MINIMAL)],
        cwd=KIT_DIR,  # rustfmt.toml of the kit
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]


def test_C_WIRE_6_the_readme_shows_the_minimal_example_clock_verbatim() -> None:
    readme = (KIT_DIR / "README.md").read_text()
    assert f"```rust\n{MINIMAL.read_text()}```\n" in readme


def test_C_WIRE_7_the_example_heap_clock_replays_every_golden_vector(
    runs: dict[str, SuiteRun],
) -> None:
    cases = sum(len(p.read_text().splitlines()) for p in VECTORS.rglob("*.jsonl"))
    code, out, _ = runs["vectors"].result()
    assert code == 0, out[-4000:]
    assert (
        f"golden vectors: {cases} passed, 0 failed (0 expected), 0 not applicable "
        "(features peek, rate, stats, start_ns, bits)"
    ) in out, out[-4000:]


@pytest.mark.parametrize("unit", sorted(TOKIO_FAILED))
def test_C_WIRE_6_tokio_paused_time_is_judged_clause_by_clause(
    runs: dict[str, SuiteRun], unit: str
) -> None:
    code, out, report = runs[unit].result()
    assert report is not None, out[-4000:]
    assert report["verdict"] == "NOT CONFORMING", out[-4000:]
    assert report["blocked"] == TOKIO_BLOCKED[unit], out[-4000:]
    assert report["failed"] == [c for c in TOKIO_FAILED[unit] if c not in TOKIO_BLOCKED[unit]]
    not_applicable = [c["id"] for c in report["clauses"] if c["status"] == "not applicable"]
    assert not_applicable == ["C-X-PEEK", "C-X-RATE", "C-X-STATS", "C-X-BITS"]
    assert report["not_run"] == ["C-WIRE-7"]
    assert code != 0
