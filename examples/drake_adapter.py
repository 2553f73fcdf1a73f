"""Drake's ``Simulator`` and its periodic publish events as a simclock backend (SPEC §1, §14).

Drake (``pip install drake``, module ``pydrake``) simulates a ``System`` whose events
are declared when the system is built: ``DeclarePeriodicPublishEvent(period, offset,
handler)`` calls ``handler(context)`` at ``offset + k * period`` seconds, and
``Simulator.AdvanceTo(t)`` runs every event due up to ``t``. The adapter is what a Drake
user who wants timers would write:

- time is Drake's, in float seconds: a wire/suite nanosecond is ``1e-9`` s, a time is
  handed to Drake as ``ns / 1e9`` and read back as ``round(seconds * 1e9)``;
- ``schedule_periodic`` is a periodic publish event; ``schedule`` is a publish event
  whose period is longer than any run (it fires at its offset once);
- Drake fixes a system's events when it is built, so the adapter rebuilds the system and
  its ``Simulator`` (at the current time, the entries in the order they were declared)
  whenever the set of entries changed: before an advance, and during one when a handler
  scheduled or cancelled something (the handler returns ``EventStatus.ReachedTermination``
  so that ``AdvanceTo`` stops, then it goes on);
- ``cancel`` drops the entry; from inside a handler it flags it (a handler of a
  cancelled entry does nothing, as Drake cannot take an event back from a system it is
  running) and the rebuild drops it;
- an exception from a handler is not caught: Drake lets it out of ``AdvanceTo``, as it
  would in a user's program; an advance from inside a handler is ``AdvanceTo`` again,
  except while the simulator initialises (the handlers of events due at its start time):
  Drake 1.51.1 does not refuse an ``AdvanceTo`` from there, and the process dies of a
  segmentation fault, so the adapter refuses it with ``RuntimeError`` (C-ADV-4's
  answer) rather than lose the run.

Drake has no random streams and no event bus: the adapter uses ``SeededRandomSource``.
The suite measures the rest; ``WHY`` says, for each clause Drake does not keep, what it
does instead (``docs/conformance.md``).

Run: ``PYTHONPATH=examples python -m simclock_conformance drake_adapter:factory``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from pydrake.systems.analysis import Simulator
from pydrake.systems.framework import Context, EventStatus, LeafSystem

from simclock import Bus, Callback, PeriodicStats, SeededRandomSource, SimclockValueError
from simclock.lowlevel import Handle, check_time_ns

__all__ = ["WHY", "DrakeClock", "factory"]

_ONCE_S = 1e30
"""The period of a one-shot event: it never comes round again within a run."""


class _Entry:
    """One registration: its Drake event's period and next offset, in seconds."""

    __slots__ = ("cancelled", "cb", "fired", "k", "period_s", "phase_s")

    def __init__(self, cb: Callback, phase_s: float, period_s: float | None) -> None:
        self.cb = cb
        self.phase_s = phase_s
        self.period_s = period_s
        self.k = 0  # firings of a periodic so far: its next one is at phase + k * period
        self.cancelled = False
        self.fired = 0

    def next_s(self) -> float:
        if self.period_s is None:
            return self.phase_s
        return self.phase_s + self.k * self.period_s


class DrakeClock:
    """``simclock.SimClock`` over a Drake ``Simulator`` of one ``LeafSystem``."""

    def __init__(self, seed: int, bus: Bus) -> None:
        self._t = 0.0
        self._entries: list[_Entry] = []
        self._sim: Any = None
        self._system: Any = None
        self._context: Context | None = None
        self._changed = True
        self._initializing = False
        self._root = SeededRandomSource(seed)
        self._bus = bus
        if bus.clock is None:
            bus.bind(self)

    def now_ns(self) -> int:
        """Drake's time, in float seconds, as nanoseconds."""
        t = self._context.get_time() if self._context is not None else self._t
        return round(t * 1e9)

    def step_ns(self) -> int:
        """An event clock: 1 ns."""
        return 1

    def random_source(self) -> SeededRandomSource:
        """simclock's seeded tree (Drake has none)."""
        return self._root

    def _build(self) -> None:
        """A new system with every live entry's event, and its simulator at the current time."""
        self._entries = [
            e for e in self._entries if not e.cancelled and (e.period_s or not e.fired)
        ]
        system = LeafSystem()
        for entry in self._entries:
            system.DeclarePeriodicPublishEvent(
                entry.period_s or _ONCE_S, entry.next_s(), partial(self._fire, entry)
            )
        sim = Simulator(system)
        sim.get_mutable_context().SetTime(self._t)
        self._system, self._sim, self._changed = system, sim, False
        self._initializing = True
        try:
            sim.Initialize()
        finally:
            self._initializing = False

    def _fire(self, entry: _Entry, context: Context) -> Any:
        if entry.cancelled or (entry.period_s is None and entry.fired):
            return EventStatus.DidNothing()
        entry.fired += 1
        entry.k += 1
        self._context = context
        entry.cb()
        if self._changed:
            return EventStatus.ReachedTermination(self._system, "entries changed")
        return EventStatus.Succeeded()

    def _add(self, entry: _Entry) -> Handle:
        self._entries.append(entry)
        self._changed = True

        def cancel() -> None:
            if entry.cancelled:
                return
            entry.cancelled = True
            self._changed = True
            if self._context is None and entry in self._entries:
                # Between advances the system is rebuilt before the next one anyway.
                self._entries.remove(entry)

        stats = partial(lambda e: PeriodicStats(fired=e.fired), entry)
        return Handle(cancel=cancel, stats=stats)

    def schedule(self, at_ns: int, cb: Callback) -> Handle:
        """A publish event at ``at_ns / 1e9`` s whose period never comes round."""
        at = check_time_ns(at_ns, "at_ns")
        if not callable(cb):
            raise TypeError(f"cb must be callable, got {cb!r}")
        if at < self.now_ns():
            raise SimclockValueError(f"at_ns={at} is before now={self.now_ns()}; schedule later")
        return self._add(_Entry(cb, at / 1e9, None))

    def schedule_periodic(self, period_ns: int, cb: Callback, phase_ns: int = 0) -> Handle:
        """A periodic publish event from the first grid point at or after now."""
        period = check_time_ns(period_ns, "period_ns")
        phase = check_time_ns(phase_ns, "phase_ns")
        if period == 0:
            raise SimclockValueError("period_ns must be > 0, got 0")
        if not callable(cb):
            raise TypeError(f"cb must be callable, got {cb!r}")
        now = self.now_ns()
        k0 = 0 if phase >= now else -(-(now - phase) // period)
        return self._add(_Entry(cb, (phase + k0 * period) / 1e9, period / 1e9))

    def advance(self, dt_ns: int) -> None:
        """``AdvanceTo(target)``, rebuilding the system whenever a handler changed the entries."""
        target_s = (self.now_ns() + check_time_ns(dt_ns, "dt_ns")) / 1e9
        if self._context is not None:  # from inside a handler: Drake's AdvanceTo again
            if self._initializing:
                # Drake would crash (SIGSEGV) on an AdvanceTo from inside Initialize.
                raise RuntimeError(
                    "advance from a callback while Drake's Simulator initialises; "
                    "Drake 1.51.1 crashes on a nested AdvanceTo there"
                )
            self._sim.AdvanceTo(target_s)
            return
        try:
            while True:
                if self._changed or self._sim is None:
                    self._build()
                status = self._sim.AdvanceTo(target_s)
                self._t = self._sim.get_context().get_time()
                if status.return_time() >= target_s and not self._changed:
                    break
        except BaseException:
            # Drake let a handler's exception out of AdvanceTo: start again from its time.
            self._t = self._sim.get_context().get_time()
            self._changed = True
            raise
        finally:
            self._context = None


def factory(seed: int, bus: Bus) -> DrakeClock:
    """``FACTORY(seed, bus)`` for the conformance suite."""
    return DrakeClock(seed, bus)


_RAISES = (
    "its program has a raising callback, and Drake lets a handler's exception out of "
    "`AdvanceTo` (C-ERR-1), so the advance stops there"
)
_DECLARED = (
    "events due at one time run in the order the system declared them; a periodic is not "
    "re-pushed behind the entries scheduled since its last firing"
)
_FLOAT = (
    "Drake's time is float seconds: `offset + k * period` can land on the neighbouring "
    "double (3 x 2e-9 s is 6.000000000000001e-9 s), just past the advance's target or "
    "after an entry due at the same nanosecond"
)

WHY: dict[str, str] = {
    "C-TIME-2": _RAISES,
    "C-TIME-4": "Drake's time is float seconds: past about 2**53 ns (104 days) neighbouring "
    "nanoseconds share one double, so events fire and `now_ns()` ends beside the target",
    "C-ADV-5": f"{_RAISES}; and {_FLOAT}",
    "C-ADV-3": f"{_RAISES}, so an entry a callback pushed, due before the target, does not "
    f"fire in it; and {_FLOAT}",
    "C-TIE-1": "entries tied far in time are tied at a neighbouring double (see C-TIME-4)",
    "C-PER-2": f"{_DECLARED}; and {_FLOAT}",
    "C-CAN-2": f"{_DECLARED}, so a periodic declared before the entry that cancels it fires "
    "once more at their shared time",
    "C-ERR-1": "Drake does not isolate event handlers: an exception leaves "
    "`Simulator.AdvanceTo`, the advance stops and the events due with it do not run",
    "C-ERR-2": f"{_DECLARED}, so the halting entry and another due with it fire in another order",
    "C-DET-1": _RAISES,
    "C-RNG-2": _RAISES,
    "C-RNG-6": _RAISES,
    "C-BUS-1": _RAISES,
    "C-X-STATS": _RAISES,
    "SM-ORACLE": "the differences above, found by the state machine",
}
"""Clause -> why Drake does not keep it (docs/conformance.md)."""
