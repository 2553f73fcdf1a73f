"""The ``simclock`` console script.

Each sub-command lives in its own private module exposing
``register(subparsers) -> None``; the module adds its parser and sets
``func=handler`` where ``handler(args) -> int`` returns the exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

# Modules that contribute sub-commands, in the order their help is listed.
_COMMAND_MODULES: tuple[str, ...] = (
    "simclock.cli._records",
    "simclock.cli._run",
    "simclock.cli._mcap",
    "simclock.cli._recover",
    "simclock.cli._sweep",
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every registered sub-command."""
    parser = argparse.ArgumentParser(
        prog="simclock", description="Deterministic simulation clock tools."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (2 on usage errors)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        result: int = func(args)
    except Exception as exc:
        # The CLI rule: a refusal is one line on stderr and exit 2, never a traceback.
        # Handlers report their own errors; this is the net for what slips past them.
        print(f"simclock {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    return result


def _one_line(exc: BaseException) -> str:
    """``exc`` as one bounded line: its type when it is not a simclock error, then its text."""
    from simclock.core import describe_exception
    from simclock.core._errors import SimclockError
    from simclock.core._failure import exception_message

    if isinstance(exc, SimclockError):
        return " ".join(exception_message(exc).split())[:500]
    return describe_exception(exc, limit=500)


if __name__ == "__main__":
    raise SystemExit(main())
