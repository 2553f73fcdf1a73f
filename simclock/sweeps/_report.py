"""``simclock sweep report TABLE``: a per-metric summary and one PNG per metric over seeds.

Metrics are the table's ``metric.<name>`` columns. The summary gives, per
metric, how many seeds have a value, mean, min, median, 95th percentile
(nearest rank), max and the seed of the max; nulls (failed runs) are left
out. Each plot shows the metric against the seed (whole seeds on the axis),
failing seeds marked and, when the scenario is given, the metric's ``min``/``max``
bounds as lines: the table itself holds no bounds.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simclock.core._extras import require_extra

if TYPE_CHECKING:
    import pyarrow as pa
    from matplotlib.figure import Figure

    from simclock.sim._scenario_file import Scenario

__all__ = ["plot_metrics", "summarise"]

_PREFIX = "metric."


def _metric_names(table: pa.Table) -> list[str]:
    return [c for c in table.column_names if c.startswith(_PREFIX)]


def _rank(values: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted ``values`` (no interpolation: a value that occurred)."""
    return values[max(0, math.ceil(q * len(values)) - 1)]


def summarise(table: pa.Table) -> str:
    """The report text: seed count, failures (first ten seeds), then one line per metric."""
    rows = table.to_pylist()
    failing = [r["seed"] for r in rows if r["status"] != "ok"]
    seeds = [r["seed"] for r in rows]
    lines = [
        f"{len(rows)} seeds"
        + (f" ({min(seeds)}..{max(seeds)})" if seeds else "")
        + f", {len(rows) - len(failing)} ok, {len(failing)} error",
    ]
    if failing:
        shown = ", ".join(str(s) for s in failing[:10])
        more = f" and {len(failing) - 10} more" if len(failing) > 10 else ""
        lines.append(f"failing seeds: {shown}{more}")
        first = next(r for r in rows if r["status"] != "ok")
        lines.append(f"  seed {first['seed']}: {first['message']}")
    columns = "".join(f" {c:>12}" for c in ("mean", "min", "p50", "p95", "max"))
    lines.append(f"{'metric':<24} {'n':>6}{columns}  max@seed")
    for column in _metric_names(table):
        pairs = [(r[column], r["seed"]) for r in rows if r[column] is not None]
        name = column.removeprefix(_PREFIX)
        if not pairs:
            lines.append(f"{name:<24} {0:>6}  (no values)")
            continue
        values = sorted(float(v) for v, _ in pairs)
        top = max(pairs, key=lambda p: (float(p[0]), -p[1]))
        mean = math.fsum(values) / len(values)
        cells = [mean, values[0], _rank(values, 0.5), _rank(values, 0.95), values[-1]]
        lines.append(
            f"{name:<24} {len(values):>6} " + " ".join(f"{c:>12.6g}" for c in cells) + f"  {top[1]}"
        )
    return "\n".join(lines)


def plot_metrics(
    table: pa.Table, directory: str | os.PathLike[str], scenario: Scenario | None = None
) -> list[Path]:
    """One PNG per metric, ``<name>.png`` in ``directory``: value over seed, failing seeds red.

    With ``scenario`` (the one the sweep ran), each metric's bounds are drawn
    as horizontal lines.
    """
    require_extra("plot", "plotting sweep metrics")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    bounds = {m.name: (m.minimum, m.maximum) for m in scenario.metrics} if scenario else {}
    written = []
    for column in _metric_names(table):
        name = column.removeprefix(_PREFIX)
        fig = metric_figure(table, name, bounds.get(name, (None, None)))
        target = out / f"{name}.png"
        fig.savefig(target, metadata={"Software": None})
        plt.close(fig)
        written.append(target)
    return written


def metric_figure(
    table: pa.Table, name: str, bounds: tuple[float | None, float | None] = (None, None)
) -> Figure:
    """The plot of metric ``name`` over the seeds; ``bounds`` is its ``(min, max)``, None: none."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    column = _PREFIX + name
    rows = table.to_pylist()
    fig: Any
    fig, ax = plt.subplots(figsize=(8, 3.5), dpi=100)
    ok = [(r["seed"], r[column]) for r in rows if r["status"] == "ok" and r[column] is not None]
    bad = [(r["seed"], r[column]) for r in rows if r["status"] != "ok"]
    if ok:
        ax.plot([s for s, _ in ok], [v for _, v in ok], ".", ms=4, color="tab:blue", label="ok")
    if bad:
        with_value = [(s, v) for s, v in bad if v is not None]
        without = [s for s, v in bad if v is None]
        if with_value:
            ax.plot(
                [s for s, _ in with_value],
                [v for _, v in with_value],
                "x",
                ms=7,
                color="tab:red",
                label="failing seed",
            )
        for s in without:
            ax.axvline(s, color="tab:red", alpha=0.4, lw=1)
        if without:
            ax.plot([], [], color="tab:red", alpha=0.4, label="failing seed (no value)")
    for label, bound in zip(("min", "max"), bounds, strict=True):
        if bound is not None:
            ax.axhline(bound, color="tab:orange", ls="--", lw=1, label=f"{label} = {bound:g}")
    # Seeds are whole numbers: a few seeds would otherwise get ticks such as 0.25.
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("seed")
    ax.set_ylabel(name)
    ax.set_title(f"{name} over {len(rows)} seeds")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    return fig  # type: ignore[no-any-return]
