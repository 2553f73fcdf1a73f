"""The clocks an :class:`~simclock_conformance.protocol._engine.Engine` drives (C-WIRE-3, C-X-BITS).

:class:`PythonBackend` makes clocks with a Python factory (``serve``,
C-WIRE-8); :class:`OracleBackend` makes ``simclock_oracles.ReferenceClock``
s, whose random streams are the reference derivation of C-X-BITS written out
here (:func:`reference_raw`).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

from simclock import EVENTS_TOPIC, Bus, EventKind, Message
from simclock.lowlevel import Handle

__all__ = [
    "FEATURES",
    "OracleBackend",
    "PythonBackend",
    "reference_generator",
    "reference_raw",
    "reference_spawn_key",
]

FEATURES = ("peek", "rate", "stats", "start_ns", "bits")
_DOMAIN = b"simclock.random_source.v1\x00"
_NO_STATS = Handle(cancel=lambda: None).stats


def reference_spawn_key(path: str) -> tuple[int, int, int, int]:
    """C-X-BITS: the four big-endian 32-bit words of ``blake2b(DOMAIN + path, 16)``."""
    digest = hashlib.blake2b(_DOMAIN + path.encode("ascii"), digest_size=16).digest()
    a, b, c, d = (int.from_bytes(digest[i : i + 4], "big") for i in range(0, 16, 4))
    return (a, b, c, d)


def reference_generator(seed: int, path: str) -> np.random.PCG64:
    """C-X-BITS: ``PCG64(SeedSequence(seed, spawn_key=reference_spawn_key(path)))``."""
    return np.random.PCG64(np.random.SeedSequence(seed, spawn_key=reference_spawn_key(path)))


def reference_raw(seed: int, path: str, n: int) -> list[int]:
    """The first ``n`` raw 64-bit outputs of the stream ``path`` of root ``seed`` (C-X-BITS)."""
    return [int(v) for v in reference_generator(seed, path).random_raw(n)]


class PythonBackend:
    """Clocks made by a Python factory ``FACTORY(seed, bus)`` (``serve``, C-WIRE-8)."""

    def __init__(self, factory: Callable[..., Any], name: str) -> None:
        self.factory = factory
        self.name = name
        self._features: tuple[str, ...] | None = None

    def make(self, seed: int, start: int | None) -> tuple[Any, Callable[[], list[Any]]]:
        """A new clock and a function listing its failure events ``(callback, at_ns, msg)``."""
        bus = Bus()
        clock = (
            self.factory(seed, bus) if start is None else self.factory(seed, bus, start_ns=start)
        )
        if bus.clock is None:
            bus.bind(clock)
        events: list[tuple[str, int, str]] = []

        def on_event(message: Message) -> None:
            event = message.payload
            if getattr(event, "kind", None) == EventKind.SCHEDULER_CALLBACK_FAILED:
                details = event.details
                events.append(
                    (str(details.get("callback")), event.at_ns, str(details.get("error_message")))
                )

        bus.subscribe(EVENTS_TOPIC, on_event)
        return clock, lambda: events

    def features(self) -> tuple[str, ...]:
        """What the backend offers, found on a probe clock (C-WIRE-3 ``hello``)."""
        if self._features is None:
            import inspect

            clock, _ = self.make(0, None)
            found = []
            if callable(getattr(clock, "next_event_ns", None)):
                found.append("peek")
            if callable(getattr(clock, "schedule_rate", None)):
                found.append("rate")
            handle = clock.schedule_periodic(10**12, lambda: None)
            if getattr(handle, "stats", _NO_STATS) is not _NO_STATS:
                found.append("stats")
            # A cancel() that raises is C-CAN-1's failure, found by its programs.
            with contextlib.suppress(Exception):
                handle.cancel()
            try:
                params = inspect.signature(self.factory).parameters
            except (TypeError, ValueError):
                params = {}  # type: ignore[assignment]
            if "start_ns" in params:
                found.append("start_ns")
            # C-X-BITS is claimed only when it holds: a probe stream's first outputs are
            # the reference derivation's (a PCG64 seeded otherwise is not enough).
            probe = clock.random_source().child("simclock-probe").numpy_rng().bit_generator
            random_raw = getattr(probe, "random_raw", None)
            if callable(random_raw) and [int(v) for v in random_raw(2)] == reference_raw(
                0, "/simclock-probe", 2
            ):
                found.append("bits")
            self._features = tuple(found)
        return self._features

    @staticmethod
    def stream(clock: Any, labels: list[str], path: str) -> Callable[[int], list[int]]:
        """The backend's stream ``child(L1).child(L2)...``; draws are its raw outputs."""
        source = clock.random_source()
        for label in labels:
            source = source.child(label)
        gen = source.numpy_rng().bit_generator

        def draw(n: int) -> list[int]:
            return [int(v) for v in gen.random_raw(n)] if n else []

        return draw


class OracleBackend:
    """The oracle: :class:`simclock_oracles.ReferenceClock` and the reference streams."""

    name = "simclock_oracles.ReferenceClock"

    def make(self, seed: int, start: int | None) -> tuple[Any, Callable[[], list[Any]]]:
        """A new reference clock; its failures are its ``failures`` records."""
        from simclock_oracles import ReferenceClock

        clock = ReferenceClock(start or 0)
        return clock, lambda: [(f.callback, f.at_ns, f.error_message) for f in clock.failures]

    def features(self) -> tuple[str, ...]:
        """Everything: the oracle keeps every clause."""
        return FEATURES

    @staticmethod
    def stream(seed: int, path: str) -> Callable[[int], list[int]]:
        """The reference derivation of C-X-BITS."""
        gen = reference_generator(seed, path)
        return lambda n: [int(v) for v in gen.random_raw(n)] if n else []
