"""`Bus.sender`'s per-message path, compiled with the core (C-NATIVE-1, C-BUS-1..4).

`SinkSender` is the callable ``send(encoded, payload, make_payload)`` that
``Bus.sender(topic)`` returns for a topic that is not reserved: when every
subscriber of the topic has a trace sink and the message is due at once,
the sinks get ``(stamp, sequence, encoded)`` under the bus's lock and
neither the `Message` nor the payload is built; otherwise the message takes
``publish`` (the topic's publisher). The order, the sequences and what each
subscriber sees are the same either way; a sink that raises is reported
with the message built then (C-BUS-4). See ``Bus.sender`` for the contract.

The bus's state (`BusState`: its clock, whether a delivery is in
progress, the next sequence, the last stamp) is read and written under the
bus's lock, exactly as the bus's other paths do; the bus hands this object its route
cache, its pending queue and the helpers it needs. This module imports
nothing from simclock but the two sink classes it calls natively (the pure
build runs the same source).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, final

from simclock.core._mcap_records import LineSink, TopicSink

__all__ = ["BusState", "SinkSender"]


@final
class BusState:
    """A bus's sequencing state, read and written under the bus's lock.

    ``clock`` (the bound clock or ``None``), ``delivering`` (a delivery is in
    progress), ``next_sequence`` and ``last_stamp``: the bus's Python code
    and `SinkSender` share this one compiled object, so the per-message path
    reads and writes them natively.
    """

    def __init__(self) -> None:
        self.clock: Any = None
        self.delivering = False
        self.next_sequence = 0
        self.last_stamp = 0


@final
class SinkSender:
    """``send(encoded, payload, make_payload)`` on one checked topic of ``bus`` (see the module).

    The arguments are typed ``Any`` on purpose: a caller's odd ``encoded``
    (not ``bytes``) takes ``publish``, which refuses it as it always does.
    """

    def __init__(
        self,
        bus: Any,
        topic: str,
        publish: Callable[[Any, Any], Any],
        routes: dict[str, Any],
        pending: list[Any],
        lock: Any,
        check_time: Callable[[Any, str], int],
        message: Callable[[str, Any, Any, Any, Any], Any],
    ) -> None:
        self.bus = bus
        self.state: BusState = bus._state
        self.topic = topic
        self.publish = publish
        self.routes = routes
        self.pending = pending
        self.lock = lock
        # Bound once: a method call on the lock looks its method up every time.
        self.acquire: Callable[[], Any] = lock.acquire
        self.release: Callable[[], Any] = lock.release
        self.check_time = check_time
        self.message = message
        # The bound clock's now_ns, bound once per clock (a method call looks it up).
        self.clock: Any = None
        self.now: Callable[[], Any] = int

    def __call__(self, encoded: Any, payload: Any, make_payload: Any) -> None:
        bus = self.bus
        state = self.state
        clock = state.clock
        topic = self.topic
        # Typed: mypyc walks the pairs natively (the bus caches a tuple of pairs, or None).
        sinks: tuple[tuple[Any, Any], ...] | None
        try:
            sinks = self.routes[topic]
        except KeyError:  # the first message since a subscribe or cancel
            sinks = bus._sinks_of(topic)
        if sinks is None or clock is None or type(encoded) is not bytes:
            self.publish(payload if make_payload is None else make_payload(), encoded)
            return
        failures: list[tuple[Any, Exception]] | None = None
        seq: Any = 0
        self.acquire()  # not `with`: half the cost, once per message
        try:
            if clock is not self.clock:
                self.clock = clock
                self.now = clock.now_ns
            stamp: Any = self.now()
            if type(stamp) is not int or stamp < 0:
                stamp = self.check_time(stamp, "stamp_ns")  # as publish: nothing taken yet
            # Delivered at once only if nothing queued comes first (see Bus.publisher).
            pending = self.pending
            direct = not state.delivering and (not pending or pending[0][0] > stamp)
            if direct:
                seq = state.next_sequence
                state.next_sequence = seq + 1
                last = state.last_stamp
                if stamp > last:
                    state.last_stamp = stamp
                # Under the lock (sinks never publish nor wait on the bus): no other
                # message can be sequenced or delivered until every sink has this one.
                for sink, sub in sinks:
                    try:
                        # The sinks simclock makes (a Fingerprinter's, a Recorder's) are
                        # called natively; the call is the same.
                        if type(sink) is LineSink:
                            line_sink: LineSink = sink
                            line_sink.__call__(stamp, seq, encoded)
                        elif type(sink) is TopicSink:
                            topic_sink: TopicSink = sink
                            topic_sink.__call__(stamp, seq, encoded)
                        else:
                            sink(stamp, seq, encoded)
                    except Exception as exc:  # C-BUS-4: reported once all sinks have it
                        if failures is None:
                            failures = []
                        failures.append((sub, exc))
        finally:
            self.release()
        if not direct:
            self.publish(payload if make_payload is None else make_payload(), encoded)
        elif failures is not None:
            message = self.message(
                topic, stamp, seq, payload if make_payload is None else make_payload(), encoded
            )
            for sub, error in failures:
                bus._report_subscriber_failure(message, sub, error)
