"""Independent reference schedulers: plain lists, sorted or scanned, no heap.

They never import simclock's implementation (an import-linter contract checks
this); they exist so property tests can compare simclock to something written
separately from the SPEC.
"""

from simclock_oracles._reference import FailureRecord, ReferenceClock
from simclock_oracles._sampling import SamplingReference, sampling_batch

__all__: list[str] = [
    "FailureRecord",
    "ReferenceClock",
    "SamplingReference",
    "sampling_batch",
]
