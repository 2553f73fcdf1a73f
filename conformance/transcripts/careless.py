"""The scripted careless clock of the kits' shared transcript, in Python (SPEC §18).

``python -m simclock_conformance serve careless:clock`` (with this folder on
``PYTHONPATH``) is the reference: the same clock is written in every driver kit
(``examples/careless``), the requests of ``careless.requests.jsonl`` are sent to
each, and every kit must answer ``careless.replies.jsonl`` byte for byte. The
clock breaks the contract on purpose, so that each thing a kit must report is
reached once; ``docs/kits.md`` ("What a kit reports") lists the rules and this
script:

- ``schedule(at)``: ``ValueError`` "at_ns A is before now N" for ``at < now``;
  ``ValueError`` "at_ns A is past the horizon 1000000" for ``at > 1000000``;
  ``TypeError`` "at_ns 4242 is unlucky" for ``at == 4242``. Outside a callback,
  ``at == now`` runs the callback at once, inside ``schedule`` (careless: C-SCH-1
  says at the next advance).
- ``schedule_periodic``: ``ValueError`` "period_ns must be > 0" for a zero
  period; the first firing is the first ``phase + k*period >= now``, the next one
  is pushed after each invocation.
- ``cancel``: drops the entry at once.
- ``advance(dt)`` from inside a callback: ``Deadlock`` (an error of the adapter's
  own kind, none of the protocol's) "a nested advance of 13 ns would deadlock" for
  ``dt == 13``; ``RuntimeError`` "advance from inside a callback" for ``dt > 10``;
  otherwise accepted and ignored (careless: C-ADV-4 says refuse it).
- ``advance(666)``: ``Deadlock`` "advance of 666 ns would deadlock", nothing changed.
- ``advance(dt)``: entries due by ``now + dt`` fire in (time, schedule order) with
  ``now`` at their time; an entry at a multiple of 100 ns runs its callback on a
  new thread and waits for it; an ordinary error of a callback at an even time is
  isolated (reported), at an odd time it leaves ``advance`` with ``now`` at that
  time (careless: C-ERR-1); a halt always leaves it (C-ERR-2).
- ``stored`` is the number of pending entries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from simclock import Bus
from simclock.lowlevel import Handle, publish_callback_failure

__all__ = ["CarelessClock", "Deadlock", "clock"]

HORIZON_NS = 1_000_000


class Deadlock(Exception):  # noqa: N818 - the adapter's own error kind, named as the kits name it
    """An error of the adapter's own kind: none of TypeError, ValueError, RuntimeError."""


class _Entry:
    __slots__ = ("at", "callback", "period", "seq")

    def __init__(self, at: int, seq: int, callback: Callable[[], None], period: int) -> None:
        self.at = at
        self.seq = seq
        self.callback = callback
        self.period = period


class _NoStreams:
    """Random streams that are not simclock's (the clock declares no feature)."""

    def child(self, label: str) -> _NoStreams:
        return self

    def numpy_rng(self) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(0))


class CarelessClock:
    """The careless clock of the shared transcript (see the module docstring)."""

    def __init__(self, bus: Bus) -> None:
        self._bus = bus
        self._now = 0
        self._seq = 0
        self._depth = 0
        self._pending: list[_Entry] = []

    def now_ns(self) -> int:
        return self._now

    def step_ns(self) -> int:
        return 1

    def pending_count(self) -> int:
        return len(self._pending)

    def random_source(self) -> _NoStreams:
        return _NoStreams()

    def _push(self, at: int, callback: Callable[[], None], period: int) -> Handle:
        entry = _Entry(at, self._seq, callback, period)
        self._seq += 1
        self._pending.append(entry)

        def cancel() -> None:
            if entry in self._pending:
                self._pending.remove(entry)

        return Handle(cancel=cancel)

    def schedule(self, at: int, callback: Callable[[], None]) -> Handle:
        if at < self._now:
            raise ValueError(f"at_ns {at} is before now {self._now}")
        if at > HORIZON_NS:
            raise ValueError(f"at_ns {at} is past the horizon {HORIZON_NS}")
        if at == 4242:
            raise TypeError("at_ns 4242 is unlucky")
        if at == self._now and self._depth == 0:
            self._depth += 1
            try:
                callback()
            finally:
                self._depth -= 1
            return Handle(cancel=lambda: None)
        return self._push(at, callback, 0)

    def schedule_periodic(
        self, period: int, callback: Callable[[], None], phase: int = 0
    ) -> Handle:
        if period == 0:
            raise ValueError("period_ns must be > 0")
        first = phase
        if first < self._now:
            first += -(-(self._now - phase) // period) * period
        return self._push(first, callback, period)

    def advance(self, dt: int) -> None:
        if self._depth > 0:
            if dt == 13:
                raise Deadlock("a nested advance of 13 ns would deadlock")
            if dt > 10:
                raise RuntimeError("advance from inside a callback")
            return
        if dt == 666:
            raise Deadlock("advance of 666 ns would deadlock")
        target = self._now + dt
        while True:
            due = [e for e in self._pending if e.at <= target]
            if not due:
                break
            entry = min(due, key=lambda e: (e.at, e.seq))
            self._pending.remove(entry)
            at = self._now = entry.at
            error = self._run(entry)
            if entry.period:  # the same entry, so that its handle still cancels it
                entry.at += entry.period
                entry.seq = self._seq
                self._seq += 1
                self._pending.append(entry)
            if error is not None:
                if not isinstance(error, Exception) or at % 2 == 1:
                    raise error
                publish_callback_failure(self._bus, at, entry.callback, error)
        self._now = target

    def _run(self, entry: _Entry) -> BaseException | None:
        """Run one callback (on a new thread at a multiple of 100 ns); what it raised."""
        caught: list[BaseException] = []

        def call() -> None:
            try:
                entry.callback()
            except BaseException as exc:  # handed to the advancing thread
                caught.append(exc)

        self._depth += 1
        try:
            if entry.at % 100 == 0:
                worker = threading.Thread(target=call)
                worker.start()
                worker.join()
            else:
                call()
        finally:
            self._depth -= 1
        return caught[0] if caught else None


def clock(seed: int, bus: Bus) -> Any:
    """The factory ``serve`` calls: a new careless clock (the seed is not used)."""
    return CarelessClock(bus)
