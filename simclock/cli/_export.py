"""``simclock export ros2 IN.mcap -o DIR``: a recording as a ROS 2 bag (C-ROS-1).

Writes the rosbag2 directory ``DIR`` (``metadata.yaml`` and one MCAP file,
profile ``ros2``, every channel ``cdr`` with its ``ros2msg`` definition), see
`simclock.export_ros2`. Prints the bag's path and what it holds; exit
2 with one line when the recording cannot be read or ``DIR`` exists.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from simclock.core._errors import SimclockError

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``export`` (one format: ``ros2``) to the ``simclock`` parser."""
    export = subparsers.add_parser(
        "export", help="convert a recording for other tools (ros2: a rosbag2 directory)"
    )
    formats = export.add_subparsers(dest="format", metavar="FORMAT", required=True)
    ros2 = formats.add_parser(
        "ros2",
        help="write a rosbag2 directory that ROS 2 tools (ros2 bag, rosbags) read",
        description="Write a simclock recording as a rosbag2 directory (MCAP storage).",
    )
    ros2.add_argument("file", help="a recording made by simclock (simclock run --out)")
    ros2.add_argument("-o", "--output", required=True, metavar="DIR", help="new bag directory")
    ros2.set_defaults(func=handler_export_ros2)


def handler_export_ros2(args: argparse.Namespace) -> int:
    """``simclock export ros2 FILE -o DIR``."""
    from simclock.recording._export import export_ros2
    from simclock.recording._reader import RecordingReader

    try:
        out = export_ros2(args.file, args.output)
        with RecordingReader(out) as reader:
            info = reader.info
    except SimclockError as exc:
        print(f"simclock export: error: {exc}", file=sys.stderr)
        return 2
    print(f"bag: {out} (rosbag2, MCAP storage, profile ros2)")
    print(
        f"messages: {info.message_count} bus messages on {len(info.topic_counts)} topics, "
        "plus /clock" + (" and persisted draws" if info.draw_labels else "")
    )
    print(f"fingerprint: {info.fingerprint}")
    return 0
