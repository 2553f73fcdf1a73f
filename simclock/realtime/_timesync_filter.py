"""``TimesyncFilter``: a peer clock estimated from two-way time exchanges (C-SYS-5).

Pure and deterministic: no socket, no thread, no clock read. Every sample
comes with explicit host times, so the same samples give the same estimate
bit for bit, and the filter is tested by feeding it numbers.

One sample is a two-way exchange (MAVLink ``TIMESYNC``, NTP, PTP's delay
request): the host sent at ``send_ns``, the peer stamped ``peer_ns``, the host
received the answer at ``recv_ns``. Its offset is ``peer_ns - (send_ns +
recv_ns) / 2`` at the host's midpoint; the round trip ``rtt = recv_ns -
send_ns`` bounds the offset's error to ``rtt / 2`` (the unknown split of the
delay between the two directions).

The estimate (what SPEC does not say):

- samples with ``rtt > max_rtt_ns`` are dropped (``SLOW``), as PX4 and
  MAVROS do; ``rtt <= 0`` or ``peer_ns <= 0`` is ``MALFORMED``;
- the kept samples (the last ``window``, none older than ``window_ns``) are
  fitted with a weighted least-squares line, offset against host time, so
  the peer's drift (its skew) is estimated with the offset. A sample's weight
  is ``1 / (q**2 + quality_floor_ns**2)`` with ``q = (rtt - min_rtt) / 2``:
  the excess of its round trip over the window's fastest bounds how far it
  can be from the truth, so fast exchanges dominate and slow ones count
  little. The skew (the line's slope) is shrunk towards a prior, 0 at first,
  with a spread of ``skew_sigma_ppb`` (a ridge term), so a window of a few
  samples spanning a second cannot swing it; the window's span soon outweighs
  the prior. The skew survives a reset as the next prior, since a restarted
  peer still runs on the same oscillator. It is clamped to ``max_skew_ppb``;
- from 40 samples on, the offset is taken from hard bounds instead of the
  weighted mean: every exchange puts the truth within ``rtt / 2`` of its
  offset, whatever the delays; carried along the fitted skew (widened by the
  skew's uncertainty) the bounds of the newest 100 samples intersect, and the
  estimate is the middle of the intersection. In simulation (1-5 ms each
  way) that halves the p99 error of the weighted mean; a lopsided, slow
  exchange cannot pull it;
- a sample further than ``max_deviation_ns`` from the line is an ``OUTLIER``
  and not used; ``reset_after`` outliers in a row that agree with each other
  (within ``max_rtt_ns``) are a jump of the peer's clock: the filter starts
  again from those samples (``RESET``), and the reset is counted. A clock that
  went back is a restart of the peer;
- ``converged`` once the window holds ``converge_samples`` samples (30: in
  simulation with heavy-tailed delays, the error in the second after
  convergence is half what it is after 10).

Two readings (C-SYS-5). `peer_ns` is the estimate of the peer's own clock:
it follows every correction and every reset, so it can go back. `timeline_ns`
is what a clock on the peer's time shows, and never decreases (C-SYS-1): a
correction of the estimate is slewed at ``slew_ppb`` (at most 0.5 % by
default), never stepped; a reset is absorbed into ``epoch_ns`` so that the
timeline carries on from where it was at the peer's rate. Both are O(1).
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

from simclock.core._enum import CheckedStrEnum
from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import safe_repr

__all__ = ["TimesyncFilter", "TimesyncState", "TimesyncVerdict"]

_BILLION = 1_000_000_000
# From this many samples on, the offset is the middle of the exchanges' bounds.
_BOUNDS_AFTER = 40
# ... over this many of the newest: an error of the skew moves the bounds of older
# samples (50 ppm over 25 s is 1.25 ms), over the newest 100 (5 s at 20 Hz) far less.
_BOUNDS_OVER = 100


class TimesyncVerdict(CheckedStrEnum):
    """What [`TimesyncFilter.add_sample`][simclock.TimesyncFilter.add_sample] did with a sample."""

    ACCEPTED = "ACCEPTED"
    """Used: the estimate moved to take it in."""
    SLOW = "SLOW"
    """Dropped: its round trip was over ``max_rtt_ns``."""
    OUTLIER = "OUTLIER"
    """Not used: further than ``max_deviation_ns`` from the estimate (kept as a reset candidate)."""
    RESET = "RESET"
    """The peer's clock jumped: the filter started again from the last outliers and this one."""
    MALFORMED = "MALFORMED"
    """Dropped: the host times are out of order (``recv_ns <= send_ns``) or ``peer_ns <= 0``."""


@dataclass(frozen=True, slots=True)
class TimesyncState:
    """A snapshot of a time-sync estimate, as published on ``/simclock/timesync`` (C-SYS-5).

    ``at_ns`` is the host time of the snapshot; ``offset_ns`` the estimated
    peer clock minus the host clock then; ``skew_ppb`` the peer's estimated
    rate error in parts per billion; ``rtt_ns`` the round trip of the last
    sample used (``None`` before one); ``samples`` how many samples the
    current estimate uses; ``resets`` how many times the peer's clock jumped;
    ``epoch_ns`` what the never-decreasing timeline adds to the peer estimate
    (the sum of the absorbed jumps); ``slew_ns`` the correction still being
    slewed; ``last_sample_ns`` the host time of the last sample used.
    ``accepted``, ``slow``, ``outliers`` and ``malformed`` count verdicts
    since the start. The link's counters (``requests``, ``unmatched``,
    ``foreign``, ``silent``) are filled by a transport such as
    [`MavlinkTimeSource`][simclock.MavlinkTimeSource] and stay 0/False on a bare filter.
    """

    at_ns: int
    offset_ns: int
    skew_ppb: int
    rtt_ns: int | None
    converged: bool
    samples: int
    resets: int
    epoch_ns: int
    slew_ns: int
    last_sample_ns: int | None
    accepted: int
    slow: int
    outliers: int
    malformed: int
    requests: int = 0
    unmatched: int = 0
    foreign: int = 0
    silent: bool = False

    def to_json(self) -> dict[str, Any]:
        """A plain dict of every field (the payload published on the bus)."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class _Sample:
    mid_ns: int
    offset_ns: int
    rtt_ns: int


class _Model:
    """peer(h) = base_peer + (h - base_host) + skew*(h - base_host); timeline adds epoch + slew.

    The slew ``slew0`` (ns) is worked off linearly from host time ``slew_at`` at
    ``slew_rate`` ns per ns, and is 0 from ``slew_end`` on. Immutable by use:
    a new model replaces the old one.
    """

    __slots__ = (
        "base_host",
        "base_peer",
        "epoch",
        "skew",
        "slew0",
        "slew_at",
        "slew_end",
        "slew_rate",
        "slew_signed",
    )

    def __init__(
        self,
        base_host: int,
        base_peer: int,
        skew: float,
        epoch: int,
        slew0: int,
        slew_at: int,
        slew_rate: float,
    ) -> None:
        self.base_host = base_host
        self.base_peer = base_peer
        self.skew = skew
        self.epoch = epoch
        self.slew0 = slew0
        self.slew_at = slew_at
        self.slew_rate = slew_rate
        self.slew_signed = math.copysign(slew_rate, slew0)
        self.slew_end = slew_at + math.ceil(abs(slew0) / slew_rate)

    def peer(self, host_ns: int) -> int:
        d = host_ns - self.base_host
        return self.base_peer + d + int(self.skew * d)

    def slew(self, host_ns: int) -> int:
        if host_ns >= self.slew_end:
            return 0
        return self.slew0 - int(self.slew_signed * max(0, host_ns - self.slew_at))

    def timeline(self, host_ns: int) -> int:
        d = host_ns - self.base_host
        value = self.base_peer + d + int(self.skew * d) + self.epoch
        if host_ns < self.slew_end:
            value += self.slew0 - int(self.slew_signed * max(0, host_ns - self.slew_at))
        return value


_INT64 = 2**63


def _check_int(value: object, name: str, low: int, high: int = _INT64 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SimclockTypeError(
            f"{name} must be an int in [{low}, {high}], got {type(value).__name__} "
            f"{safe_repr(value)}"
        )
    if not low <= value <= high:
        raise SimclockValueError(
            f"{name} must be an int in [{low}, {high}], got {safe_repr(value)}"
        )
    return int(value)


def _check_stamp(value: object, name: str) -> int:
    """A time stamp: an int that fits MAVLink's int64 (and a float's range)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SimclockTypeError(
            f"{name} must be an int of ns, got {type(value).__name__} {safe_repr(value)}"
        )
    if not -_INT64 <= value < _INT64:
        raise SimclockValueError(
            f"{name} must be an int64 of ns (|value| < 2**63), got {safe_repr(value)}"
        )
    return int(value)


class TimesyncFilter:
    """A peer clock estimated from two-way exchanges; pure and deterministic (C-SYS-5).

    ``TimesyncFilter(*, max_rtt_ns=50 ms, max_deviation_ns=100 ms, reset_after=3,
    window=512, window_ns=60 s, converge_samples=30, skew_sigma_ppb=100_000,
    max_skew_ppb=1_000_000, quality_floor_ns=500 µs, slew_ppb=5_000_000)``.
    Feed it `add_sample`; read `peer_ns`, `timeline_ns` and `state`. Host times
    passed to `add_sample` should not go back; an older ``at_ns`` is taken as
    the latest one seen. Not thread-safe: a transport serialises the calls;
    `timeline_ns` and `peer_ns` read one immutable model and may be called
    from any thread. The module docstring says how the estimate is made.
    """

    def __init__(
        self,
        *,
        max_rtt_ns: int = 50_000_000,
        max_deviation_ns: int = 100_000_000,
        reset_after: int = 3,
        window: int = 512,
        window_ns: int = 60_000_000_000,
        converge_samples: int = 30,
        skew_sigma_ppb: int = 100_000,
        max_skew_ppb: int = 1_000_000,
        quality_floor_ns: int = 500_000,
        slew_ppb: int = 5_000_000,
    ) -> None:
        self.max_rtt_ns = _check_int(max_rtt_ns, "max_rtt_ns", 1)
        self.max_deviation_ns = _check_int(max_deviation_ns, "max_deviation_ns", 1)
        self.reset_after = _check_int(reset_after, "reset_after", 1, 1_000_000)
        self.window = _check_int(window, "window", 2, 1_000_000)
        self.window_ns = _check_int(window_ns, "window_ns", 1)
        self.converge_samples = _check_int(converge_samples, "converge_samples", 1, 1_000_000)
        self.skew_sigma_ppb = _check_int(skew_sigma_ppb, "skew_sigma_ppb", 1, _BILLION)
        # Below 50 %: the timeline's rate stays positive whatever the skew and slew.
        self.max_skew_ppb = _check_int(max_skew_ppb, "max_skew_ppb", 0, _BILLION // 4)
        self.quality_floor_ns = _check_int(quality_floor_ns, "quality_floor_ns", 1)
        self.slew_ppb = _check_int(slew_ppb, "slew_ppb", 1, _BILLION // 4)
        # Invariant: _samples holds the samples of the current estimate, oldest first.
        self._samples: deque[_Sample] = deque(maxlen=self.window)
        # Consecutive outliers that agree with each other: the reset candidates.
        self._candidates: list[_Sample] = []
        self._skew = 0.0
        self._skew_prior = 0.0
        self._offset_ref = 0
        # Invariant: model is None until the first accepted sample; replaced, never mutated.
        self.model: _Model | None = None
        self._latest_at = 0
        self._last_rtt: int | None = None
        self._last_sample_ns: int | None = None
        self._resets = 0
        self._counts = {verdict: 0 for verdict in TimesyncVerdict}
        self.last_jump_ns = 0
        """The peer clock's jump at the last reset (negative: the peer restarted)."""

    # -- input ------------------------------------------------------------------

    def add_sample(
        self, send_ns: int, peer_ns: int, recv_ns: int, *, at_ns: int | None = None
    ) -> TimesyncVerdict:
        """Take one exchange in; return what was done with it.

        ``send_ns`` and ``recv_ns`` are host times, ``peer_ns`` the peer's
        stamp, all int ns. ``at_ns`` (default ``recv_ns``) is the host time
        from which the new estimate applies: the timeline is continuous there.
        Non-int arguments are a ``TypeError`` and change nothing.
        """
        send = _check_stamp(send_ns, "send_ns")
        peer = _check_stamp(peer_ns, "peer_ns")
        recv = _check_stamp(recv_ns, "recv_ns")
        at = recv if at_ns is None else _check_stamp(at_ns, "at_ns")
        at = max(at, self._latest_at)
        self._latest_at = at
        verdict = self._classify(send, peer, recv, at)
        self._counts[verdict] += 1
        return verdict

    def _classify(self, send: int, peer: int, recv: int, at: int) -> TimesyncVerdict:
        rtt = recv - send
        if rtt <= 0 or peer <= 0:
            return TimesyncVerdict.MALFORMED
        if rtt > self.max_rtt_ns:
            return TimesyncVerdict.SLOW
        # Twice the midpoint stays an int: offset = peer - (send + recv) / 2, rounded down.
        mid = (send + recv) // 2
        sample = _Sample(mid, peer - mid, rtt)
        model = self.model
        if model is None:
            self._start([sample], at)
            return TimesyncVerdict.ACCEPTED
        deviation = sample.offset_ns - (model.peer(mid) - mid)
        if abs(deviation) <= self.max_deviation_ns:
            self._candidates.clear()
            self._samples.append(sample)
            self._refit(at)
            return TimesyncVerdict.ACCEPTED
        # An outlier: a candidate for a reset if it agrees with the ones before it.
        if self._candidates and any(
            abs(sample.offset_ns - c.offset_ns) > self.max_rtt_ns for c in self._candidates
        ):
            self._candidates.clear()
        self._candidates.append(sample)
        if len(self._candidates) < self.reset_after:
            return TimesyncVerdict.OUTLIER
        candidates = self._candidates
        self._candidates = []
        before = model.peer(at)
        self._start(candidates, at)
        assert self.model is not None
        self.last_jump_ns = self.model.peer(at) - before
        self._resets += 1
        return TimesyncVerdict.RESET

    # -- the estimate -----------------------------------------------------------

    def _start(self, samples: list[_Sample], at: int) -> None:
        """Start the estimate from ``samples``; keep the timeline continuous at ``at``."""
        old = self.model
        self._samples.clear()
        self._samples.extend(samples)
        self._offset_ref = samples[0].offset_ns
        # A restarted peer runs on the same oscillator: its skew is the prior.
        self._skew_prior = self._skew
        base_host, base_peer, skew = self._fit()
        fresh = _Model(base_host, base_peer, skew, 0, 0, at, self.slew_ppb / _BILLION)
        if old is not None:
            # Absorb the jump: the timeline carries on from its value at ``at``.
            epoch = old.timeline(at) - fresh.peer(at)
            fresh = _Model(base_host, base_peer, skew, epoch, 0, at, fresh.slew_rate)
        self.model = fresh
        self._note(samples[-1])

    def _anchor(self) -> None:
        """Make the timeline the peer estimate again, dropping epoch and slew: a step.

        For a transport whose timeline nobody has read yet (MavlinkTimeSource
        before its constructor returns), so that the first seconds are not spent
        slewing off the first samples' errors; never call it once the timeline
        has been read (C-SYS-1).
        """
        m = self.model
        if m is not None:
            self.model = _Model(m.base_host, m.base_peer, m.skew, 0, 0, m.slew_at, m.slew_rate)

    def _refit(self, at: int) -> None:
        old = self.model
        assert old is not None
        newest = self._samples[-1]
        # Age limit: drop samples older than window_ns before the newest (keep two).
        while len(self._samples) > 2 and newest.mid_ns - self._samples[0].mid_ns > self.window_ns:
            self._samples.popleft()
        base_host, base_peer, skew = self._fit()
        fresh = _Model(base_host, base_peer, skew, old.epoch, 0, at, old.slew_rate)
        # Slew, never step: what the timeline shows at ``at`` stays, the difference
        # to the new estimate is worked off at slew_ppb.
        slew = old.timeline(at) - fresh.timeline(at)
        self.model = _Model(base_host, base_peer, skew, old.epoch, slew, at, old.slew_rate)
        self._note(newest)

    def _note(self, sample: _Sample) -> None:
        self._last_rtt = sample.rtt_ns
        self._last_sample_ns = sample.mid_ns + (sample.rtt_ns + 1) // 2

    def _fit(self) -> tuple[int, int, float]:
        """The weighted least-squares line through the window: (base_host, base_peer, skew)."""
        samples = self._samples
        ref_host = samples[-1].mid_ns
        ref_offset = self._offset_ref
        min_rtt = min(s.rtt_ns for s in samples)
        floor2 = float(self.quality_floor_ns) ** 2
        sw = swx = swy = 0.0
        for s in samples:
            q = (s.rtt_ns - min_rtt) / 2
            w = 1.0 / (q * q + floor2)
            sw += w
            swx += w * (s.mid_ns - ref_host)
            swy += w * (s.offset_ns - ref_offset)
        mx = swx / sw
        my = swy / sw
        # The skew, shrunk towards the prior (0, or the skew before the last reset)
        # with a spread of skew_sigma_ppb: a short or noisy window cannot swing it.
        prior = self._skew_prior
        sigma = self.skew_sigma_ppb / _BILLION
        sxx = 1.0 / (sigma * sigma)
        sxy = prior * sxx
        for s in samples:
            q = (s.rtt_ns - min_rtt) / 2
            w = 1.0 / (q * q + floor2)
            dx = (s.mid_ns - ref_host) - mx
            sxx += w * dx * dx
            sxy += w * dx * ((s.offset_ns - ref_offset) - my)
        limit = self.max_skew_ppb / _BILLION
        skew = min(limit, max(-limit, sxy / sxx))
        self._skew = skew
        intercept = my + skew * (0.0 - mx)  # the line at the newest sample (x = 0)
        if len(samples) >= _BOUNDS_AFTER:
            # Each exchange bounds the offset: |offset - truth| <= rtt / 2, whatever the
            # delays. Carried to x = 0 along the skew (widened by the skew's own
            # uncertainty, sqrt(1 / sxx) per ns of age), the bounds intersect; with
            # enough of them the middle of the intersection (of the overlap when they
            # disagree) beats the weighted mean, since no lopsided exchange can pull it
            # past its own half round trip.
            slack = math.sqrt(1.0 / sxx)
            low = -math.inf
            high = math.inf
            for s in itertools.islice(reversed(samples), _BOUNDS_OVER):
                x = s.mid_ns - ref_host
                at0 = (s.offset_ns - ref_offset) - skew * x
                half = s.rtt_ns / 2 - slack * x
                low = max(low, at0 - half)
                high = min(high, at0 + half)
            intercept = (low + high) / 2
        base_host = ref_host
        base_peer = ref_host + ref_offset + round(intercept)
        return base_host, base_peer, skew

    # -- readings ---------------------------------------------------------------

    def peer_ns(self, host_ns: int) -> int:
        """The estimate of the peer's own clock at host time ``host_ns``; follows resets.

        Before the first accepted sample there is no estimate: ``RuntimeError``.
        """
        host = _check_stamp(host_ns, "host_ns")
        model = self.model
        if model is None:
            raise _no_estimate()
        return model.peer(host)

    def timeline_ns(self, host_ns: int) -> int:
        """The never-decreasing timeline at ``host_ns``: peer estimate + epoch + slew (C-SYS-1).

        Non-decreasing in ``host_ns`` for one model, and continuous where a
        sample replaced the model. Before the first sample: ``RuntimeError``.
        """
        host = _check_stamp(host_ns, "host_ns")
        model = self.model
        if model is None:
            raise _no_estimate()
        return model.timeline(host)

    @property
    def converged(self) -> bool:
        """True once the current estimate uses ``converge_samples`` samples."""
        return self.model is not None and len(self._samples) >= self.converge_samples

    @property
    def resets(self) -> int:
        """How many times the peer's clock jumped (a restart or a forward jump)."""
        return self._resets

    def state(self, host_ns: int) -> TimesyncState:
        """A snapshot at host time ``host_ns`` (offsets 0 before the first sample)."""
        host_ns = _check_stamp(host_ns, "host_ns")
        model = self.model
        counts = self._counts
        if model is None:
            offset = skew = epoch = slew = 0
        else:
            offset = model.peer(host_ns) - host_ns
            skew = round(model.skew * _BILLION)
            epoch = model.epoch
            slew = model.slew(host_ns)
        return TimesyncState(
            at_ns=host_ns,
            offset_ns=offset,
            skew_ppb=skew,
            rtt_ns=self._last_rtt,
            converged=self.converged,
            samples=len(self._samples) if model is not None else 0,
            resets=self._resets,
            epoch_ns=epoch,
            slew_ns=slew,
            last_sample_ns=self._last_sample_ns,
            accepted=counts[TimesyncVerdict.ACCEPTED],
            slow=counts[TimesyncVerdict.SLOW],
            outliers=counts[TimesyncVerdict.OUTLIER] + counts[TimesyncVerdict.RESET],
            malformed=counts[TimesyncVerdict.MALFORMED],
        )


def _no_estimate() -> Exception:
    from simclock.core._errors import SimclockRuntimeError

    return SimclockRuntimeError(
        "the filter has no estimate yet: add_sample() has accepted no sample; "
        "feed it an exchange first"
    )
