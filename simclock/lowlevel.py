"""Low-level helpers for authors of clock backends (the second tier of simclock's API).

A backend that the conformance suite checks (SPEC §14) builds its C-ERR-1
failure events and validates its time arguments with these, so that its
messages and events are exactly simclock's own:

- :func:`check_time_ns`: a time argument as an ``int`` (C-TIME-1, C-TIME-3);
- :class:`Handle`: what ``schedule*`` returns (C-SCH-2);
- :func:`callback_failure_event` / :func:`publish_callback_failure`: the exact
  C-ERR-1 event, and publishing it on a bus;
- :class:`TimedSource`: a source of timed work a :class:`simclock.HeapSimClock`
  runs in its firing order (the physics grid and replay are built on it).

Users of the clock need none of these: ``simclock`` has the user API.
"""

from simclock.core import (
    Handle,
    TimedSource,
    callback_failure_event,
    check_time_ns,
    publish_callback_failure,
)
from simclock.core._public import LOWLEVEL, LOWLEVEL_NAMES, fixup_module_metadata

__all__ = [
    "Handle",
    "TimedSource",
    "callback_failure_event",
    "check_time_ns",
    "publish_callback_failure",
]

# Invariant: __all__ is the LOWLEVEL_NAMES table (tests/test_public_api.py checks both).
fixup_module_metadata(LOWLEVEL, globals(), LOWLEVEL_NAMES)
