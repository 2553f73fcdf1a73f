"""``simclock recover IN -o OUT``: save what a recording cut short still holds (C-REP-7).

Writes ``OUT``: a valid recording of every complete chunk of ``IN``, marked as
recovered in its metadata (``simclock info OUT`` shows the report), and prints
one line saying what was kept and what was lost. Exit 0 on success, 2 when
nothing can be recovered (the message names the file and the offset).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from simclock.core._errors import SimclockError
from simclock.recording._recover import recover

__all__ = ["handler_recover", "register"]


def register(subparsers: Any) -> None:
    """Add ``recover`` to the ``simclock`` parser."""
    parser = subparsers.add_parser(
        "recover", help="save every complete chunk of a recording cut short (crash, full disk)"
    )
    parser.add_argument("file", help="the damaged .mcap recording")
    parser.add_argument("-o", "--output", required=True, help="where to write the recovered file")
    parser.set_defaults(func=handler_recover)


def handler_recover(args: argparse.Namespace) -> int:
    """``simclock recover IN -o OUT``."""
    try:
        report = recover(args.file, args.output)
    except SimclockError as exc:
        print(f"simclock recover: error: {exc}", file=sys.stderr)
        return 2
    print(report.summary())
    return 0
