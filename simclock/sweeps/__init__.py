"""Seed sweeps on Dask: many runs of one scenario, one table (SPEC §16, C-SWEEP-1..5).

``simclock.sweep(scenario, "0:1000", out="sweep-pendulum")`` runs every seed
as an independent run and returns the table (also written as Parquet and
CSV); [`summarise`][simclock.sweeps.summarise] and `plot_metrics` are behind
``simclock sweep report``.
"""

from simclock.sweeps._report import plot_metrics, summarise
from simclock.sweeps._sweep import SweepAuditError, parse_seeds, sweep
from simclock.sweeps._table import read_table, write_csv, write_parquet
from simclock.sweeps._task import Runner

__all__ = [
    "Runner",
    "SweepAuditError",
    "parse_seeds",
    "plot_metrics",
    "read_table",
    "summarise",
    "sweep",
    "write_csv",
    "write_parquet",
]

# Each public name reports its public namespace (simclock, simclock.lowlevel, ...).
from simclock.core._public import fixup_module_metadata

fixup_module_metadata("simclock.sweeps", globals(), __all__)
