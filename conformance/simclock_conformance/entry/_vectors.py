"""Golden vectors: versioned case files any language can replay (SPEC §18, C-WIRE-7).

``vectors/v1/*.jsonl`` (package data), one case per line::

    {"id": "...", "clauses": [...], "requires": [...],
     "steps": [{"request": {...}, "reply": {...}, "accept": [...]}, ...]}

``reply`` is what the oracle answered; a case is written only where
``simclock_oracles.ReferenceClock`` and ``HeapSimClock`` give the same
replies. Files: ``clauses`` (every clause program), ``far_time`` (random
programs up to ``2**64 - 1``), ``machine`` (a fixed sample of state-machine
style programs), ``streams`` (the reference random streams; each line also
carries every stage of the derivation: path, spawn key, seed-sequence state,
PCG64 state, outputs) and ``regressions`` (minimal failing programs kept
forever). :func:`generate` rewrites them; a test regenerates and compares.
Comparison rules: :mod:`~simclock_conformance.protocol._compare`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simclock_conformance.clauses._builder import Case
from simclock_conformance.clauses._programs import CASES
from simclock_conformance.protocol._backends import (
    OracleBackend,
    PythonBackend,
    reference_generator,
    reference_spawn_key,
)
from simclock_conformance.protocol._compare import first_difference
from simclock_conformance.protocol._driver import DriverError, protocol_line
from simclock_conformance.protocol._engine import MAX_NS, Engine
from simclock_conformance.protocol._wire_core import run_case
from simclock_conformance.report._outcome import FAILED, PASSED, Outcome

if TYPE_CHECKING:
    from simclock_conformance.protocol._wire_core import Session

__all__ = ["VECTORS_DIR", "generate", "load", "not_offered", "replay", "replay_outcome"]

# The vectors stay at the package root: the driver kits read them there by relative path.
VECTORS_DIR = Path(__file__).resolve().parents[1] / "vectors" / "v1"
Json = dict[str, Any]


def _heap_clock(seed: int, bus: Any, start_ns: int = 0) -> Any:
    from simclock import HeapSimClock

    return HeapSimClock(seed, bus=bus, start_ns=start_ns)


def _heap_engine() -> Engine:
    return Engine(PythonBackend(_heap_clock, "simclock.HeapSimClock"))


def _agreed(case: Case) -> Json | None:
    """The case with the oracle's replies, or None where HeapSimClock answers otherwise."""
    oracle, heap = Engine(OracleBackend()), _heap_engine()
    steps = []
    for request, accept in case.steps:
        want = oracle.handle(request)
        got = heap.handle(request)
        if first_difference(got, want, ("peek", "rate", "stats", "bits")) is not None:
            return None
        step: Json = {"request": request, "reply": want}
        if accept:
            step["accept"] = accept
        steps.append(step)
    return {"id": case.id, "clauses": case.clauses, "requires": case.requires, "steps": steps}


def _far_cases(count: int) -> list[Case]:
    """Random far-time programs (C-TIME-4, C-TIE-1, C-CONF-4), from a fixed seed."""
    rng = random.Random(20260101)
    cases = []
    for i in range(count):
        ats = [
            rng.choice(
                (
                    rng.randrange(MAX_NS + 1),
                    rng.randrange(2**53 - 8, 2**53 + 8),
                    rng.randrange(2**63 - 8, 2**63 + 8),
                    MAX_NS - rng.randrange(8),
                )
            )
            for _ in range(rng.randrange(1, 10))
        ]
        ats += [ats[rng.randrange(len(ats))] for _ in range(rng.randrange(4))]
        case = Case(f"far/{i:03d}", ["C-TIME-4", "C-TIE-1"])
        case.steps.append(({"op": "create", "clock": "c", "seed": "0"}, []))
        for n, at in enumerate(ats):
            case.steps.append(
                (
                    {
                        "op": "schedule",
                        "clock": "c",
                        "entry": f"e{n}",
                        "at_ns": str(at),
                        "on_fire": [],
                    },
                    [],
                )
            )
        now = 0
        for stop in sorted(set(ats)):
            case.steps.append(({"op": "advance", "clock": "c", "dt_ns": str(stop - now)}, []))
            now = stop
        case.steps.append(({"op": "drop", "clock": "c"}, []))
        cases.append(case)
    return cases


def _machine_cases(count: int) -> list[Case]:
    """State-machine style programs from a fixed seed (SM-ORACLE), each on one clock."""
    rng = random.Random(424242)
    cases = []
    for i in range(count):
        case = Case(f"machine/{i:03d}", ["SM-ORACLE"])
        steps = case.steps
        steps.append(({"op": "create", "clock": "c", "seed": "0"}, []))
        now = 0
        entries: list[str] = []
        pending: list[int] = []
        for _ in range(rng.randrange(5, 30)):
            pick = rng.random()
            entry = f"e{len(entries)}"
            kind = rng.choice(
                ("plain", "plain", "raise", "spawn", "cancel", "nested", "halt", "self")
            )
            actions: list[Json] = {
                "plain": [],
                "raise": [{"do": "raise", "message": "boom"}],
                "spawn": [{"do": "schedule", "delay_ns": str(rng.randrange(0, 13))}],
                "cancel": [{"do": "cancel", "entry": f"e{rng.randrange(max(1, len(entries)))}"}],
                "nested": [{"do": "advance", "dt_ns": str(rng.randrange(3))}],
                "halt": [{"do": "halt"}],
                "self": [{"do": "cancel", "entry": entry}],
            }[kind]
            if pick < 0.35:
                at = now + rng.choice((rng.randrange(40), rng.randrange(70_000)))
                steps.append(
                    (
                        {
                            "op": "schedule",
                            "clock": "c",
                            "entry": entry,
                            "at_ns": str(at),
                            "on_fire": actions,
                        },
                        [],
                    )
                )
                entries.append(entry)
                pending.append(at)
            elif pick < 0.5:
                fields = {
                    "period_ns": str(rng.randrange(1, 30)),
                    "phase_ns": str(rng.randrange(60)),
                }
                if kind == "halt":
                    actions = []
                steps.append(
                    (
                        {
                            "op": "schedule_periodic",
                            "clock": "c",
                            "entry": entry,
                            **fields,
                            "on_fire": actions,
                        },
                        [],
                    )
                )
                entries.append(entry)
            elif pick < 0.6 and entries:
                steps.append(({"op": "cancel", "clock": "c", "entry": rng.choice(entries)}, []))
            else:
                dt = rng.choice((0, rng.randrange(1, 10), rng.randrange(11, 120)))
                steps.append(({"op": "advance", "clock": "c", "dt_ns": str(dt)}, []))
                now += dt
        steps.append(({"op": "drop", "clock": "c"}, []))
        cases.append(case)
    return cases


def _stream_lines() -> list[Json]:
    """The reference streams with each stage of their derivation (C-X-BITS), for ports."""
    out = []
    for seed in (0, 1, 11, 2**32 + 7, 2**63 + 5, MAX_NS):
        for labels in ([], ["sensors"], ["sensors", "imu0"], ["/a/b/c"], ["x.y-z_1"]):
            path = "/" + "/".join(s for label in labels for s in label.strip("/").split("/"))
            key = reference_spawn_key(path)
            import numpy as np

            seq = np.random.SeedSequence(seed, spawn_key=key)
            gen = reference_generator(seed, path)
            state = gen.state["state"]
            outputs = [str(int(v)) for v in gen.random_raw(5)]
            case_id = f"streams/seed-{seed}{path if path != '/' else '/root'}"
            request = {"op": "draw", "clock": "c", "labels": labels, "n": "5"}
            case = Case(case_id, ["C-X-BITS"], ["bits"])
            case.steps += [
                ({"op": "create", "clock": "c", "seed": str(seed)}, []),
                (request, []),
                ({"op": "drop", "clock": "c"}, []),
            ]
            line = _agreed(case)
            if line is None:
                continue
            line["stages"] = {
                "seed": str(seed),
                "path": path,
                "spawn_key": [str(k) for k in key],
                "seed_sequence_state": [str(int(w)) for w in seq.generate_state(4, np.uint32)],
                "pcg64_state": {"state": str(state["state"]), "inc": str(state["inc"])},
                "outputs": outputs,
            }
            out.append(line)
    return out


def build() -> dict[str, list[Json]]:
    """Every vector file's lines, by file stem (deterministic)."""
    files: dict[str, list[Json]] = {}
    for stem, cases in (
        ("clauses", CASES),
        ("far_time", _far_cases(24)),
        ("machine", _machine_cases(40)),
    ):
        files[stem] = [line for line in (_agreed(c) for c in cases) if line is not None]
    files["streams"] = _stream_lines()
    return files


def _dump(lines: list[Json]) -> str:
    return "".join(
        json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n" for line in lines
    )


def generate(directory: Path = VECTORS_DIR) -> dict[str, str]:
    """The text of every generated file (``regressions`` is kept by hand: never rewritten)."""
    return {f"{stem}.jsonl": _dump(lines) for stem, lines in build().items()}


def load(directory: Path = VECTORS_DIR) -> list[Json]:
    """Every case of every vector file, regressions included, in file order."""
    out: list[Json] = []
    for path in sorted(directory.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
    return out


def _as_case(line: Json) -> tuple[Case, list[Json]]:
    case = Case(line["id"], list(line["clauses"]), list(line.get("requires", [])))
    case.steps = [(s["request"], list(s.get("accept", []))) for s in line["steps"]]
    return case, [s["reply"] for s in line["steps"]]


def replay(
    session: Session, lines: Sequence[Json], required: Sequence[str] = ()
) -> tuple[list[str], dict[str, str]]:
    """Replay ``lines`` on the driver: ``(passed ids, {failed id: why})``.

    A vector needing a feature the driver does not offer is skipped (not
    applicable), or failed when that feature is in ``required`` (``--require``).
    """
    passed: list[str] = []
    failed: dict[str, str] = {}
    for line in lines:
        case, replies = _as_case(line)
        missing = [f for f in case.requires if f not in session.features]
        if missing:
            lacking = [f for f in missing if f in required]
            if lacking:
                failed[case.id] = not_offered(lacking[0], session.features)
            continue
        session.mark()
        try:
            problem, _ = run_case(session.send, case, session.features, replies)
        except DriverError as failure:
            session.failed()
            problem = str(failure)
        if problem is None:
            passed.append(case.id)
        else:
            failed[case.id] = problem
    return passed, failed


def not_offered(feature: str, offered: Sequence[str]) -> str:
    """Why a program or vector needing ``feature`` fails under ``--require``."""
    return (
        f"the driver does not offer feature {feature}, which --require names (its hello "
        f"offers {', '.join(offered) or 'none'})"
    )


def replay_outcome(
    session: Session, expected_failures: Sequence[str] = (), required: Sequence[str] = ()
) -> Outcome:
    """C-WIRE-7 in a profile run: every vector the driver can run must pass."""
    passed, failed = replay(session, load(), required)
    if not failed:
        return Outcome("vectors", PASSED)
    first = next(iter(failed))
    program = "\n".join(
        protocol_line(r)
        for r in _as_case(next(line for line in load() if line["id"] == first))[0].requests
    )
    return Outcome(
        "vectors",
        FAILED,
        message=f"C-WIRE-7: {len(failed)} of {len(passed) + len(failed)} golden vectors fail, "
        f"first {failed[first]}",
        program=program,
    )


def write(directory: Path = VECTORS_DIR) -> list[str]:
    """Rewrite the generated vector files in ``directory``; the names of those that changed."""
    changed = []
    for name, text in generate(directory).items():
        path = directory / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(name)
    return changed


if __name__ == "__main__":
    print("rewritten:", ", ".join(write()) or "nothing (the vectors were current)")
