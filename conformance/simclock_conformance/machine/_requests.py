"""The oracle state machine's plumbing: clocks, requests to the backend and the oracle, replies.

:class:`RequestMachine` holds what :class:`~simclock_conformance.OracleMachine`
(its rules, in :mod:`~simclock_conformance.machine._machine`) sends and observes:
every request goes to the backend through a transport
(:mod:`~simclock_conformance.machine._transport`), to the backend's twins,
and to an :class:`~simclock_conformance.protocol._engine.Engine` over
``simclock_oracles.ReferenceClock``; each reply must agree with the
oracle's (:func:`~simclock_conformance.protocol._compare.first_difference`). The
oracle's replies say where time is, which entry comes next, what fired and
which children the callbacks made.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any, ClassVar

from hypothesis.stateful import RuleBasedStateMachine

# The oracle's engine imports ReferenceClock on its first clock; imported here, not in
# the middle of a run: Hypothesis draws constants from the modules loaded so far, and a
# module loaded between a failing program and its replay makes the replay draw otherwise.
import simclock_oracles  # noqa: F401
from simclock_conformance.kit._harness import Rig
from simclock_conformance.machine._strategies import MAX_NS, Behaviour, Entry, Made, actions
from simclock_conformance.machine._transport import InProcess, Local, RigBackend, Transport
from simclock_conformance.protocol._backends import OracleBackend
from simclock_conformance.protocol._compare import first_difference
from simclock_conformance.protocol._driver import protocol_line
from simclock_conformance.protocol._engine import Engine

__all__ = ["PROGRAM_MARK", "RequestMachine"]

Json = dict[str, Any]
_IDS = itertools.count(1)
PROGRAM_MARK = "\nminimal failing program (protocol lines):\n"
"""What separates a driver run's message from the program that reproduces it."""


class RequestMachine(RuleBasedStateMachine):
    """The oracle machine without its rules: clocks, requests, replies and what they told.

    A subclass defines :meth:`new_rig` (or :meth:`new_transport`). Between steps
    the machine has ``now`` (the oracle's time), ``trace`` (the agreed firings,
    ``(entry, now_ns)``), ``made`` (every entry accepted, children of callbacks
    too, in push order) and, in process, the clock objects.
    """

    UNIT: ClassVar[int] = 1
    """The step of a strict grid: every generated time, period and advance is a multiple of it."""

    TWINS: ClassVar[int] = 0
    """More instances of the backend that receive every call, a split advance unsplit (C-ADV-5)."""

    BUDGET: ClassVar[int | None] = None
    """The most one program advances in all (``None``: no limit); longer advances are cut."""

    def __init__(self) -> None:
        super().__init__()
        self.budget = self.BUDGET
        self.transport: Transport = self.new_transport()
        self.reference = Engine(OracleBackend())
        self.sent: list[Json] = []
        self.dead = False
        self.names: list[str] = []
        self.start_at(0)

    # -- the backend -------------------------------------------------------------

    def new_rig(self, start: int) -> Rig:
        """A fresh backend at ``now_ns() == start`` with its bus listened to."""
        raise NotImplementedError(
            f"the oracle machine {type(self).__name__!r} has no new_rig(start): define it in "
            "your subclass of OracleMachine, returning make_rig(factory) for your factory"
        )

    def new_transport(self) -> Transport:
        """Where the requests go: by default the protocol engine over :meth:`new_rig`'s clocks."""
        return InProcess(RigBackend(self.new_rig, type(self)))

    def _local(self, name: str) -> Local:
        local = self.transport.local(name)
        if local is None:
            raise RuntimeError(
                f"the oracle machine {type(self).__name__!r} sends its requests to a driver: "
                "its clocks are not objects of this process"
            )
        return local

    @property
    def backend(self) -> Local:
        """The backend's clock in this process (``.clock``, ``.handles`` by entry id)."""
        return self._local(self.names[0])

    @property
    def twins(self) -> list[Local]:
        """The twins' clocks in this process (see :attr:`TWINS`)."""
        return [self._local(name) for name in self.names[1:]]

    @property
    def oracle(self) -> Local:
        """The oracle's ``ReferenceClock`` with its handles, as :attr:`backend` has them."""
        return self.reference.clocks[self.names[0]]

    @property
    def rig(self) -> Rig:
        """The :class:`Rig` :meth:`new_rig` made for the backend (its bus and events)."""
        return self._rig_of(self.backend)

    @property
    def twin_rigs(self) -> list[Rig]:
        """The :class:`Rig` of each twin."""
        return [self._rig_of(twin) for twin in self.twins]

    def _rig_of(self, local: Local) -> Rig:
        engine = getattr(self.transport, "engine", None)
        backend = getattr(engine, "backend", None)
        if not isinstance(backend, RigBackend):
            raise RuntimeError(f"the oracle machine {type(self).__name__!r} makes no rigs")
        return backend.rigs[id(local.clock)]

    def start_at(self, start: int) -> None:
        """Start every clock afresh at ``start`` (0 when the machine is made)."""
        for name in self.names:
            self._send({"op": "drop", "clock": name})
        if self.names:
            self.reference.handle({"op": "drop", "clock": self.names[0]})
        n = next(_IDS)
        self.names = [f"sm{n}", *(f"sm{n}t{i}" for i in range(1, self.TWINS + 1))]
        self.entries: list[str] = []
        self.refused: set[str] = set()
        self.made: dict[str, Made] = {}
        self.trace: list[tuple[str, int]] = []
        self.acts: dict[str, list[Json]] = {}
        self.children: dict[str, int] = {}
        self.now = start
        self.upcoming: int | None = None
        # True once the backend accepted a time above 2**64 - 1 (C-TIME-4 allows both).
        self.beyond = False
        create: Json = {"op": "create", "clock": self.names[0], "seed": "0"}
        if start:
            create["start_ns"] = str(start)
        self._exchange(create)

    # -- requests and replies --------------------------------------------------------

    def _send(self, request: Json) -> Json | None:
        if self.dead:
            return None
        self.sent.append(request)
        got = self.transport.send(request)
        self.dead = got is None
        return got

    def _exchange(self, request: Json, far: int = 0) -> Json | None:
        """Send ``request`` to the backend, its twins and the oracle; the oracle's reply.

        ``far`` is the time the request reaches: past ``2**64 - 1`` the backend
        may refuse with ``ValueError``; then no other clock is asked (``None``).
        """
        got = self._send(request)
        if got is None:
            return None
        if far > MAX_NS and got.get("ok") is False and got.get("error") == "ValueError":
            return None
        self.beyond = self.beyond or (far > MAX_NS and got.get("ok") is True)
        want = self.reference.handle(request)
        self._check(protocol_line(request), got, want)
        for twin in self.names[1:]:
            again = self._send({**request, "clock": twin})
            if again is None:
                return None
            self._check(protocol_line({**request, "clock": twin}), again, want)
        self._observe(want)
        return want

    def _check(self, shown: str, got: Json, want: Json) -> None:
        diff = first_difference(got, want, self.transport.features)
        peek = want.get("next_event_ns")
        # Past 2**64 - 1 a backend that accepted such a time must keep it exactly
        # (first_difference leaves it out: a backend may also refuse such times).
        if (
            diff is None
            and self.beyond
            and "peek" in self.transport.features
            and peek is not None
            and int(peek) > MAX_NS
            and got.get("next_event_ns") != peek
        ):
            diff = f"next_event_ns: expected {peek!r}, observed {got.get('next_event_ns')!r}"
        if diff is None:
            return
        who = "driver" if self.transport.shows_program else "backend"
        message = (
            f"SM-ORACLE: the {who} and the oracle disagree on request {len(self.sent)}: "
            f"{shown}\n  first difference: {diff}\n  expected reply: {protocol_line(want)}\n"
            f"  observed reply: {protocol_line(got)}"
        )
        if self.transport.shows_program:
            message += PROGRAM_MARK + "\n".join(protocol_line(r) for r in self.sent)
        failure = AssertionError(message)
        internal = self.transport.internal()
        if got.get("error") == "internal" and internal is not None:
            # The backend raised: its exception (and where) is the root cause.
            raise failure from internal
        raise failure

    def _observe(self, want: Json) -> None:
        """Follow the oracle's reply: its time, next entry, firings and the children made."""
        if "now_ns" in want:
            self.now = int(want["now_ns"])
            peek = want.get("next_event_ns")
            self.upcoming = None if peek is None else int(peek)
        for record in want.get("fired", []):
            entry, now = record["entry"], int(record["now_ns"])
            self.trace.append((entry, now))
            for action in self.acts.get(entry, []):
                if action["do"] == "schedule" and "refused" not in record:
                    n = self.children.get(entry, 0)
                    self.children[entry] = n + 1
                    at = now + int(action["delay_ns"])
                    self._made(f"{entry}.{n}", Entry("schedule", at_ns=at), [], now)

    def _made(self, ident: str, entry: Entry, acts: list[Json], registered_at: int) -> None:
        self.made[ident] = Made(len(self.made), entry, registered_at)
        self.acts[ident] = acts

    # -- entries -----------------------------------------------------------------------

    def units(self, n: int) -> int:
        """``n`` grid steps, or ``n`` rounded to the grid where ``n`` steps pass ``2**64 - 1``."""
        unit = self.UNIT
        return n * unit if n <= MAX_NS // unit else n - n % unit

    def on_grid(self, t: int) -> int:
        """The instant ``t`` rounded down to the grid."""
        return t - t % self.UNIT

    def _entry(self, entry: Entry, behaviour: Behaviour, far: int = 0) -> int:
        """Make ``entry`` as the next rule-made entry ``e<n>``; ``n``, its bundle value."""
        n = len(self.entries)
        ident = f"e{n}"
        self.entries.append(ident)
        made = list(self.made) if behaviour[0] == "cancel_any" else []
        acts = actions(ident, entry, behaviour, self.UNIT, made, self.now)
        request = {"op": entry.op, "clock": self.names[0], "entry": ident, **entry.fields()}
        registered_at = self.now
        want = self._exchange({**request, "on_fire": acts}, far)
        if want is not None and want.get("ok") is True:
            self._made(ident, entry, acts, registered_at)
        else:
            self.refused.add(ident)  # refused past 2**64 - 1: no clock has it
        return n

    def _at(self, at: int, behaviour: Behaviour) -> int:
        return self._entry(Entry("schedule", at_ns=at), behaviour, at)

    def _after(self, delay: int, behaviour: Behaviour) -> int:
        return self._at(self.now + self.units(delay), behaviour)

    def _periodic(self, period: int, phase: int, behaviour: Behaviour) -> int:
        entry = Entry("schedule_periodic", period_ns=self.units(period), phase_ns=self.units(phase))
        return self._entry(entry, behaviour)

    def _rate(self, rate: int | Fraction, phase: int, behaviour: Behaviour) -> int:
        return self._entry(Entry("schedule_rate", rate_hz=rate, phase_ns=phase), behaviour)

    def _cancel(self, ident: str) -> None:
        if ident not in self.refused:
            self._exchange({"op": "cancel", "clock": self.names[0], "entry": ident})

    def _advance(self, dt: int) -> None:
        if self.budget is not None:
            dt = min(dt, self.budget)
            self.budget -= dt
        request = {"op": "advance", "clock": self.names[0], "dt_ns": str(dt)}
        self._exchange(request, self.now + dt)

    def _advance_split(self, a: int, b: int) -> None:
        """C-ADV-5: the backend advances by ``a`` then ``b``; twins and the oracle by ``a + b``."""
        if self.budget is not None:
            if a + b > self.budget:
                return
            self.budget -= a + b
        if self.now + a + b > MAX_NS:
            return
        name = self.names[0]
        first = {"op": "advance", "clock": name, "dt_ns": str(a)}
        second = {"op": "advance", "clock": name, "dt_ns": str(b)}
        whole = {"op": "advance", "clock": name, "dt_ns": str(a + b)}
        got = self._send(first)
        # A halt (or any error) ends the run where it happened, as on the oracle (C-ERR-2).
        if got is not None and got.get("ok") is True:
            rest = self._send(second)
            got = None if rest is None else _joined(got, rest)
        if got is None:
            return
        want = self.reference.handle(whole)
        shown = f"{protocol_line(first)} then {protocol_line(second)} (the oracle: dt_ns {a + b})"
        self._check(shown, got, want)
        for twin in self.names[1:]:
            again = self._send({**whole, "clock": twin})
            if again is None:
                return
            self._check(protocol_line({**whole, "clock": twin}), again, want)
        self._observe(want)


def _joined(first: Json, second: Json) -> Json:
    """Two advance replies as one: the firings and failures of both, the second's state."""
    joined = dict(second)
    for key in ("fired", "failures"):
        if isinstance(first.get(key), list) and isinstance(second.get(key), list):
            joined[key] = [*first[key], *second[key]]
    return joined
