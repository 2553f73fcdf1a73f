"""The file-level refusals and the chunk splitter under the name the tests import.

Everything here is defined in `._raw`, the one reader of raw MCAP records;
modules of the package import it from there.
"""

from simclock.recording._raw import (
    DAMAGE_ERRORS,
    RecordingError,
    _split_records,
    refuse,
    split_chunk,
)

__all__ = ["DAMAGE_ERRORS", "RecordingError", "_split_records", "refuse", "split_chunk"]
