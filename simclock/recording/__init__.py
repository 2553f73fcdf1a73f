"""Recording runs to MCAP, fingerprints, and replaying recordings (SPEC §5, §8)."""

from simclock.recording._checks import RecordingError
from simclock.recording._clock import ReplayClock
from simclock.recording._draws import ReplayRandomSource
from simclock.recording._fingerprint import Fingerprinter, RawPayload, trace_fingerprint
from simclock.recording._reader import RecordingInfo, RecordingReader, open_recording
from simclock.recording._recorder import Recorder
from simclock.recording._recover import RecoveryReport, recover

__all__ = [
    "Fingerprinter",
    "RawPayload",
    "Recorder",
    "RecordingError",
    "RecordingInfo",
    "RecordingReader",
    "RecoveryReport",
    "ReplayClock",
    "ReplayRandomSource",
    "open_recording",
    "recover",
    "trace_fingerprint",
]

# Each public name reports its public namespace (simclock, simclock.lowlevel, ...).
from simclock.core._public import fixup_module_metadata

fixup_module_metadata("simclock.recording", globals(), __all__)
