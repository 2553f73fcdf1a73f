"""What every reader of one kind of recording offers `RecordingReader` (SPEC §5).

Three kinds of input are read: simclock's own recordings (`._own`), other
writers' MCAP files (`._foreign`) and ROS 2 bags (`._bag`). Each is a
`Source`: it builds its own `RecordingInfo` from what it read, delivers its
messages in the order SPEC gives it (total order for simclock recordings
and exports, log-time order with ties in file order for the rest) and
closes what it holds. The raw MCAP records under all three come from
`._raw`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from simclock.core._bus import Message

__all__ = ["RecordingInfo", "Source"]


@dataclass(frozen=True, slots=True)
class RecordingInfo:
    """What a recording says about itself (``simclock info``).

    ``simclock`` is True for files written by [`Recorder`][simclock.Recorder];
    ``seed``, ``fingerprint`` and ``draw_labels`` are only known for those.
    ``topic_counts`` counts bus messages per topic (for foreign files: every
    channel's messages per topic, counted by reading the file when it has
    no statistics). Times are ns. ``recovered`` is the report of
    ``simclock recover`` for a recovered recording (C-REP-7), else ``""``.
    ``container`` is ``"mcap"`` for one MCAP file, ``"rosbag2"`` for a ROS 2
    bag (a directory, or one ``ros2``-profile file, C-ROS-2); ``note`` says
    what a foreign copy of a simclock recording lost (else ``""``).
    """

    path: str
    simclock: bool
    library: str
    seed: int | None
    fingerprint: str | None
    start_ns: int
    end_ns: int
    step_ns: int
    message_count: int
    topic_counts: Mapping[str, int]
    draw_labels: tuple[str, ...]
    chunk_count: int
    compression: str
    metadata: Mapping[str, str] = field(default_factory=dict)
    user_metadata: Mapping[str, str] = field(default_factory=dict)
    recovered: str = ""
    container: str = "mcap"
    note: str = ""

    @property
    def duration_ns(self) -> int:
        """``end_ns - start_ns``."""
        return self.end_ns - self.start_ns


class Source(Protocol):
    """One opened recording of one kind, as `RecordingReader` uses it."""

    path: str

    def info(self) -> RecordingInfo:
        """What the recording says about itself, checked against what was read of it."""
        ...

    def messages(self, start: int | None) -> Iterator[Message]:
        """Messages with ``stamp >= start`` (``None``: all), every check of the kind made."""
        ...

    def close(self) -> None:
        """Release what the source holds (idempotent)."""
        ...
