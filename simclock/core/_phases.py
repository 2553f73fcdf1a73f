"""A session's per-boundary phases: sensors, deliveries and controllers on a grid (SPEC §8).

`Phases` holds the run-time state of a `Session`'s
components and runs, at a boundary, the four phases in the order the session
documents: ``/clock``, acquisitions, deliveries, controllers (C-EP-2,
C-DEV-1, C-DEV-2, C-GRID-2). The session owns the plan, the episodes and the
public API; this module owns only the loop that runs once per boundary, so
it can be compiled with the core (C-NATIVE-1): the components are native
objects, and the per-firing bookkeeping is native int arithmetic.

It builds each `Sample` (compiled with it: a direct C call) and knows nothing
of JSON or the bus: the session hands it the callables that make a sample's
canonical JSON template and a command's encoding, and each component's
``send`` (``Bus.sender``). From simclock it imports only the compiled classes
it builds or calls natively: `Sample`, the built-in reader and controller,
and the bus's sender.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, final

from simclock.core._kernels import PdStep, SliceReader
from simclock.core._sample import Sample
from simclock.core._sender import SinkSender

__all__ = ["Component", "Phases"]

Send = Callable[[bytes | None, Any, Callable[[], Any] | None], None]


@final
class Component:
    """Run-time state of one sensor or controller within the current episode.

    ``fn`` is the sensor's ``read(noise)`` or the controller's ``step(latest)``;
    ``send`` publishes on its topic (``Bus.sender``). ``floats``: ``fn``
    returns a tuple of Python floats (the built-in readers), so its values
    need no conversion. Counters (``fired``, ``failed``, ``overrun``) cover
    the whole session; ``k`` (the next firing) restarts with each episode.
    """

    def __init__(
        self,
        component_id: str,
        period_ns: int,
        phase_ns: int,
        step_ns: int,
        fn: Callable[..., Any],
        send: Send,
        device_id: str = "",
        device_json: str = "",
        latency_ns: int = 0,
    ) -> None:
        self.component_id = component_id
        self.period_ns = period_ns
        self.phase_ns = phase_ns
        self.step_ns = step_ns
        self.fn = fn
        self.send = send
        self.device_id = device_id
        self.device_json = device_json
        """The device id as canonical JSON (for its samples' template)."""
        self.latency_ns = latency_ns
        self.floats = False
        self.encodes = False
        """``fn`` returns ``(payload, canonical JSON or None)`` (the built-in controllers)."""
        self.noise: Any = None
        self.origin_ns = 0
        """Nominal time of firing 0 of this episode: episode start + phase."""
        # Number of values -> this episode's canonical JSON template of a sample.
        self.templates: dict[int, bytes] = {}
        self.k = 0
        self.next_at = 0
        self.fired = 0
        self.failed = 0
        self.overrun = 0

    def restart(self, base_ns: int) -> None:
        """Begin an episode at ``base_ns``: firing 0 at the first boundary >= its nominal time."""
        self.origin_ns = base_ns + self.phase_ns
        self.k = 0
        step = self.step_ns
        self.next_at = -(-self.origin_ns // step) * step
        self.templates.clear()

    def take(self, now: int) -> int:
        """Consume firing ``k`` (due at ``now``) and return its nominal time; count an overrun."""
        index = self.k
        period = self.period_ns
        nominal = self.origin_ns + index * period
        self.k = index + 1
        self.fired += 1
        following = nominal + period
        if now >= following:
            self.overrun += 1
        step = self.step_ns
        self.next_at = -(-following // step) * step  # the first boundary >= the next nominal
        return nominal


@final
class Phases:
    """The components of a session and the work of one boundary (`tick`).

    ``template(device_json, episode, episode_start_ns, n, at_now)`` is the bytes
    template of a sample's canonical JSON for ``n`` finite float values
    (``template % (acquisition, delivery, index, nominal, requested, *values)``;
    with ``at_now`` the four times are the same ``bytes``, the boundary's
    decimal digits); ``encode(payload)`` is a command's canonical JSON or
    ``None``; ``failed(component, exc)`` reports a failed firing (C-ERR-1).
    ``latest`` and ``samples`` are the session's own
    mapping and list, updated in place.
    """

    def __init__(
        self,
        step_ns: int,
        template: Callable[[str, int, int, int, bool], bytes],
        encode: Callable[[Any], bytes | None],
        failed: Callable[[Component, Exception], None],
        latest: dict[str, Any],
        samples: list[Any],
    ) -> None:
        self.step_ns = step_ns
        self.template = template
        self.encode = encode
        self.failed = failed
        self.latest = latest
        self.latest_view: Mapping[str, Any] = MappingProxyType(latest)
        self.samples = samples
        self.sensors: list[Component] = []
        self.controllers: list[Component] = []
        # Invariant: a heap of (delivery_ns, acquisition order, sample, sensor, encoded);
        # the order is unique, so nothing after it is ever compared.
        self.deliveries: list[tuple[int, int, Any, Component, bytes | None]] = []
        self.acquired = 0
        self.episode = -1
        self.episode_start = 0
        self.clock_message: Callable[[int], None] | None = None
        """``clock_message(now)`` publishes ``/clock``; ``None``: the session has no clock topic."""
        self.clock_period = 0
        self.next_clock_ns = 0
        # Invariant: None before the session starts; then the first boundary at which
        # tick has work (a /clock message, an acquisition, a delivery or a controller).
        self.due: int | None = None

    # The session's TimedSource (C-GRID-2): the clock runs the phases at every boundary
    # where the session has work, before the entries due there, so the session adds no
    # heap entry (the clock's next_event_ns/pending_count show the user's entries only)
    # and an idle stretch costs nothing. The compiled clock calls tick and reads due
    # natively when its source is a Phases.

    def fire(self, at_ns: int) -> None:
        """``TimedSource.fire``: run the phases due at ``at_ns`` (the clock's ``now``)."""
        self.tick(at_ns)

    def next_ns(self) -> int | None:
        """``TimedSource.next_ns``: `due`, or ``None`` before the session starts."""
        return self.due

    def refresh_due(self) -> None:
        """Recompute `due`, the first boundary with work: O(components)."""
        due: int | None = None if self.clock_message is None else self.next_clock_ns
        for comp in self.sensors:
            if due is None or comp.next_at < due:
                due = comp.next_at
        for comp in self.controllers:
            if due is None or comp.next_at < due:
                due = comp.next_at
        deliveries = self.deliveries
        if deliveries and (due is None or deliveries[0][0] < due):
            due = deliveries[0][0]
        self.due = due

    def tick(self, now: int) -> None:
        """Run the phases due at boundary ``now`` (see `Session`); idempotent.

        O(components + due firings). Each sample's canonical JSON is one
        format of its sensor's template for the episode; a sample due at its
        own acquisition boundary is delivered without the heap, after every
        earlier acquisition due now.
        """
        clock_message = self.clock_message
        if clock_message is not None and now >= self.next_clock_ns:
            clock_message(now)
            self.next_clock_ns = now + self.clock_period
        deliveries = self.deliveries
        at_once: list[tuple[Any, Component, bytes | None]] = []
        # The times and counters below are native ints; a Python object is made once for
        # each (typed Any), for the sample's JSON and the heap alike (the compiled Sample
        # stores them natively).
        now_obj: Any = now
        episode: Any = self.episode
        episode_start: Any = self.episode_start
        now_digits: bytes | None = None  # b"%d" % now, made once per boundary if needed
        # 2. acquisitions (C-DEV-1): read now, deliver at the first boundary >= nominal + latency.
        for comp in self.sensors:
            while comp.next_at <= now:
                index: Any = comp.k
                nominal_ns = comp.take(now)
                try:
                    if comp.floats:
                        fn = comp.fn
                        if type(fn) is SliceReader:  # the built-in reader, called natively
                            reader: SliceReader = fn
                            values: tuple[Any, ...] = reader.__call__(comp.noise)
                        else:
                            values = fn(comp.noise)
                    else:
                        values = tuple(map(float, comp.fn(comp.noise)))
                except Exception as exc:
                    self.failed(comp, exc)
                    continue
                requested_ns = nominal_ns + comp.latency_ns
                step = comp.step_ns
                delivery_ns = -(-requested_ns // step) * step
                # A sensor on the grid with no latency: all four times are now (one object).
                nominal: Any = now_obj if nominal_ns == now else nominal_ns
                requested: Any = now_obj if requested_ns == now else requested_ns
                delivery: Any = now_obj if delivery_ns == now else delivery_ns
                sample = Sample(
                    comp.device_id,
                    index,
                    episode,
                    episode_start,
                    nominal,
                    now_obj,
                    requested,
                    delivery,
                    values,
                )
                encoded: bytes | None = None
                total = sum(values)
                if total - total == 0.0:  # every value finite (else the generic encoder reports)
                    at_now = nominal_ns == now and delivery_ns == now  # then requested too
                    key = -1 - len(values) if at_now else len(values)
                    template = comp.templates.get(key)
                    if template is None:
                        template = self.template(
                            comp.device_json, self.episode, self.episode_start, len(values), at_now
                        )
                        comp.templates[key] = template
                    # A tuple concatenation, not a star display: mypyc compiles it natively.
                    if at_now:
                        if now_digits is None:
                            now_digits = b"%d" % (now_obj,)
                        digits: Any = now_digits
                        fields: tuple[Any, ...] = (digits, digits, index, digits, digits)
                    else:
                        fields = (now_obj, delivery, index, nominal, requested)
                    encoded = template % (fields + values)
                if delivery_ns == now:
                    at_once.append((sample, comp, encoded))
                else:
                    heapq.heappush(deliveries, (delivery, self.acquired, sample, comp, encoded))
                self.acquired += 1
        # 3. deliveries (C-DEV-1, C-DEV-2), in acquisition order, stamped now.
        latest = self.latest
        samples = self.samples
        while deliveries and deliveries[0][0] <= now:
            _, _, sample, comp, encoded = heapq.heappop(deliveries)
            latest[comp.device_id] = sample
            samples.append(sample)
            _send(comp.send, encoded, None, sample.to_json)
        for sample, comp, encoded in at_once:
            latest[comp.device_id] = sample
            samples.append(sample)
            _send(comp.send, encoded, None, sample.to_json)
        # 4. controllers, seeing every sample delivered so far.
        for comp in self.controllers:
            while comp.next_at <= now:
                comp.take(now)
                try:
                    fn = comp.fn
                    if type(fn) is PdStep:  # the built-in controller, called natively
                        pd: PdStep = fn
                        command: Any = pd.__call__(self.latest_view)
                    else:
                        command = fn(self.latest_view)
                    if comp.encodes:
                        payload, encoded = command
                        _send(comp.send, encoded, payload, None)
                    elif command is not None:
                        payload = dict(command)
                        _send(comp.send, self.encode(payload), payload, None)
                except Exception as exc:
                    self.failed(comp, exc)
        self.refresh_due()


def _send(send: Send, encoded: bytes | None, payload: Any, make_payload: Any) -> None:
    """``send(encoded, payload, make_payload)``; a `SinkSender` (``Bus.sender``'s) natively."""
    if type(send) is SinkSender:
        sender: SinkSender = send
        sender.__call__(encoded, payload, make_payload)
    else:
        send(encoded, payload, make_payload)
