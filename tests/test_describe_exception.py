"""``simclock.describe_exception``: the one ``Type: message`` describer (C-ERR-1).

The library's error texts (recording refusals, sweep error rows, the CLI's
last-resort line, the conformance suite's reports) all describe a foreign
exception with it, so it must never raise whatever the exception does.
"""

from __future__ import annotations

import pytest

import simclock
import simclock.lowlevel
from simclock import SimclockTypeError, SimclockValueError
from simclock.lowlevel import describe_exception


class Outer:
    class NestedError(Exception):
        pass


class StrRaisesError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


class StrRaisesBaseError(Exception):
    def __str__(self) -> str:
        raise KeyboardInterrupt


class StrNotStrError(Exception):
    def __str__(self) -> str:
        return 42  # type: ignore[return-value]  # noqa: PLE0307 (the hostile case)


def test_C_ERR_1_type_and_message() -> None:
    assert describe_exception(ValueError("bad x")) == "ValueError: bad x"
    assert describe_exception(ValueError()) == "ValueError"
    assert describe_exception(KeyError("k")) == "KeyError: 'k'"


def test_C_ERR_1_nested_class_is_named_by_its_qualname() -> None:
    assert describe_exception(Outer.NestedError("x")) == "Outer.NestedError: x"


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (StrRaisesError(), "StrRaisesError: <str() of StrRaisesError raised>"),
        (StrRaisesBaseError(), "StrRaisesBaseError: <str() of StrRaisesBaseError raised>"),
        (StrNotStrError(), "StrNotStrError: <str() of StrNotStrError raised>"),
    ],
)
def test_C_ERR_1_a_hostile_exception_never_escapes(exc: BaseException, expected: str) -> None:
    assert describe_exception(exc) == expected


def test_C_ERR_1_huge_message_kept_whole_or_cut_to_one_line() -> None:
    exc = ValueError("a\n\n b  " + "x" * 10**6)
    assert describe_exception(exc) == "ValueError: a\n\n b  " + "x" * 10**6
    line = describe_exception(exc, limit=60)
    assert line == "ValueError: a b " + "x" * 30 + "...(truncated)"
    assert len(line) == 60
    assert describe_exception(ValueError("a\n b"), limit=60) == "ValueError: a b"


def test_limit_is_checked() -> None:
    with pytest.raises(SimclockTypeError, match=r"^limit must be an int or None, got 1\.5$"):
        describe_exception(ValueError(), limit=1.5)  # type: ignore[arg-type]
    with pytest.raises(SimclockValueError, match=r"^limit must be >= 16 characters, got 3$"):
        describe_exception(ValueError(), limit=3)


def test_one_public_describer() -> None:
    assert simclock.lowlevel.describe_exception is simclock.core.describe_exception
    assert "describe_exception" in simclock.lowlevel.__all__
