"""``ReplayClock(callbacks=True)`` over a recording, as a conformance backend (issue 11 item 2).

The clock replays a recording made once per process (a run of
:class:`~simclock.HeapSimClock` with no bus messages, so the suite's own
traces are the only messages on the bus) and runs every control callback on
its inner scheduling core. Its random source is a seeded one: the suite's
draws are its own program's, which no recording holds (SPEC C-REP-3 lets a
replay refuse them; the random clauses test the stream tree, not replay).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
import weakref
from pathlib import Path

from simclock import Bus, HeapSimClock, Recorder, ReplayClock, SeededRandomSource

__all__ = ["ReplayBackend", "factory", "recording"]


@functools.cache
def recording() -> Path:
    """The recording every backend clock replays (made on first use, removed at exit)."""
    folder = Path(tempfile.mkdtemp(prefix="simclock-replay-backend-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "empty.mcap"
    bus = Bus()
    with Recorder(path, bus, seed=0):
        HeapSimClock(0, bus=bus).advance(0)
    return path


class ReplayBackend(ReplayClock):
    """A replay clock with callbacks on whose random source is seeded, not recorded."""

    def __init__(self, seed: int, bus: Bus) -> None:
        super().__init__(recording(), callbacks=True, bus=bus)
        self._seeded = SeededRandomSource(seed)
        # The suite makes thousands of clocks and never closes them.
        weakref.finalize(self, self._reader.close)

    def random_source(self) -> SeededRandomSource:  # type: ignore[override]
        """A seeded root stream (see the module docstring)."""
        return self._seeded


def factory(seed: int, bus: Bus) -> ReplayBackend:
    """``FACTORY(seed, bus)`` of the conformance suite."""
    return ReplayBackend(seed, bus)
