"""Where the oracle state machine sends its requests: an engine in process, or a driver.

Both transports take one protocol request (SPEC §18) and give its reply. In
process, :class:`InProcess` is the protocol engine ``serve`` puts in front of
a Python backend (:class:`~simclock_conformance.protocol._engine.Engine` over a
:class:`~simclock_conformance.protocol._backends.PythonBackend`), so the machine checks
a Python backend through exactly the requests a driver gets; it also lends
the machine's subclasses the clock objects behind the requests
(:meth:`InProcess.local`). :class:`OverWire` sends to a driver session; a
driver failure (C-WIRE-5) is kept, with its evidence, and ends the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from simclock.lowlevel import Handle
from simclock_conformance.kit._harness import Rig
from simclock_conformance.protocol._backends import PythonBackend
from simclock_conformance.protocol._driver import DriverError
from simclock_conformance.protocol._engine import Engine

if TYPE_CHECKING:
    from simclock_conformance.protocol._wire_core import Session

__all__ = ["InProcess", "Local", "OverWire", "RigBackend", "Transport"]

Json = dict[str, Any]


class Local(Protocol):
    """A clock of the engine, in this process: what a subclass's invariants may inspect.

    ``clock`` is the clock object; ``handles`` every entry the engine made on it
    (children of callbacks too), by entry id in push order; ``fired`` the
    firings of the current (or last) advance, as the reply carries them.
    """

    clock: Any
    handles: dict[str, Handle]
    fired: list[Json]


class Transport(Protocol):
    """One backend behind the protocol: requests in, replies out."""

    features: tuple[str, ...]
    shows_program: bool
    """Whether a failure's message carries the program as protocol lines (a driver run)."""

    def send(self, request: Json) -> Json | None:
        """The reply to ``request``; ``None`` once the backend failed (the run then stops)."""

    def local(self, clock: str) -> Local | None:
        """The clock ``clock`` as an object of this process; ``None`` over the wire."""

    def internal(self) -> BaseException | None:
        """The backend's exception behind the first ``internal`` reply, if it raised one."""


class InProcess:
    """The protocol engine over a Python backend, as ``serve`` runs it (C-WIRE-8)."""

    shows_program = False

    def __init__(self, backend: PythonBackend) -> None:
        self.engine = Engine(backend)
        self.features = self.engine.features

    def send(self, request: Json) -> Json | None:
        """The engine's reply: never ``None``, the engine answers everything."""
        return self.engine.handle(request)

    def local(self, clock: str) -> Local | None:
        """The engine's record of ``clock``: its clock object, handles and firings."""
        return self.engine.clocks.get(clock)

    def internal(self) -> BaseException | None:
        """The exception the engine answered ``internal`` for first (a failure's root)."""
        return self.engine.internal


class RigBackend(PythonBackend):
    """Clocks made by a machine's ``new_rig(start)``, listened to by their :class:`Rig`.

    The public :class:`~simclock_conformance.OracleMachine` makes its backend
    this way; ``rigs`` keeps each rig by its clock object's ``id`` so the
    machine can hand them to a subclass. The features are found once per
    machine class (a probe clock per program would cost a clock each time).
    """

    _features_of: dict[type, tuple[str, ...]] = {}  # noqa: RUF012  (a cache shared on purpose)

    def __init__(self, new_rig: Callable[[int], Rig], owner: type) -> None:
        def factory(seed: int, bus: object, start_ns: int = 0) -> Any:
            return new_rig(start_ns).clock

        super().__init__(factory, f"{owner.__name__}.new_rig")
        self.new_rig = new_rig
        self.owner = owner
        self.rigs: dict[int, Rig] = {}

    def make(self, seed: int, start: int | None) -> tuple[Any, Callable[[], list[Any]]]:
        """The clock of ``new_rig(start)``; its failures are its rig's failure events."""
        rig = self.new_rig(start or 0)
        self.rigs[id(rig.clock)] = rig

        def failures() -> list[Any]:
            return [
                (str(e.details.get("callback")), e.at_ns, str(e.details.get("error_message")))
                for e in rig.failures()
            ]

        return rig.clock, failures

    def features(self) -> tuple[str, ...]:
        """``start_ns`` (``new_rig`` takes a start), ``peek`` and ``rate`` when the clock has them.

        Found once per machine class, on its first clock; the machine asks
        for no ``stats`` and draws no random values, so those are not probed.
        """
        found = self._features_of.get(self.owner)
        if found is None:
            clock, _ = self.make(0, None)
            found = tuple(
                f
                for f, method in (("peek", "next_event_ns"), ("rate", "schedule_rate"))
                if callable(getattr(clock, method, None))
            )
            found = self._features_of[self.owner] = (*found, "start_ns")
        return found


class OverWire:
    """A driver session (SPEC §18): every request is a line to the driver and back."""

    shows_program = True

    def __init__(self, session: Session, failures: list[DriverError]) -> None:
        self.session = session
        self.failures = failures
        self.features = tuple(session.features)

    def send(self, request: Json) -> Json | None:
        """The driver's reply; ``None`` after a driver failure (kept in ``failures``)."""
        if self.failures:
            return None
        try:
            return self.session.send(request)
        except DriverError as failure:
            self.failures.append(failure)
            self.session.failed()
            return None

    def local(self, clock: str) -> Local | None:
        """Nothing: the driver's clocks live in another process."""
        return None

    def internal(self) -> BaseException | None:
        """Nothing: a driver's exception stays in its process; its reply says what it was."""
        return None
