"""Read simclock's own recordings: chunks in file order, every byte checked (C-REP-1, C-REP-6).

The Recorder wrote the messages in total order, so the chunks are read one
after the other in file order, each message's ``(stamp, sequence)`` is
checked to be strictly greater than the previous one, and the JSON envelopes
of a chunk are decoded in one ``json.loads`` call. No priority queue is
needed, which is why this beats the official reader's log-time-ordered
iteration. Each chunk's CRC is checked before any of its messages is
delivered; the MCAP ``sequence`` must equal the envelope sequence mod
2**32; when the whole file is read, the message count and the fingerprint
(C-X-FP, recomputed from the stored canonical payload text) must match the
metadata. Any violation raises `RecordingError` naming the file and
the byte offset.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

from mcap.records import Message as McapMessage
from mcap.summary import Summary

from simclock.core._bus import Event, Message, checked_message
from simclock.core._errors import SimclockError, SimclockValueError
from simclock.core._names import describe_exception
from simclock.recording._fingerprint import (
    FINGERPRINT_LINE,
    RawPayload,
    canonical_json,
    line_infix,
)
from simclock.recording._format import (
    CLOCK_TOPIC,
    RECORDER_TICK,
    U32,
    RecordingMetadata,
    clock_payload_of,
    draws_topic,
    envelope_payload,
)
from simclock.recording._raw import read_chunk, refuse, unchunked_message_groups
from simclock.recording._source import RecordingInfo

__all__ = ["BUS_KINDS", "DRAW_KEYS", "OTHER_KINDS", "CheckedGroup", "OwnSource", "raw_from_json"]

BUS_KINDS = ("json", "event", "raw")
OTHER_KINDS = ("clock", "draws")  # written by the Recorder, not bus messages
DRAW_KEYS = frozenset({"args", "index", "method", "value"})
_UNCHUNKED_GROUP = 4096
"""Messages per group when a simclock recording without chunks is streamed."""


def raw_from_json(data: Any) -> RawPayload:
    """Inverse of `RawPayload.to_json` (a ``raw`` channel of a simclock recording)."""
    if not isinstance(data, dict) or set(data) != {"data", "encoding", "schema"}:
        raise SimclockValueError(f"not a RawPayload: {data!r}")
    encoding, schema, hexdata = data["encoding"], data["schema"], data["data"]
    if not (isinstance(encoding, str) and isinstance(schema, str) and isinstance(hexdata, str)):
        raise SimclockValueError(f"not a RawPayload: {data!r}")
    return RawPayload(encoding, schema, bytes.fromhex(hexdata))


_DECODE_KIND: dict[str, Callable[[Any], Any]] = {"event": Event.from_json, "raw": raw_from_json}

Group = tuple[int, list[Any]]  # (byte offset of the group, its records)
CheckedGroup = tuple[int, list[Any], list[McapMessage], list[Message], list[bytes]]
"""(offset, records, bus-message records, their checked messages, their trace lines).

See `OwnSource.checked_groups`."""


class OwnSource:
    """Messages and draws of one simclock recording (see the module docstring)."""

    def __init__(
        self,
        path: str,
        stream: IO[bytes],
        summary: Summary,
        meta: RecordingMetadata,
        kinds: Mapping[int, str],
        topics: frozenset[str] | None,
        data_end: int,
        meta_at: int,
        metadata: Mapping[str, str],
    ) -> None:
        self.path = path
        self._metadata = dict(metadata)
        # The metadata record's offset: named when the file disagrees with what it records.
        self._meta_at = meta_at
        self._stream = stream
        self._summary = summary
        self._meta = meta
        self._kinds = dict(kinds)
        self._topics = {cid: summary.channels[cid].topic for cid in kinds}
        self._wanted = topics
        self._data_end = data_end
        self._whole_file_checked = False

    # -- the Source protocol (._source) ------------------------------------------------

    def info(self) -> RecordingInfo:
        """What the metadata records; counts and times are checked when the file is read."""
        meta = self._meta
        chunks = self._summary.chunk_indexes
        return RecordingInfo(
            path=self.path,
            simclock=True,
            library=meta.library,
            seed=meta.seed,
            fingerprint=meta.fingerprint,
            start_ns=meta.start_ns,
            end_ns=meta.end_ns,
            step_ns=meta.step_ns,
            message_count=meta.message_count,
            topic_counts=dict(meta.topics),
            draw_labels=meta.draw_labels if meta.record_draws else (),
            chunk_count=len(chunks),
            compression=",".join(sorted({c.compression or "none" for c in chunks})) or "unchunked",
            metadata=self._metadata,
            user_metadata=meta.user,
            recovered=meta.recovered,
        )

    def close(self) -> None:
        """Close the file handle the source reads its messages with."""
        self._stream.close()

    # -- groups of records --------------------------------------------------------

    def groups(
        self, stream: IO[bytes], *, start: int | None = None, channel: int | None = None
    ) -> Iterator[Group]:
        """``(offset, records)`` in file order.

        Chunked: one group per chunk, its CRC checked, skipping chunks that end
        before ``start`` or (per the chunk index) hold nothing of ``channel``.
        Unchunked (another tool rewrote the file): groups of
        ``_UNCHUNKED_GROUP`` messages; the data-section CRC is checked only
        when the whole file has been read, so callers read it once before
        delivering anything.
        """
        chunks = sorted(self._summary.chunk_indexes, key=lambda c: c.chunk_start_offset)
        for chunk_index in chunks:
            if start is not None and chunk_index.message_end_time < start:
                continue
            offsets = chunk_index.message_index_offsets
            if channel is not None and offsets and channel not in offsets:
                continue
            chunk = read_chunk(
                self.path, stream, chunk_index.chunk_start_offset, need_crc=True,
                limit=self._data_end,
            )  # fmt: skip
            yield chunk.offset, chunk.records
        if chunks:
            return
        yield from unchunked_message_groups(self.path, stream, _UNCHUNKED_GROUP)

    # -- messages -------------------------------------------------------------------

    def messages(self, start: int | None) -> Iterator[Message]:
        """Bus messages with ``stamp >= start`` in total order, checked (C-REP-1, C-REP-6)."""
        if not self._summary.chunk_indexes and not self._whole_file_checked:
            # Unchunked: no chunk CRC to check a group before it is delivered, so the
            # whole file (data CRC, order, count, fingerprint) is checked first, once.
            for _group in self._checked_groups(None):
                pass
            self._whole_file_checked = True
        for _where, _records, _batch, out, _lines in self._checked_groups(start):
            yield from out

    def traced_messages(self) -> Iterator[tuple[Message, bytes]]:
        """Every bus message with its fingerprint line (C-X-FP), checked as `messages` does.

        The line is the one the fingerprint check hashed: stamp, sequence, topic,
        kind and the stored payload text. Two messages with equal lines are equal
        messages (``simclock diff`` compares lines before re-encoding payloads).
        """
        for _where, _records, _batch, out, lines in self.checked_groups():
            yield from zip(out, lines, strict=True)

    def checked_groups(self) -> Iterator[CheckedGroup]:
        """Every group of the whole file with its checked bus messages (C-REP-6).

        ``(offset, records, batch, messages, lines)``: the group's records in
        file order, its bus-message records in order, ``messages[i]`` the
        checked `Message` of ``batch[i]`` and ``lines[i]`` its fingerprint line
        (the pairing needs a source opened without a topic filter). Groups
        come when `messages` would deliver their messages: after the next
        group with bus messages has passed every check, the last ones after
        the end-of-file checks (count, fingerprint); so a consumer of the raw
        records (``export ros2``) reads and checks the file in one pass.
        """
        if not self._summary.chunk_indexes and not self._whole_file_checked:
            for _group in self._checked_groups(None):
                pass
            self._whole_file_checked = True
        return self._checked_groups(None)

    def _checked_groups(self, start: int | None) -> Iterator[CheckedGroup]:
        path = self.path
        meta = self._meta
        kinds = self._kinds
        topics_by_id = self._topics
        wanted = self._wanted
        stats = self._summary.statistics
        chunks = self._summary.chunk_indexes
        if stats is None or stats.chunk_count != len(chunks):
            raise refuse(
                path,
                self._meta_at,
                f"the summary lists {len(chunks)} chunk indexes but its statistics count "
                f"{None if stats is None else stats.chunk_count} chunks; the file is damaged",
            )
        full = start is None
        fingerprint = hashlib.sha256()
        line = FINGERPRINT_LINE
        # A bus message on /clock is a JSON payload in the trace (the channel is CDR).
        infix = {
            cid: line_infix(topics_by_id[cid], "json" if kind == "clock" else kind)
            for cid, kind in kinds.items()
        }
        bus_clock = CLOCK_TOPIC in meta.topics
        # Channels whose JSON payload is decoded back to an object (the rest stay JSON).
        decode_by_channel = {
            cid: _DECODE_KIND[kind] for cid, kind in kinds.items() if kind in _DECODE_KIND
        }
        # A message before the recording's start would make replay time go back.
        last_stamp = meta.start_ns
        last_seq = -1
        count = 0
        held: list[CheckedGroup] = []
        loads = json.loads
        for where, records in self.groups(self._stream, start=start):
            batch: list[McapMessage] = []
            for record in records:
                if type(record) is McapMessage:
                    kind = kinds.get(record.channel_id)
                    if kind in BUS_KINDS:
                        batch.append(record)
                    elif kind == "clock" and bus_clock and record.sequence != RECORDER_TICK:
                        batch.append(record)  # a bus message on /clock (C-BUS-5)
                    elif kind not in OTHER_KINDS:
                        raise refuse(
                            path,
                            where,
                            f"message on channel id {record.channel_id} of unknown kind "
                            f"{kind!r}; a simclock recording has only "
                            f"{[*BUS_KINDS, *OTHER_KINDS]} channels",
                        )
            if not batch:
                # Nothing to check across groups: it waits with the held group (so that
                # group's messages wait for the next bus message's order check, as ever).
                held.append((where, records, batch, [], []))
                continue
            enveloped = [r for r in batch if kinds[r.channel_id] != "clock"] if bus_clock else batch
            try:
                envelopes = loads(b"[" + b",".join([r.data for r in enveloped]) + b"]")
            except ValueError:
                envelopes = []
                for i, r in enumerate(enveloped):
                    try:
                        envelopes.append(loads(r.data))
                    except ValueError as exc:
                        raise refuse(
                            path,
                            where,
                            f"message {i} of the chunk (log_time {r.log_time}) is not valid "
                            f"JSON ({exc})",
                        ) from None
            if enveloped is not batch:
                it = iter(envelopes)
                envelopes = [None if kinds[r.channel_id] == "clock" else next(it) for r in batch]
            out: list[Message] = []
            lines: list[bytes] = []
            for record, decoded in zip(batch, envelopes, strict=True):
                stamp = record.log_time
                clock_text = None
                envelope = decoded
                if envelope is None:
                    envelope, clock_text = self._bus_clock(record, last_seq, where)
                if type(envelope) is not dict or envelope.keys() != {"payload", "sequence"}:
                    raise refuse(
                        path,
                        where,
                        f"message at {stamp} ns is not a simclock envelope: {record.data[:80]!r}",
                    )
                seq = envelope["sequence"]
                if (
                    type(seq) is not int
                    or seq < 0
                    or record.sequence != seq & U32
                    or record.publish_time != stamp
                ):
                    raise refuse(
                        path,
                        where,
                        f"message at {stamp} ns has MCAP sequence {record.sequence}, "
                        f"publish_time {record.publish_time} but envelope sequence {seq!r}; "
                        "the file is damaged",
                    )
                if stamp < last_stamp or (stamp == last_stamp and seq <= last_seq):
                    raise refuse(
                        path,
                        where,
                        f"message sequence={seq} at {stamp} ns is out of order (previous: "
                        f"sequence={last_seq} at {last_stamp} ns, start {meta.start_ns} ns); a "
                        "simclock recording must be in total order (stamp, sequence)",
                    )
                last_stamp = stamp
                last_seq = seq
                cid = record.channel_id
                if full:
                    try:
                        text = clock_text or envelope_payload(record.data)
                    except ValueError as exc:
                        raise refuse(path, where, f"message at {stamp} ns: {exc}") from None
                    lines.append(line % (stamp, seq, infix[cid], text))
                elif stamp < start:  # type: ignore[operator]
                    continue
                topic = topics_by_id[cid]
                if wanted is not None and topic not in wanted:
                    continue
                payload = envelope["payload"]
                decode = decode_by_channel.get(cid)
                if decode is not None:
                    try:
                        payload = decode(payload)
                    except (SimclockError, KeyError, TypeError, ValueError) as exc:
                        raise refuse(
                            path, where, f"{kinds[cid]} sequence={seq}: {describe_exception(exc)}"
                        ) from None
                # Every field is checked above: a str topic, an int log time >= 0, an
                # int sequence >= 0 (Message's own checks would be a third of the read).
                out.append(checked_message(topic, stamp, seq, payload, None))
            count += len(batch)
            if full:
                fingerprint.update(b"".join(lines))
            # Invariant: a chunk's messages are delivered only after the whole chunk and
            # the one before it passed every check; the last chunk also waits for the
            # end-of-file checks below.
            yield from held
            held = [(where, records, batch, out, lines)]
        if full:
            if count != meta.message_count:
                raise refuse(
                    path,
                    self._meta_at,
                    f"{count} bus messages in the chunks but the metadata records "
                    f"{meta.message_count}; the file is damaged",
                )
            if fingerprint.hexdigest() != meta.fingerprint:
                raise refuse(
                    path,
                    self._meta_at,
                    f"the replayed trace has fingerprint {fingerprint.hexdigest()} but the "
                    f"metadata records {meta.fingerprint}; the file was altered",
                )
        yield from held

    def _bus_clock(
        self, record: McapMessage, last_seq: int, where: int
    ) -> tuple[dict[str, Any], bytes]:
        """The envelope and canonical payload text of a bus message on ``/clock``.

        Its MCAP sequence is the bus sequence mod 2**32; the full one is the value
        with those low bits nearest the previous message's (the fingerprint
        check at the end refuses a file where that guess is wrong).
        """
        try:
            payload = clock_payload_of(record.data)
        except ValueError as exc:
            raise refuse(self.path, where, f"/clock at {record.log_time} ns: {exc}") from None
        base = max(last_seq, 0)
        step = (record.sequence - base) % (U32 + 1)
        if step > U32 // 2:
            step -= U32 + 1
        seq = base + step if base + step >= 0 else base + step + U32 + 1
        text = canonical_json(payload).encode()
        return {"payload": payload, "sequence": seq}, text

    # -- draws ----------------------------------------------------------------------

    def draws(self, label: str, stream: IO[bytes]) -> Iterator[dict[str, Any]]:
        """The persisted draws of stream ``label``, in draw order (C-REP-3).

        Streams the chunks that hold the label's channel, one at a time, with
        ``stream`` (its own file handle, so it can run alongside messages).
        """
        topic = draws_topic(label)
        ids = [cid for cid, t in self._topics.items() if t == topic and self._kinds[cid] == "draws"]
        if len(ids) != 1:
            raise refuse(
                self.path,
                self._meta_at,
                f"the metadata lists persisted draws of label {label!r} but the file has "
                + (f"no channel {topic!r}" if not ids else f"{len(ids)} channels {topic!r}")
                + "; the file is damaged",
            )
        cid = ids[0]
        expected = 0
        if not self._summary.chunk_indexes:
            for _group in self.groups(stream):
                pass  # unchunked: the whole file is checked before the first draw
        for where, records in self.groups(stream, channel=cid):
            for msg in records:
                if type(msg) is not McapMessage or msg.channel_id != cid:
                    continue
                try:
                    draw = json.loads(msg.data)
                    ok = (
                        isinstance(draw, dict)
                        and draw.keys() == DRAW_KEYS
                        and draw["index"] == expected
                        and isinstance(draw["args"], list)
                    )
                except ValueError:
                    ok = False
                if not ok:
                    raise refuse(
                        self.path,
                        where,
                        f"draw {expected} of label {label!r} (log_time {msg.log_time}) is "
                        f"malformed or out of order: {msg.data[:80]!r}",
                    )
                expected += 1
                yield draw
        stats = self._summary.statistics
        recorded = stats.channel_message_counts.get(cid) if stats is not None else None
        if recorded is not None and recorded != expected:
            raise refuse(
                self.path,
                self._meta_at,
                f"{expected} draws of label {label!r} in the file but the summary counts "
                f"{recorded}; the file is damaged",
            )
