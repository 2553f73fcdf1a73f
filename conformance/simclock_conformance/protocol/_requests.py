"""Checks of a request's arguments, before any call on a clock (SPEC §18, C-WIRE-2, C-WIRE-4).

A bad argument is the engine's own refusal (:class:`_RefusalError`): the
reply's ``error`` is ``bad_request``, ``unsupported``, ``TypeError`` or
``ValueError`` and the clock is not called. A time that is not decimal digits
is not refused here but handed to the clock as it came (:func:`_time_arg`), so
the clock's own check (C-TIME-3) answers.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["Json", "normalise_path"]

_DIGITS = re.compile(r"[0-9]+")
_SEGMENT = re.compile(r"[A-Za-z0-9_.-]+")

Json = dict[str, Any]


class _RefusalError(Exception):
    """The engine's own refusal of a request: ``bad_request``, ``unsupported``, ``TypeError``."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def _digits(value: object, name: str) -> int:
    """A protocol integer (C-WIRE-2): a ``str`` of decimal digits; else the engine's TypeError."""
    if type(value) is str and _DIGITS.fullmatch(value):
        return int(value)
    raise _RefusalError("TypeError", f"{name} must be a string of decimal digits, got {value!r}")


def _time_arg(value: object) -> object:
    """A time for the clock: an int for digits, else the value as it came (C-WIRE-2, C-TIME-3).

    A JSON number becomes a ``float`` (the clock must refuse it); any other
    value goes as is (a ``str`` such as ``"1.5"`` or ``"-3"``, ``None``).
    """
    if type(value) is str and _DIGITS.fullmatch(value):
        return int(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:
            return 1.0
    return value


def _check_actions(actions: object, where: str) -> list[Json]:
    """Validate an ``on_fire`` list with its request (C-WIRE-4): bad times refuse it all."""
    if not isinstance(actions, list):
        raise _RefusalError("bad_request", f"{where} must be a list of actions, got {actions!r}")
    for action in actions:
        if not isinstance(action, dict):
            raise _RefusalError("bad_request", f"{where} must hold action objects, got {action!r}")
        do = action.get("do")
        if do == "schedule":
            _digits(action.get("delay_ns"), "delay_ns")
            _check_actions(action.get("on_fire", []), "on_fire")
        elif do == "advance":
            _digits(action.get("dt_ns"), "dt_ns")
        elif do == "cancel":
            if not isinstance(action.get("entry"), str):
                raise _RefusalError(
                    "bad_request", f"cancel action needs an entry id, got {action!r}"
                )
        elif do not in ("raise", "halt"):
            raise _RefusalError("bad_request", f"unknown action {do!r}")
    return actions


def normalise_path(labels: object) -> str:
    """The stream path of ``labels`` (C-RNG-3): ``["a","b"]`` and ``["/a/b"]`` are ``/a/b``."""
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise _RefusalError("TypeError", f"labels must be a list of strings, got {labels!r}")
    segments: list[str] = []
    for label in labels:
        body = label[1:] if label.startswith("/") else label
        for segment in body.split("/"):
            if not _SEGMENT.fullmatch(segment):
                raise _RefusalError("ValueError", f"label {label!r} is malformed")
            segments.append(segment)
    return "/" + "/".join(segments)
