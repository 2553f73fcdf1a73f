"""Sweep pieces that need no cluster: metrics, seeds, the table files, the report (SPEC §16)."""

from __future__ import annotations

import json
import math
import re
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_sweep_helpers import SHORT_TOML, write_short

import simclock
from simclock import Sample, ScenarioError, load_scenario, run_scenario
from simclock.cli._main import main
from simclock.sim._metrics import compute_metrics, metric_violation
from simclock.sweeps import parse_seeds, read_table, summarise, write_csv, write_parquet
from simclock.sweeps._table import SweepDir, rows_to_table, spread, table_schema

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _sample(device: str, index: int, t_ms: int, value: float, late_ns: int = 0) -> Sample:
    ns = t_ms * 1_000_000
    return Sample(
        device, index, 0, 0, ns, ns, ns + 3_000_000, ns + 3_000_000 + late_ns, (value, -value)
    )


def _scenario(tmp_path: Path, metrics: str) -> Path:
    base = SHORT_TOML.split("[metrics.")[0]
    path = tmp_path / "m.toml"
    path.write_text(base + metrics, encoding="utf-8")
    return path


# -- metrics -----------------------------------------------------------------------------


def test_metrics_are_computed_from_the_delivered_samples(tmp_path: Path) -> None:
    scenario = load_scenario(
        _scenario(
            tmp_path,
            '[metrics.rms]\nkind = "rms_error"\ndevice = "imu0"\ntarget = 1.0\n'
            '[metrics.worst]\nkind = "max_abs_error"\ndevice = "imu0"\nindex = 1\n'
            '[metrics.avg]\nkind = "mean"\ndevice = "imu0"\n'
            '[metrics.last]\nkind = "final"\ndevice = "imu0"\nafter = "10 ms"\n'
            '[metrics.late]\nkind = "max_lateness"\ndevice = "imu0"\n'
            '[metrics.n]\nkind = "samples"\ndevice = "imu0"\nafter = "7 ms"\n'
            '[metrics.none]\nkind = "final"\ndevice = "enc0"\n',
        )
    )
    samples = [
        _sample("imu0", 0, 0, 0.0),
        _sample("imu0", 1, 7, 3.0, late_ns=1_000_000),
        _sample("imu0", 2, 14, 2.0),
    ]
    values = compute_metrics(scenario.metrics, samples)
    assert list(values) == ["rms", "worst", "avg", "last", "late", "n", "none"]
    assert values["rms"] == math.sqrt((1.0 + 4.0 + 1.0) / 3)
    assert values["worst"] == 3.0
    assert values["avg"] == 5.0 / 3
    assert values["last"] == 2.0
    assert values["late"] == 1_000_000
    assert values["n"] == 2
    assert values["none"] is None


def test_metrics_sharing_a_device_after_and_index_give_what_each_alone_gives(
    tmp_path: Path,
) -> None:
    """Selections and values are shared between metrics; each still gets its own result."""
    scenario = load_scenario(
        _scenario(
            tmp_path,
            '[metrics.rms]\nkind = "rms_error"\ndevice = "imu0"\ntarget = 1.0\n'
            '[metrics.near]\nkind = "max_abs_error"\ndevice = "imu0"\ntarget = 1.0\n'
            '[metrics.far]\nkind = "max_abs_error"\ndevice = "imu0"\ntarget = -1.0\n'
            '[metrics.other]\nkind = "max_abs_error"\ndevice = "imu0"\nindex = 1\n'
            '[metrics.later]\nkind = "mean"\ndevice = "imu0"\nafter = "7 ms"\n'
            '[metrics.enc]\nkind = "samples"\ndevice = "enc0"\n',
        )
    )
    samples = [
        _sample("imu0", 0, 0, 0.0),
        _sample("enc0", 0, 2, 9.0),
        _sample("imu0", 1, 7, 3.0),
        _sample("enc0", 1, 9, 9.0),
        _sample("imu0", 2, 14, 2.0),
    ]
    together = compute_metrics(scenario.metrics, samples)
    alone = {c.name: compute_metrics([c], samples)[c.name] for c in scenario.metrics}
    assert together == alone
    assert together == {
        "rms": math.sqrt((1.0 + 4.0 + 1.0) / 3),
        "near": 2.0,
        "far": 4.0,
        "other": 3.0,
        "later": 2.5,
        "enc": 2,
    }


def test_metric_bounds_fail_a_seed_with_one_line() -> None:
    scenario = load_scenario(EXAMPLES / "pendulum.toml")
    ok = {"angle_rms": 0.0003}
    assert metric_violation(scenario.metrics, ok) is None
    assert (
        metric_violation(scenario.metrics, {"angle_rms": 0.5})
        == "metric angle_rms = 0.5 is above max 0.0004"
    )
    assert (
        metric_violation(scenario.metrics, {"angle_rms": None})
        == "metric angle_rms has no value (no samples of 'encoder0') but has bounds"
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            '[metrics.a]\nkind = "rms_error"\ndevice = "imu9"\n',
            "metrics.a.device: 'imu9' is not a device; define [devices.imu9] first",
        ),
        (
            '[metrics.a]\nkind = "rms"\ndevice = "imu0"\n',
            'metrics.a.kind: must be one of "rms_error", "max_abs_error", "mean", "final", '
            '"max_lateness", "samples", got \'rms\'',
        ),
        (
            '[metrics.a]\nkind = "final"\ndevice = "imu0"\nindex = 2\n',
            "metrics.a.index: 2 is out of range: device 'imu0' has 2 values",
        ),
        (
            '[metrics.a]\nkind = "max_lateness"\ndevice = "imu0"\nindex = 0\n',
            'metrics.a.index: does not apply to kind "max_lateness"; remove it',
        ),
        (
            '[metrics.a]\nkind = "final"\ndevice = "imu0"\nmin = 2\nmax = 1\n',
            "metrics.a.min: 2 is above max 1",
        ),
        (
            '[metrics.a]\nkind = "final"\ndevice = "imu0"\nafter = 1.5\n',
            'metrics.a.after: expected a duration string with a unit such as "7 ms", got float 1.5',
        ),
        (
            '[metrics.a]\nkind = "final"\ndevice = "imu0"\nlimit = 1\n',
            "metrics.a.limit: unknown key; expected one of kind, device, index, target, after, "
            "min, max",
        ),
        ('[metrics.9a]\nkind = "final"\ndevice = "imu0"\n', None),
    ],
)
def test_metrics_table_errors_name_the_key(tmp_path: Path, table: str, message: str | None) -> None:
    path = _scenario(tmp_path, table)
    if message is None:
        message = "metrics.9a: id '9a' must start with a letter and use only [A-Za-z0-9_.-]"
    with pytest.raises(ScenarioError, match=r"^" + re.escape(message) + r"$"):
        load_scenario(path)


def test_pendulum_metrics_are_meaningful() -> None:
    scenario = load_scenario(EXAMPLES / "pendulum.toml")
    passing = run_scenario(scenario, seed=3)
    assert list(passing.metrics) == [
        "angle_rms",
        "angle_max_error",
        "final_angle",
        "imu_lateness_max",
    ]
    # Caught and held: after 2 s the pole stays near 0 rad, within the 0.4 mrad bound...
    assert 0 < passing.metrics["angle_rms"] <= 0.0004  # type: ignore[operator]
    assert metric_violation(scenario.metrics, passing.metrics) is None
    # ...except for some noise draws: seed 8's gyro noise pushes it over (a failing seed).
    failing = run_scenario(scenario, seed=8)
    rms = failing.metrics["angle_rms"]
    assert metric_violation(scenario.metrics, failing.metrics) == (
        f"metric angle_rms = {rms!r} is above max 0.0004"
    )
    # 7 ms acquisitions + 3 ms latency on the 2 ms grid: for even k, 7k + 3 ms is odd and
    # waits 1 ms for the next boundary, so the worst extra delay is exactly 1 ms.
    assert passing.metrics["imu_lateness_max"] == 1_000_000


# -- seeds and arguments -----------------------------------------------------------------


def test_parse_seeds() -> None:
    assert parse_seeds("0:10") == range(10)
    assert parse_seeds(range(5, 7)) == range(5, 7)
    for bad, message in [
        ("10:3", "seeds is empty: '10:3'; use A:B with A < B"),
        ("-1:3", "seeds must be \"A:B\" with integers 0 <= A < B (B excluded), got '-1:3'"),
        ("3", "seeds must be \"A:B\" with integers 0 <= A < B (B excluded), got '3'"),
        (range(0, 10, 2), "seeds must be a range with step 1, got range(0, 10, 2)"),
        (range(-2, 3), "seeds must be >= 0, got range(-2, 3)"),
    ]:
        with pytest.raises(ValueError, match=r"^" + re.escape(message) + r"$"):
            parse_seeds(bad)
    with pytest.raises(TypeError, match=r"^seeds must be \"A:B\" or a range, got list \[1, 2\]$"):
        parse_seeds([1, 2])


def test_spread_takes_first_last_and_between() -> None:
    seeds = list(range(100, 200))
    assert spread(seeds, 1) == [150]
    assert spread(seeds, 2) == [100, 199]
    assert spread(seeds, 5) == [100, 125, 150, 174, 199]
    assert spread([4, 5], 9) == [4, 5]


def test_C_SWEEP_2_batch_size_aims_at_half_a_second_and_shares_the_tail() -> None:
    from simclock.sweeps._feed import BATCH_S, MAX_BATCH, batch_size

    assert (BATCH_S, MAX_BATCH) == (0.5, 64)
    # By the runs' mean wall time: 20 ms runs -> 25 a task; runs of 0.5 s or more -> 1.
    assert batch_size(0.020, 1000, 4) == 25
    assert batch_size(0.5, 1000, 4) == 1
    assert batch_size(1.3, 1000, 4) == 1
    assert batch_size(0.001, 1000, 4) == 64  # capped
    assert batch_size(0.0, 1000, 4) == 64  # a run too short to time
    # The tail: the remaining seeds split evenly over the tasks in flight, never 0.
    assert batch_size(0.020, 38, 2) == 19
    assert batch_size(0.020, 9, 4) == 3
    assert batch_size(0.020, 1, 4) == 1
    assert batch_size(0.020, 5, 0) == 5


def test_run_seeds_is_run_seed_for_each_seed_in_order(tmp_path: Path) -> None:
    from simclock.sweeps._task import run_seed, run_seeds, ship

    job = ship(load_scenario(write_short(tmp_path)))
    batch = run_seeds([5, 2, 9], job)
    assert [o.row for o in batch] == [run_seed(s, job).row for s in (5, 2, 9)]
    assert [o.row["seed"] for o in batch] == [5, 2, 9]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"record": "failing"},
            ValueError,
            "record='failing' needs out: a directory for the recordings",
        ),
        (
            {"record": "some", "out": "x"},
            ValueError,
            'record must be one of "none", "failing", "all", got \'some\'',
        ),
        ({"audit": -1}, ValueError, "audit must be >= 0, got -1"),
        ({"audit": True}, TypeError, "audit must be an int, got True"),
        ({"workers": 0}, ValueError, "workers must be >= 1, got 0"),
        (
            {"workers": 2, "scheduler": "tcp://127.0.0.1:1"},
            ValueError,
            "workers=2 applies to the local cluster only; an existing cluster at scheduler has "
            "the workers it has",
        ),
        (
            {"scheduler": "tcp://127.0.0.1:"},
            ValueError,
            "scheduler must be an address like tcp://HOST:PORT, got 'tcp://127.0.0.1:': it "
            "has no valid HOST:PORT",
        ),
        (
            {"scheduler": "tcp://127.0.0.1:99999"},
            ValueError,
            "scheduler must be an address like tcp://HOST:PORT, got 'tcp://127.0.0.1:99999': "
            "it has the port 99999, outside 1..65535",
        ),
        (
            {"scheduler": "udp://127.0.0.1:8786"},
            ValueError,
            "scheduler must be an address like tcp://HOST:PORT, got 'udp://127.0.0.1:8786': "
            "it has the scheme 'udp'; use one of tcp, tls, ws, wss",
        ),
        (
            {"scheduler": "tcp://" + "a" * 1000 + ":1"},
            ValueError,
            "scheduler must be an address like tcp://HOST:PORT, got 'tcp://"
            + "a" * 113
            + "...(truncated): it is longer than 1000 characters",
        ),
        (
            {"scheduler": "tcp://:8786"},
            ValueError,
            "scheduler must be an address like tcp://HOST:PORT, got 'tcp://:8786': it has no host",
        ),
        ({"runner": 3}, TypeError, "runner must be callable or None, got 3"),
        (
            {"progress": 3},
            TypeError,
            "progress must be callable as progress(done, total) or None, got 3",
        ),
        (
            {"scenario": 3},
            TypeError,
            "scenario must be a scenario file path or a simclock.Scenario, got int 3",
        ),
        (
            {"seeds": "3"},
            ValueError,
            "seeds must be \"A:B\" with integers 0 <= A < B (B excluded), got '3'",
        ),
    ],
)
def test_sweep_refuses_bad_arguments_before_anything_runs(
    tmp_path: Path, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    short = write_short(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    args: dict[str, Any] = {"scenario": short, "seeds": "0:3", **kwargs}
    with pytest.raises(error, match=r"^" + re.escape(message) + r"$"):
        simclock.sweep(args.pop("scenario"), args.pop("seeds"), **args)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# -- table files -------------------------------------------------------------------------


def _rows(n: int) -> list[dict[str, Any]]:
    rows = []
    for seed in reversed(range(n)):
        bad = seed == 1
        rows.append(
            {
                "seed": seed,
                "status": "error" if bad else "ok",
                "message": 'ValueError: x, "quoted"' if bad else None,
                "fingerprint": None if bad else f"{seed:064x}",
                "messages": None if bad else 10 + seed,
                "callback_failures": None if bad else 0,
                "metric.noise_rms": None if bad else 0.1 + seed,
                "metric.final": None if bad else -1 / 3,
                "metric.enc_late": None if bad else 500_000,
                "metric.imu_samples": None if bad else 14,
            }
        )
    return rows


def test_C_SWEEP_1_table_files_are_deterministic(tmp_path: Path) -> None:
    schema = table_schema(load_scenario(write_short(tmp_path)))
    table = rows_to_table(_rows(3), schema)
    assert table.column("seed").to_pylist() == [0, 1, 2]
    for name in ("a", "b"):
        write_parquet(table, tmp_path / f"{name}.parquet")
        write_csv(table, tmp_path / f"{name}.csv")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    meta = pq.read_metadata(tmp_path / "a.parquet")
    # No pandas block, no timestamps: only the Arrow schema pyarrow always stores.
    assert set((meta.metadata or {}).keys()) <= {b"ARROW:schema"}
    assert meta.created_by.startswith("parquet-cpp-arrow version ")
    assert (tmp_path / "a.csv").read_text() == (
        "seed,status,message,fingerprint,messages,callback_failures,metric.noise_rms,"
        "metric.final,metric.enc_late,metric.imu_samples\n"
        f"0,ok,,{0:064x},10,0,0.1,-0.3333333333333333,500000,14\n"
        '1,error,"ValueError: x, ""quoted""",,,,,,,\n'
        f"2,ok,,{2:064x},12,0,2.1,-0.3333333333333333,500000,14\n"
    )
    assert read_table(tmp_path / "a.parquet").equals(table)


def test_C_SWEEP_5_sweep_dir_keeps_flushed_rows_and_ignores_a_torn_line(tmp_path: Path) -> None:
    scenario = load_scenario(write_short(tmp_path))
    out = tmp_path / "out"
    first = SweepDir(out, scenario)
    rows = _rows(3)
    first.append(rows[0])
    first.append(rows[1])
    first.close()
    with (out / "rows.partial.jsonl").open("a") as f:
        f.write(json.dumps(rows[2])[:20])  # a kill in the middle of a write
    again = SweepDir(out, scenario)
    assert sorted(again.rows) == [1, 2]
    assert again.rows[1] == rows[1]
    table = again.finish()
    again.close()
    assert table.column("seed").to_pylist() == [1, 2]
    assert not (out / "rows.partial.jsonl").exists()
    assert sorted(SweepDir(out, scenario).rows) == [1, 2]


def test_C_SWEEP_5_a_directory_of_another_scenario_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    SweepDir(out, load_scenario(write_short(tmp_path))).close()
    other = load_scenario(EXAMPLES / "pendulum.toml")
    manifest = (out / "sweep.json").read_bytes()
    with pytest.raises(
        ValueError,
        match=r"^out '.*/out' holds a sweep of another scenario or version \('short', sha256 "
        r"[0-9a-f]{12}\); use an empty directory or the same scenario file$",
    ):
        SweepDir(out, other)
    assert (out / "sweep.json").read_bytes() == manifest


# -- report and progress -----------------------------------------------------------------


def test_report_summary_and_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = table_schema(load_scenario(write_short(tmp_path)))
    table = rows_to_table(_rows(4), schema)
    write_parquet(table, tmp_path / "sweep.parquet")
    assert summarise(table).splitlines()[:3] == [
        "4 seeds (0..3), 3 ok, 1 error",
        "failing seeds: 1",
        '  seed 1: ValueError: x, "quoted"',
    ]
    assert main(["sweep", "report", str(tmp_path / "sweep.parquet")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[3].split() == ["metric", "n", "mean", "min", "p50", "p95", "max", "max@seed"]
    assert out[4].split() == ["noise_rms", "3", "1.76667", "0.1", "2.1", "3.1", "3.1", "3"]
    assert out[6].split() == [
        "enc_late",
        "3",
        "500000",
        "500000",
        "500000",
        "500000",
        "500000",
        "0",
    ]
    pngs = sorted((tmp_path / "plots").iterdir())
    assert [p.name for p in pngs] == [
        "enc_late.png",
        "final.png",
        "imu_samples.png",
        "noise_rms.png",
    ]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert out[-4:] == [
        f"plot: {tmp_path / 'plots' / n}"
        for n in ("noise_rms.png", "final.png", "enc_late.png", "imu_samples.png")
    ]


def test_report_plot_has_whole_seed_ticks_and_the_metrics_bound_as_a_line(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from simclock.sweeps._report import metric_figure

    scenario = load_scenario(write_short(tmp_path))
    table = rows_to_table(_rows(3), table_schema(scenario))  # seeds 0..2: ticks 0.25 apart
    fig = metric_figure(table, "noise_rms", (None, 0.55))
    try:
        (ax,) = fig.axes
        ticks = list(ax.get_xticks())
        assert ticks and all(float(t).is_integer() for t in ticks), ticks
        low, high = ax.get_xlim()
        assert [t for t in ticks if low <= t <= high] == [0.0, 1.0, 2.0]
        heights = [
            (str(line.get_label()), [float(y) for y in np.asarray(line.get_ydata())])
            for line in ax.get_lines()
            if isinstance(line, Line2D)
        ]
        flat = [(label, ys) for label, ys in heights if len(ys) > 1 and len(set(ys)) == 1]
        assert flat == [("max = 0.55", [0.55, 0.55])]
        legend = ax.get_legend()
        assert legend is not None
        assert [t.get_text() for t in legend.get_texts()] == [
            "ok",
            "failing seed (no value)",
            "max = 0.55",
        ]
    finally:
        plt.close(fig)
    unbounded = metric_figure(table, "final")
    try:
        labels = [str(line.get_label()) for line in unbounded.axes[0].get_lines()]
        assert labels == ["ok", "_child1", "failing seed (no value)"]
    finally:
        plt.close(unbounded)


def test_cli_sweep_report_draws_the_bounds_of_the_scenario_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    from simclock.sweeps import _report

    short = write_short(tmp_path)
    write_parquet(
        rows_to_table(_rows(4), table_schema(load_scenario(short))), tmp_path / "t.parquet"
    )
    drawn: list[tuple[str, tuple[float | None, float | None]]] = []
    real = _report.metric_figure

    def spy(table: Any, name: str, bounds: tuple[float | None, float | None] = (None, None)) -> Any:
        drawn.append((name, bounds))
        return real(table, name, bounds)

    monkeypatch.setattr(_report, "metric_figure", spy)
    assert main(["sweep", "report", str(tmp_path / "t.parquet"), "--scenario", str(short)]) == 0
    assert drawn == [
        ("noise_rms", (None, 0.55)),
        ("final", (None, None)),
        ("enc_late", (None, None)),
        ("imu_samples", (None, None)),
    ]
    capsys.readouterr()
    assert main(["sweep", "report", str(tmp_path / "t.parquet"), "--scenario", "nope.toml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("simclock sweep report: error: ") and err.count("\n") == 1, err


def test_cli_sweep_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    short = write_short(tmp_path)
    for argv in (["sweep", str(short)], ["sweep", "run", str(short)]):
        assert main(argv) == 2
        assert capsys.readouterr().err == (
            "simclock sweep run: error: --seeds A:B is required, e.g. --seeds 0:1000\n"
        )
    with pytest.raises(SystemExit) as exited:
        main(["sweep", "report"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "simclock sweep report: error: the following arguments are required: table"
    )
    assert main(["sweep", "report", str(short)]) == 2
    assert capsys.readouterr().err == (
        "simclock sweep report: error: table must be a .parquet or .csv file written by simclock "
        f"sweep, got {str(short)!r}\n"
    )
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["sweep", str(short), "--seeds", "0:2", "--scheduler", "tcp://127.0.0.1:"]) == 2
    assert capsys.readouterr().err == (
        "simclock sweep run: error: scheduler must be an address like tcp://HOST:PORT, got "
        "'tcp://127.0.0.1:': it has no valid HOST:PORT\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    other = tmp_path / "other.csv"
    other.write_text("seed,value\n0,1.5\n")
    assert main(["sweep", "report", str(other)]) == 2
    assert capsys.readouterr().err == (
        f"simclock sweep report: error: table {str(other)!r} is not a sweep table: it has no "
        "column 'status'; give the sweep.parquet or sweep.csv that simclock sweep wrote\n"
    )
    missing = tmp_path / "missing.csv"
    assert main(["sweep", "report", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("simclock sweep report: error: ") and err.count("\n") == 1, err


def test_cli_sweep_run_of_a_scenario_file_named_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sweep run report`` sweeps the file ``report``; ``sweep report`` reads a table."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report").write_text(SHORT_TOML, encoding="utf-8")
    assert main(["sweep", "run", "report", "--seeds", "0:2", "--workers", "1", "--out", "o"]) in (
        0,
        1,
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("sweep: short, 2 seeds in the table, ")
    assert out[1] == "table: o/sweep.parquet o/sweep.csv"
    assert main(["sweep", "report", "o/sweep.parquet", "--plots", "p"]) == 0
    assert capsys.readouterr().out.startswith("2 seeds (0..1), ")
    # The shorthand takes the same options in any order, before or after the scenario.
    assert main(["sweep", "--seeds", "0:2", "--workers", "1", "--out", "o", "report"]) in (0, 1)
    assert capsys.readouterr().out.splitlines()[0].startswith("sweep: short, 2 seeds in the table")


@given(order=st.permutations(list(range(6))))
def test_C_SWEEP_1_table_bytes_do_not_depend_on_the_order_rows_arrive(
    tmp_path_factory: pytest.TempPathFactory, order: list[int]
) -> None:
    directory = tmp_path_factory.mktemp("order")
    schema = table_schema(load_scenario(write_short(directory)))
    rows = sorted(_rows(6), key=lambda r: r["seed"])
    for name, arrival in (("sorted", rows), ("shuffled", [rows[i] for i in order])):
        table = rows_to_table(arrival, schema)
        write_parquet(table, directory / f"{name}.parquet")
        write_csv(table, directory / f"{name}.csv")
    for ext in ("parquet", "csv"):
        assert (directory / f"sorted.{ext}").read_bytes() == (
            directory / f"shuffled.{ext}"
        ).read_bytes()


def test_C_SWEEP_5_a_complete_table_runs_nothing_and_starts_no_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import distributed

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("no cluster may start when every seed has its row")

    monkeypatch.setattr(distributed, "LocalCluster", refuse)
    short = write_short(tmp_path)
    held = SweepDir(tmp_path / "out", load_scenario(short))
    rows = sorted(_rows(3), key=lambda r: r["seed"])
    for row in rows:
        held.append(row)
    held.close()
    table = simclock.sweep(short, "0:3", out=tmp_path / "out")
    assert table.to_pylist() == rows
    assert read_table(tmp_path / "out" / "sweep.parquet").to_pylist() == rows


def test_C_SWEEP_1_workers_run_the_clients_model_not_their_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from simclock.sweeps import _task

    monkeypatch.setattr(_task, "_LOCAL", {})
    text = (
        (EXAMPLES / "pendulum.toml").read_text().replace('duration = "10 s"', 'duration = "300 ms"')
    )
    model = (EXAMPLES / "pendulum.xml").read_text()
    (tmp_path / "pendulum.toml").write_text(text)
    (tmp_path / "pendulum.xml").write_text(model)
    scenario = load_scenario(tmp_path / "pendulum.toml")
    job = _task.ship(scenario)
    expected = run_scenario(scenario, seed=1).fingerprint
    # The file at the worker's path holds the same bytes: it is used as it is.
    assert _task.localise(job) is scenario
    # Another machine's copy differs (a heavier pole) or is missing: the shipped bytes run.
    (tmp_path / "pendulum.xml").write_text(model.replace('mass="1"', 'mass="2"'))
    assert run_scenario(scenario, seed=1).fingerprint != expected  # the edit matters
    for damage in ("edited", "missing"):
        monkeypatch.setattr(_task, "_LOCAL", {})
        if damage == "missing":
            (tmp_path / "pendulum.xml").unlink()
        local = _task.localise(job)
        assert local.physics.mujoco_model is not None
        assert local.physics.mujoco_model.read_bytes() == model.encode()
        assert run_scenario(local, seed=1).fingerprint == expected


def test_cli_sigint_handler_stops_logging_before_the_interrupt_reaches_dask() -> None:
    # Dask's loop thread logs its own cancel races (tornado.application) while the
    # interrupt unwinds; the handler must silence them before raising.
    import logging

    from simclock.cli._sweep import _interrupt

    logger = logging.getLogger("tornado.application")
    assert logger.isEnabledFor(logging.ERROR)
    try:
        with pytest.raises(KeyboardInterrupt):
            _interrupt(signal.SIGINT, None)
        assert not logger.isEnabledFor(logging.CRITICAL)
    finally:
        logging.disable(logging.NOTSET)
    assert logger.isEnabledFor(logging.ERROR)


# -- the model file read once by the client ----------------------------------------------


def _short_pendulum(tmp_path: Path) -> Path:
    text = (
        (EXAMPLES / "pendulum.toml").read_text().replace('duration = "10 s"', 'duration = "20 ms"')
    )
    (tmp_path / "pendulum.toml").write_text(text)
    (tmp_path / "pendulum.xml").write_bytes((EXAMPLES / "pendulum.xml").read_bytes())
    return tmp_path / "pendulum.toml"


def test_C_SWEEP_5_the_digest_of_given_model_bytes_is_the_digest_of_the_file(
    tmp_path: Path,
) -> None:
    from simclock.sweeps._table import scenario_digest

    scenario = load_scenario(_short_pendulum(tmp_path))
    model = (tmp_path / "pendulum.xml").read_bytes()
    assert scenario_digest(scenario, model) == scenario_digest(scenario)
    assert scenario_digest(scenario, model + b" ") != scenario_digest(scenario)
    SweepDir(tmp_path / "a", scenario).close()
    SweepDir(tmp_path / "b", scenario, model).close()
    assert (tmp_path / "a" / "sweep.json").read_bytes() == (
        tmp_path / "b" / "sweep.json"
    ).read_bytes()


def test_C_SWEEP_5_a_finished_sweep_reads_the_model_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import distributed

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("no cluster may start when every seed has its row")

    scenario = load_scenario(_short_pendulum(tmp_path))
    model = tmp_path / "pendulum.xml"
    held = SweepDir(tmp_path / "out", scenario)
    rows = [
        {
            "seed": seed,
            "status": "ok",
            "message": None,
            "fingerprint": f"{seed:064x}",
            "messages": 20 + seed,
            "callback_failures": 0,
            "metric.angle_rms": None,
            "metric.angle_max_error": None,
            "metric.final_angle": 0.5 * seed,
            "metric.imu_lateness_max": 1_000_000,
        }
        for seed in range(3)
    ]
    for row in rows:
        held.append(row)
    held.close()
    reads: list[Path] = []
    original = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(self)
        return original(self)

    monkeypatch.setattr(distributed, "LocalCluster", refuse)
    monkeypatch.setattr(Path, "read_bytes", counting)
    table = simclock.sweep(scenario, "0:3", out=tmp_path / "out")
    assert table.to_pylist() == rows
    # The directory's digest and the workers' copy share one read of the model.
    assert reads.count(model) == 1


def test_C_SWEEP_1_a_model_file_gone_since_loading_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    from simclock.sweeps._task import ship

    scenario = load_scenario(_short_pendulum(tmp_path))
    (tmp_path / "pendulum.xml").unlink()
    with pytest.raises(
        ValueError,
        match=r"^cannot read the MuJoCo model '.*/pendulum\.xml' of scenario 'pendulum': "
        r"No such file or directory; restore the file or load the scenario again$",
    ):
        ship(scenario)
    with pytest.raises(ValueError, match=r"^cannot read the MuJoCo model '.*/pendulum\.xml' "):
        simclock.sweep(scenario, "0:3", out=tmp_path / "out")
    assert not (tmp_path / "out").exists()  # refused before the directory is made


def test_C_SWEEP_5_flushed_rows_are_read_by_a_sweep_dir_opened_meanwhile(tmp_path: Path) -> None:
    scenario = load_scenario(write_short(tmp_path))
    out = tmp_path / "out"
    first = SweepDir(out, scenario)
    rows = _rows(3)
    for row in rows:
        first.append(row)
        first.timing(int(row["seed"]), "run", "w", 1_000, 2_000)
    first.flush()  # the process may be killed from here on: the rows are the OS's
    again = SweepDir(out, scenario)
    assert again.rows == {int(r["seed"]): r for r in rows}
    again.close()
    first.close()
    timing = (out / "timing.csv").read_text().splitlines()
    assert timing[1:] == [f"{r['seed']},run,w,0.000001,0.000002" for r in rows]
