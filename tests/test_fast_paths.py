"""The main job's fast paths give exactly what the general paths give (C-BUS-1..4, C-X-FP).

* ``Bus.publisher(topic)``: the same deliveries, order and sequences as ``Bus.publish``,
  also with a subscriber that publishes, a failing subscriber and a message stamped now
  still waiting for its flush;
* ``Message.encoded``: the fingerprint and the recorder use it, and a wrong type is refused;
* ``Sample.canonical_json``: byte for byte ``canonical_json(sample.to_json())``;
* ``compiled_model``: one ``MjModel`` per file and process, compiled again when it changes;
* ``sim/_toml``: the scenario file and its metrics share it, neither imports the other.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simclock import (
    EVENTS_TOPIC,
    Bus,
    Event,
    HeapSimClock,
    Message,
    SimclockTypeError,
    SimclockValueError,
)
from simclock.core._bus import checked_message
from simclock.recording._fingerprint import Fingerprinter, canonical_json, trace_fingerprint
from simclock.sim._devices import Sample, sample_json_template

ROOT = Path(__file__).resolve().parent.parent
PENDULUM_XML = ROOT / "examples" / "pendulum.xml"

Record = tuple[str, str, int, int, object]


def _traffic(fast: bool) -> tuple[list[Record], list[int], str]:
    """A run publishing through ``publisher`` (fast) or ``publish``: what subscribers saw."""
    clock = HeapSimClock(0)
    bus = clock.bus
    seen: list[Record] = []
    publish_a = bus.publisher("/a") if fast else (lambda p, e=None: bus.publish("/a", p))
    publish_b = bus.publisher("/b") if fast else (lambda p, e=None: bus.publish("/b", p))

    def echo(message: Message) -> None:  # publishes from inside a delivery
        seen.append(("echo", message.topic, message.stamp_ns, message.sequence, message.payload))
        if message.payload == {"n": 1}:
            publish_b({"echo": 1}, None)

    def broken(message: Message) -> None:
        raise RuntimeError("subscriber bug")

    def everything(message: Message) -> None:
        payload = message.payload
        if isinstance(payload, Event):
            payload = (str(payload.kind), payload.details["subscriber"])
        seen.append(("all", message.topic, message.stamp_ns, message.sequence, payload))

    fp = Fingerprinter()
    bus.subscribe("/a", echo)
    bus.subscribe("/a", broken)
    bus.subscribe(None, everything)
    bus.subscribe(None, fp)
    sequences = [publish_a({"n": 0}, None).sequence]
    bus.publish("/b", {"later": True}, stamp_ns=5)  # waits for the clock

    def at_5() -> None:
        sequences.append(publish_a({"n": 1}, None).sequence)

    clock.advance(1)
    clock.schedule(6, at_5)
    clock.advance(10)
    sequences.append(publish_b({"n": 2}, None).sequence)
    return seen, sequences, fp.hexdigest()


def test_C_BUS_1_publisher_gives_the_deliveries_of_publish() -> None:
    fast = _traffic(fast=True)
    slow = _traffic(fast=False)
    assert fast == slow
    seen = fast[0]
    # The failing subscriber is reported (C-BUS-4) and echo's message comes after the
    # one it answered, in total order.
    assert ("all", EVENTS_TOPIC, 0, 1, ("SUBSCRIBER_FAILED", "_traffic.<locals>.broken")) in seen
    stamps = [(r[2], r[3]) for r in seen if r[0] == "all"]
    assert stamps == sorted(stamps)


@pytest.mark.parametrize("fast", [True, False])
def test_C_BUS_3_publisher_waits_behind_a_message_stamped_now(fast: bool) -> None:
    """A message stamped 5 still waiting at 5 is delivered first: (5, 0) before (5, 1)."""
    clock = HeapSimClock(0)
    bus = clock.bus
    order: list[int] = []
    bus.subscribe(None, lambda m: order.append(m.sequence))
    publish = bus.publisher("/x") if fast else (lambda p, e=None: bus.publish("/x", p))
    clock.schedule(5, lambda: publish({"now": True}, None))  # fires before the bus's flush
    bus.publish("/x", {"future": True}, stamp_ns=5)
    clock.advance(5)
    assert order == [0, 1]


def test_C_BUS_1_publisher_refuses_a_bad_topic_once_and_changes_nothing() -> None:
    bus = Bus(HeapSimClock(0))
    with pytest.raises(SimclockValueError, match=r"^topic must start with '/'"):
        bus.publisher("no-slash")
    assert bus.next_sequence == 0


def test_publisher_on_an_unbound_bus_is_publish_and_refuses_the_missing_stamp() -> None:
    bus = Bus()
    publish = bus.publisher("/x")
    with pytest.raises(
        SimclockValueError,
        match=r"^stamp_ns is required on a bus with no clock; pass stamp_ns=\.\.\. "
        r"or bind the bus to a clock$",
    ):
        publish({"a": 1}, None)
    assert bus.next_sequence == 0


def test_C_X_FP_encoded_bytes_are_hashed_instead_of_the_payload() -> None:
    payload = {"b": 1.5, "a": [1, 2]}
    text = canonical_json(payload).encode()
    plain = Message("/t", 3, 0, payload)
    encoded = Message("/t", 3, 0, payload, text)
    assert plain == encoded  # not part of equality
    assert trace_fingerprint([plain]) == trace_fingerprint([encoded])
    # The bytes are what is hashed: a publisher that lies changes the fingerprint.
    assert trace_fingerprint([Message("/t", 3, 0, payload, b'{"x":0}')]) != trace_fingerprint(
        [plain]
    )


def test_message_encoded_must_be_bytes() -> None:
    with pytest.raises(
        SimclockTypeError,
        match=r"^encoded must be bytes \(the payload's canonical JSON\) or None, got str '\{\}'$",
    ):
        Message("/t", 0, 0, {}, "{}")  # type: ignore[arg-type]


def _slots(obj: object) -> dict[str, object]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}  # type: ignore[arg-type]


_finite = st.floats(allow_nan=False, allow_infinity=False)
_time = st.integers(0, 2**64 - 1)


@given(
    device=st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,8}", fullmatch=True),
    index=st.integers(0, 10**9),
    episode=st.integers(0, 99),
    times=st.tuples(_time, _time, _time, _time, _time),
    values=st.lists(_finite, max_size=5).map(tuple),
)
def test_C_X_FP_C_DEV_2_sample_template_is_the_canonical_json_and_sample_a_frozen_value(
    device: str,
    index: int,
    episode: int,
    times: tuple[int, int, int, int, int],
    values: tuple[float, ...],
) -> None:
    sample = Sample(device, index, episode, *times, values=values)
    expected = canonical_json(sample.to_json()).encode()
    assert sample.canonical_json(canonical_json(device)) == expected
    # A value: equal, hashed, copied and pickled by its fields; never changed in place.
    same = Sample(device, index, episode, *times, values=values)
    assert _slots(same) == _slots(sample) and same == sample and hash(same) == hash(sample)
    assert pickle.loads(pickle.dumps(sample)) == sample == copy.deepcopy(sample)
    assert dataclasses.replace(sample, index=index + 1) == Sample(
        device, index + 1, episode, *times, values=values
    )
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"^cannot assign to field 'index'$"):
        sample.index = 0
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"^cannot delete field 'values'$"):
        del sample.values
    assert _slots(sample) == _slots(same)


@given(
    device=st.from_regex(r"[A-Za-z%][A-Za-z0-9_.%-]{0,8}", fullmatch=True),
    index=st.integers(0, 10**9),
    episode=st.integers(0, 99),
    start=_time,
    now=_time,
    values=st.lists(_finite, max_size=5).map(tuple),
)
def test_C_X_FP_a_sample_at_now_template_gives_the_same_bytes(
    device: str, index: int, episode: int, start: int, now: int, values: tuple[float, ...]
) -> None:
    """A sample whose four times are ``now``: the ``%s`` template with now's digits, same text."""
    device_json = canonical_json(device)
    general = sample_json_template(device_json, episode, start, len(values))
    at_now = sample_json_template(device_json, episode, start, len(values), at_now=True)
    digits = b"%d" % now
    made = at_now % (digits, digits, index, digits, digits, *values)
    assert made == general % (now, now, index, now, now, *values)
    sample = Sample(device, index, episode, start, now, now, now, now, values)
    assert made == canonical_json(sample.to_json()).encode()


@given(
    topic=st.sampled_from(["/a", "/simclock/events", "/x/y_z.1"]),
    stamp=_time,
    sequence=st.integers(0, 2**70),
    payload=st.one_of(st.none(), st.dictionaries(st.text(max_size=3), st.integers())),
    encoded=st.one_of(st.none(), st.binary(max_size=8)),
)
def test_C_BUS_1_checked_message_equals_the_checked_constructor(
    topic: str, stamp: int, sequence: int, payload: object, encoded: bytes | None
) -> None:
    fast = checked_message(topic, stamp, sequence, payload, encoded)
    slow = Message(topic, stamp, sequence, payload, encoded)
    assert type(fast) is Message
    assert _slots(fast) == _slots(slow) and fast == slow  # a dict payload has no hash
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.stamp_ns = 0  # type: ignore[misc]


def test_C_BUS_1_publish_checks_a_foreign_clocks_now_before_taking_a_sequence() -> None:
    """A clock whose now is not a time-int: the publish is refused and the bus unchanged."""

    class Backwards(HeapSimClock):
        def now_ns(self) -> int:
            return -1

    refused = r"^stamp_ns must be >= 0 ns, got -1$"
    bus = Bus(Backwards(0))
    with pytest.raises(SimclockValueError, match=refused):
        bus.publish("/a", {})
    with pytest.raises(SimclockValueError, match=refused):
        bus.publisher("/a")({}, None)
    assert bus.next_sequence == 0


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_C_X_FP_sample_template_leaves_non_finite_values_to_the_encoder(bad: float) -> None:
    sample = Sample("imu0", 0, 0, 0, 0, 0, 0, 0, values=(1.0, bad))
    assert sample.canonical_json('"imu0"') is None
    with pytest.raises(SimclockValueError, match=r"^payload has no canonical JSON form"):
        canonical_json(sample.to_json())


def test_compiled_model_is_shared_and_recompiled_when_the_file_changes(tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    from simclock.sim._mujoco import compiled_model

    path = tmp_path / "m.xml"
    path.write_bytes(PENDULUM_XML.read_bytes())
    first = compiled_model(path)
    assert compiled_model(str(path)) is first
    text = PENDULUM_XML.read_text(encoding="utf-8").replace('timestep="0.002"', 'timestep="0.004"')
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a new mtime even on a coarse clock
    second = compiled_model(path)
    assert second is not first
    assert second.opt.timestep == 0.004
    with pytest.raises(SimclockValueError, match=r"^cannot load MuJoCo model '.*missing\.xml'"):
        compiled_model(tmp_path / "missing.xml")


def test_scenario_file_and_metrics_import_the_toml_checks_not_each_other() -> None:
    """Each of the two modules imports alone, first, in a fresh interpreter (no cycle)."""
    for module in ("simclock.sim._metrics", "simclock.sim._scenario_file", "simclock.sim._toml"):
        proc = subprocess.run(
            [sys.executable, "-c", f"import {module}"],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        assert proc.returncode == 0, proc.stderr
    source = (ROOT / "simclock" / "sim" / "_metrics.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s*from simclock\.sim\._scenario_file import", source, re.M)
