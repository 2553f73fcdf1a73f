"""The bus clauses of the suite: C-BUS (one total order of messages and events).

A mixin of :class:`~simclock_conformance.ClockConformance`.
"""

from __future__ import annotations

from simclock import EVENTS_TOPIC, EventKind, Message
from simclock_conformance._harness import Rig
from simclock_conformance._suite_support import _boom

__all__ = ["BusClauses"]


class BusClauses:
    """C-BUS-1..4: the bus's global sequence, stamps and raising subscribers."""

    # -- C-BUS -------------------------------------------------------------

    def test_C_BUS_1_one_global_sequence(self, rig: Rig) -> None:
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
        assert sequences == list(range(first, first + 4)), f"C-BUS-1: sequences {sequences}"
        topics = [m.topic for m in seen]
        assert topics == ["/a", "/b", EVENTS_TOPIC, "/a"], f"C-BUS-1: topics {topics}"

    def test_C_BUS_2_every_subscriber_sees_total_order(self, rig: Rig) -> None:
        clock, bus = rig.clock, rig.bus
        late_sub: list[tuple[int, int]] = []
        early_sub: list[tuple[int, int]] = []
        bus.subscribe(None, lambda m: early_sub.append((m.stamp_ns, m.sequence)))
        bus.publish("/t", "future-7", stamp_ns=7)
        bus.subscribe("/t", lambda m: late_sub.append((m.stamp_ns, m.sequence)))
        bus.publish("/t", "future-3", stamp_ns=3)
        bus.publish("/t", "now")
        clock.advance(10)
        assert early_sub == sorted(early_sub), f"C-BUS-2: {early_sub}"
        assert late_sub == early_sub, f"C-BUS-2: subscribers differ: {late_sub} vs {early_sub}"
        assert [s for s, _ in early_sub] == [0, 3, 7], f"C-BUS-2: stamps {early_sub}"

    def test_C_BUS_3_future_message_delivered_when_clock_reaches_it(self, rig: Rig) -> None:
        clock, bus = rig.clock, rig.bus
        order: list[tuple[str, int]] = []
        bus.subscribe("/t", lambda m: order.append((f"msg:{m.payload}", clock.now_ns())))
        clock.schedule(10, lambda: order.append(("cb-before", clock.now_ns())))
        bus.publish("/t", "x", stamp_ns=10)
        clock.schedule(10, lambda: order.append(("cb-after", clock.now_ns())))
        clock.advance(9)
        assert order == [], f"C-BUS-3: delivered early: {order}"
        clock.advance(1)
        expected = [("cb-before", 10), ("msg:x", 10), ("cb-after", 10)]
        assert order == expected, f"C-BUS-3: {order}, expected {expected}"

    def test_C_BUS_4_raising_subscriber_reported_others_served(self, rig: Rig) -> None:
        bus = rig.bus
        got: list[object] = []

        def broken(message: Message) -> None:
            raise RuntimeError("subscriber bug")

        bus.subscribe("/t", broken)
        bus.subscribe("/t", lambda m: got.append(m.payload))
        bus.publish("/t", 1)
        bus.publish("/t", 2)
        assert got == [1, 2], f"C-BUS-4: the healthy subscriber got {got}"
        kinds = [e.kind for e in rig.events]
        assert kinds == [EventKind.SUBSCRIBER_FAILED] * 2, f"C-BUS-4: events {kinds}"
