"""A fixed scenario whose output must not depend on the process (C-DET-1, C-RNG-2).

``run_scenario(factory, seed)`` returns a JSON-friendly dict: the firing trace
with the random numbers each callback drew, the failure events, the final time
and draws from a few labelled streams. The suite runs it in this process and in
subprocesses with different ``PYTHONHASHSEED`` values
(``python -m simclock_conformance.kit._scenario MODULE:FACTORY SEED``, or ``@FILE`` for a
factory shipped by value, e.g. a lambda) and requires equal output.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import marshal
import pickle
import sys
import tempfile
import types
from pathlib import Path
from typing import Any, cast

from simclock.lowlevel import run_in_child
from simclock_conformance.kit._harness import Factory, load_factory, make_rig

__all__ = ["main", "run_in_subprocess", "run_scenario", "ship_factory"]

_MS = 1_000_000


def run_scenario(factory: Factory, seed: int, ms: int = _MS) -> dict[str, Any]:
    """Run the fixed scenario on a fresh clock and return what it observed.

    ``ms`` is the scenario's millisecond (its 25 "ms" span 25*``ms`` ns); a
    backend with a declared horizon gets a shorter one (``simclock_conformance.kit._reach``).
    """
    rig = make_rig(factory, seed)
    clock = rig.clock
    root = clock.random_source()
    imu = root.child("sensors/imu0/noise")
    cam = root.child("/sensors").child("cam_front").child("dropout")
    out: list[list[Any]] = []

    def imu_tick() -> None:
        out.append(["imu", clock.now_ns(), imu.normal(0.0, 0.05)])

    def cam_tick() -> None:
        out.append(["cam", clock.now_ns(), int(cam.integers(0, 1000))])

    def late() -> None:
        out.append(["late", clock.now_ns(), root.uniform(0.0, 1.0)])

    def control() -> None:
        now = clock.now_ns()
        out.append(["ctl", now, root.uniform(-1.0, 1.0)])
        if now == 10 * ms:
            clock.schedule(now, late)
            clock.schedule(now + 3 * ms, late)

    def fail() -> None:
        raise ValueError(f"scenario failure at {clock.now_ns()}")

    clock.schedule_periodic(2 * ms, imu_tick)
    clock.schedule_periodic(3 * ms, cam_tick, 1 * ms)
    clock.schedule_periodic(5 * ms, control)
    clock.schedule(6 * ms, fail)
    clock.schedule(6 * ms, late)
    for dt in (0, 1 * ms, 4 * ms, 7 * ms, 0, 13 * ms):
        clock.advance(dt)
    streams = {
        "root": [root.uniform(0.0, 1.0) for _ in range(3)],
        "a/b": [root.child("a").child("b").normal(0.0, 1.0) for _ in range(2)],
        "a/b-path": root.child("a/b").normal(0.0, 1.0),
        "x": [float(v) for v in root.child("x").numpy_rng().random(3)],
        "y": [int(v) for v in root.child("y").integers(0, 1 << 30, size=3)],
    }
    failures = [
        [e.at_ns, str(e.details.get("error_type")), str(e.details.get("error_message"))]
        for e in rig.failures()
    ]
    return {"trace": out, "failures": failures, "now": clock.now_ns(), "streams": streams}


def ship_factory(factory: object) -> bytes | None:
    """``factory`` as bytes another process can rebuild, or None.

    Picklable factories are pickled. A plain function that pickle refuses (a
    lambda, a local function) is shipped as its marshalled code, defaults and
    closure, to be rebuilt over the globals of its module, which must be
    importable in the other process.
    """
    try:
        return pickle.dumps(("pickle", pickle.dumps(factory)))
    except Exception:
        pass
    if not isinstance(factory, types.FunctionType):
        return None
    module = factory.__module__
    if module == "__main__" or importlib.util.find_spec(module) is None:
        return None
    try:
        cells = tuple(c.cell_contents for c in factory.__closure__ or ())
        return pickle.dumps(
            (
                "function",
                (module, marshal.dumps(factory.__code__), factory.__defaults__, cells),
            )
        )
    except Exception:
        return None


def _unship(data: bytes) -> Factory:
    kind, body = pickle.loads(data)
    if kind == "pickle":
        factory: Factory = pickle.loads(body)
        return factory
    module, code, defaults, cells = body
    fn = types.FunctionType(
        marshal.loads(code),
        vars(importlib.import_module(module)),
        None,
        defaults,
        tuple(types.CellType(c) for c in cells),
    )
    return cast(Factory, fn)


def run_in_subprocess(
    spec: str | bytes, seed: int, hash_seed: str, ms: int = _MS
) -> dict[str, Any]:
    """Run the scenario in ``python -m simclock_conformance.kit._scenario`` (``PYTHONHASHSEED``).

    ``spec`` is ``MODULE:FACTORY`` or a factory shipped by :func:`ship_factory`.
    The child (:func:`simclock.lowlevel.run_in_child`) gets this process's ``sys.path``
    so it imports the same backend; ``simclock.SimclockChildError`` (a
    ``RuntimeError``) with its exit status and stderr tail if it fails or runs
    longer than 120 s.
    """
    with tempfile.TemporaryDirectory(prefix="simclock-conformance-") as tmp:
        arg = spec
        if isinstance(spec, bytes):
            path = Path(tmp) / "factory.bin"
            path.write_bytes(spec)
            arg = f"@{path}"
        name = "the shipped factory" if isinstance(spec, bytes) else repr(spec)
        stdout = run_in_child(
            "simclock_conformance.kit._scenario",
            [str(arg), str(seed), str(ms)],
            hash_seed=int(hash_seed),
            what=f"the scenario of {name}",
            timeout_s=120.0,
            cwd=tmp,
        )
    result: dict[str, Any] = json.loads(stdout)
    return result


def main(argv: list[str] | None = None) -> int:
    """The command ``python -m simclock_conformance.kit._scenario MODULE:FACTORY SEED [MS]``.

    It prints the scenario's result as JSON.
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print(
            "usage: python -m simclock_conformance.kit._scenario MODULE:FACTORY SEED [MS]",
            file=sys.stderr,
        )
        return 2
    if args[0].startswith("@"):
        factory = _unship(Path(args[0][1:]).read_bytes())
    else:
        factory = load_factory(args[0])
    ms = int(args[2]) if len(args) == 3 else _MS
    print(json.dumps(run_scenario(factory, int(args[1]), ms)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
