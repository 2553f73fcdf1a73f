"""Recording runs to MCAP, fingerprints, and replaying recordings (SPEC §5, §8)."""

from simclock.recording._fingerprint import Fingerprinter, RawPayload, trace_fingerprint
from simclock.recording._recorder import Recorder
from simclock.recording._replay import (
    RecordingError,
    RecordingInfo,
    RecordingReader,
    ReplayClock,
    ReplayRandomSource,
)

__all__ = [
    "Fingerprinter",
    "RawPayload",
    "Recorder",
    "RecordingError",
    "RecordingInfo",
    "RecordingReader",
    "ReplayClock",
    "ReplayRandomSource",
    "trace_fingerprint",
]
