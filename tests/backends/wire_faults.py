"""Drivers that break the transport in one way each (SPEC §18, C-WIRE-5), for the runner's tests.

``python tests/backends/wire_faults.py MODE`` serves HeapSimClock through the
protocol engine until the fault: it misbehaves on the first ``advance`` whose
``dt_ns`` is ``"10"`` (a request of C-ADV-1's first program), so the fault lands
in a known clause and everything before it is correct.
"""

from __future__ import annotations

import json
import os
import sys
import time

from simclock_conformance.kit._harness import heap_factory
from simclock_conformance.protocol._backends import PythonBackend
from simclock_conformance.protocol._driver import protocol_line
from simclock_conformance.protocol._engine import Engine

MODES = ("exit", "crash", "close_stdout", "not_json", "noise", "hang", "extra_reply")


def main(mode: str) -> int:
    engine = Engine(PythonBackend(heap_factory, f"fault:{mode}"))
    tripped = False
    for line in sys.stdin:
        request = json.loads(line)
        trigger = (
            not tripped
            and request.get("op") == "advance"
            and request.get("dt_ns") == "10"
            and request.get("clock") == "c"
        )
        if trigger:
            tripped = True
            print(f"fault driver: tripping {mode}", file=sys.stderr, flush=True)
            if mode == "exit":
                return 3
            if mode == "crash":
                os.abort()
            if mode == "close_stdout":
                sys.stdout.flush()
                os.close(1)
                time.sleep(30)
                return 0
            if mode == "not_json":
                sys.stdout.write("advance done!\n")
                sys.stdout.flush()
                continue
            if mode == "hang":
                time.sleep(60)
        reply = engine.handle(request)
        sys.stdout.write(protocol_line(reply) + "\n")
        if trigger and mode == "noise":
            sys.stdout.write("debug: fired 5 entries\n")
        if trigger and mode == "extra_reply":
            sys.stdout.write(protocol_line(reply) + "\n")
        sys.stdout.flush()
        if request.get("op") == "quit":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
