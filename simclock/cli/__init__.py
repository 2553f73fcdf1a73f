"""The ``simclock`` command line; every command is listed in `simclock.cli._main.COMMANDS`."""

from simclock.cli._main import main

__all__ = [
    "main",
]
