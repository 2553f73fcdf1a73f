"""The bus clauses of the suite: C-BUS (one total order of messages and events).

A mixin of :class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

from simclock import EVENTS_TOPIC, EventKind, Message
from simclock_conformance.kit._harness import Rig
from simclock_conformance.kit._suite_support import _boom, _expect_trace

__all__ = ["BusClauses"]


class BusClauses:
    """C-BUS-1..4: the bus's global sequence, stamps and raising subscribers."""

    # -- C-BUS -------------------------------------------------------------

    def test_C_BUS_1_one_global_sequence(self, rig: Rig) -> None:
        """Bus messages keep one global sequence.

        In process only: the bus is a Python object the protocol does not carry.
        """
        clock, bus = rig.clock, rig.bus
        seen: list[Message] = []
        bus.subscribe(None, seen.append)
        bus.publish("/a", 1)
        bus.publish("/b", 2)
        clock.schedule(1, _boom)
        clock.advance(1)
        bus.publish("/a", 3)
        sequences = [m.sequence for m in seen]
        first = sequences[0] if sequences else 0
        _expect_trace(
            sequences, list(range(first, first + 4)), "C-BUS-1", "sequence numbers (consecutive)"
        )
        topics = [m.topic for m in seen]
        _expect_trace(topics, ["/a", "/b", EVENTS_TOPIC, "/a"], "C-BUS-1", "topics in order")

    def test_C_BUS_2_every_subscriber_sees_total_order(self, rig: Rig) -> None:
        """Every subscriber sees the total order.

        In process only: the bus is a Python object the protocol does not carry.
        """
        clock, bus = rig.clock, rig.bus
        late_sub: list[tuple[int, int]] = []
        early_sub: list[tuple[int, int]] = []
        bus.subscribe(None, lambda m: early_sub.append((m.stamp_ns, m.sequence)))
        bus.publish("/t", "future-7", stamp_ns=7)
        bus.subscribe("/t", lambda m: late_sub.append((m.stamp_ns, m.sequence)))
        bus.publish("/t", "future-3", stamp_ns=3)
        bus.publish("/t", "now")
        clock.advance(10)
        _expect_trace(
            early_sub, sorted(early_sub), "C-BUS-2", "(stamp_ns, sequence) seen, in total order"
        )
        _expect_trace(
            late_sub, early_sub, "C-BUS-2", "(stamp_ns, sequence) seen by '/t', against all's"
        )
        _expect_trace([s for s, _ in early_sub], [0, 3, 7], "C-BUS-2", "stamps delivered")

    def test_C_BUS_3_future_message_delivered_when_clock_reaches_it(self, rig: Rig) -> None:
        """A future message is delivered when the clock reaches it.

        In process only: the bus is a Python object the protocol does not carry.
        """
        clock, bus = rig.clock, rig.bus
        order: list[tuple[str, int]] = []
        bus.subscribe("/t", lambda m: order.append((f"msg:{m.payload}", clock.now_ns())))
        clock.schedule(10, lambda: order.append(("cb-before", clock.now_ns())))
        bus.publish("/t", "x", stamp_ns=10)
        clock.schedule(10, lambda: order.append(("cb-after", clock.now_ns())))
        clock.advance(9)
        _expect_trace(order, [], "C-BUS-3", "deliveries up to 9 (a message stamped 10)")
        clock.advance(1)
        expected = [("cb-before", 10), ("msg:x", 10), ("cb-after", 10)]
        _expect_trace(order, expected, "C-BUS-3", "callbacks and deliveries at 10")

    def test_C_BUS_4_raising_subscriber_reported_others_served(self, rig: Rig) -> None:
        """A raising subscriber is reported and the others are served.

        In process only: the bus is a Python object the protocol does not carry.
        """
        bus = rig.bus
        got: list[object] = []

        def broken(message: Message) -> None:
            raise RuntimeError("subscriber bug")

        bus.subscribe("/t", broken)
        bus.subscribe("/t", lambda m: got.append(m.payload))
        bus.publish("/t", 1)
        bus.publish("/t", 2)
        _expect_trace(got, [1, 2], "C-BUS-4", "payloads the healthy subscriber got")
        kinds = [str(e.kind) for e in rig.events]
        _expect_trace(kinds, [str(EventKind.SUBSCRIBER_FAILED)] * 2, "C-BUS-4", "event kinds")
