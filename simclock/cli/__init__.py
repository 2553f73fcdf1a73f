"""The ``simclock`` command line: run, replay, info, diff, timeline, records-demo."""

from simclock.cli._main import main

__all__ = [
    "main",
]
