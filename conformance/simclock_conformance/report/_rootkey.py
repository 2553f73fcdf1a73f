"""Root causes of failed tests: the key naming a failure's kind, and the programs shown with it.

`root_key` reads a failure's message and names the *kind* of its first
difference, so one defect seen by many tests and programs gets one key
(C-CONF-3); `defect_key` is what two keys must share to be the same defect
when the report charges a failure to a prerequisite clause. The program
helpers cut and label the program shown beside a failure.
"""

from __future__ import annotations

import ast
import re

__all__ = [
    "DIFFERENCE",
    "FROM_CALLBACK",
    "PROGRAM_LINES",
    "defect_key",
    "driver_failure_key",
    "falsifying_program",
    "fixed_program",
    "program_label",
    "program_lines",
    "root_key",
]

_PROGRAM_START = re.compile(r"^(?:E\s+)?state = ", re.M)
_PROGRAM_END = re.compile(r"^(?:E\s+)?state\.teardown\(\)\s*$", re.M)


def falsifying_program(text: str) -> str:
    """The (last) minimal failing program Hypothesis printed for a state machine, or ``""``."""
    starts = list(_PROGRAM_START.finditer(text))
    if not starts:
        return ""
    start = starts[-1].start()
    end_match = _PROGRAM_END.search(text, start)
    end = end_match.end() if end_match else len(text)
    lines = [re.sub(r"^E\s+", "", line) for line in text[start:end].splitlines()]
    return "\n".join(lines)


DIFFERENCE = "first differing reply: "
"""How the key of a root cause without a backend exception starts (see :func:`root_key`)."""

_WIRE_DIFF = re.compile(r"^\s*first difference: (\w+)(\[\d+\])?: (.*)$", re.M)
_SIDES = re.compile(r"^expected (.*), observed (.*)$")
_ITEM_DIFF = re.compile(
    r"first difference at (?:item|index) \d+: "
    r"(?:expected (?P<e>.*), observed (?P<o>.*)|backend (?P<o2>.*), oracle (?P<e2>.*))$",
    re.M,
)
_ERROR = re.compile(r'^\s*observed reply: .*?"error":"([^"]*)"', re.M)
_ACCEPTED = re.compile(r"expected \w*Error, observed accepted")
_SPLIT_DIFF = re.compile(r"item \d+ of the firings is (\{.*\}) here, (\{.*\}) there$")
_NOT_REFUSED = re.compile(r" raised nothing \(it was accepted\); expected \w+$")
_OFF_GRID = re.compile(r"firing \d+ expected at \d+ ns, observed at \d+ ns")
_LEFT_AT = re.compile(r"advance to \d+ ns left now_ns\(\) at \d+ ns; expected \d+ ns$")
_COUNT = re.compile(r"^\S+: (\d+) firings(?: in [^,;]*)?, expected (\d+)(?:;|$)")


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _entry_difference(field_name: str, want: object, got: object) -> str | None:
    """The kind of difference between two fired/failure items (dicts or tuples)."""
    if isinstance(want, dict) and isinstance(got, dict):
        time_key = "now_ns" if "now_ns" in want else "at_ns"
        if want.get(time_key) != got.get(time_key):
            return f"{field_name} {time_key} differs"
        if want.get("entry") != got.get("entry"):
            return f"{field_name} order differs at equal {time_key}"
        keys = sorted(k for k in {*want, *got} if want.get(k) != got.get(k))
        return f"{field_name} {', '.join(keys)} differs"
    if isinstance(want, tuple) and isinstance(got, tuple) and len(want) == len(got):
        # In-process traces are (name, time) or (time, name, ...) tuples: the ints are times.
        times = [i for i, v in enumerate(want) if type(v) is int and type(got[i]) is int]
        if times:
            if any(want[i] != got[i] for i in times):
                return f"{field_name} now_ns differs"
            return f"{field_name} order differs at equal now_ns"
    return None


def _is_int(text: str) -> bool:
    return type(_literal(text)) is int


def _length_difference(field_name: str, want: str, got: str) -> str | None:
    if got == "nothing":
        return f"{field_name}: an expected entry is missing"
    if want == "nothing":
        return f"{field_name}: an entry too many"
    return None


_DRIVER_FAILURE = re.compile(r"driver failure: (.*)$", re.M)
_REQUEST_QUOTED = re.compile(
    r",? (?:while answering|before|after|to|of|came before) the request \{.*$"
    r"|(?:to|with) the request \{.*$|\{.*\}"
)
_STDERR_LINE = re.compile(r"^\s*\| (.+)$", re.M)


def driver_failure_key(message: str) -> str | None:
    """One key for one driver fault, whatever test and request it ended (C-CONF-3).

    The evidence without the request it was answering, numbers as ``N``, and the
    first line the driver wrote on stderr during that test (a panic's message).
    """
    found = _DRIVER_FAILURE.search(message)
    if found is None:
        return None
    evidence = re.sub(r"\d+", "N", _REQUEST_QUOTED.sub("", found.group(1)).strip())
    stderr = _STDERR_LINE.search(message, found.end())
    said = re.sub(r"0x[0-9a-fA-F]+|\d+", "N", stderr.group(1).strip())[:160] if stderr else ""
    return f"driver failure: {evidence}" + (f" ({said})" if said else "")


def root_key(message: str) -> str:
    """The root-cause key of a failure without a backend exception, from its message.

    The key names the *kind* of the first difference, not its values, so the
    same defect seen by different programs and tests gets the same key:

    - ``first differing reply: fired order differs at equal now_ns``: the
      first differing firing has the expected time but another entry (ties
      broken otherwise than in push order, an entry fired that should not
      have); in-process traces of ``(name, time)`` tuples are read the same way;
    - ``first differing reply: fired now_ns differs``: it fired at another time;
    - ``first differing reply: fired: an expected entry is missing`` / ``an
      entry too many``;
    - ``first differing reply: ok false where true expected with error X``
      (``ok true where false expected``, also an in-process test's
      ``expected TypeError, observed accepted``): a call refused or accepted
      wrongly; an in-process call that ``raised nothing (it was accepted)`` too;
    - an in-process test's own words for the same kinds: a list of ``firing
      times`` that differs, a ``firing N expected at T ns, observed at U ns``
      (``fired now_ns differs``), ``N firings, expected M`` (an entry missing
      or too many); two runs of C-ADV-5 whose ``firings`` part at a firing
      of the same entry at two times (``fired now_ns differs``); a halted
      reply's ``at_ns``, the time its callback read (``fired now_ns differs``);
      an advance to a far stop that left ``now_ns()`` elsewhere (``now_ns differs``);
    - ``first differing reply: FIELD differs``: another field of a reply
      (``now_ns``, ``next_event_ns``, ``values`` ...), whatever the request:
      an in-process test that checks ``next_event_ns()`` and a program whose
      ``cancel`` reply carries a wrong ``next_event_ns`` then share a key;
    - otherwise ``CLAUSE: MESSAGE`` with the message's first line, numbers
      replaced by ``N`` and quoted text by ``'...'``: such a failure is its
      own root unless another test words its failure the same way.
    """
    first = message.splitlines()[0] if message else ""
    crash = driver_failure_key(message)
    if crash is not None:
        return crash
    wire = _WIRE_DIFF.search(message)
    if wire:
        field_name, index, rest = wire.groups()
        sides = _SIDES.match(rest)
        if field_name == "ok" and sides:
            want, got = sides.groups()
            if got == "False":
                error = _ERROR.search(message)
                why = f" with error {error.group(1)}" if error else ""
                return f"{DIFFERENCE}ok false where true expected{why}"
            if got == "True" and want == "False":
                return f"{DIFFERENCE}ok true where false expected"
        if index and sides:
            kind = _entry_difference(field_name, *(_literal(s) for s in sides.groups()))
            if kind:
                return DIFFERENCE + kind
        if field_name in ("fired", "failures") and rest.startswith("expected "):
            if "first observed only" in rest:
                return f"{DIFFERENCE}{field_name}: an entry too many"
            if "first expected only" in rest:
                return f"{DIFFERENCE}{field_name}: an expected entry is missing"
        if field_name == "at_ns" and not index:
            # A halted reply's at_ns is the time its callback read when it halted.
            return f"{DIFFERENCE}fired now_ns differs"
        if field_name == "stored":
            return f"{DIFFERENCE}stored exceeds the C-CAN-4 bound"
        return f"{DIFFERENCE}{field_name}{'[]' if index else ''} differs"
    item = _ITEM_DIFF.search(message)
    if item:
        want = item.group("e") if item.group("e") is not None else item.group("e2")
        got = item.group("o") if item.group("o") is not None else item.group("o2")
        kind = _length_difference("fired", want, got) if "(" in want + got else None
        kind = kind or _entry_difference("fired", _literal(want), _literal(got))
        if kind is None and "firing times" in first:
            # A list of firing times: the n-th fired at another time, or is missing / extra.
            kind = _length_difference("fired", want, got)
            if kind is None and _is_int(want) and _is_int(got):
                kind = "fired now_ns differs"
        if kind:
            return DIFFERENCE + kind
    split = _SPLIT_DIFF.search(first)
    if split:
        here, there = (_literal(side) for side in split.groups())
        if (
            isinstance(here, dict)
            and isinstance(there, dict)
            and "fired" in here
            and "fired" in there
        ):
            kind = _entry_difference("fired", there["fired"], here["fired"])
            if kind:
                return DIFFERENCE + kind
    clause, _, rest = first.partition(": ")
    if _ACCEPTED.search(message) or _NOT_REFUSED.search(first):
        return f"{DIFFERENCE}ok true where false expected"
    if _OFF_GRID.search(first):
        return f"{DIFFERENCE}fired now_ns differs"
    if _LEFT_AT.search(first):
        # The suite's own advance to a far stop: now_ns() after it, as a reply would show.
        return f"{DIFFERENCE}now_ns differs"
    count = _COUNT.search(first)
    if count:
        got_n, want_n = int(count.group(1)), int(count.group(2))
        if got_n != want_n:
            return DIFFERENCE + (
                "fired: an expected entry is missing"
                if got_n < want_n
                else "fired: an entry too many"
            )
    observed = re.match(r"(now_ns|next_event_ns)\(\)", rest)
    if observed:
        return f"{DIFFERENCE}{observed.group(1)} differs"
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'...'", rest or clause)
    text = re.sub(r"\d+", "N", text)
    return f"{clause}: {text[:160]}" if rest else text[:160]


FROM_CALLBACK = ", from a callback"
"""How a root cause ends when the exception was a callback's, let out of the backend."""

_RAISED_AT = re.compile(r"^\S+ raised in (\S+:\d+ \(\S+\))(?:, from a callback)?$")


def defect_key(key: str) -> str:
    """What two root keys must share to be the same defect: the key, or where it was raised.

    A backend exception's key names its type and where it was raised
    (``ValueError raised in clock.py:78 (_run)``); the tests raise different
    exceptions through the same faulty line, so only the place is compared.
    """
    raised = _RAISED_AT.match(key)
    return f"raised in {raised.group(1)}" if raised else key


_FAILING_REQUEST = re.compile(r"^(?:\S+: )?case \S+, request (\d+) of \d+: ")


def fixed_program(message: str, program: str) -> tuple[str, str]:
    """``(program, kind)`` of a fixed clause program: cut after the failing request.

    The requests after the one whose reply differs do not matter; without a
    request number in ``message`` (the driver crashed, say) the program is whole.
    """
    failing = _FAILING_REQUEST.match(message)
    if not failing:
        return program, "program"
    return "\n".join(program.splitlines()[: int(failing.group(1))]), "fixed"


def program_label(kind: str) -> str:
    """The heading of a failure's program, by ``Outcome.program_kind``."""
    if kind == "fixed":
        return "program (fixed, up to the failing request):"
    if kind == "program":
        return "program:"
    if kind == "first":
        return "first failing program (not minimised):"
    return "minimal failing program (Hypothesis):"


PROGRAM_LINES = 40
"""The most lines of a program the text report prints; the JSON report has it whole."""


def program_lines(program: str, json_path: str = "") -> list[str]:
    """``program`` (cut at its failing request) in at most :data:`PROGRAM_LINES` lines.

    A longer one keeps its first lines (the clocks made) and its last (up to the
    failing request), with the count of requests left out and where the whole is.
    """
    lines = program.splitlines()
    if len(lines) <= PROGRAM_LINES:
        return lines
    head, tail = 10, PROGRAM_LINES - 11
    elided = len(lines) - head - tail
    where = (
        f"the whole program is in the JSON report {json_path}"
        if json_path
        else "run with --json REPORT to keep the whole program"
    )
    return [*lines[:head], f"... {elided} requests left out; {where} ...", *lines[-tail:]]
