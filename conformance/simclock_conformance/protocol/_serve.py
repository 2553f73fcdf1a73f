"""``python -m simclock_conformance serve MODULE:FACTORY``: a Python backend as a driver (C-WIRE-8).

Reads one JSON request per line from stdin and writes its one reply per line
on stdout, flushed (C-WIRE-1); the work is :class:`~simclock_conformance.protocol._engine.Engine`'s.
A line that is not a JSON object is answered ``bad_request``; ``quit`` and the
end of input end it with status 0. Nothing else is written on stdout.
"""

from __future__ import annotations

import json
import sys
from typing import IO

from simclock_conformance.kit._harness import load_factory
from simclock_conformance.protocol._backends import PythonBackend
from simclock_conformance.protocol._driver import protocol_line
from simclock_conformance.protocol._engine import Engine

__all__ = ["serve"]


def serve(spec: str, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Serve the protocol for the backend ``spec`` until ``quit`` or the end of input."""
    source = sys.stdin if stdin is None else stdin
    sink = sys.stdout if stdout is None else stdout
    engine = Engine(PythonBackend(load_factory(spec), spec))
    for line in source:
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        reply = engine.handle(request)
        sink.write(protocol_line(reply) + "\n")
        sink.flush()
        if isinstance(request, dict) and request.get("op") == "quit":
            break
    return 0
