"""Open a recording: check its envelope, tell simclock's own format from a foreign file (§5).

`open_recording` (and `RecordingReader`, its class) reads the
parts every reader needs (magic at both ends, footer, summary and its CRC,
header, metadata records, all through `._raw`), decides which `Source`
(`._source`) reads the file, and takes the `RecordingInfo` that source builds:

* a **simclock recording** (`._own`) has the header profile
  ``simclock`` *and* a ``simclock`` metadata record whose digest matches
  (C-REP-6). One without the other is refused: a damaged header or
  metadata name never turns a simclock recording into a foreign file;
* any other MCAP file is **foreign** (`._foreign`, C-REP-5);
* a rosbag2 directory, or one file with the header profile ``ros2``, is a
  **bag** (`._bag`, C-ROS-2).

Every refusal is a `RecordingError` naming the file and the byte
offset.
"""

from __future__ import annotations

import io
import itertools
import os
import threading
from collections.abc import Iterable, Iterator
from typing import IO, Any, Final

import yaml
from mcap.records import Channel, Header, Metadata, Schema
from mcap.records import Message as McapMessage
from mcap.summary import Summary

from simclock.core._bus import Message
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._names import describe_exception, exact_str, safe_repr, type_name, typed_repr
from simclock.core._timeint import check_time_ns
from simclock.recording._bag import BagError, BagSource, SimclockRecord, read_metadata
from simclock.recording._closing import Closing
from simclock.recording._foreign import ForeignSource
from simclock.recording._format import (
    KIND_KEY,
    METADATA_NAME,
    PROFILE,
    START_METADATA_NAME,
    USER_METADATA_NAME,
    RecordingMetadata,
)
from simclock.recording._own import BUS_KINDS, OTHER_KINDS, CheckedGroup, OwnSource
from simclock.recording._raw import (
    MAGIC,
    RecordingError,
    check_data_section,
    check_footer,
    read_record,
    read_summary,
    records_in_file_order,
    refuse,
)
from simclock.recording._source import RecordingInfo, Source

ROS2_PROFILE: Final = "ros2"
"""The MCAP header profile of a ROS 2 bag's files (C-ROS-2)."""

__all__ = [
    "ROS2_PROFILE",
    "BagError",
    "RecordingError",
    "RecordingInfo",
    "RecordingReader",
    "open_recording",
]


# MCAP channel ids are uint16: a filter naming more topics than a file can hold
# is refused, and an endless iterable is never read to its (absent) end.
MAX_TOPICS: Final = 1 << 16


def check_topics(topics: Iterable[str] | None) -> frozenset[str] | None:
    """``topics`` as a frozenset of plain ``str`` (``None`` stays ``None``).

    The caller's iterable is read once, at most `MAX_TOPICS` + 1 items;
    an iterable that raises while being read, an item that is not a ``str``
    and too many items are refused (``TypeError``/``ValueError``). Items are
    copied to plain ``str`` before they are hashed, so a ``str`` subclass's
    ``__hash__``/``__eq__`` never run.
    """
    if topics is None:
        return None
    expected = "topics must be an iterable of topic names or None"
    if isinstance(topics, str | bytes) or not isinstance(topics, Iterable):
        raise SimclockTypeError(
            f"{expected}, got {safe_repr(topics)}; write topics=['/a'] for one topic"
        )
    try:
        items = list(itertools.islice(topics, MAX_TOPICS + 1))
    except Exception as exc:  # the caller's __iter__/__next__, whatever it raises
        raise SimclockTypeError(
            f"{expected}, got {typed_repr(topics)}, which raised {type_name(exc)} when read"
        ) from None
    if len(items) > MAX_TOPICS:
        raise SimclockValueError(
            f"topics must name at most {MAX_TOPICS} topics (an MCAP file has no more "
            f"channels), got more from a {type(topics).__name__}"
        )
    for topic in items:
        if not isinstance(topic, str):
            raise SimclockTypeError(f"topics must hold str, got {safe_repr(topic)}")
    return frozenset(exact_str(topic) for topic in items)


class RecordingReader(Closing):
    """Stream the bus messages of an MCAP recording in total order (SPEC §5).

    ``RecordingReader(path, topics=None)`` opens and checks the file's
    envelope (magic, footer, summary, header, metadata) at once, so a
    truncated file or a file that is not MCAP is refused before anything is
    delivered. ``messages(start_ns=None)`` is a generator of
    [`Message`][simclock.Message] (checks: see `_own`, `_foreign`);
    ``draws(label)`` yields the persisted draws of one random stream in
    draw order. Close with `close` or a ``with`` block.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, topics: Iterable[str] | None = None
    ) -> None:
        if not isinstance(path, str | os.PathLike):
            raise SimclockTypeError(f"path must be a str or os.PathLike, got {safe_repr(path)}")
        self.path = os.fspath(path)
        self._topics = check_topics(topics)
        self._files: list[IO[bytes]] = []
        self._closed = False
        self._lock = threading.Lock()
        self._bag: BagSource | None = None
        self._own: OwnSource | None = None
        self._foreign: ForeignSource | None = None
        self._source: Source | None = None
        self._ros2_record: SimclockRecord | None = None
        self._profile = ""
        self._library = ""
        if not self._as_part and os.path.isdir(self.path):
            self._load_bag(read_metadata(self.path))
            return
        try:
            stream = self._open("RecordingReader()")
        except FileNotFoundError:
            raise SimclockValueError(
                f"{self.path}: no such file; pass the path of an .mcap recording or of a "
                "rosbag2 directory"
            ) from None
        except OSError as exc:
            raise refuse(self.path, None, f"cannot be read ({describe_exception(exc)})") from None
        try:
            _refuse_other_formats(self.path, stream)
            self._load(stream)
        except BaseException:
            self.close()
            raise
        if not self._as_part and self._profile == ROS2_PROFILE:
            # One ros2-profile file: a bag of that one file (C-ROS-2), read through a
            # reader of the file (opened again: the envelope is small).
            with self._lock:
                files, self._files = self._files, []
            for f in files:
                f.close()
            self._own = self._foreign = self._source = None
            part = _PartReader(self.path)
            try:
                self._init_bag([part], compressed=part._rosbag2_mode() == "message")
            except BaseException:
                part.close()
                raise
            return
        self._check_wanted()

    _as_part = False
    info: RecordingInfo

    def _load_bag(self, found: tuple[list[str], str]) -> None:
        paths, mode = found
        parts: list[RecordingReader] = []
        part: RecordingReader
        try:
            for file in paths:
                part = _PartReader(file)
                parts.append(part)
                if part.is_simclock:
                    raise BagError(
                        f"{self.path}: lists {os.path.basename(file)}, a simclock recording; "
                        "pass that .mcap file itself, or export it with simclock export ros2"
                    )
            self._init_bag(parts, compressed=mode == "message")
        except BaseException:
            for part in parts:
                part.close()
            raise

    def _init_bag(self, parts: list[RecordingReader], *, compressed: bool) -> None:
        bag = BagSource(
            self.path, parts, compressed=compressed, topics=self._topics, container="rosbag2"
        )
        self._bag = bag
        self.info = self._use(bag)
        self._check_wanted()

    def _use(self, source: Source) -> RecordingInfo:
        """Read through ``source`` from now on; its info."""
        self._source = source
        return source.info()

    def _check_wanted(self) -> None:
        """Refuse topics asked for that the recording does not have (C-ROS-2)."""
        wanted = self._topics
        if wanted is None:
            return
        have = self.info.topic_counts
        absent = sorted(wanted - set(have))
        if absent:
            self.close()
            what = "bus topics" if self.info.simclock else "topics"
            listed = ", ".join(sorted(have)) or "none"
            raise SimclockValueError(
                f"topics: {', '.join(map(repr, absent))} not in {self.path} (its {what}: "
                f"{listed}); ask for topics that simclock info lists"
            )

    # -- opening --------------------------------------------------------------------

    def _open(self, what: str) -> IO[bytes]:
        self.check_open(what)
        stream = open(self.path, "rb")  # noqa: SIM115 - closed in close()
        with self._lock:
            self._files.append(stream)
        return stream

    def _load(self, stream: IO[bytes]) -> None:
        path = self.path
        size = stream.seek(0, io.SEEK_END)
        footer = check_footer(path, stream, size, need_crc=False)
        header = read_record(path, stream, len(MAGIC), "Header")
        if not isinstance(header, Header):
            raise refuse(path, len(MAGIC), "the first record is not a Header")
        summary = read_summary(path, stream, footer.summary_start)
        data_end = footer.summary_start or footer.offset
        own = header.profile == PROFILE
        if own:  # simclock writes no trailing bytes in a record: a longer one is damaged
            read_record(path, stream, len(MAGIC), "Header", exact=True)
        records = self._metadata_records(stream, summary, exact=own)
        self._profile = header.profile
        self._library = header.library
        named = [offset for offset, record in records if record.name == METADATA_NAME]
        if header.profile == ROS2_PROFILE and named:
            # A ROS 2 bag's file that carries simclock metadata (an export, or a copy by
            # another tool): read as a bag, never mistaken for damage (C-ROS-2).
            self._ros2_record = self._simclock_record(records)
        elif own != bool(named):
            raise refuse(
                path,
                len(MAGIC) if own else named[0],
                f"the header profile is {header.profile!r} but the file "
                + ("has no" if own else "has a")
                + f" {METADATA_NAME!r} metadata record; a simclock recording has both "
                "(the file is damaged)",
            )
        self._summary = summary
        self._records = records
        if own:
            if footer.summary_crc == 0:
                raise refuse(path, footer.offset + 25, "the footer stores no summary CRC; damaged")
            self.info = self._load_own(stream, footer.offset, summary, records, data_end)
        else:
            self.info = self._load_foreign(header, summary, size, data_end, records)

    def _simclock_record(self, records: list[tuple[int, Metadata]]) -> SimclockRecord:
        by_name: dict[str, list[tuple[int, Metadata]]] = {}
        for offset, record in records:
            by_name.setdefault(record.name, []).append((offset, record))
        found = by_name[METADATA_NAME]
        users = by_name.get(USER_METADATA_NAME, [])
        if len(found) != 1 or len(users) > 1:
            raise refuse(
                self.path, found[-1][0], f"{len(found)} {METADATA_NAME!r} and {len(users)} "
                f"{USER_METADATA_NAME!r} metadata records; a bag holds one of each; damaged",
            )  # fmt: skip
        offset, record = found[0]
        try:
            user = users[0][1].metadata if users else {}
            meta = RecordingMetadata.from_mcap(record.metadata, user)
        except ValueError as exc:
            raise refuse(self.path, offset, f"simclock metadata is invalid: {exc}") from None
        return SimclockRecord(offset, meta, record.metadata)

    def _metadata_records(
        self, stream: IO[bytes], summary: Summary | None, *, exact: bool
    ) -> list[tuple[int, Metadata]]:
        """``(offset, record)`` of every Metadata record, through the index when there is one."""
        out: list[tuple[int, Metadata]] = []
        # A summary without metadata indexes means no metadata: the whole file is not
        # read at open for it (simclock recordings always index theirs).
        if summary is not None:
            for index in summary.metadata_indexes:
                record = read_record(self.path, stream, index.offset, "Metadata", exact=exact)
                if not isinstance(record, Metadata) or record.name != index.name:
                    raise refuse(
                        self.path, index.offset, f"the metadata index names {index.name!r} "
                        "but no such Metadata record is there",
                    )  # fmt: skip
                out.append((index.offset, record))
            return out
        for where, _in_chunk, record in records_in_file_order(self.path, stream):
            if isinstance(record, Metadata):
                out.append((where, record))
        return out

    def _load_own(
        self,
        stream: IO[bytes],
        footer_at: int,
        summary: Summary | None,
        records: list[tuple[int, Metadata]],
        data_end: int,
    ) -> RecordingInfo:
        path = self.path
        if summary is None or summary.statistics is None:
            raise refuse(path, footer_at, "simclock recording without a summary section; damaged")
        by_name: dict[str, list[tuple[int, Metadata]]] = {}
        for offset, record in records:
            by_name.setdefault(record.name, []).append((offset, record))
        # The start record (for simclock recover) is superseded by the final one: not read.
        unknown = sorted(set(by_name) - {METADATA_NAME, USER_METADATA_NAME, START_METADATA_NAME})
        counts = [len(by_name.get(name, ())) for name in (METADATA_NAME, USER_METADATA_NAME)]
        counts.append(len(by_name.get(START_METADATA_NAME, ())))
        first = records[0][0]
        if unknown or counts[0] != 1 or counts[1] > 1 or counts[2] > 1:
            raise refuse(
                path, first, f"metadata records {sorted(by_name)}: a simclock recording has one "
                f"{METADATA_NAME!r} and at most one {USER_METADATA_NAME!r}; damaged",
            )  # fmt: skip
        offset, record = by_name[METADATA_NAME][0]
        user = by_name.get(USER_METADATA_NAME, [(0, None)])[0][1]
        try:
            meta = RecordingMetadata.from_mcap(record.metadata, user.metadata if user else {})
        except ValueError as exc:
            raise refuse(path, offset, f"simclock metadata is invalid: {exc}") from None
        if meta.error:
            raise refuse(
                path,
                offset,
                f"the recording is incomplete (the Recorder reported: {meta.error}); fix the "
                "run and record it again",
            )
        kinds: dict[int, str] = {}
        for cid, channel in summary.channels.items():
            kind = channel.metadata.get(KIND_KEY, "")
            if kind not in (*BUS_KINDS, *OTHER_KINDS):
                raise refuse(
                    path, footer_at, f"channel {cid} ({channel.topic!r}) has unknown kind {kind!r}"
                )
            kinds[cid] = kind
        if summary.chunk_indexes:
            chunks = {c.chunk_start_offset: c.chunk_length for c in summary.chunk_indexes}
            indexed = {m.offset for m in summary.metadata_indexes}
            for c in summary.chunk_indexes:
                indexed.update(c.message_index_offsets.values())
            check_data_section(path, stream, data_end, chunks, indexed)
        self._meta = meta
        own = OwnSource(
            path, stream, summary, meta, kinds, self._topics, data_end, offset, record.metadata
        )
        self._own = own
        return self._use(own)

    def _load_foreign(
        self,
        header: Header,
        summary: Summary | None,
        size: int,
        data_end: int,
        records: list[tuple[int, Metadata]],
    ) -> RecordingInfo:
        user = {
            k: v for _o, r in records if r.name == USER_METADATA_NAME for k, v in r.metadata.items()
        }
        source = ForeignSource(
            self.path, summary, size, data_end, self._topics, lambda: self._open("messages()"),
            library=header.library, user_metadata=user,
        )  # fmt: skip
        self._foreign = source
        return self._use(source)

    # -- one file of a bag (see _bag.Part) ---------------------------------------------

    def _part_records(self, start: int | None) -> Iterator[tuple[int, McapMessage]]:
        """Every message record of a foreign file, log-time order (see ``ForeignSource``)."""
        assert self._foreign is not None
        return self._foreign.records(start)

    def _part_channel(self, cid: int, where: int | None) -> tuple[Channel, Schema | None]:
        """A foreign file's channel ``cid`` and its schema."""
        assert self._foreign is not None
        return self._foreign.channel_and_schema(cid, where)

    def _part_counts(self) -> tuple[dict[str, int], int, int, int]:
        """A foreign file's messages per topic, total, first and last log time."""
        assert self._foreign is not None
        return self._foreign.topic_counts()

    def _part_channels(self) -> list[tuple[Channel, Schema | None]]:
        """Every channel of a foreign file with its schema."""
        assert self._foreign is not None
        return self._foreign.channels()

    def _rosbag2_mode(self) -> str:
        """``compression_mode`` of the ``rosbag2`` metadata record ROS 2 writers add, or ``""``.

        A bag's file read alone has no ``metadata.yaml``; this record repeats it.
        """
        for _o, record in self._records:
            if record.name == "rosbag2":
                try:
                    info = yaml.safe_load(record.metadata.get("serialized_metadata", ""))
                except yaml.YAMLError:
                    return ""
                if isinstance(info, dict):
                    info = info.get("rosbag2_bagfile_information", info)
                    return str(info.get("compression_mode") or "").lower()
        return ""

    def _checked_groups(self) -> Iterator[CheckedGroup]:
        """The groups of the whole recording with their checked messages (`OwnSource`)."""
        self.check_open("export")
        assert self._own is not None and self._topics is None  # export opens its own reader
        return self._own.checked_groups()

    def _traced_messages(self) -> Iterator[tuple[Message, bytes | None]]:
        """`messages` with each message's fingerprint line where the source has one.

        A simclock recording read whole gives the lines its check hashed
        (`OwnSource.traced_messages`); other inputs give ``None``.
        """
        self.check_open("messages()")
        if self._own is not None and self._topics is None:
            return self._own.traced_messages()
        return ((message, None) for message in self.messages())

    def _own_metadata_records(self) -> dict[str, dict[str, str]]:
        """The ``simclock`` and ``simclock.user`` records of a simclock recording, by name."""
        return {
            r.name: dict(r.metadata)
            for _o, r in self._records
            if r.name in (METADATA_NAME, USER_METADATA_NAME)
        }

    # -- public ---------------------------------------------------------------------

    @property
    def is_simclock(self) -> bool:
        """True for files written by [`Recorder`][simclock.Recorder] and their ROS 2 exports."""
        return self._own is not None or (self._bag is not None and self._bag.record is not None)

    @property
    def is_bag(self) -> bool:
        """True for a ROS 2 bag: a rosbag2 directory or a ``ros2``-profile file (C-ROS-2)."""
        return self._bag is not None

    @property
    def summary(self) -> Summary | None:
        """The file's summary section (``None`` when it has none)."""
        return self._summary

    def check_open(self, what: str) -> None:
        """``SimclockRuntimeError`` naming ``what`` once `close` has run."""
        if self._closed:
            raise SimclockRuntimeError(
                f"{what} on a closed recording {self.path!r}; open a new ReplayClock"
            )

    def close(self) -> None:
        """Close every file handle this reader opened (idempotent)."""
        with self._lock:
            self._closed = True
            files, self._files = self._files, []
        for f in files:
            f.close()
        if self._source is not None:
            self._source.close()

    def messages(self, start_ns: int | None = None) -> Iterator[Message]:
        """Bus messages with ``stamp >= start_ns`` in recorded total order (C-REP-1).

        Raises [`RecordingError`][simclock.RecordingError] where the file is found bad; every
        message yielded before that came from a chunk that passed its checks.
        """
        start = None if start_ns is None else check_time_ns(start_ns, "start_ns")
        self.check_open("messages()")
        assert self._source is not None  # set by __init__ or it raised
        return self._source.messages(start)

    def draws(self, label: str) -> Iterator[dict[str, Any]]:
        """The persisted draws of stream ``label``, in draw order (C-REP-3)."""
        if self._bag is not None and self._bag.record is not None:
            self.check_open("draws()")
            return self._bag.draws(label)
        if self._own is None:
            raise SimclockRuntimeError(f"{self.path}: a foreign file has no persisted draws")
        return self._own.draws(label, self._open("draws()"))


class _PartReader(RecordingReader):
    """One MCAP file of a ROS 2 bag: read as a file, never as a bag itself."""

    _as_part = True


_ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
_SQLITE_MAGIC: Final = b"SQLite format 3\x00"


def _refuse_other_formats(path: str, stream: IO[bytes]) -> None:
    """The files of a ROS 2 bag that are not MCAP, named for what they are (C-ROS-2)."""
    stream.seek(0)
    head = stream.read(len(_SQLITE_MAGIC))
    if head.startswith(_ZSTD_MAGIC):
        raise BagError(
            f"{path}: a zstd-compressed file, not MCAP (a file of a bag with compression_mode: "
            "file); decompress it (zstd -d) or convert the bag with ros2 bag convert"
        )
    if head == _SQLITE_MAGIC:
        raise BagError(
            f"{path}: a sqlite3 database (a rosbag2 .db3 file), not MCAP; convert the bag to "
            "MCAP storage (ros2 bag convert, storage_id: mcap) and replay the result"
        )


def open_recording(
    path: str | os.PathLike[str], *, topics: Iterable[str] | None = None
) -> RecordingReader:
    """Open ``path`` with the reader its content needs (simclock's own or foreign)."""
    return RecordingReader(path, topics=topics)
