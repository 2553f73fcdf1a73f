"""Recording runs to MCAP, fingerprints, replaying recordings and ROS 2 bags (SPEC §5, §6, §19)."""

from simclock.recording._bag import BagError
from simclock.recording._clock import ReplayClock
from simclock.recording._draws import ReplayRandomSource
from simclock.recording._export import export_ros2
from simclock.recording._fingerprint import Fingerprinter, RawPayload, trace_fingerprint
from simclock.recording._raw import RecordingError
from simclock.recording._reader import RecordingInfo, RecordingReader, open_recording
from simclock.recording._recorder import Recorder
from simclock.recording._recover import RecoveryReport, recover

__all__ = [
    "BagError",
    "Fingerprinter",
    "RawPayload",
    "Recorder",
    "RecordingError",
    "RecordingInfo",
    "RecordingReader",
    "RecoveryReport",
    "ReplayClock",
    "ReplayRandomSource",
    "export_ros2",
    "open_recording",
    "recover",
    "trace_fingerprint",
]

# Each public name reports its public namespace (simclock, simclock.lowlevel, ...).
from simclock.core._public import fixup_module_metadata

fixup_module_metadata("simclock.recording", globals(), __all__)
