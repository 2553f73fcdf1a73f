"""The pieces of a wire run that the runner, the state machine and the vectors share (§18).

:func:`run_case` runs one program and compares every reply with the
expected one; :class:`Session` is the driver of a run, started again after
each failure (C-WIRE-5); :class:`LocalDriver` is ``serve`` without the pipe.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import simclock
import simclock_oracles
from simclock_conformance.clauses._builder import Case
from simclock_conformance.clauses._programs import CASES
from simclock_conformance.protocol._backends import OracleBackend
from simclock_conformance.protocol._charge import charge
from simclock_conformance.protocol._compare import (
    Difference,
    first_difference,
    locate_difference,
    value_patterns,
)
from simclock_conformance.protocol._driver import (
    DEFAULT_DEADLINE_S,
    MAX_REPLY_BYTES,
    STARTUP_S,
    Driver,
    DriverError,
    clip,
    protocol_line,
)
from simclock_conformance.protocol._engine import Engine
from simclock_conformance.protocol._reasons import Reasons, reply_reasons

__all__ = [
    "CHARGED",
    "SELF_COMPARED",
    "SPLIT",
    "LocalDriver",
    "Session",
    "charged_line",
    "expected_reasons",
    "expected_replies",
    "program_text",
    "replies_difference",
    "run_case",
    "run_program",
    "split_difference",
]

Json = dict[str, Any]
Send = Callable[[Json], Json]
_RNG = ("C-RNG-1", "C-RNG-2", "C-RNG-3", "C-RNG-4", "C-DET-1")
DEADLINE_S = DEFAULT_DEADLINE_S

SELF_COMPARED = frozenset({"C-DET-1"})
"""Clauses about a run against itself: their cases compare runs, not the oracle's replies."""
SPLIT = "C-ADV-5"
"""A relation between runs: its cases (one program, advanced in different steps) must fire
the same, in order and with the same times, as each other."""

_EXPECTED: dict[str, list[Json]] = {}
_REASONS: dict[str, list[Reasons]] = {}

CHARGED = "charged to: "
"""How the line naming the clause a difference is charged to starts (see ``_reasons``)."""


def charged_line(clauses: Sequence[str]) -> str:
    """``charged to: C-X (else C-Y, ...)``: the first the report has is charged."""
    first, *rest = clauses
    return CHARGED + first + (f" (else {', '.join(rest)})" if rest else "")


def expected_reasons(case: Case) -> list[Reasons]:
    """The rules behind every reply of :func:`expected_replies` (cached by id)."""
    if case.id not in _REASONS:
        _stored(case)
    if case.id not in _REASONS:
        _REASONS[case.id] = reply_reasons(case.requests, expected_replies(case))
        _store(case)
    return _REASONS[case.id]


def expected_replies(case: Case) -> list[Json]:
    """The oracle's reply to every request of ``case`` (cached by id)."""
    if case.id not in _EXPECTED:
        _stored(case)
    if case.id not in _EXPECTED:
        engine = Engine(OracleBackend())
        _EXPECTED[case.id] = [engine.handle(r) for r in case.requests]
        _store(case)
    return _EXPECTED[case.id]


# The expected replies and reasons of the fixed programs, kept between processes: every
# conformance run (a backend, a driver, each test of the library's own suite that runs
# one) would otherwise compute them again, seconds for the far-time and tombstone
# programs. The file is keyed by the sources that decide them (this package, the oracle,
# simclock) and each entry by its program's requests; anything else is computed anew.
# SIMCLOCK_CONFORMANCE_CACHE=0 turns it off; another value is the folder to use.
class _Disk:
    """The stored programs of this process: loaded on first use, written at exit if changed."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, list[Json], list[Reasons] | None]] | None = None
        self.dirty = False

    def load(self) -> dict[str, tuple[str, list[Json], list[Reasons] | None]]:
        if self.entries is None:
            self.entries = {}
            path = _cache_file()
            if path is not None:
                try:
                    with path.open("rb") as f:
                        loaded = pickle.load(f)  # our own file, in the user's cache folder
                    if isinstance(loaded, dict):
                        self.entries = loaded
                except Exception:  # absent, unreadable or from elsewhere: computed anew
                    self.entries = {}
                atexit.register(self.save)
        return self.entries

    def save(self) -> None:
        """Write every stored program (atomically: concurrent runs each write a whole file)."""
        path = _cache_file()
        if not self.dirty or path is None or self.entries is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".expected-")
            with os.fdopen(fd, "wb") as f:
                pickle.dump(self.entries, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except OSError:  # a read-only home: the next run computes them again
            pass


_DISK = _Disk()


def _cache_file() -> Path | None:
    setting = os.environ.get("SIMCLOCK_CONFORMANCE_CACHE", "")
    if setting == "0":
        return None
    if setting:
        folder = Path(setting)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        folder = Path(base) / "simclock-conformance"
    return folder / f"expected-{_sources_digest()}.pickle"


@functools.cache
def _sources_digest() -> str:
    """SHA-256 of the Python sources that decide an expected reply, and the interpreter."""
    digest = hashlib.sha256(sys.version.encode())
    roots = [Path(__file__).resolve().parents[1]]  # this package
    roots += [Path(str(package.__file__)).parent for package in (simclock_oracles, simclock)]
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def _requests_key(case: Case) -> str:
    text = json.dumps(case.requests, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _stored(case: Case) -> None:
    """Put a fixed program's stored replies in ``_EXPECTED`` (its reasons, if stored, too)."""
    if case.id not in _FIXED_IDS:
        return
    entry = _DISK.load().get(case.id)
    if entry is None or entry[0] != _requests_key(case):
        return
    _EXPECTED[case.id] = entry[1]
    if entry[2] is not None:
        _REASONS[case.id] = entry[2]


def _store(case: Case) -> None:
    """Keep what this process computed for a fixed program, for the next ones."""
    if case.id in _FIXED_IDS:
        entry = (_requests_key(case), _EXPECTED[case.id], _REASONS.get(case.id))
        _DISK.load()[case.id] = entry
        _DISK.dirty = True


_FIXED_IDS = frozenset(case.id for case in CASES)


def program_text(requests: Sequence[Json]) -> str:
    """Requests as protocol lines, ready to paste into the driver's stdin."""
    return "\n".join(protocol_line(r) for r in requests)


def run_case(
    send: Send,
    case: Case,
    features: Sequence[str],
    expected: list[Json] | None = None,
) -> tuple[str | None, list[Json]]:
    """Run ``case`` through ``send``; ``(None, replies)`` or ``(description of the failure, ...)``.

    :class:`DriverError` propagates: the caller owns the process.
    """
    want = expected if expected is not None else expected_replies(case)
    got: list[Json] = []
    for (request, accept), _ in zip(case.steps, want, strict=True):
        got.append(send(request))
        reply = got[-1]
        if accept and reply.get("ok") is False and reply.get("error") in accept:
            # A clean refusal past 2**64 - 1 (C-TIME-4): the case ends here, but its
            # clocks are still dropped so the next case can use their ids.
            for later, _ in case.steps[len(got) :]:
                if later.get("op") == "drop":
                    send(later)
            return None, got
    rng = any(c in _RNG for c in case.clauses)
    compare_got, compare_want = got, want
    if rng and "bits" not in features:
        compare_got, compare_want = value_patterns(got), value_patterns(want)
    for k, (o, e) in enumerate(zip(compare_got, compare_want, strict=True)):
        diff = locate_difference(o, e, features)
        if diff:
            reasons = expected_reasons(case)[k] if expected is None else None
            rules = charge(reasons, o, e, diff, case.clauses) if reasons else tuple(case.clauses)
            if diff.field == "values" and "bits" in features and rng:
                # Exact bits compared: the same pattern of equal draws is C-X-BITS's alone.
                (o_pattern,), (e_pattern,) = value_patterns([o]), value_patterns([e])
                same = first_difference(o_pattern, e_pattern, features) is None
                rules = ("C-X-BITS",) if same else tuple(r for r in rules if r != "C-X-BITS")
            return (
                f"case {case.id}, request {k + 1} of {len(case.steps)}: "
                f"{protocol_line(case.steps[k][0])}\n"
                f"  first difference: {diff.text}\n"
                f"  expected reply: {clip(protocol_line(e))}\n"
                f"  observed reply: {clip(protocol_line(o))}\n"
                f"  {charged_line(rules)}"
            ), got
    return None, got


def run_program(
    send: Send, case: Case, features: Sequence[str], splits: dict[str, list[Json]]
) -> tuple[str | None, list[Json]]:
    """Run ``case`` through ``send`` as its clauses ask; ``(problem or None, replies)``.

    The one runner of a clause program, on a driver and in process (C-WIRE-4,
    C-WIRE-8). Each difference counts against the clause it is about: a wrong
    ``next_event_ns`` fails C-X-PEEK, not every case that happens to observe it;
    a determinism case (C-DET-1) compares the run with itself, answered ``ok``
    as the oracle's; a split case (C-ADV-5) compares its firings with those of
    the first split case run (kept in ``splits``). :class:`DriverError`
    propagates: the caller owns the process.
    """
    if "C-X-PEEK" not in case.clauses:
        features = tuple(f for f in features if f != "peek")
    if SELF_COMPARED.issuperset(case.clauses):
        replies = [send(r) for r in case.requests]
        again = [send(r) for r in case.requests]
        problem = _refused(case, replies, features) or replies_difference(
            case, again, replies, features, "the same backend, run again,"
        )
        return problem, replies
    if case.clauses == [SPLIT]:
        replies = [send(r) for r in case.requests]
        problem = _refused(case, replies, features)
        if problem is None:
            problem = split_difference(case, replies, splits)
        if problem is not None and CHARGED not in problem:
            # This run broke a rule of the oracle's: that rule. Right in these steps and
            # wrong in the first run's, the run changes with the splitting: C-ADV-5's own.
            rules = _oracle_charge(case, replies, features)
            problem += f"\n  {charged_line([*rules, SPLIT])}"
        return problem, replies
    return run_case(send, case, features)


def _oracle_charge(case: Case, replies: list[Json], features: Sequence[str]) -> tuple[str, ...]:
    """The rule the first difference of ``replies`` from the oracle's breaks, or none.

    Two runs of one program in other steps differ (C-ADV-5) because one of them
    breaks a rule of the oracle's: that rule is charged.
    """
    want = expected_replies(case)[: len(replies)]
    if any(c in _RNG for c in case.clauses) and "bits" not in features:
        replies, want = value_patterns(replies), value_patterns(want)
    for k, (o, e) in enumerate(zip(replies, want, strict=True)):
        diff = locate_difference(o, e, features)
        if diff:
            return charge(expected_reasons(case)[k], o, e, diff, [])
    return ()


def _fired_trace(case: Case, replies: list[Json]) -> list[Json]:
    """Every firing and failure of the advances of ``case``, in order (C-ADV-5)."""
    fired: list[Json] = []
    failures: list[Json] = []
    for request, reply in zip(case.requests, replies, strict=True):
        if request.get("op") == "advance":
            fired.extend({"fired": f} for f in reply.get("fired", []) or [])
            failures.extend({"failure": f} for f in reply.get("failures", []) or [])
    return fired + failures


def split_difference(case: Case, replies: list[Json], splits: dict[str, list[Json]]) -> str | None:
    """C-ADV-5: the same program in other steps fires what the first split case fired."""
    trace = _fired_trace(case, replies)
    if not splits:
        splits[case.id] = trace
        return None
    (first_id, first), *_ = splits.items()
    for k, (mine, theirs) in enumerate(zip(trace, first, strict=False)):
        if mine != theirs:
            return (
                f"case {case.id}: advanced in other steps than case {first_id}, the program "
                f"fired otherwise: item {k} of the firings is {clip(repr(mine))} here, "
                f"{clip(repr(theirs))} there"
            )
    if len(trace) != len(first):
        return (
            f"case {case.id}: advanced in other steps than case {first_id}, the program fired "
            f"{len(trace)} callbacks here, {len(first)} there"
        )
    return None


def _refused(case: Case, replies: list[Json], features: Sequence[str]) -> str | None:
    """The first request a self-compared run answered ``ok`` otherwise than the oracle did."""
    for k, (got, want) in enumerate(zip(replies, expected_replies(case), strict=True)):
        if got.get("ok") != want.get("ok"):
            text = f"ok: expected {want.get('ok')!r}, observed {got.get('ok')!r}"
            # An earlier reply that differed from the oracle's is the first difference.
            rules = _oracle_charge(case, replies[: k + 1], features) or charge(
                expected_reasons(case)[k], got, want, Difference("ok", None, text), []
            )
            return (
                f"case {case.id}, request {k + 1} of {len(case.requests)}: "
                f"{protocol_line(case.requests[k])}\n  first difference: {text}\n"
                f"  expected reply: {clip(protocol_line(want))}\n"
                f"  observed reply: {clip(protocol_line(got))}\n"
                f"  {charged_line([*rules, *case.clauses])}"
            )
    return None


def replies_difference(
    case: Case, replies: list[Json], first: list[Json], features: Sequence[str], who: str
) -> str | None:
    """How ``replies`` differ from the ``first`` run's replies to ``case`` (``who`` answered)."""
    for k, (a, b) in enumerate(zip(replies, first, strict=True)):
        diff = first_difference(a, b, features)
        if diff:
            return (
                f"case {case.id}: {who} answered request {k + 1} "
                f"{protocol_line(case.requests[k])} differently: {diff} (first run: "
                f"{clip(protocol_line(b))}; second: {clip(protocol_line(a))})"
            )
    return None


_NO_REPLY = "gave no reply within"
"""The words of a reply deadline's evidence (both transports)."""


class Session:
    """The running driver of a run, started again after each failure (C-WIRE-5).

    A request that got no reply within the deadline is not sent again after the same
    requests in a later test of the run (a golden vector repeats each clause program):
    that test fails at once with the first one's evidence, saying so. Every request a
    test sends is kept, as a protocol line, from :meth:`mark` on.
    """

    def __init__(
        self,
        command: list[str],
        deadline_s: float,
        make_driver: Callable[[], Any] | None = None,
    ) -> None:
        self.command = command
        self.deadline_s = deadline_s
        self.make_driver = make_driver or (lambda: Driver(self.command, self.deadline_s))
        self.driver: Any = None
        self.features: tuple[str, ...] = ()
        self.backend = ""
        self.hello_error = ""
        # The requests of the current test, as sent; the request lists of tests that
        # ended in no reply (the last request the one not answered), as protocol lines,
        # by their length, with the failure. Nothing is serialised twice until a request
        # has gone unanswered: then only at the lengths of the lists that did.
        self._sent: list[Json] = []
        self._hung: dict[int, list[tuple[list[str], DriverError]]] = {}

    def start(self) -> Any:
        if self.driver is None:
            driver = self.make_driver()
            self.driver = driver
            reply = self._hello(driver)
            if reply.get("ok") is not True or reply.get("protocol") != "1":
                driver.kill()
                self.driver = None
                raise DriverError(
                    f"hello was answered with {protocol_line(reply)}", driver.stderr_tail()
                )
            features = reply.get("features")
            names = (
                [f for f in features if isinstance(f, str)] if isinstance(features, list) else []
            )
            self.features = tuple(
                f for f in ("peek", "rate", "stats", "start_ns", "bits") if f in names
            )
            self.backend = str(reply.get("backend", ""))
        return self.driver

    def _hello(self, driver: Any) -> Json:
        hello = {"op": "hello", "protocol": "1"}
        if isinstance(driver, Driver):
            return driver.request(hello, max(self.deadline_s, STARTUP_S))
        reply: Json = driver.request(hello)
        return reply

    def send(self, request: Json) -> Json:
        sent = self._sent
        sent.append(request)
        if self._hung and len(sent) in self._hung:
            lines = [protocol_line(r) for r in sent]
            for hung, earlier in self._hung[len(sent)]:
                if hung == lines:
                    raise DriverError(
                        f"{earlier.evidence} (not sent again: an earlier test of this run "
                        "sent the same requests and got no reply to this one)",
                        earlier.stderr,
                    )
        try:
            reply: Json = self.start().request(request)
        except DriverError as failure:
            if _NO_REPLY in failure.evidence:
                lines = [protocol_line(r) for r in sent]
                self._hung.setdefault(len(sent), []).append((lines, failure))
            raise
        return reply

    def mark(self) -> None:
        """A test begins: a failure quotes only the stderr written during it."""
        self._sent = []
        mark = getattr(self.driver, "mark", None)
        if callable(mark):
            mark()

    def drain(self) -> None:
        drain = getattr(self.driver, "drain", None)
        if callable(drain):
            drain()

    def failed(self) -> None:
        if self.driver is not None:
            self.driver.kill()
        self.driver = None

    def close(self) -> None:
        if self.driver is not None:
            self.driver.close()
        self.driver = None


class LocalDriver:
    """The protocol on a Python factory in this process: ``serve`` without the pipe (C-WIRE-8).

    Every request and reply goes through ``json`` as on the wire, so what the
    runner sees is exactly what ``serve`` would write; the same bounds hold: a
    request that takes longer than ``deadline_s`` of CPU time (the suite's
    watchdog, C-CONF-2) or a reply longer than :data:`MAX_REPLY_BYTES` is a
    :class:`DriverError`, and the engine is dropped as a failed driver is.
    """

    def __init__(
        self, factory: Callable[..., Any], name: str, deadline_s: float = DEFAULT_DEADLINE_S
    ) -> None:
        from simclock_conformance.protocol._backends import PythonBackend

        self.engine = Engine(PythonBackend(factory, name))
        self.deadline_s = deadline_s

    def request(self, obj: Json) -> Json:
        from simclock_conformance.kit._watchdog import ConformanceTimeout, watchdog

        line = protocol_line(obj)
        try:
            with watchdog(self.deadline_s, "serve"):
                reply = protocol_line(self.engine.handle(json.loads(line)))
        except ConformanceTimeout:
            self.kill()
            raise DriverError(
                f"the driver {_NO_REPLY} {self.deadline_s:g} s to the request {line}", []
            ) from None
        size = len(reply.encode("utf-8"))
        if size + 1 > MAX_REPLY_BYTES:
            self.kill()
            raise DriverError(
                f"the driver's reply to the request {line} of {size} bytes exceeds the "
                f"{MAX_REPLY_BYTES}-byte limit of a reply line; it starts "
                f"{reply[:300] + '...(truncated)'!r}",
                [],
            )
        data: Json = json.loads(reply)
        return data

    def stderr_tail(self) -> list[str]:
        return []

    def kill(self) -> None:
        self.engine.clocks.clear()  # a failed driver's clocks are gone, as with a process

    def close(self) -> None:
        self.engine.clocks.clear()
