"""CPU time of one default-profile conformance run: the C++ driver vs HeapSimClock in process.

Both runs execute the same programs (the clause cases, the state machine with the
``ci`` profile, the golden vectors) through the same runner; the in-process run
answers them with ``HeapSimClock`` through the protocol engine (``serve`` without
the pipe), the other with ``conformance/drivers/cpp/examples/heap_clock.cpp`` in its
own process. Each run is a child process; its CPU time includes its own children
(the driver, the second driver of C-DET-1/C-RNG-2).

    PYTHONPATH=.:conformance:oracles:tests python benchmarks/wire_profile.py
"""

from __future__ import annotations

import os
import subprocess
import sys

CODE = """
import sys
from simclock_conformance.entry._wire_run import LocalDriver, run_driver
from simclock_conformance.kit._harness import heap_factory
if sys.argv[1] == "heap":
    r = run_driver(["heap"], make_driver=lambda: LocalDriver(heap_factory, "heap"))
else:
    r = run_driver(sys.argv[1:])
print(r.verdict)
"""


def main() -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
    import resource

    from wire_drivers import cpp_driver

    command = cpp_driver()
    rows = []
    for name, args in (("HeapSimClock in process", ["heap"]), ("C++ driver", command)):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(
            [sys.executable, "-c", CODE, *args], capture_output=True, text=True, check=True
        ).stdout.strip()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        rows.append((name, cpu, out))
    base = rows[0][1]
    for name, cpu, verdict in rows:
        print(f"{name:<26} {cpu:7.2f} s CPU  {cpu / base:5.2f}x  {verdict}")


if __name__ == "__main__":
    main()
