"""Wall-clock pacing of a SimClock: ``run_paced`` and the execution modes (SPEC §4, §11).

Pacing lives outside the clock (C-MODE-2): ``run_paced`` is a driver that the
owner of the simulation calls on its own thread; it only calls
``clock.advance`` and waits between calls. The list of ``advance`` calls
(their targets) is computed from simulation state alone: the step grid, the
``until`` bound and, when the clock has ``next_event_ns`` (C-X-PEEK), the next
entry's time. It never depends on the wall clock, the mode or the real-time
factor, so every mode runs the very same calls in the same order and the
simulation-visible trace is identical (C-MODE-1, C-SYS-4); the modes differ
only in how long they wait between the calls.

This module reads the wall clock on purpose (except in ``deterministic_ci``);
the reads go through the injectable ``source``/``sleep`` pair.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

from simclock.core._bus import EVENTS_TOPIC, Bus, Event, EventKind
from simclock.core._enum import CheckedStrEnum
from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import check_str_enum, safe_repr
from simclock.core._protocols import SimClock
from simclock.core._timeint import check_positive_ns, check_time_ns

__all__ = ["PacingControl", "PacingMode", "PacingReference", "PacingReport", "run_paced"]

_DEFAULT_STEP_NS = 1_000_000
_DEFAULT_LAG_THRESHOLD_NS = 20_000_000
_PAUSE_POLL_NS = 10_000_000


class PacingMode(CheckedStrEnum):
    """Execution modes (C-MODE-1): each changes what is paced, never the simulation.

    - ``unbounded``: no pacing, as fast as the machine allows; the wall clock is
      read twice (start and end) only to report the achieved real-time factor.
    - ``realtime_paced``: *advancement* is paced: no ``advance`` reaches sim
      time ``t`` before wall time ``start + (t - sim_start) / rtf``, so callbacks
      fire no earlier than their wall time. Behind by more than the lag
      threshold, it reports ``PACING_LAG`` and catches up by not waiting until
      it is back on schedule (the average rate stays exact, nothing drifts).
    - ``deterministic_ci``: never reads the wall clock and never sleeps (the
      ``source``/``sleep`` arguments are not even called); ``rtf`` is ignored.
    - ``rendered``: *presentation* is paced: the clock is advanced to the next
      frame boundary (every ``step_ns`` of sim time) at once, then the driver
      waits for that frame's wall time and calls ``on_frame(now_ns)``; the
      simulation is computed up to one frame ahead of what is shown.
    - ``operator_training``: like ``realtime_paced`` for a trainee at a
      console: a [`PacingControl`][simclock.PacingControl] can pause the run or change ``rtf``
      while it runs, and lag is dropped (the schedule is re-anchored, reported
      as ``PACING_LAG`` with ``dropped_ns``) rather than caught up, so the
      trainee never sees a fast-forward burst.
    """

    UNBOUNDED = "unbounded"
    REALTIME_PACED = "realtime_paced"
    DETERMINISTIC_CI = "deterministic_ci"
    RENDERED = "rendered"
    OPERATOR_TRAINING = "operator_training"


_WALL_PACED = frozenset(
    {PacingMode.REALTIME_PACED, PacingMode.RENDERED, PacingMode.OPERATOR_TRAINING}
)


_RTF_EXPONENT = 12


def _check_rtf(rtf: object) -> Fraction:
    """A real-time factor as an exact positive ``Fraction`` (it is a ratio, not a time)."""
    if isinstance(rtf, bool) or not isinstance(rtf, int | float | Fraction | Decimal):
        raise SimclockTypeError(
            f"rtf must be a positive number (int, float, Fraction or Decimal), "
            f"got {type(rtf).__name__} {safe_repr(rtf)}"
        )
    # Decimal's own test: math.isfinite(Decimal("sNaN")) raises instead of answering.
    if (isinstance(rtf, float) and not math.isfinite(rtf)) or (
        isinstance(rtf, Decimal) and not rtf.is_finite()
    ):
        raise SimclockValueError(f"rtf must be finite and > 0, got {safe_repr(rtf)}")
    # Bounded before Fraction(): Decimal("1e999999") would build a million-digit int.
    if isinstance(rtf, Decimal) and not rtf.is_zero() and abs(rtf.adjusted()) > _RTF_EXPONENT:
        raise SimclockValueError(
            f"rtf must be between 1e-{_RTF_EXPONENT} and 1e{_RTF_EXPONENT}, got {safe_repr(rtf)}"
        )
    value = Fraction(rtf)
    if value <= 0:
        raise SimclockValueError(
            f"rtf must be > 0 (1.0 is real time, 2.0 twice as fast), got {safe_repr(rtf)}"
        )
    return value


class PacingControl:
    """Live control of a paced run from another thread: ``pause``, ``resume``, ``set_rtf``.

    Honoured in the wall-paced modes (``realtime_paced``, ``rendered``,
    ``operator_training``); its ``rtf`` replaces ``run_paced``'s. A change
    takes effect before the next ``advance`` and re-anchors the schedule at
    the current (sim, wall) instant, so a pause or a new rate is never
    "caught up"; a control paused before the run holds it before the first
    ``advance``. Thread-safe.
    """

    def __init__(self, rtf: int | float | Fraction | Decimal = 1) -> None:
        self._lock = threading.Lock()
        self._rtf = _check_rtf(rtf)
        self._paused = False
        self._version = 0

    @property
    def rtf(self) -> Fraction:
        """The current real-time factor."""
        with self._lock:
            return self._rtf

    @property
    def paused(self) -> bool:
        """Whether the run is held before its next ``advance``."""
        with self._lock:
            return self._paused

    def set_rtf(self, rtf: int | float | Fraction | Decimal) -> None:
        """Change the real-time factor; a refused value changes nothing."""
        value = _check_rtf(rtf)
        with self._lock:
            self._rtf = value
            self._version += 1

    def pause(self) -> None:
        """Hold the run before its next ``advance`` until `resume`."""
        with self._lock:
            self._paused = True
            self._version += 1

    def resume(self) -> None:
        """Let a paused run go on from where it stopped (no catch-up)."""
        with self._lock:
            self._paused = False
            self._version += 1

    def _snapshot(self) -> tuple[int, Fraction, bool]:
        with self._lock:
            return self._version, self._rtf, self._paused


class PacingReference:
    """One wall-clock reference shared by several [`run_paced`][simclock.run_paced] calls.

    A run driven in chunks (``run_paced(clock, t1, reference=ref)``, then
    ``t2``, ...) keeps the anchor of its first call: sim time ``t`` is due at
    ``wall_start + (t - sim_start) / rtf`` for the whole run, so a stall in
    one chunk is caught up in the next ones (``realtime_paced``) instead of
    shifting every later chunk, and a lag episode spans chunks (one
    ``PACING_LAG`` per episode). Every call must use the first call's
    ``mode`` and ``rtf`` (``ValueError`` otherwise, nothing run); its report
    covers the whole run so far. Not thread-safe: one run, one thread.
    """

    def __init__(self) -> None:
        # Invariant: None until the first call; then that call's anchor, for good.
        self._first: _FirstCall | None = None
        self._advances = 0
        self._frames = 0

    @property
    def started(self) -> bool:
        """Whether a first ``run_paced`` call has taken the reference."""
        return self._first is not None


@dataclass(frozen=True, slots=True)
class _FirstCall:
    """What a `PacingReference` keeps from its first call."""

    mode: PacingMode
    rtf: Fraction
    sim_start: int
    pacer: _Pacer | None
    wall_start: int | None
    read_wall: Callable[[], int] | None


@dataclass(frozen=True, slots=True)
class PacingReport:
    """What [`run_paced`][simclock.run_paced] did.

    ``advances``: ``advance`` calls made (the same in every mode);
    ``frames``: ``on_frame`` calls (``rendered`` only); ``wall_ns``: wall time
    spent, ``None`` in ``deterministic_ci``; ``lag_events``: every
    ``PACING_LAG`` event, also published on ``events`` when given;
    ``max_lag_ns``: the largest lag seen; ``dropped_ns``: lag forgiven by
    re-anchoring (``operator_training``); ``unreported``: lag events an
    unbound ``events`` bus refused (its last stamp was later, e.g. the bus is
    reused after a run that reached a later sim time); they are still in
    ``lag_events``. ``rtf``: the real-time factor in force when the run ended
    (a [`PacingControl`][simclock.PacingControl]'s, which may differ from the argument), ``None``
    in the modes that do not pace (``unbounded``, ``deterministic_ci``).

    With a [`PacingReference`][simclock.PacingReference] every field covers all the calls made
    with that reference so far (one run split into chunks): ``sim_start_ns``
    and ``wall_ns`` from its first call, counters and lag events summed.
    """

    mode: PacingMode
    rtf: Fraction | None
    sim_start_ns: int
    sim_end_ns: int
    advances: int
    frames: int
    wall_ns: int | None
    lag_events: tuple[Event, ...]
    max_lag_ns: int
    dropped_ns: int
    unreported: int = 0

    @property
    def achieved_rtf(self) -> float | None:
        """Simulated over wall time, or ``None`` when no wall time was measured."""
        if not self.wall_ns:
            return None
        return (self.sim_end_ns - self.sim_start_ns) / self.wall_ns


# The clock types already seen to provide every SimClock method on the class itself:
# isinstance with a runtime protocol walks the protocol's members at every call (about
# a tenth of a millisecond), and run_scenario calls run_paced once per chunk.
_SIMCLOCK_TYPES: set[type] = set()
_SIMCLOCK_METHODS = (
    "now_ns",
    "step_ns",
    "advance",
    "schedule",
    "schedule_periodic",
    "random_source",
)


def _is_simclock(clock: object) -> bool:
    """``isinstance(clock, SimClock)``, answered from a cache for a type that passed before.

    Only a type that defines every method itself is cached: an instance can add
    attributes, never remove its class's, so every instance of that type passes.
    """
    kind = type(clock)
    if kind in _SIMCLOCK_TYPES:
        return True
    if not isinstance(clock, SimClock):
        return False
    if all(callable(getattr(kind, name, None)) for name in _SIMCLOCK_METHODS):
        _SIMCLOCK_TYPES.add(kind)
    return True


def _check_mode(mode: object) -> PacingMode:
    if type(mode) is PacingMode:
        return mode
    names = ", ".join(m.value for m in PacingMode)
    return check_str_enum(
        mode, PacingMode, "mode must be a str or PacingMode", f"mode must be one of {names}; got "
    )


def _default_sleep(duration_ns: int) -> None:
    time.sleep(duration_ns / 1e9)


@dataclass
class _Pacer:
    """Wall-clock bookkeeping of one run: anchor, lag episodes, pause and rate changes.

    Built as ``_Pacer(mode, rtf, sim_start, source, sleep, threshold, control,
    events)``; the wall anchor is read from ``source`` when it is made.
    """

    mode: PacingMode
    rtf: Fraction
    # Invariant: sim time t is due at wall time anchor_wall + ceil((t - anchor_sim) / rtf).
    anchor_sim: int
    source: Callable[[], int]
    sleep: Callable[[int], object]
    threshold: int
    control: PacingControl | None
    events: Bus | None
    # -1: the first wait always takes the control's state, a pause included.
    version: int = field(default=-1, init=False)
    anchor_wall: int = field(default=0, init=False)
    wall_start: int = field(default=0, init=False)
    in_lag: bool = field(default=False, init=False)
    lag_events: list[Event] = field(default_factory=list, init=False)
    max_lag: int = field(default=0, init=False)
    dropped: int = field(default=0, init=False)
    unreported: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.anchor_wall = self.wall_start = self.source()

    def _due(self, sim_ns: int) -> int:
        delta = Fraction(sim_ns - self.anchor_sim) / self.rtf
        return self.anchor_wall + math.ceil(delta)

    def _follow_control(self, sim_now: int) -> None:
        control = self.control
        if control is None:
            return
        version, rtf, paused = control._snapshot()
        if version == self.version:
            return
        while paused:
            self.sleep(_PAUSE_POLL_NS)
            version, rtf, paused = control._snapshot()
        self.version = version
        self.rtf = rtf
        self.anchor_sim = sim_now
        self.anchor_wall = self.source()
        self.in_lag = False

    def wait_for(self, sim_now: int, sim_target: int) -> None:
        """Block until ``sim_target`` is due; report lag when it is overdue."""
        self._follow_control(sim_now)
        due = self._due(sim_target)
        wall = self.source()
        lag = wall - due
        if lag <= 0:
            self.in_lag = False
            if lag:
                self.sleep(-lag)
            return
        self.max_lag = max(self.max_lag, lag)
        if lag <= self.threshold:
            return
        details: dict[str, object] = {
            "mode": self.mode.value,
            "lag_ns": lag,
            "threshold_ns": self.threshold,
            "rtf": str(self.rtf),
        }
        if self.mode is PacingMode.OPERATOR_TRAINING:
            # Forgive the lag: later sim instants are due relative to now.
            self.anchor_wall += lag
            self.dropped += lag
            details["dropped_ns"] = lag
        elif self.in_lag:
            return  # one event per lag episode, not one per step
        self.in_lag = True
        self._report(Event(EventKind.PACING_LAG, sim_now, details))

    def _report(self, event: Event) -> None:
        self.lag_events.append(event)
        bus = self.events
        if bus is None:
            return
        if bus.clock is not None:
            bus.publish(EVENTS_TOPIC, event)
            return
        try:
            bus.publish(EVENTS_TOPIC, event, stamp_ns=event.at_ns)
        except SimclockValueError:
            # A stamp below the bus's last one: a report channel must not abort
            # the simulation half-way through an advance plan.
            self.unreported += 1


def run_paced(
    clock: SimClock,
    until_ns: int,
    *,
    rtf: int | float | Fraction | Decimal = 1,
    mode: PacingMode | str = PacingMode.REALTIME_PACED,
    step_ns: int | None = None,
    lag_threshold_ns: int = _DEFAULT_LAG_THRESHOLD_NS,
    on_frame: Callable[[int], object] | None = None,
    control: PacingControl | None = None,
    events: Bus | None = None,
    source: Callable[[], int] | None = None,
    sleep: Callable[[int], object] | None = None,
    reference: PacingReference | None = None,
) -> PacingReport:
    """Advance ``clock`` to ``until_ns`` with sim time following wall time (C-SYS-4, C-MODE-1..2).

    Plan: targets are every multiple of ``step_ns`` after ``now`` up to
    ``until_ns`` (always the last target), plus the time of the next live
    entry when the clock has ``next_event_ns`` (rounded up to the clock's
    ``step_ns()``), so an entry fires at its own wall time rather than at the
    start of its step. The plan depends only on simulation state: every mode
    makes the same ``advance`` calls (see [`PacingMode`][simclock.PacingMode] for what each
    paces). ``until_ns == now`` makes one ``advance(0)``.

    ``step_ns`` defaults to the smallest multiple of ``clock.step_ns()`` of at
    least 1 ms and must be a multiple of it. ``rtf`` is sim seconds per wall
    second. ``PACING_LAG`` events (sim ``at_ns``; ``lag_ns`` of wall time) go
    into the report and, when given, onto ``events``. They are not published
    on the clock's own bus by default: the lag depends on the host, and an
    extra message there would change the simulation's trace, which C-MODE-1
    forbids. ``source()`` (int ns, ``time.monotonic_ns``) and
    ``sleep(duration_ns)`` are the wall-clock pair; ``deterministic_ci`` calls
    neither. ``on_frame`` is only for ``rendered`` and must not change the
    simulation; ``control`` only for the wall-paced modes. ``reference``
    (a [`PacingReference`][simclock.PacingReference]) keeps one wall-clock reference across
    calls: a later call neither re-anchors nor forgets a lag, and its report
    covers the run so far; it must be given the first call's ``mode`` and
    ``rtf``.

    Errors: wrong types ``TypeError`` (also a ``clock`` that is not a
    ``SimClock``, e.g. a ``MonotonicClock``); ``until_ns`` before now, a bad ``mode``,
    ``rtf <= 0``, a ``step_ns`` off the clock's grid, or ``on_frame``/``control``
    in a mode that does not use them: ``ValueError``, before anything runs.
    Callback failures are the clock's business (C-ERR-1); a ``BaseException``
    from ``advance`` propagates.
    """
    if not _is_simclock(clock):
        raise SimclockTypeError(
            f"clock must be a SimClock (with advance and schedule), got {type(clock).__name__}; "
            "a free-running SystemClock needs no pacing: use schedule_periodic_thread"
        )
    run_mode = _check_mode(mode)
    rate = _check_rtf(rtf)
    now = clock.now_ns()
    until = check_time_ns(until_ns, "until_ns")
    if until < now:
        raise SimclockValueError(
            f"until_ns={until} is before the clock's now ({now} ns); pass a time >= now"
        )
    clock_step = check_positive_ns(clock.step_ns(), "clock.step_ns()")
    if step_ns is None:
        step = -(-_DEFAULT_STEP_NS // clock_step) * clock_step
    else:
        step = check_positive_ns(step_ns, "step_ns")
        if step % clock_step:
            raise SimclockValueError(
                f"step_ns={step} is not a multiple of the clock's step ({clock_step} ns); "
                f"use a multiple such as {-(-step // clock_step) * clock_step}"
            )
    threshold = check_positive_ns(lag_threshold_ns, "lag_threshold_ns")
    if on_frame is not None:
        if not callable(on_frame):
            raise SimclockTypeError(f"on_frame must be callable, got {safe_repr(on_frame)}")
        if run_mode is not PacingMode.RENDERED:
            raise SimclockValueError(
                f"on_frame is only called in mode 'rendered', got mode "
                f"{safe_repr(run_mode.value)}; "
                "drop on_frame or use mode='rendered'"
            )
    if control is not None:
        if not isinstance(control, PacingControl):
            raise SimclockTypeError(
                f"control must be a simclock.PacingControl, got {safe_repr(control)}"
            )
        if run_mode not in _WALL_PACED:
            raise SimclockValueError(
                f"control needs a wall-paced mode (realtime_paced, rendered, "
                f"operator_training), got mode {safe_repr(run_mode.value)}"
            )
    if events is not None and not isinstance(events, Bus):
        raise SimclockTypeError(f"events must be a simclock.Bus or None, got {safe_repr(events)}")
    for label, fn in (("source", source), ("sleep", sleep)):
        if fn is not None and not callable(fn):
            raise SimclockTypeError(f"{label} must be callable, got {safe_repr(fn)}")
    if reference is not None:
        if not isinstance(reference, PacingReference):
            raise SimclockTypeError(
                f"reference must be a simclock.PacingReference or None, got {safe_repr(reference)}"
            )
        first = reference._first
        if first is not None and (first.mode, first.rtf) != (run_mode, rate):
            raise SimclockValueError(
                f"mode {run_mode.value!r} and rtf {rate} differ from the reference's first call "
                f"(mode {first.mode.value!r}, rtf {first.rtf}); one reference is one run: "
                "pass the same mode and rtf, or a new PacingReference"
            )

    sim_start = now
    pacer: _Pacer | None = None
    wall_start: int | None = None
    read_wall: Callable[[], int] | None = None
    if reference is not None and reference._first is not None:
        # Continue the run: same anchor, same lag episode, same counters.
        first = reference._first
        pacer, sim_start, wall_start = first.pacer, first.sim_start, first.wall_start
        read_wall = first.read_wall
    elif run_mode is not PacingMode.DETERMINISTIC_CI:
        # Resolved here, not as a default argument: deterministic_ci must not even
        # hold a reference to the wall clock, and tests replace time.monotonic_ns.
        read_wall = source if source is not None else time.monotonic_ns
        if run_mode in _WALL_PACED:
            pacer = _Pacer(
                run_mode,
                rate,
                now,
                read_wall,
                sleep if sleep is not None else _default_sleep,
                threshold,
                control,
                events,
            )
            wall_start = pacer.wall_start
        else:
            wall_start = read_wall()

    if reference is not None and reference._first is None:
        reference._first = _FirstCall(run_mode, rate, sim_start, pacer, wall_start, read_wall)
    peek = getattr(clock, "next_event_ns", None)
    advances = 0
    frames = 0
    rendered = run_mode is PacingMode.RENDERED
    if until == now:
        clock.advance(0)
        advances = 1
    # The instant at which an advance(0) already ran: a clock whose peek keeps
    # reporting an entry at now that advance(0) does not fire cannot loop us.
    flushed_at = -1
    while now < until:
        boundary = min((now // step + 1) * step, until)
        target = boundary
        if callable(peek):
            upcoming = peek()
            if upcoming is not None and upcoming < boundary:
                if upcoming > now:
                    target = min(-(-upcoming // clock_step) * clock_step, boundary)
                elif flushed_at != now:
                    # Due now: fire it at this instant's wall time, not one step later.
                    target = now
                    flushed_at = now
        if pacer is not None and not rendered:
            pacer.wait_for(now, target)
        clock.advance(target - now)
        advances += 1
        now = clock.now_ns()
        if rendered and target == boundary:
            assert pacer is not None
            pacer.wait_for(now, target)
            if on_frame is not None:
                on_frame(now)
            frames += 1

    wall_ns: int | None = None
    if read_wall is not None and wall_start is not None:
        wall_ns = read_wall() - wall_start
    if reference is not None:
        reference._advances += advances
        reference._frames += frames
        advances, frames = reference._advances, reference._frames
    return PacingReport(
        mode=run_mode,
        rtf=pacer.rtf if pacer is not None else None,
        sim_start_ns=sim_start,
        sim_end_ns=now,
        advances=advances,
        frames=frames,
        wall_ns=wall_ns,
        lag_events=tuple(pacer.lag_events) if pacer is not None else (),
        max_lag_ns=pacer.max_lag if pacer is not None else 0,
        dropped_ns=pacer.dropped if pacer is not None else 0,
        unreported=pacer.unreported if pacer is not None else 0,
    )
