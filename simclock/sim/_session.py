"""Sessions, episodes and per-component noise streams (SPEC §8-§10).

A `Session` owns one `GridClock` (or a backend built on
it, such as the MuJoCo clock) and the components that run on it: sensor
devices and controllers. It keeps two times:

* **SessionTime** is the clock's ``now_ns()``. The clock is never rewound, so
  SessionTime never goes back (C-EP-1); it is what ``/clock`` carries (C-EP-2),
  so ROS time never jumps back on an episode reset.
* **EpisodeTime** is ``SessionTime - episode_start``; `Session.reset_episode`
  sets it to 0 (C-EP-1).

Seeds (C-SEED-1, C-SEED-2): episode ``0`` uses the session seed; episode ``n``
uses ``seed`` if given to ``reset_episode`` or else `episode_seed` of
(session seed, n). Every component's noise comes from
`component_stream` keyed by (episode seed, component id, stream name)
only, so adding, removing or reordering components never shifts another's
numbers, and a fresh session started with seed ``S`` reproduces exactly an
episode that was reset with seed ``S``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from simclock.core._bus import (
    EVENTS_TOPIC,
    Bus,
    Event,
    EventKind,
    check_topic,
    is_reserved_topic,
)
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._failure import publish_callback_failure
from simclock.core._names import exact_str, safe_repr
from simclock.core._phases import Component, Phases
from simclock.core._protocols import PeriodicStats
from simclock.core._random import DrawObserver, SeededRandomSource, check_seed
from simclock.core._readonly import ReadOnly
from simclock.core._timeint import check_positive_ns, check_time_ns
from simclock.recording._fingerprint import canonical_json, fast_canonical_bytes
from simclock.sim._devices import (
    ControllerSpec,
    ControllerStep,
    DeviceRead,
    Sample,
    SensorSpec,
    check_component_segment,
    sample_json_template,
)
from simclock.sim._grid import GridClock

__all__ = [
    "CLOCK_TOPIC",
    "NOISE_STREAM",
    "Session",
    "clock_payload",
    "component_stream",
    "episode_seed",
]

CLOCK_TOPIC = "/clock"
NOISE_STREAM = "noise"
_EPISODE_DOMAIN = b"simclock.episode_seed.v1\x00"


def component_stream(
    seed: int, component_id: str, stream: str, *, observer: DrawObserver | None = None
) -> SeededRandomSource:
    """The random stream ``/<component_id>/<stream>`` of an episode seed (C-SEED-1).

    ``component_id`` is one or more id segments joined by ``/`` (``sensors/imu0``);
    ``stream`` is one segment (``noise``); each segment must start with a letter
    and use only ``[A-Za-z0-9_.-]``, otherwise ``ValueError``. The stream depends
    only on (seed, component id, stream name): never on which other components
    exist or the order they were added in. ``observer`` sees every draw (a
    [`Recorder`][simclock.Recorder]'s ``draw_observer`` persists them, C-REP-3).
    O(len(path)).
    """
    seed = check_seed(seed)
    if not isinstance(component_id, str):
        raise SimclockTypeError(
            f"component_id must be a str, got {type(component_id).__name__} "
            f"{safe_repr(component_id)}"
        )
    for segment in component_id.split("/"):
        check_component_segment(segment, f"component_id {safe_repr(component_id)} segment")
    check_component_segment(stream, "stream")
    path = f"/{component_id}/{stream}"
    # The one audited dynamic label of the library: the path is a pure function of
    # the validated (component id, stream name) pair, never of creation order or
    # data, so the stream tree stays static per plan (C-RNG-2, C-SEED-1).
    return SeededRandomSource(seed, observer=observer).child(path)  # noqa: SCK201


def episode_seed(session_seed: int, episode: int) -> int:
    """Seed of episode ``episode`` when none is given: ``session_seed`` for 0, else a hash.

    For ``episode >= 1`` it is the first 63 bits of
    ``blake2b(DOMAIN + "<session_seed>:<episode>")``: stable across processes,
    and independent of which other episodes were given explicit seeds.
    """
    seed = check_seed(session_seed)
    if isinstance(episode, bool) or not isinstance(episode, int):
        raise SimclockTypeError(
            f"episode must be an int, got {type(episode).__name__} {safe_repr(episode)}; "
            "pass the episode index, e.g. 1"
        )
    if episode < 0:
        raise SimclockValueError(f"episode must be >= 0, got {safe_repr(episode)}")
    if episode == 0:
        return seed
    digest = hashlib.blake2b(
        _EPISODE_DOMAIN + f"{seed}:{episode}".encode("ascii"), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big") >> 1


def clock_payload(session_ns: int) -> dict[str, dict[str, int]]:
    """A ``rosgraph_msgs/msg/Clock``-shaped payload for SessionTime (C-EP-2, C-MCAP-3)."""
    sec, nanosec = divmod(session_ns, 1_000_000_000)
    return {"clock": {"sec": sec, "nanosec": nanosec}}


class Session:
    """Owns a grid clock, its components and its episodes (SPEC §8-§10).

    ``Session(clock, *, seed=None, clock_period_ns=None, clock_topic="/clock",
    on_reset=None, draw_observer=None)``. ``seed`` defaults to the clock's root
    seed; ``draw_observer`` is given every noise stream (to persist draws).
    ``clock_period_ns`` (default: the clock's step) is how often SessionTime is
    published on ``clock_topic`` (``None``: never). ``on_reset()`` runs at the
    start of every episode, before any component, to put the physics in its
    initial state; if it raises, the error propagates from the call that began
    the episode and that episode does not begin (the session is unchanged).

    Plan: components are added before the session starts; an off-grid period,
    phase or latency under ``strict`` is refused right there, naming the
    component (C-GRID-3). The session starts on the first `advance`,
    `run_until`, `start` or `reset_episode`.

    Phase order at every boundary ``b`` where the session has work (the
    phases are a [`TimedSource`][simclock.lowlevel.TimedSource] of the grid clock, run by
    the scheduling core before the clock's entries at ``b``; they are not heap
    entries, so the order never depends on push history, ``next_event_ns``
    shows the user's entries only, and an idle stretch costs nothing):

    1. ``/clock`` with SessionTime ``b`` (C-EP-2);
    2. acquisitions due at ``b`` (first boundary >= nominal, C-GRID-2), sensors
       in the order they were added, each sensor's deadlines in order;
    3. deliveries due at ``b``, in acquisition order, each published on the
       sensor's topic stamped ``b`` and appended to `samples` (C-DEV-2);
       a zero-latency sample is delivered at its own acquisition boundary;
    4. controllers due at ``b``, in the order they were added: they see every
       sample delivered at or before ``b``.

    The clock's ``on_step`` hook (physics) for ``b`` has run just before. A
    component callback raising ``Exception`` is reported as
    ``SCHEDULER_CALLBACK_FAILED`` naming the callback (C-ERR-1) and the others
    still run; that firing is consumed. Samples still in flight at an episode
    reset are dropped and counted in `dropped_in_flight`.

    Complexity: O(components + due firings) per boundary; deliveries O(log n).
    """

    def __init__(
        self,
        clock: GridClock,
        *,
        seed: int | None = None,
        clock_period_ns: int | None = None,
        clock_topic: str | None = CLOCK_TOPIC,
        on_reset: Callable[[], object] | None = None,
        draw_observer: DrawObserver | None = None,
    ) -> None:
        if not isinstance(clock, GridClock):
            raise SimclockTypeError(f"clock must be a simclock.GridClock, got {safe_repr(clock)}")
        self._clock = clock
        self._step = clock.step_ns()
        self._seed = clock.random_source().seed if seed is None else check_seed(seed)
        period = clock.step_ns() if clock_period_ns is None else clock_period_ns
        self._clock_period = check_positive_ns(period, "clock_period_ns")
        if self._clock_period % clock.step_ns():
            raise SimclockValueError(
                f"clock_period_ns={self._clock_period} is not a multiple of the clock's step "
                f"({clock.step_ns()} ns); publish /clock on boundaries only"
            )
        if on_reset is not None and not callable(on_reset):
            raise SimclockTypeError(f"on_reset must be callable or None, got {safe_repr(on_reset)}")
        if draw_observer is not None and not callable(draw_observer):
            raise SimclockTypeError(
                f"draw_observer must be callable or None, got {safe_repr(draw_observer)}"
            )
        # Checked here: a bad topic would otherwise fail the first tick inside the run.
        topic = None if clock_topic is None else check_topic(clock_topic)
        if topic is not None and topic != CLOCK_TOPIC and is_reserved_topic(topic):
            # C-BUS-5: /clock is the session's to publish; /simclock/... is not.
            raise SimclockValueError(
                f"clock_topic {clock_topic!r} is reserved for the library's own messages; "
                "use '/clock' (the default) or None"
            )
        self._clock_topic = topic
        self._on_reset = on_reset
        self._observer = draw_observer
        self._sensors: dict[str, Component] = {}
        self._controllers: dict[str, Component] = {}
        self._started = False
        self._episode = -1
        self._episode_seed = self._seed
        self._episode_start = clock.now_ns()
        self._latest: dict[str, Sample] = {}
        self._latest_view = MappingProxyType(self._latest)  # cleared, never replaced
        self.samples: list[Sample] = []
        """Every delivered sample, in delivery order (C-DEV-2).

        Grows by one per delivered sample for the whole session (about 430 bytes
        each): the session never reads it back, so a long run that does not need
        them may empty it in place (``session.samples.clear()``, not a new list)
        between advances. `simclock.run_scenario` (``simclock run``,
        sweeps) folds each chunk's samples into its counts and metrics and
        clears it, so a scenario run keeps none."""
        self.dropped_in_flight = 0
        """Samples acquired but not yet delivered when an episode was reset."""
        # The per-boundary loop and its state (compiled with the core where it can be).
        self._phases = Phases(
            self._step,
            sample_json_template,
            fast_canonical_bytes,
            self._failed,
            self._latest,
            self.samples,
        )
        if topic is not None:
            publish_clock = clock.bus.publisher(topic)

            def clock_message(now: int) -> None:
                publish_clock(clock_payload(now), None)

            self._phases.clock_message = clock_message
            self._phases.clock_period = self._clock_period
        # Last: a clock that already runs a session refuses, and nothing above leaked.
        clock.attach_source(self._phases)  # its TimedSource: the clock runs the phases

    # -- the plan -----------------------------------------------------------

    clock = ReadOnly[GridClock]("_clock", "The clock; only the session advances it (C-MODE-2).")

    bus = ReadOnly[Bus]("_clock.bus", "The clock's bus: samples, commands, /clock, events.")

    seed = ReadOnly[int]("_seed", "Session seed: episode 0's and the default root.")

    def _check_plan_open(self, what: str) -> None:
        if self._started:
            raise SimclockRuntimeError(
                f"cannot add {what} after the session started; add every component first"
            )

    def add_sensor(self, spec: SensorSpec, read: DeviceRead) -> None:
        """Add a sensor device (C-DEV-1); refused under ``strict`` if off the grid (C-GRID-3)."""
        if not isinstance(spec, SensorSpec):
            raise SimclockTypeError(f"spec must be a SensorSpec, got {safe_repr(spec)}")
        self._add("sensor", spec.device_id, self._sensors, spec, "read", read, sensor=spec)

    def _add_float_sensor(self, spec: SensorSpec, read: Callable[[Any], tuple[float, ...]]) -> None:
        """`add_sensor` for a reader that returns a tuple of Python floats (built-in ones)."""
        self.add_sensor(spec, read)
        self._sensors[spec.device_id].floats = True

    def _add_encoding_controller(
        self, spec: ControllerSpec, step: Callable[[Any], tuple[dict[str, Any], bytes | None]]
    ) -> None:
        """`add_controller` for a step returning ``(command, its canonical JSON or None)``.

        For the built-in controllers, which make a fresh command each firing and
        know its encoding; ``None`` leaves the encoding to the subscribers.
        """
        self.add_controller(spec, step)  # type: ignore[arg-type]
        self._controllers[spec.controller_id].encodes = True

    def add_controller(self, spec: ControllerSpec, step: ControllerStep) -> None:
        """Add a controller; ``strict`` by default, refused if off the grid (C-GRID-3)."""
        if not isinstance(spec, ControllerSpec):
            raise SimclockTypeError(f"spec must be a ControllerSpec, got {safe_repr(spec)}")
        self._add("controller", spec.controller_id, self._controllers, spec, "step", step)

    def _add(
        self,
        what: str,
        ident: str,
        registry: dict[str, Component],
        spec: SensorSpec | ControllerSpec,
        fn_name: str,
        fn: Callable[..., Any],
        *,
        sensor: SensorSpec | None = None,
    ) -> None:
        """Check then register one component; every check runs before anything is stored."""
        if not callable(fn):
            raise SimclockTypeError(f"{fn_name} must be callable, got {safe_repr(fn)}")
        self._check_plan_open(f"{what} {safe_repr(ident)}")
        if ident in registry:
            raise SimclockValueError(
                f"{what} {safe_repr(ident)} is already in the session; give each {what} its own id"
            )
        step = self._clock.step_ns()
        spec.check_grid(step)
        comp = Component(
            spec.component_id,
            spec.period_ns,
            spec.phase_ns,
            step,
            fn,
            self._clock.bus.sender(spec.topic),
            ident if sensor is not None else "",
            canonical_json(ident, "device id") if sensor is not None else "",
            0 if sensor is None else sensor.latency_ns,
        )
        registry[ident] = comp
        # In the order they were added: the order of the phases at a boundary.
        (self._phases.sensors if sensor is not None else self._phases.controllers).append(comp)

    # -- time -----------------------------------------------------------------

    def session_time_ns(self) -> int:
        """SessionTime: the clock's ``now_ns()``; never decreases (C-EP-1)."""
        return self._clock.now_ns()

    def episode_time_ns(self) -> int:
        """EpisodeTime: ns since the current episode started; 0 right after a reset (C-EP-1)."""
        if not self._started:
            return 0
        return self._clock.now_ns() - self._episode_start

    episode = ReadOnly[int]("_episode", "Index of the current episode; -1 before start().")

    episode_seed = ReadOnly[int]("_episode_seed", "Episode seed (the session seed before start).")

    episode_start_ns = ReadOnly[int]("_episode_start", "SessionTime the episode started at.")

    def noise_stream(self, component_id: str, stream: str = NOISE_STREAM) -> SeededRandomSource:
        """A fresh copy of the current episode's stream for ``component_id`` (C-SEED-1)."""
        return component_stream(self._episode_seed, component_id, stream)

    def stats(self, component_id: str) -> PeriodicStats:
        """Counters of a component (``sensors/<id>`` or ``controllers/<id>``) (C-X-STATS).

        ``overrun``: firings whose boundary was at or after the next nominal
        deadline (a period shorter than the step). ``skipped`` is always 0.
        Counted over the whole session.
        """
        if not isinstance(component_id, str):
            raise SimclockTypeError(
                f"component_id must be a str such as 'sensors/imu0', got "
                f"{type(component_id).__name__} {safe_repr(component_id)}"
            )
        component_id = exact_str(component_id)  # a str subclass's __eq__ never runs
        for comp in (*self._sensors.values(), *self._controllers.values()):
            if comp.component_id == component_id:
                return PeriodicStats(
                    fired=comp.fired, failed=comp.failed, skipped=0, overrun=comp.overrun
                )
        raise SimclockValueError(
            f"no component {safe_repr(component_id)} in the session; use 'sensors/<id>' or "
            "'controllers/<id>'"
        )

    def latest(self) -> Mapping[str, Sample]:
        """The last delivered sample of each device in the current episode (read-only)."""
        return self._latest_view

    # -- running --------------------------------------------------------------

    def start(self, seed: int | None = None) -> None:
        """Start episode 0 (with ``seed``, default the session seed); no-op if started.

        ``seed`` is checked first. Once started, an explicit ``seed`` is a
        ``RuntimeError`` rather than silently ignored: another seed needs
        `reset_episode`.
        """
        chosen = self._seed if seed is None else check_seed(seed)
        if self._started:
            if seed is not None:
                raise SimclockRuntimeError(
                    f"start(seed={chosen}) after the session started (episode "
                    f"{self._episode}, seed {self._episode_seed}); call "
                    f"reset_episode(seed={chosen}) for a new episode with that seed"
                )
            return
        self._check_can_begin()
        now = self._clock.now_ns()
        self._begin(0, chosen)  # first: an on_reset that raises leaves the session unstarted
        self._started = True
        self._phases.next_clock_ns = now
        self._phases.refresh_due()

    def reset_episode(self, seed: int | None = None) -> None:
        """End the current episode and start the next one: EpisodeTime is 0 again (C-EP-1).

        ``seed`` defaults to [`episode_seed`][simclock.episode_seed] of (session seed, next index)
        (C-SEED-2). Allowed between ``advance`` calls at a grid boundary only
        (``RuntimeError`` otherwise, nothing changed). SessionTime does not
        move and ``/clock`` keeps counting it (C-EP-2). Samples in flight are
        dropped, ``on_reset`` runs, an ``EPISODE_RESET`` event (``episode``,
        ``seed``) is published, and every component restarts its schedule
        relative to now, with its noise stream from the new seed; the new
        episode's boundary-0 firings run on the next ``advance`` (even
        ``advance(0)``).
        """
        chosen = None if seed is None else check_seed(seed)
        self._check_can_begin()
        self.start()
        index = self._episode + 1
        # This boundary's phases already ran for the old episode; the restarted
        # components are due now, so the next advance runs them again for the new
        # one. _tick is idempotent per boundary, so nothing fires twice.
        self._begin(index, episode_seed(self._seed, index) if chosen is None else chosen)

    def advance(self, dt_ns: int) -> None:
        """Advance the clock by ``dt_ns`` (starting the session first if needed)."""
        dt = check_time_ns(dt_ns, "dt_ns")
        self.start()
        self._clock.advance(dt)

    def run_until(self, session_ns: int) -> None:
        """Advance to SessionTime ``session_ns`` (``ValueError`` if it is in the past)."""
        target = check_time_ns(session_ns, "session_ns")
        now = self._clock.now_ns()
        if target < now:
            raise SimclockValueError(
                f"session_ns={target} is in the past (now is {now} ns); pass a time >= now"
            )
        self.advance(target - now)

    def _check_can_begin(self) -> None:
        clock = self._clock
        now = clock.now_ns()
        if clock.running:
            raise SimclockRuntimeError(
                f"cannot start an episode from inside a callback (now {now} ns); "
                "call reset_episode() between advance() calls"
            )
        if now % clock.step_ns():
            raise SimclockRuntimeError(
                f"cannot start an episode at {now} ns, between grid boundaries "
                f"(step {clock.step_ns()} ns); advance to a boundary first"
            )

    def _begin(self, index: int, seed: int) -> None:
        """Begin episode ``index``; ``on_reset`` runs before any state changes.

        If ``on_reset`` raises, the error propagates and the episode does not
        begin: the session is as it was (half-begun episodes had components
        without noise streams, failing every tick afterwards).
        """
        if self._on_reset is not None:
            self._on_reset()
        now = self._clock.now_ns()
        phases = self._phases
        self.dropped_in_flight += len(phases.deliveries)
        phases.deliveries.clear()
        self._latest.clear()
        self._episode = phases.episode = index
        self._episode_seed = seed
        self._episode_start = phases.episode_start = now
        if index > 0:
            self.bus.publish(
                EVENTS_TOPIC,
                Event(EventKind.EPISODE_RESET, now, {"episode": index, "seed": seed}),
            )
        for comp in self._sensors.values():
            comp.noise = component_stream(
                seed, comp.component_id, NOISE_STREAM, observer=self._observer
            )
            comp.restart(now)
        for comp in self._controllers.values():
            comp.restart(now)
        phases.refresh_due()

    # -- the per-boundary phases ---------------------------------------------------

    def _failed(self, comp: Component, exc: Exception) -> None:
        """Report one failed firing; never fatal (C-ERR-1)."""
        comp.failed += 1
        publish_callback_failure(
            self.bus,
            self._clock.now_ns(),
            comp.fn,
            exc,
            {"component": comp.component_id},
        )
