"""What every ``simclock`` command shares (``simclock/cli/_common.py``, ``_main.py``).

One refusal line ``simclock <command>: error: ...`` and exit 2 for every
command; one progress bar; commands imported only when they run;
``--version`` on both CLIs; a closed stdout ends quietly with 141; ``simclock
run`` shows the scenario's metrics and exits 1 when one breaks its bound.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from rich.console import Console
from test_sweep_helpers import write_short

from simclock.cli import _main
from simclock.cli._common import CLOSED_PIPE_STATUS, Progress, error_line
from simclock.cli._main import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    paths = [str(ROOT / p) for p in ("", "conformance", "lint", "oracles")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


# -- one way to fail -----------------------------------------------------------------------


def test_every_command_refuses_with_its_own_name_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"nope")
    missing = tmp_path / "missing.toml"
    magic = f"{bad}: offset 0: not an MCAP file (no MCAP magic at the start)"
    cases = [
        (["run", str(missing)], "run", f"cannot read scenario {str(missing)!r}: "),
        (["timeline", str(bad), "-o", str(tmp_path / "t.png")], "timeline", ""),
        (["info", str(bad)], "info", magic),
        (["replay", str(bad)], "replay", magic),
        (["diff", str(bad), str(bad)], "diff", magic),
        (["recover", str(bad), "-o", str(tmp_path / "o.mcap")], "recover", magic),
        (["sweep", "run", str(missing), "--seeds", "0:2"], "sweep run", ""),
        (["sweep", "report", str(bad)], "sweep report", "table must be a .parquet or .csv"),
    ]
    for argv, command, start in cases:
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.count("\n") == 1, captured.err
        assert captured.err.startswith(error_line(command, start)), (argv, captured.err)


def test_run_refuses_a_negative_seed_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    short = write_short(tmp_path)
    assert main(["run", str(short), "--seed", "-1"]) == 2
    assert capsys.readouterr() == ("", "simclock run: error: --seed must be >= 0, got -1\n")


def test_a_handler_bug_is_one_line_with_its_type_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from simclock.cli import _recover

    def broken(path: object, output: object) -> None:
        raise KeyError("boom\nsecond line")

    monkeypatch.setattr(_recover, "recover", broken)
    assert main(["recover", "x.mcap", "-o", str(tmp_path / "y.mcap")]) == 2
    assert capsys.readouterr().err == "simclock recover: error: KeyError: 'boom\\nsecond line'\n"


def test_argparse_usage_errors_carry_the_same_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, line in [
        (["run"], "simclock run: error: the following arguments are required: scenario"),
        (["sweep", "report"], "simclock sweep report: error: the following arguments are "
         "required: table"),
        (["records-demo", "x"], "simclock records-demo: error: unrecognized arguments: x"),
        (["nope"], "simclock: error: argument COMMAND: invalid choice: 'nope' (choose from "
         + ", ".join(repr(name) for name in COMMANDS) + ")"),
    ]:  # fmt: skip
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("usage: simclock") and err.splitlines()[-1] == line


def test_no_command_prints_the_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("usage: simclock [-h] [--version]")


# -- sweep run | report --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["x.toml", "--seeds", "0:2"], ["run", "x.toml", "--seeds", "0:2"]),
        (["--seeds", "0:2", "x.toml"], ["run", "--seeds", "0:2", "x.toml"]),
        (["run", "report", "--seeds", "0:2"], ["run", "report", "--seeds", "0:2"]),
        (["report", "t.csv"], ["report", "t.csv"]),
        (["--help"], ["--help"]),
        ([], []),
    ],
)
def test_sweep_shorthand_is_sweep_run(words: list[str], expected: list[str]) -> None:
    from simclock.cli._sweep import rewrite_argv

    assert rewrite_argv(words) == expected


def test_sweep_subcommands_parse_their_own_arguments() -> None:
    args = build_parser("sweep").parse_args(["sweep", "run", "report", "--seeds", "0:3"])
    assert (args.command_name, args.scenario, args.seeds) == ("sweep run", "report", "0:3")
    args = build_parser("sweep").parse_args(["sweep", "report", "t.csv", "--plots", "p"])
    assert (args.command_name, args.table, args.plots) == ("sweep report", "t.csv", "p")


# -- lazy commands ---------------------------------------------------------------------------


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in parser._actions if a.dest == "command"]
    assert isinstance(action.choices, dict)
    return action.choices


def test_the_table_lists_every_command_of_the_help_in_order() -> None:
    assert list(_commands(build_parser())) == list(COMMANDS)
    for name, (module, text) in COMMANDS.items():
        assert module.startswith("simclock.cli._") and text, name
        assert name in _commands(build_parser(name))


_PROBE = """
import contextlib, io, json, sys
import simclock
before = set(sys.modules)
from simclock.cli._main import main
argv = json.loads(sys.argv[1])
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(argv)
    except SystemExit:
        pass
print(json.dumps(sorted(set(sys.modules) - before)))
"""
_HEAVY = ("dask", "distributed", "mujoco", "rich", "pyarrow", "matplotlib", "mcap", "numpy")


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["--help"], None),
        (["--version"], None),
        (["run", "--help"], "run"),
        (["sweep", "--help"], "sweep"),
    ],
)
def test_cli_imports_a_commands_modules_only_when_it_runs(
    argv: list[str], command: str | None
) -> None:
    """Beyond ``import simclock``, ``--help`` loads the CLI's table only; a command, its module."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        check=True,
        env=_env(),
    )
    loaded = set(json.loads(done.stdout))
    commands = {module for module, _help in COMMANDS.values()}
    if command is None:
        assert {m for m in loaded if m.startswith("simclock.")} == {
            "simclock.cli",
            "simclock.cli._main",
        }
        assert [m for m in loaded if m.split(".")[0] in _HEAVY] == []
    else:
        own = COMMANDS[command][0]
        assert own in loaded
        assert loaded & commands == {own}
    if command != "run":  # sweeps, Dask and recording only for the commands that need them
        assert [m for m in loaded if m.split(".")[0] in ("dask", "distributed", "mujoco")] == []
        assert not {"simclock.sweeps", "simclock.recording"} & loaded


# -- --version -------------------------------------------------------------------------------


def test_version_of_both_clis_is_the_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    from simclock_lint import main as lint_main

    for entry, name in ((main, "simclock"), (lint_main, "simclock-lint")):
        with pytest.raises(SystemExit) as exited:
            entry(["--version"])
        assert exited.value.code == 0
        assert capsys.readouterr() == (f"{name} {version('simclock')}\n", "")


# -- closed pipes ------------------------------------------------------------------------------


def _to_closed_pipe(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with stdout a pipe that no one reads (closed before the start)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            argv, stdout=write, stderr=subprocess.PIPE, text=True, env=_env(), cwd=cwd, check=False
        )
    finally:
        os.close(write)


def test_closed_stdout_ends_quietly_with_141(tmp_path: Path) -> None:
    from hostile_api import scenario_recording

    sim = tmp_path / "sim.py"
    sim.write_text("import random\n" + "x = random.random()\n" * 50, encoding="utf-8")
    recording = str(scenario_recording())
    for argv in (
        [sys.executable, "-m", "simclock", "info", recording],
        [sys.executable, "-m", "simclock", "replay", recording, "--no-progress"],
        [sys.executable, "-m", "simclock", "records-demo"],
        [sys.executable, "-m", "simclock", "--version"],
        [sys.executable, "-m", "simclock_lint", "--no-cache", str(sim)],
        [sys.executable, "-m", "simclock_lint", "--list-rules"],
    ):
        done = _to_closed_pipe(argv, tmp_path)
        assert (done.returncode, done.stderr) == (CLOSED_PIPE_STATUS, ""), argv[2:4]


def test_closed_stdout_of_the_conformance_cli_ends_quietly_with_141(tmp_path: Path) -> None:
    suite = "simclock_conformance"
    argv = [sys.executable, "-m", suite, f"{suite}:heap_factory", "--clause", "C-TIE-1"]
    done = _to_closed_pipe(argv, tmp_path)
    assert (done.returncode, done.stderr) == (CLOSED_PIPE_STATUS, "")


def test_in_process_closed_stdout_returns_141(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def closed(args: object) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    real = _main.build_parser

    def build(command: str | None = None) -> argparse.ArgumentParser:
        parser = real(command)
        _commands(parser)["records-demo"].set_defaults(func=closed)
        return parser

    monkeypatch.setattr(_main, "build_parser", build)
    assert main(["records-demo"]) == CLOSED_PIPE_STATUS
    assert capsys.readouterr() == ("", "")


# -- progress --------------------------------------------------------------------------------


def test_progress_appears_after_one_second_of_wall_time_only() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    wall = iter([0, 500_000_000, 1_000_000_000, 1_050_000_000, 1_200_000_000])
    progress = Progress("simclock run demo", True, console=console, wall_ns=lambda: next(wall))
    progress(1_000_000_000, 10_000_000_000)  # 0.5 s of wall time: nothing yet
    assert not progress.shown
    assert out.getvalue() == ""
    progress(2_000_000_000, 10_000_000_000)  # 1 s: the bar appears
    assert progress.shown
    assert "2 s / 10 s simulated" in out.getvalue()
    progress(3_000_000_000, 10_000_000_000)  # 50 ms later: not redrawn
    assert "3 s / 10 s simulated" not in out.getvalue()
    progress(4_000_000_000, 10_000_000_000)
    assert "4 s / 10 s simulated" in out.getvalue()
    progress.close()
    assert not progress.shown


def test_progress_of_items_shows_counts_rate_and_eta() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    wall = iter([0, 2_000_000_000, 2_500_000_000])
    bar = Progress(
        "sweep short", True, unit="items", noun="seeds", console=console, wall_ns=lambda: next(wall)
    )
    bar(3, 10)  # 2 s: shown, 3 seeds in 2 s
    bar(4, 10)
    bar.close()
    text = out.getvalue()
    assert "3/10" in text and "1.5 seeds/s" in text and "ETA" in text
    assert "4/10" in text and "1.6 seeds/s" in text


def test_progress_never_shown_off_terminal_or_when_disabled() -> None:
    calls: list[int] = []

    def wall() -> int:
        calls.append(0)
        return 5_000_000_000 * len(calls)

    quiet = Progress(
        "x", True, console=Console(file=io.StringIO(), force_terminal=False), wall_ns=wall
    )
    off = Progress(
        "x", False, console=Console(file=io.StringIO(), force_terminal=True), wall_ns=wall
    )
    for progress in (quiet, off):
        progress(1, 2)
        assert not progress.shown
        progress.close()


# -- run: metrics and their bounds -------------------------------------------------------------


def test_run_prints_metrics_and_exits_1_when_a_bound_breaks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 2 of the short scenario fails its bound in a sweep; ``run --seed 2`` says so."""
    from simclock import load_scenario, run_scenario
    from simclock.sim._metrics import metric_violation

    short = write_short(tmp_path)
    scenario = load_scenario(short)
    for seed, status in ((0, 0), (2, 1)):
        expected = run_scenario(scenario, seed=seed)
        assert main(["run", str(short), "--seed", str(seed)]) == status
        lines = capsys.readouterr().out.splitlines()
        metrics = expected.metrics
        at = lines.index("metrics:")
        verdict = "ok" if status == 0 else "broken"
        assert lines[at + 1 :] == [
            f"  noise_rms = {metrics['noise_rms']!r} (max 0.55: {verdict})",
            f"  final = {metrics['final']!r}",
            "  enc_late = 500000",
            "  imu_samples = 14",
            *([] if status == 0 else [f"failed: {metric_violation(scenario.metrics, metrics)}"]),
            f"fingerprint: {expected.fingerprint}",
        ]
    assert lines[-2] == f"failed: metric noise_rms = {metrics['noise_rms']!r} is above max 0.55"


def test_run_metric_lines_of_every_bound_shape() -> None:
    from simclock.cli._run import metric_lines
    from simclock.sim._metrics import MetricConfig

    configs = [
        MetricConfig("a", "mean", "d", minimum=0.5),
        MetricConfig("b", "samples", "d", minimum=1, maximum=3),
        MetricConfig("c", "final", "d", maximum=1.0),
        MetricConfig("e", "final", "d"),
    ]
    lines, broken = metric_lines(configs, {"a": 0.25, "b": 2, "c": None, "e": None})
    assert lines == [
        "metrics:",
        "  a = 0.25 (min 0.5: broken)",
        "  b = 2 (min 1, max 3: ok)",
        "  c = none (no samples) (max 1.0: broken)",
        "  e = none (no samples)",
    ]
    assert broken == "metric a = 0.25 is below min 0.5"
    assert metric_lines([], {}) == ([], None)
