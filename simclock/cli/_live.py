"""``--live [HOST:PORT]`` of ``simclock run`` and ``simclock replay``: the Foxglove live view.

The option takes ``HOST:PORT``, ``:PORT``, ``PORT`` or ``HOST``; alone it
is ``127.0.0.1:8765``, the Foxglove app's default. Only a host the user
writes can be other than loopback, and the command says on stderr that the
view is then open to whoever reaches that address (the protocol has no
authentication). The view's address and the WebSocket subprotocol a client must
offer (``foxglove.sdk.v1``), and at the end what it could not show, are printed on
stderr: stdout stays the command's own output.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from simclock.cli._common import CommandError
from simclock.core._errors import SimclockValueError
from simclock.recording._live import (
    DEFAULT_PORT,
    SUBPROTOCOL,
    LiveView,
    is_loopback,
    parse_address,
)

__all__ = ["add_live_argument", "close_live", "open_live"]


def add_live_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--live [HOST:PORT]`` to ``parser``; ``what`` is the thing shown (``the run``)."""
    parser.add_argument(
        "--live",
        nargs="?",
        const="",
        metavar="HOST:PORT",
        help=(
            f"show {what} live in the Foxglove app: a Foxglove WebSocket server on "
            f"HOST:PORT (default 127.0.0.1:{DEFAULT_PORT}; port 0: any free port), "
            f"WebSocket subprotocol {SUBPROTOCOL}"
        ),
    )


def open_live(args: argparse.Namespace, *, clock_period_ns: int | None, start_ns: int) -> LiveView:
    """Start the view ``args.live`` names; a refused address is a `CommandError`."""
    command = getattr(args, "command_name", args.command)
    try:
        host, port, given = parse_address(args.live)
    except SimclockValueError as exc:
        raise CommandError(str(exc)) from None
    remote = given and not is_loopback(host)
    view = LiveView(
        host, port, clock_period_ns=clock_period_ns, start_ns=start_ns, allow_remote=remote
    )
    if remote:
        print(
            f"simclock {command}: warning: the live view listens on {host}, not on loopback: "
            "anyone who reaches that address sees the run (no authentication)",
            file=sys.stderr,
        )
    print(
        f"live: {view.url} (WebSocket subprotocol {view.subprotocol}; Foxglove app: Open "
        "connection, Foxglove WebSocket)",
        file=sys.stderr,
        flush=True,
    )
    return view


def close_live(view: Any, end_ns: int | None) -> None:
    """Send the last time (``end_ns``, when the run got there), stop the server, report skips."""
    if view is None:
        return
    if end_ns is not None:
        view.time_to(end_ns)
    view.close()
    if view.skipped:
        print(
            f"live: {view.skipped} message{'s' if view.skipped != 1 else ''} not shown "
            f"({view.problem})",
            file=sys.stderr,
        )
