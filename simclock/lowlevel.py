"""Low-level helpers for authors of clock backends (the second tier of simclock's API).

A backend that the conformance suite checks (SPEC §14) builds its C-ERR-1
failure events and validates its time arguments with these, so that its
messages and events are exactly simclock's own:

- `check_time_ns`: a time argument as an ``int`` (C-TIME-1, C-TIME-3);
- [`Handle`][simclock.lowlevel.Handle]: what ``schedule*`` returns (C-SCH-2);
- `callback_failure_event` / `publish_callback_failure`: the exact
  C-ERR-1 event, and publishing it on a bus;
- [`TimedSource`][simclock.lowlevel.TimedSource]: a source of timed work a `simclock.HeapSimClock`
  runs in its firing order (the physics grid and replay are built on it);
- `describe_exception`: the C-ERR-1 rule for naming an exception
  (qualified type name, a ``str()`` that cannot raise);
- [`run_in_child`][simclock.lowlevel.run_in_child] / `SimclockChildError`: run a module again in a
  child process with another ``PYTHONHASHSEED``, with a time limit (C-DET-1).

Users of the clock need none of these: ``simclock`` has the user API.
"""

from simclock.core import (
    Handle,
    SimclockChildError,
    TimedSource,
    callback_failure_event,
    check_time_ns,
    describe_exception,
    publish_callback_failure,
    run_in_child,
)
from simclock.core._public import LOWLEVEL, LOWLEVEL_NAMES, fixup_module_metadata

__all__ = [
    "Handle",
    "SimclockChildError",
    "TimedSource",
    "callback_failure_event",
    "check_time_ns",
    "describe_exception",
    "publish_callback_failure",
    "run_in_child",
]

# Invariant: __all__ is the LOWLEVEL_NAMES table (tests/test_public_api.py checks both).
fixup_module_metadata(LOWLEVEL, globals(), LOWLEVEL_NAMES)
