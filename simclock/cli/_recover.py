"""``simclock recover IN -o OUT``: save what a recording cut short still holds (C-REP-7).

Writes ``OUT``: a valid recording of every complete chunk of ``IN``, marked as
recovered in its metadata (``simclock info OUT`` shows the report), and prints
one line saying what was kept and what was lost. Exit 0 on success, 2 when
nothing can be recovered (the message names the file and the offset).
"""

from __future__ import annotations

import argparse
from typing import Any

from simclock.cli._common import add_command
from simclock.recording._recover import recover

__all__ = ["handler_recover", "register"]


def register(subparsers: Any) -> None:
    """Add ``recover`` to the ``simclock`` parser."""
    parser = add_command(
        subparsers,
        "recover",
        handler_recover,
        help="save every complete chunk of a recording cut short (crash, full disk)",
    )
    parser.add_argument("file", help="the damaged .mcap recording")
    parser.add_argument("-o", "--output", required=True, help="where to write the recovered file")


def handler_recover(args: argparse.Namespace) -> int:
    """``simclock recover IN -o OUT``."""
    report = recover(args.file, args.output)
    print(report.summary())
    return 0
