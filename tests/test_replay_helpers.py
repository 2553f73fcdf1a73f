"""Shared helpers for the replay tests: a recorded scenario and MCAP rewriting."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcap.reader import make_reader
from mcap.records import Message as McapMessage
from mcap.writer import CompressionType, Writer

from simclock import Bus, HeapSimClock, Message, RandomSource, Recorder, SeededRandomSource
from simclock.recording._format import seal_metadata


def scenario(
    clock: HeapSimClock, root: RandomSource | None = None, draws: list[Any] | None = None
) -> None:
    """Several topics, equal stamps, a future stamp, callback failures and RNG draws.

    ``root`` is the random root to draw from (default ``clock.random_source()``).
    """
    bus = clock.bus
    root = clock.random_source() if root is None else root
    noise = root.child("imu/noise")
    wheel = root.child("odom")

    def imu() -> None:
        z = noise.normal(0.0, 0.1)
        v = noise.normal(0.0, 1.0, size=(2,))
        if draws is not None:
            draws.extend([z, v.tolist()])
        bus.publish("/imu", {"z": z, "v": v.tolist(), "t": clock.now_ns()})

    def odom() -> None:
        k = wheel.integers(0, 100)
        if draws is not None:
            draws.append(k)
        bus.publish("/odom", [clock.now_ns(), k])
        bus.publish("/odom/late", {"k": k}, stamp_ns=clock.now_ns() + 3)

    def flaky() -> None:
        raise ValueError(f"flaky at {clock.now_ns()}")

    clock.schedule_periodic(4, imu)
    clock.schedule_periodic(6, odom, phase_ns=2)  # shares t=14, 26, ... with imu... and /late
    clock.schedule_periodic(10, flaky, phase_ns=4)
    clock.schedule(8, lambda: bus.publish("/cmd", "go"))
    clock.schedule(8, lambda: bus.publish("/cmd", None))


def record(
    path: Path, seed: int = 7, *, until: int = 40, record_draws: bool = True, **kw: Any
) -> tuple[list[Message], str, list[Any]]:
    """Record :func:`scenario`; return the live bus trace, its fingerprint and the draws."""
    bus = Bus()
    live: list[Message] = []
    draws: list[Any] = []
    with Recorder(path, bus, seed=seed, record_draws=record_draws, **kw) as rec:
        clock = HeapSimClock(seed, bus=bus)
        bus.subscribe(None, live.append)
        # The clock's own root with the Recorder's observer, built explicitly.
        scenario(clock, SeededRandomSource(seed, observer=rec.draw_observer), draws)
        clock.advance(until)
    return live, rec.fingerprint(), draws


Edit = Callable[[list[McapMessage]], list[McapMessage]]


def replace_in_data(old: bytes, new: bytes) -> Edit:
    """An ``edit`` for :func:`rewrite`: every message's data with ``old`` replaced by ``new``.

    Only the data changes (channel, log time, publish time and sequence are kept), so
    what a test sees is an altered payload, not a moved message.
    """

    def edit(msgs: list[McapMessage]) -> list[McapMessage]:
        # A pattern that matches nothing would make the "damaged" copy a faithful one.
        assert any(old in m.data for m in msgs), f"{old!r} is in no message"
        return [
            McapMessage(
                m.channel_id, m.log_time, m.data.replace(old, new), m.publish_time, m.sequence
            )
            for m in msgs
        ]

    return edit


def resealed(
    edit: Callable[[str, dict[str, str]], dict[str, str]], user: dict[str, str] | None = None
) -> Callable[[str, dict[str, str]], dict[str, str]]:
    """A ``metadata`` edit for :func:`rewrite` that re-seals the ``simclock`` record.

    The record's digest (C-REP-6) would refuse any edit; a test that reaches a
    check behind it edits the metadata as a tool that means it would.
    """

    def fn(name: str, meta: dict[str, str]) -> dict[str, str]:
        out = edit(name, meta)
        return seal_metadata(out, user or {}) if name == "simclock" else out

    return fn


def rewrite(
    src: Path,
    dst: Path,
    edit: Edit = lambda msgs: msgs,
    *,
    metadata: Callable[[str, dict[str, str]], dict[str, str]] = lambda _n, m: m,
    channel_metadata: Callable[[str, dict[str, str]], dict[str, str]] = lambda _t, m: m,
    chunked: bool = True,
    compression: CompressionType = CompressionType.NONE,
    data_crcs: bool = False,
) -> None:
    """Copy ``src`` to ``dst`` with the official reader/writer, editing the messages."""
    with src.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None
        header = reader.get_header()
        msgs = [m for _s, _c, m in reader.iter_messages(log_time_order=False)]
        metas = [(m.name, dict(m.metadata)) for m in reader.iter_metadata()]
    with dst.open("wb") as f:
        writer = Writer(
            f,
            use_chunking=chunked,
            compression=compression,
            chunk_size=4096,
            enable_data_crcs=data_crcs,
        )
        writer.start(profile=header.profile, library=header.library)
        for sid in sorted(summary.schemas):
            s = summary.schemas[sid]
            assert writer.register_schema(s.name, s.encoding, s.data) == sid
        for cid in sorted(summary.channels):
            c = summary.channels[cid]
            got = writer.register_channel(
                c.topic, c.message_encoding, c.schema_id, channel_metadata(c.topic, c.metadata)
            )
            assert got == cid
        for m in edit(msgs):
            writer.add_message(m.channel_id, m.log_time, m.data, m.publish_time, m.sequence)
        for name, data in metas:
            writer.add_metadata(name, metadata(name, data))
        writer.finish()  # type: ignore[no-untyped-call]
