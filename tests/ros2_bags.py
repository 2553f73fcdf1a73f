"""Shared helpers of the ROS 2 bag tests (C-ROS-1, C-ROS-2): recordings and rosbags reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rosbags.rosbag2 import Reader
from rosbags.typesys import get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

import simclock
from simclock import Event, HeapSimClock, Message, RawPayload, Recorder

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def pendulum(directory: Path) -> Path:
    """The pendulum example recorded (``simclock run examples/pendulum.toml --out``)."""
    out = directory / "pendulum.mcap"
    simclock.run_scenario(simclock.load_scenario(EXAMPLES / "pendulum.toml"), out=str(out))
    return out


def mixed(directory: Path) -> Path:
    """A recording with what the pendulum lacks: cross-topic ties, an event, a raw payload,
    a bus ``/clock``, payloads that are not samples (ints among the values) and draws."""
    path = directory / "mixed.mcap"
    bus = simclock.Bus()
    rec = Recorder(path, bus, seed=11, record_draws=True, metadata={"case": "mixed"})
    clock = HeapSimClock(11, bus=bus, draw_observer=rec.draw_observer)
    noise = clock.random_source().child("noise")
    sample = {
        "acquisition_ns": 5, "delivery_ns": 5, "device": "d", "episode": 0,
        "episode_start_ns": 0, "index": 0, "nominal_acquisition_ns": 5,
        "requested_delivery_ns": 5, "values": [0.1, -2.5e-300],
    }  # fmt: skip

    def tick() -> None:
        now = clock.now_ns()
        bus.publish("/b", {"n": now, "draw": noise.normal(0.0, 1.0)})
        bus.publish("/a", [now, None, "x", {"deep": [1.5]}])
        bus.publish("/s", dict(sample, index=now, values=[float(now), 0.5]))
        bus.publish("/odd", dict(sample, values=[1, 2.0]))  # an int value: not a Sample
        bus.publish("/clock", {"clock": {"sec": 0, "nanosec": now}})

    clock.schedule_periodic(5, tick)
    clock.schedule(7, lambda: 1 / 0)  # a callback failure: an Event on /simclock/events
    clock.schedule(9, lambda: bus.publish("/raw", RawPayload("protobuf", "p.M", b"\x00\xff")))
    clock.advance(20)
    rec.close()
    return path


def trace(path: Path | str) -> list[Message]:
    """Every bus message of a recording or bag, as simclock reads it."""
    with simclock.RecordingReader(path) as reader:
        return list(reader.messages())


def typestore_for(bag: Path, store: Any) -> tuple[Typestore, list[Any]]:
    """A typestore of ``store`` with every type the bag defines, and its connections."""
    typestore = get_typestore(store)
    with Reader(bag) as reader:
        connections = list(reader.connections)
        types: dict[str, Any] = {}
        for connection in connections:
            if connection.msgtype not in typestore.fielddefs:
                types.update(get_types_from_msg(connection.msgdef.data, connection.msgtype))
        typestore.register(types)
    return typestore, connections


def rosbags_messages(bag: Path, store: Any) -> list[tuple[str, str, int, Any]]:
    """``(topic, type, timestamp, message)`` of every message, as rosbags reads them."""
    typestore, _connections = typestore_for(bag, store)
    with Reader(bag) as reader:
        return [
            (c.topic, c.msgtype, t, typestore.deserialize_cdr(raw, c.msgtype))
            for c, t, raw in reader.messages()
        ]


def payload_of(msgtype: str, msg: Any) -> Any:
    """The simclock payload a ``simclock_msgs`` message carries, read from rosbags' fields."""
    if msgtype == "simclock_msgs/msg/Sample":
        keys = (
            "acquisition_ns", "delivery_ns", "device", "episode", "episode_start_ns", "index",
            "nominal_acquisition_ns", "requested_delivery_ns",
        )  # fmt: skip
        out = {key: getattr(msg, key) for key in keys}
        out["values"] = [float(v) for v in msg.values]
        return out
    if msgtype == "simclock_msgs/msg/Event":
        return Event.from_json(
            {"kind": msg.kind, "at_ns": msg.at_ns, "details": json.loads(msg.details)}
        )
    assert msgtype == "simclock_msgs/msg/Message", msgtype
    body = json.loads(msg.payload)
    if msg.kind == "raw":
        return RawPayload(body["encoding"], body["schema"], bytes.fromhex(body["data"]))
    assert msg.kind == "json"
    return body
