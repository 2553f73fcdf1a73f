"""Public home of the sampling-record scheduler of SPEC §12.

``from simclock.records import SamplingEvents``. The implementation lives in
``simclock.records._sampling``; see its docstring for the scope (no callbacks, no wall
clock, no deadline guarantee) and the exact ``ValueError`` messages. The public
names are exactly that module's ``__all__`` (one list, kept there).
"""

from simclock.records import _sampling
from simclock.records._sampling import MILLIVOLTS_MAX as MILLIVOLTS_MAX
from simclock.records._sampling import MILLIVOLTS_MIN as MILLIVOLTS_MIN
from simclock.records._sampling import SENSOR_ID_PATTERN as SENSOR_ID_PATTERN
from simclock.records._sampling import SamplingEvents as SamplingEvents
from simclock.records._sampling import SamplingRecord as SamplingRecord

__all__ = list(_sampling.__all__)

# Each public name reports its public namespace (simclock, simclock.lowlevel, ...).
from simclock.core._public import fixup_module_metadata

fixup_module_metadata("simclock.records", globals(), __all__)
