"""The sweep table: one row per seed, written the same bytes wherever it was computed (C-SWEEP-1).

Columns, in this order: ``seed`` (int64), ``status`` (``ok`` / ``error``),
``message`` (the error, null when ok), ``fingerprint`` (C-X-FP, null when the
run raised), ``messages`` (bus messages in the trace), ``callback_failures``
(component callbacks that raised, C-ERR-1), then one column
``metric.<name>`` per scenario metric in declaration order (``float64``, or
``int64`` for integer kinds). Rows are sorted by seed; nothing in a row
depends on the worker, the wall clock or the order runs finished.

Files in a sweep directory (``--out``):

* ``sweep.parquet`` and ``sweep.csv``: the table. The Parquet file has a fixed
  schema, no pandas metadata and no timestamps; the CSV writes floats with
  ``repr`` (shortest round-trip text) and nulls as empty fields. Both are
  written to a temporary name and renamed, so a reader never sees half a file.
* ``rows.partial.jsonl``: rows flushed one by one as runs finish, so a sweep
  killed midway keeps them (C-SWEEP-5); merged into the table at the end.
* ``sweep.json``: the scenario's name and content digest: a directory holding
  another scenario's rows is refused, never mixed.
* ``timing.csv``: seed, pass (``run`` / ``audit``), worker, wall and CPU time: what
  varies from run to run lives here, never in the table.
* ``runs/seed-<seed>.mcap``: recordings kept by ``--record``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simclock.core._errors import SimclockValueError
from simclock.sim._scenario_file import Scenario

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "BASE_COLUMNS",
    "PARTIAL_NAME",
    "TABLE_CSV",
    "TABLE_PARQUET",
    "SweepDir",
    "metric_column",
    "read_table",
    "rows_to_table",
    "scenario_digest",
    "table_schema",
    "write_csv",
    "write_parquet",
]

TABLE_PARQUET = "sweep.parquet"
TABLE_CSV = "sweep.csv"
PARTIAL_NAME = "rows.partial.jsonl"
MANIFEST_NAME = "sweep.json"
TIMING_NAME = "timing.csv"
RUNS_DIR = "runs"

# (name, Arrow type, nullable). pyarrow is imported where a table is built, not with
# the package: ``import simclock`` stays light for the commands that never sweep.
BASE_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("seed", "int64", False),
    ("status", "string", False),
    ("message", "string", True),
    ("fingerprint", "string", True),
    ("messages", "int64", True),
    ("callback_failures", "int64", True),
)


def metric_column(name: str) -> str:
    """The table column of metric ``name``: ``metric.<name>``."""
    return f"metric.{name}"


def table_schema(scenario: Scenario) -> pa.Schema:
    """The fixed schema of ``scenario``'s sweep table (no metadata, so no timestamps)."""
    import pyarrow as pa

    fields = [pa.field(n, pa.type_for_alias(t), nullable=null) for n, t, null in BASE_COLUMNS]
    for m in scenario.metrics:
        fields.append(pa.field(metric_column(m.name), pa.int64() if m.integer else pa.float64()))
    return pa.schema(fields)


def rows_to_table(rows: Iterable[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """A table of ``rows`` sorted by seed (C-SWEEP-1). O(n log n)."""
    import pyarrow as pa

    ordered = sorted(rows, key=lambda r: int(r["seed"]))
    return pa.Table.from_pylist([dict(r) for r in ordered], schema=schema)


def write_parquet(table: pa.Table, path: Path) -> None:
    """Write ``table`` deterministically: same rows give the same bytes, run after run.

    Parquet's footer holds ``created_by`` (the pyarrow version, constant for one
    install) and no creation time; the Arrow schema stored with it has no
    metadata. One row group, fixed compression.
    """
    import pyarrow.parquet as pq

    _replace(
        path,
        lambda tmp: pq.write_table(
            table.replace_schema_metadata(None),
            tmp,
            compression="zstd",
            compression_level=3,
            row_group_size=max(1, table.num_rows),
            write_statistics=True,
        ),
    )


def _csv_cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, float):
        # repr is the shortest text that reads back as the same float.
        return repr(value)
    return value


def write_csv(table: pa.Table, path: Path) -> None:
    """Write ``table`` as CSV: header, ``\\n`` line ends, floats by ``repr``, null empty."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in table.to_pylist():
        writer.writerow([_csv_cell(row[name]) for name in table.column_names])
    data = buffer.getvalue().encode("utf-8")
    _replace(path, lambda tmp: Path(tmp).write_bytes(data))


def _replace(path: Path, write: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    write(str(tmp))
    os.replace(tmp, path)


def read_table(path: str | os.PathLike[str]) -> pa.Table:
    """Read a sweep table from ``.parquet`` or ``.csv``; ``ValueError`` for anything else.

    A file without the sweep's base columns (seed, status, ...) is refused too.
    """
    import pyarrow.parquet as pq

    file = Path(path)
    if file.suffix == ".parquet":
        table = pq.read_table(file)
    elif file.suffix == ".csv":
        import pyarrow.csv as pacsv

        table = pacsv.read_csv(file)
    else:
        raise SimclockValueError(
            f"table must be a .parquet or .csv file written by simclock sweep, got {str(file)!r}"
        )
    missing = [n for n, _, _ in BASE_COLUMNS if n not in table.column_names]
    if missing:
        raise SimclockValueError(
            f"table {str(file)!r} is not a sweep table: it has no column {missing[0]!r}; "
            "give the sweep.parquet or sweep.csv that simclock sweep wrote"
        )
    return table


def scenario_digest(scenario: Scenario, model: bytes | None = None) -> str:
    """SHA-256 of the scenario file and its MuJoCo model (what a resumed sweep must match).

    ``model``: the model file's bytes when the caller has read them already
    (the sweep reads them once, for this digest and for the workers), else
    the file is read here.
    """
    digest = hashlib.sha256()
    for file in (scenario.path, scenario.physics.mujoco_model):
        if file is scenario.physics.mujoco_model and model is not None:
            digest.update(model)
        elif file is not None and Path(file).is_file():
            digest.update(Path(file).read_bytes())
        digest.update(b"\x00")
    return digest.hexdigest()


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def rows_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The columns where two rows differ (NaN equals NaN), in ``a``'s order."""
    return [k for k in a if not _same(a[k], b.get(k))]


class SweepDir:
    """A sweep's output directory: the table, its partial rows and the timing file (C-SWEEP-5).

    Opening it reads the rows already there (the table, then the partial file;
    a torn last line from a killed process is ignored) and refuses a directory
    that holds another scenario's sweep. `append` adds a row and
    `flush` writes the rows added so far to disk (the sweep flushes once
    per finished task); `finish` writes the table and drops the partial
    file. ``model``: the model file's bytes if already read (see
    `scenario_digest`).
    """

    def __init__(
        self, path: str | os.PathLike[str], scenario: Scenario, model: bytes | None = None
    ) -> None:
        self.path = Path(path)
        self.schema = table_schema(scenario)
        manifest = {
            "scenario": scenario.name,
            "scenario_sha256": scenario_digest(scenario, model),
            "columns": self.schema.names,
        }
        self.path.mkdir(parents=True, exist_ok=True)
        manifest_file = self.path / MANIFEST_NAME
        if manifest_file.exists():
            held = json.loads(manifest_file.read_text(encoding="utf-8"))
            if held != manifest:
                raise SimclockValueError(
                    f"out {str(self.path)!r} holds a sweep of another scenario or version "
                    f"({held.get('scenario')!r}, sha256 {str(held.get('scenario_sha256'))[:12]}); "
                    "use an empty directory or the same scenario file"
                )
        else:
            text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
            _replace(manifest_file, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
        self.rows: dict[int, dict[str, Any]] = {}
        table_file = self.path / TABLE_PARQUET
        if table_file.exists():
            import pyarrow.parquet as pq

            for row in pq.read_table(table_file).to_pylist():
                self.rows[int(row["seed"])] = row
        partial = self.path / PARTIAL_NAME
        if partial.exists():
            for line in partial.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line torn by a kill: that seed simply runs again
                self.rows[int(row["seed"])] = row
        self._partial = partial.open("a", encoding="utf-8")
        timing = self.path / TIMING_NAME
        new_timing = not timing.exists()
        self._timing = timing.open("a", encoding="utf-8", newline="")
        self._timing_csv = csv.writer(self._timing, lineterminator="\n")
        if new_timing:
            self._timing_csv.writerow(["seed", "pass", "worker", "wall_s", "cpu_s"])

    def append(self, row: Mapping[str, Any]) -> None:
        """Add one finished row to the partial file (on disk at the next `flush`)."""
        self.rows[int(row["seed"])] = dict(row)
        # allow_nan: a metric may be NaN (an unstable physics run); JSON reads it back.
        self._partial.write(json.dumps(dict(row), sort_keys=True) + "\n")

    def timing(self, seed: int, kind: str, worker: str, wall_ns: int, cpu_ns: int) -> None:
        """Note where and how long a run took, wall and CPU (never part of the table)."""
        self._timing_csv.writerow(
            [seed, kind, worker, f"{wall_ns / 1e9:.6f}", f"{cpu_ns / 1e9:.6f}"]
        )

    def flush(self) -> None:
        """Hand the rows and timings added so far to the operating system (C-SWEEP-5).

        A process killed after this keeps them; a kill during a write tears at
        most the last line, which the next opening ignores.
        """
        self._partial.flush()
        self._timing.flush()

    def write_run(self, seed: int, data: bytes) -> Path:
        """Keep a run's recording as ``runs/seed-<seed>.mcap``."""
        runs = self.path / RUNS_DIR
        runs.mkdir(exist_ok=True)
        target = runs / f"seed-{seed}.mcap"
        _replace(target, lambda tmp: Path(tmp).write_bytes(data))
        return target

    def finish(self) -> pa.Table:
        """Write ``sweep.parquet`` and ``sweep.csv`` from every row, then drop the partial file."""
        table = rows_to_table(self.rows.values(), self.schema)
        write_parquet(table, self.path / TABLE_PARQUET)
        write_csv(table, self.path / TABLE_CSV)
        self._partial.close()
        (self.path / PARTIAL_NAME).unlink(missing_ok=True)
        self._partial = (self.path / PARTIAL_NAME).open("a", encoding="utf-8")
        return table

    def close(self) -> None:
        """Close the open files; rows already flushed stay for the next run."""
        self._partial.close()
        self._timing.close()
        partial = self.path / PARTIAL_NAME
        if partial.exists() and partial.stat().st_size == 0:
            partial.unlink()


def spread(seeds: Sequence[int], k: int) -> list[int]:
    """``k`` of ``seeds`` (sorted) spread evenly over them: first, last and between."""
    n = len(seeds)
    if k >= n:
        return list(seeds)
    if k == 1:
        return [seeds[n // 2]]
    return sorted({seeds[round(i * (n - 1) / (k - 1))] for i in range(k)})
