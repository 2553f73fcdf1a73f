"""Schedule entries of the core clock, and the grid arithmetic they share.

An `_Entry` is one schedule: a one-shot, or a periodic/rate schedule
re-pushed after each firing (optionally quantised up to a grid). It is an
item of the clock's lazy-deletion queue (`LazyHeap`),
which it tells about its own cancellation; the firing loop lives in
`simclock.core._heapclock`. This module holds the per-entry state
machine, counters and grid times, so both stay small. It imports neither: the
queue imports it, the clock imports both, and no module of the core imports
back up.

Compiled with mypyc when the build can (C-NATIVE-1, see `simclock.core._native`):
the constants are ``Final`` so the compiled code inlines them, and an entry
carries its own heap key (``at``, ``seq``) so the compiled heap compares native
ints instead of tuples.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final, final

from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import safe_repr
from simclock.core._protocols import Callback, PeriodicStats

__all__ = [
    "check_rate_hz",
    "first_rate_index",
    "rate_offset_ns",
]

# Invariant: _PENDING is 0 and is the only state an entry in the queue has while live:
# the queue (simclock.core._heap) treats any other state as a tombstone.
_PENDING: Final = 0  # in the heap, will fire
_RUNNING: Final = 1  # popped, its callback is running (repeating entries only)
_CANCELLED: Final = 2  # cancelled: a tombstone while still in the heap
_CANCELLED_RUNNING: Final = 3  # cancelled while its own callback runs: never re-pushed
_FIRED: Final = 4  # a one-shot whose callback has started
_FAILED: Final = 5  # a one-shot whose callback raised Exception
_SKIPPED: Final = 6  # a one-shot dropped by skip_to() before it was due

_ONESHOT: Final = 0
_PERIODIC: Final = 1  # phase + k*period, no quantum: the hot re-arm path
_RATE: Final = 2  # phase + ceil(k * 1e9 / rate), no quantum
_QUANTISED: Final = 3  # either grid, each firing moved up to the next multiple of quantum

_NS_PER_S: Final = 1_000_000_000


def check_rate_hz(rate_hz: object, name: str = "rate_hz") -> Fraction:
    """Validate a rate in Hz given as ``int`` or ``Fraction`` (C-X-RATE).

    ``bool`` and ``float`` are ``TypeError`` (a float rate is not exact);
    rates <= 0 or above 1 GHz (a period under 1 ns) are ``ValueError``.
    ``name`` is the argument's name in the messages.
    """
    if isinstance(rate_hz, bool) or not isinstance(rate_hz, int | Fraction):
        raise SimclockTypeError(
            f"{name} must be an int or fractions.Fraction of Hz, got "
            f"{type(rate_hz).__name__} {safe_repr(rate_hz)}; "
            "write Fraction(30000, 1001) for 29.97 Hz"
        )
    rate = Fraction(rate_hz)
    if rate <= 0:
        raise SimclockValueError(f"{name} must be > 0, got {safe_repr(rate_hz)}")
    if rate > _NS_PER_S:
        raise SimclockValueError(
            f"{name} must be <= 1e9 (one firing per ns at most), got {safe_repr(rate_hz)}"
        )
    return rate


def rate_offset_ns(k: int, rate: Fraction) -> int:
    """``ceil(k * 10**9 / rate)`` in exact integers: offset of firing ``k`` (C-X-RATE)."""
    return -((-k * _NS_PER_S * rate.denominator) // rate.numerator)


def first_rate_index(elapsed: int, rate: Fraction) -> int:
    """Smallest ``k >= 0`` with ``rate_offset_ns(k, rate) >= elapsed``.

    (C-X-RATE: the first firing at or after now.)
    """
    if elapsed <= 0:
        return 0
    k = (elapsed * rate.numerator) // (_NS_PER_S * rate.denominator)
    while rate_offset_ns(k, rate) < elapsed:
        k += 1
    while k > 0 and rate_offset_ns(k - 1, rate) >= elapsed:
        k -= 1
    return k


class EntryQueue:
    """What an entry needs of the queue it is in: to be told of its own cancellation.

    Implemented by `LazyHeap`, which imports this
    module: the entry reports through this base, so nothing here imports the
    queue back (no import cycle, and in the compiled build the call is one
    native virtual call).
    """

    def tombstoned(self) -> None:
        """One entry in the queue was just made dead in place (C-CAN-4)."""
        raise NotImplementedError


@final
class _Entry:
    """One schedule. A periodic or rate schedule is one entry re-pushed after each firing.

    ``at`` and ``seq`` are its heap key while it is in the heap (set by
    `LazyHeap.push`): entries fire by ``(at, seq)`` (C-TIE-1).
    A one-shot sets only ``queue``, ``cb``, ``kind`` and ``state``: its counters
    follow from ``state`` (``_FIRED``/``_FAILED``/``_SKIPPED``), and
    ``schedule`` is the hot path. Repeating entries are completed by
    `repeating`. The handle's ``cancel`` is the entry (calling it
    cancels) and its ``stats`` the bound `stats`.
    """

    __slots__ = (
        "at",
        "cb",
        "failed",
        "fired",
        "k",
        "kind",
        "overrun",
        "period",
        "phase",
        "quantum",
        "queue",
        "rate",
        "seq",
        "skipped",
        "state",
    )

    at: int
    seq: int

    # Set only on repeating entries (see repeating()).
    fired: int
    failed: int
    skipped: int
    overrun: int
    k: int
    phase: int
    period: int
    quantum: int
    rate: Fraction | None

    def __init__(self, queue: EntryQueue, cb: Callback, kind: int = _ONESHOT) -> None:
        self.queue = queue
        self.cb = cb
        self.kind = kind
        self.state = _PENDING
        self.at = 0
        self.seq = 0

    def repeating(
        self, phase: int, k: int, period: int = 0, rate: Fraction | None = None, quantum: int = 1
    ) -> int:
        """Fill in a periodic/rate entry's grid; return the time of firing ``k``.

        (C-PER-1, C-X-RATE; C-X-STATS: the counts start at 0.)
        """
        self.phase = phase
        self.period = period
        self.rate = rate
        self.quantum = quantum
        self.k = k
        self.fired = 0
        self.failed = 0
        self.skipped = 0
        self.overrun = 0
        return self.at_k()

    def nominal(self, k: int) -> int:
        """Nominal time of firing ``k`` before quantisation (C-PER-1, C-PER-3, C-X-RATE)."""
        rate = self.rate
        if rate is None:
            return self.phase + k * self.period
        return self.phase + rate_offset_ns(k, rate)

    def at_k(self) -> int:
        """Time of firing ``k``: the nominal time, up to the next multiple of ``quantum``.

        (C-PER-1, C-PER-3, C-X-RATE: with ``quantum == 1``, the grid time itself.)
        """
        t = self.nominal(self.k)
        q = self.quantum
        return t if q == 1 else -(-t // q) * q

    def at_index(self, k: int) -> int:
        """Time of firing ``k`` (any ``k``, ``self.k`` unchanged); ``at_k`` for ``self.k``."""
        t = self.nominal(k)
        q = self.quantum
        return t if q == 1 else -(-t // q) * q

    def first_k_at_or_after(self, t: int) -> int:
        """The first ``k >= self.k`` whose firing time is ``>= t`` (used by ``skip_to``)."""
        # A quantised time is below nominal + quantum, so nominal > t - quantum is necessary.
        floor = t - self.quantum + 1
        rate = self.rate
        if rate is None:
            k = 0 if self.phase >= floor else -((self.phase - floor) // self.period)
        else:
            k = first_rate_index(floor - self.phase, rate)
        saved = self.k
        self.k = max(k, saved)
        while self.at_k() < t:
            self.k += 1
        k, self.k = self.k, saved
        return k

    def missed_last_before(
        self, first: int, last: int, other: _Entry, o_first: int, o_last: int
    ) -> bool:
        """Whether, at their shared time of firing ``last`` (``other``'s ``o_last``), this
        entry would have fired before ``other`` had the firings ``first..last`` run.

        Used by ``skip_to`` to re-push skipped periodic entries in the order a run
        that fired them would have left them (C-PER-2: each re-push takes a fresh
        ``seq`` after its firing). At a shared instant, an entry at its first
        skipped firing still has its old ``seq`` and goes first (by ``seq``);
        otherwise the order is that of the previous firings, walked back until
        their times differ. Equal plain periods never differ: the walk jumps.
        """
        if self.kind == _PERIODIC and other.kind == _PERIODIC and self.period == other.period:
            steps = min(last - first, o_last - o_first)
            last -= steps
            o_last -= steps
        while True:
            if last == first:
                return o_last != o_first or self.seq < other.seq
            if o_last == o_first:
                return False
            mine = self.at_index(last - 1)
            theirs = other.at_index(o_last - 1)
            if mine != theirs:
                return mine < theirs
            last -= 1
            o_last -= 1

    def __call__(self) -> None:
        """Cancel this entry (C-CAN-1..4): never raises, idempotent, no-op once fired.

        The entry itself is its `Handle`'s ``cancel``: no bound method is
        made per ``schedule`` (the one-shot hot path).
        """
        state = self.state
        if state == _PENDING:
            self.state = _CANCELLED
            self.queue.tombstoned()
        elif state == _RUNNING:
            # Cancelled from inside its own callback: the re-push is skipped.
            self.state = _CANCELLED_RUNNING

    def stats(self) -> PeriodicStats:
        """Counters of this schedule (C-X-STATS); ``fired`` counts callbacks started.

        Inside a periodic's own callback ``fired`` already counts that firing
        (1, 2, 3, ... on every clock built on this core).
        """
        if self.kind == _ONESHOT:
            state = self.state
            return PeriodicStats(
                fired=int(state in (_FIRED, _FAILED)),
                failed=int(state == _FAILED),
                skipped=int(state == _SKIPPED),
            )
        return PeriodicStats(
            fired=self.fired, failed=self.failed, skipped=self.skipped, overrun=self.overrun
        )
