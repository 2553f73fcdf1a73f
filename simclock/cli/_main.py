"""The ``simclock`` console script: one table of commands, each module loaded when it runs.

`COMMANDS` maps every command name to the private module that
implements it and its one-line help. The module is imported only when its
command runs (or its ``--help`` is asked for), so ``simclock --help`` and
``simclock --version`` import neither the sweeps (Dask), the recording layer,
MuJoCo nor rich. Adding a command is one line in the table and a module with
``register(subparsers) -> None``, which adds the command's parser (with
`simclock.cli._common.add_command`, or ``add_parser`` and
``set_defaults(func=handler)``) where ``handler(args) -> int`` returns the
exit status. A module may register several commands of the table (``run``
and ``timeline`` share one) and may define ``rewrite_argv(args) -> args``
to rewrite the words after its command name before parsing (``sweep`` uses
it for its ``simclock sweep SCENARIO`` shorthand).

Exit status: the handler's, 2 for every refusal (one line on stderr,
``simclock <command>: error: ...``), 141 when stdout is a pipe whose reader
has gone (``| head``): the output stops quietly, as ``cat``'s would.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["COMMANDS", "build_parser", "main", "version"]

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module, one-line help), in the order `simclock --help` lists them.
    "records-demo": ("simclock.cli._records", "print the SPEC §12 sampling-record fixture as JSON"),
    "run": ("simclock.cli._run", "run a scenario file (TOML): its metrics and fingerprint"),
    "timeline": ("simclock.cli._run", "plot nominal vs actual acquisition and delivery of a run"),
    "info": ("simclock.cli._mcap", "describe a recording: seed, duration, topics, fingerprint"),
    "replay": ("simclock.cli._mcap", "replay a recording and print its messages in total order"),
    "diff": ("simclock.cli._mcap", "compare two recordings; exit 1 and show the first divergence"),
    "export": ("simclock.cli._export", "convert a recording for other tools (ros2: a rosbag2 bag)"),
    "recover": ("simclock.cli._recover", "save every complete chunk of a recording cut short"),
    "sweep": ("simclock.cli._sweep", "run a scenario over many seeds on Dask, or report a sweep"),
}
"""Every command: ``name -> (module path, help)``; the module is imported only to run it."""


class _Version(argparse.Action):
    """``--version``: the installed version, read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> None:
        print(f"simclock {version()}")
        parser.exit()


def version() -> str:
    """The installed ``simclock`` distribution's version; ``0+unknown`` when not installed.

    The one version string: ``simclock --version`` and ``simclock-lint --version`` print it.
    """
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("simclock")
    except PackageNotFoundError:  # a source tree on sys.path, never installed
        return "0+unknown"


def _command_of(argv: Sequence[str]) -> str | None:
    """The command word: the first argument not an option (the top level takes no values)."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser; only ``command``'s module is imported and registered in full.

    Every other command is listed by name and help alone (enough for
    ``simclock --help`` and for argparse to tell an unknown command).
    """
    parser = argparse.ArgumentParser(
        prog="simclock", description="Deterministic simulation clock tools."
    )
    parser.add_argument("--version", action=_Version)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    if command in COMMANDS:
        importlib.import_module(COMMANDS[command][0]).register(subparsers)
    for name, (_module, text) in COMMANDS.items():
        if name not in subparsers.choices:
            subparsers.add_parser(name, help=text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (2 for every refusal, 141 for a closed stdout)."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            return _dispatch(words)
        finally:
            # Inside the try, also when argparse exits (--help): a closed pipe shows here
            # at the latest, never in the interpreter's last flush.
            sys.stdout.flush()
    except BrokenPipeError:
        from simclock.cli._common import quiet_closed_stdout

        return quiet_closed_stdout()


def _dispatch(words: list[str]) -> int:
    command = _command_of(words)
    if command in COMMANDS:
        module = importlib.import_module(COMMANDS[command][0])
        rewrite = getattr(module, "rewrite_argv", None)
        if rewrite is not None:
            at = words.index(command) + 1
            words = [*words[:at], *rewrite(words[at:])]
    parser = build_parser(command)
    args, extra = parser.parse_known_args(words)
    if extra:  # reported by the command's own parser, so the line names the command
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    name = getattr(args, "command_name", args.command)
    try:
        result: int = func(args)
    except BrokenPipeError:
        raise
    except Exception as exc:
        # The CLI rule: a refusal is one line on stderr and exit 2, never a traceback.
        # A handler raises CommandError (or lets a SimclockError through) to refuse.
        from simclock.cli._common import describe_failure, fail

        sys.stdout.flush()
        return fail(name, describe_failure(exc))
    return result


if __name__ == "__main__":
    raise SystemExit(main())
