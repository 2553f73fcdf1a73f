"""Scenario files and the runner (SPEC §7-§11): errors at the exact key, determinism, CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simclock.cli._main import main
from simclock.sim._devices import Sample
from simclock.sim._scenario import build_session, run_scenario
from simclock.sim._scenario_file import ScenarioError, load_scenario, parse_duration
from simclock.sim._session import episode_seed

MS = 1_000_000
ROOT = Path(__file__).resolve().parent.parent
PENDULUM_XML = ROOT / "examples" / "pendulum.xml"

GRID = """
seed = 3
mode = "deterministic_ci"
duration = "40 ms"

[physics]
step = "2 ms"

[devices.imu]
period = "7 ms"
latency = "3 ms"
noise_std = 0.5
dim = 2
"""


def _write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _pendulum(tmp_path: Path, duration: str = "1 s", extra: str = "", episodes: int = 1) -> Path:
    text = (ROOT / "examples" / "pendulum.toml").read_text(encoding="utf-8")
    text = text.replace('mujoco = "pendulum.xml"', f"mujoco = {json.dumps(str(PENDULUM_XML))}")
    text = text.replace('duration = "10 s"', f'duration = "{duration}"\nepisodes = {episodes}')
    return _write(tmp_path, text + extra, "pendulum.toml")


def _edit(path: Path, *changes: tuple[str, str]) -> None:
    """Rewrite the scenario file ``path`` in place, replacing each ``old`` by ``new``."""
    text = path.read_text(encoding="utf-8")
    for old, new in changes:
        # An edit that matches nothing would test the unedited file.
        assert old in text, f"{old!r} is not in {path.name}"
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(_write(tmp_path, text))
    return str(info.value)


def test_C_GRID_3_strict_off_grid_period_error_names_the_exact_key(tmp_path: Path) -> None:
    text = GRID.replace('latency = "3 ms"', 'latency = "3 ms"\npolicy = "strict"')
    with pytest.raises(
        ScenarioError,
        match=r"^devices.imu.period: 7 ms is not on the 2 ms grid \(policy strict\); "
        r'use a multiple of 2 ms or policy = "next_boundary"$',
    ) as info:
        load_scenario(_write(tmp_path, text))
    assert info.value.key == "devices.imu.period"
    assert isinstance(info.value, ValueError)


def test_C_GRID_3_pendulum_at_200_hz_strict_is_refused(tmp_path: Path) -> None:
    path = _pendulum(tmp_path)
    _edit(path, ('period = "4 ms"', 'period = "5 ms"'))
    with pytest.raises(
        ScenarioError,
        match=r"^controllers.pd.period: 5 ms is not on the 2 ms grid \(policy strict\); ",
    ):
        load_scenario(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('period = "7 ms"', "period = 0.007"),
            "devices.imu.period: expected a duration string "
            'with a unit such as "7 ms", got float 0.007',
        ),
        (
            ('period = "7 ms"', "period = 7"),
            'devices.imu.period: expected a duration string with a unit such as "7 ms", got int 7',
        ),
        (
            ('period = "7 ms"', 'period = "0.5 ns"'),
            "devices.imu.period: '0.5 ns' is not a whole "
            "number of nanoseconds; refusing to round it",
        ),
        (
            ('period = "7 ms"', 'period = "7 fortnights"'),
            "devices.imu.period: expected a "
            "duration such as \"7 ms\" (units ns, us, ms, s), got '7 fortnights'",
        ),
        (
            ('period = "7 ms"', 'perod = "7 ms"'),
            "devices.imu.perod: unknown key; expected one "
            "of period, phase, latency, policy, sensor, dim, noise_std, topic, kind",
        ),
        (
            ('period = "7 ms"', 'period = "7 ms"\npolicy = "nearest"'),
            'devices.imu.policy: must be one of "next_boundary", "strict", got \'nearest\'',
        ),
        (
            ('period = "7 ms"', 'period = "7 ms"\nsensor = "gyro"'),
            'devices.imu.sensor: needs [physics] mujoco = "model.xml"',
        ),
        (
            ('duration = "40 ms"', 'duration = "41 ms"'),
            "duration: 41 ms must be a positive multiple of the 2 ms physics step",
        ),
        (('duration = "40 ms"', ""), "duration: required key is missing"),
        (("seed = 3", "seed = -1"), "seed: must be >= 0, got -1"),
        (
            ('mode = "deterministic_ci"', 'mode = "fast"'),
            'mode: must be one of "unbounded", '
            '"realtime_paced", "deterministic_ci", "rendered", "operator_training", got \'fast\'',
        ),
        (
            ('step = "2 ms"', 'step = "2 ms"\nmujoco = "x.xml"'),
            'physics: give exactly one of mujoco = "model.xml" or step = "2 ms"',
        ),
        (
            ("[devices.imu]", "[devices.9imu]"),
            "devices.9imu: id '9imu' must start with a letter and use only [A-Za-z0-9_.-]",
        ),
        (
            ('period = "7 ms"', 'period = "7 ms"\ntopic = "/imu 0"'),
            "devices.imu.topic: must start with '/' and use only [A-Za-z0-9_./-], got '/imu 0'",
        ),
    ],
)
def test_scenario_errors_point_at_the_key(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    old, new = change
    assert old in GRID
    assert _error(tmp_path, GRID.replace(old, new)) == message


def test_scenario_controller_errors(tmp_path: Path) -> None:
    assert _error(tmp_path, GRID + '[controllers.pd]\nkind = "pd"\nperiod = "4 ms"\n') == (
        'controllers.pd.kind: kind "pd" needs [physics] mujoco = "model.xml"'
    )
    path = _pendulum(tmp_path)
    _edit(path, ('rate = "imu0"', 'rate = "imu9"'))
    with pytest.raises(
        ScenarioError,
        match=r"^controllers.pd.rate: 'imu9' is not a device; define \[devices.imu9\] first$",
    ):
        load_scenario(path)
    _edit(path, ('rate = "imu9"', 'rate = "imu0"'), ('sensor = "gyro"', 'sensor = "compass"'))
    with pytest.raises(
        ScenarioError,
        match=r"^devices.imu0.sensor: sensor 'compass' is not in the MuJoCo model; "
        r"it has \['gyro', 'angle'\]$",
    ):
        load_scenario(path)


def test_scenario_file_errors(tmp_path: Path) -> None:
    assert _error(tmp_path, "seed = [").startswith(
        f"{str(tmp_path / 's.toml')!r} is not valid TOML: "
    )
    with pytest.raises(ScenarioError, match=r"^cannot read scenario '.*/missing.toml': "):
        load_scenario(tmp_path / "missing.toml")


def test_parse_duration_exact() -> None:
    assert [parse_duration(v) for v in ("7 ms", "0.5 ms", "250us", "10 s", "3 ns")] == [
        7 * MS,
        500_000,
        250_000,
        10_000_000_000,
        3,
    ]


def test_C_GRID_2_scenario_7ms_imu_runs_on_8_14_22_28(tmp_path: Path) -> None:
    session = build_session(load_scenario(_write(tmp_path, GRID)))
    session.advance(40 * MS)
    assert [(s.acquisition_ns // MS, s.delivery_ns // MS) for s in session.samples] == [
        (0, 4),
        (8, 10),
        (14, 18),
        (22, 24),
        (28, 32),
        (36, 38),
    ]


def test_C_MODE_1_modes_change_pacing_not_the_trace(tmp_path: Path) -> None:
    scenario = load_scenario(_write(tmp_path, GRID.replace("seed = 3", "seed = 3\nrtf = 1000")))
    prints = {
        mode: run_scenario(scenario, mode=mode).fingerprint
        for mode in ("deterministic_ci", "unbounded", "realtime_paced")
    }
    assert len(set(prints.values())) == 1
    assert run_scenario(scenario, seed=4).fingerprint != prints["unbounded"]


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_C_TIME_3_a_numpy_chunk_ns_is_taken_as_its_integer(tmp_path: Path) -> None:
    # A numpy uint64 chunk near 2**64 once wrapped in numpy arithmetic (an overflow warning).
    scenario = load_scenario(_pendulum(tmp_path, duration="20 ms"))
    as_int = run_scenario(scenario, chunk_ns=2**64 - 1)
    as_numpy = run_scenario(scenario, chunk_ns=np.uint64(2**64 - 1))  # type: ignore[arg-type]
    assert as_numpy.fingerprint == as_int.fingerprint == run_scenario(scenario).fingerprint


def test_C_X_FP_chunking_and_recording_do_not_change_the_fingerprint(tmp_path: Path) -> None:
    scenario = load_scenario(_pendulum(tmp_path, duration="200 ms"))
    plain = run_scenario(scenario)
    chunked = run_scenario(scenario, chunk_ns=6 * MS)
    recorded = run_scenario(scenario, out=tmp_path / "run.mcap")
    assert plain.fingerprint == chunked.fingerprint == recorded.fingerprint
    from mcap.reader import make_reader

    with (tmp_path / "run.mcap").open("rb") as stream:
        meta = {m.name: m.metadata for m in make_reader(stream).iter_metadata()}
    assert meta["simclock"]["fingerprint"] == plain.fingerprint
    assert json.loads(meta["simclock.user"]["devices"]) == {
        "imu0": "/sensors/imu0",
        "encoder0": "/sensors/encoder0",
    }


def test_C_REP_3_recording_persists_each_noise_draw_per_stream(tmp_path: Path) -> None:
    from mcap.reader import make_reader

    from simclock.recording._recorder import draws_topic
    from simclock.sim._session import component_stream

    scenario = load_scenario(_pendulum(tmp_path, duration="100 ms"))
    run_scenario(scenario, out=tmp_path / "run.mcap")
    with (tmp_path / "run.mcap").open("rb") as stream:
        reader = make_reader(stream)
        meta = {m.name: m.metadata for m in reader.iter_metadata()}
        draws = [
            json.loads(msg.data)
            for _s, _c, msg in reader.iter_messages(topics=[draws_topic("/sensors/imu0/noise")])
        ]
    assert meta["simclock"]["record_draws"] == "true"
    assert json.loads(meta["simclock"]["draw_labels"]) == ["/sensors/imu0/noise"]
    assert [d["index"] for d in draws] == list(range(15))  # IMU at 0, 8, 14, ..., 98 ms
    expected = component_stream(7, "sensors/imu0", "noise").normal(0.0, 0.02, size=(15, 3))
    assert [d["value"]["data"] for d in draws] == [list(row) for row in expected]


def test_C_SEED_1_adding_a_device_leaves_imu_noise_identical(tmp_path: Path) -> None:
    extra = '\n[devices.aaa_first]\nperiod = "2 ms"\nnoise_std = 1.0\ndim = 3\n'
    base = load_scenario(_pendulum(tmp_path, duration="300 ms"))
    (tmp_path / "more").mkdir()
    more = load_scenario(_pendulum(tmp_path / "more", duration="300 ms", extra=extra))
    assert [d.spec.device_id for d in more.devices] == ["imu0", "encoder0", "aaa_first"]
    runs = []
    for scenario in (base, more):
        session = build_session(scenario)
        session.advance(300 * MS)
        runs.append([s for s in session.samples if s.device == "imu0"])
    assert runs[0] == runs[1]
    assert len(runs[0]) == 43


def test_C_SEED_2_episode_reset_reproduces_a_fresh_run_with_that_seed(tmp_path: Path) -> None:
    two = build_session(load_scenario(_pendulum(tmp_path, duration="200 ms", episodes=2)))
    two.advance(200 * MS)
    two.reset_episode()
    two.advance(200 * MS)
    fresh = build_session(
        load_scenario(_pendulum(tmp_path, duration="200 ms")), seed=episode_seed(7, 1)
    )
    fresh.advance(200 * MS)

    def relative(samples: list[Sample]) -> list[tuple[str, int, int, tuple[float, ...]]]:
        return [
            (
                s.device,
                s.acquisition_ns - s.episode_start_ns,
                s.delivery_ns - s.episode_start_ns,
                s.values,
            )
            for s in samples
        ]

    second = [s for s in two.samples if s.episode == 1]
    assert relative(second) == relative(fresh.samples)
    assert len(second) == 130


def test_C_EP_2_recorded_clock_carries_session_time_across_episodes(tmp_path: Path) -> None:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    scenario = load_scenario(_write(tmp_path, GRID.replace("seed = 3", "seed = 3\nepisodes = 3")))
    result = run_scenario(scenario, out=tmp_path / "ep.mcap")
    with (tmp_path / "ep.mcap").open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        clocks = [
            (msg.log_time, ros.clock.sec * 1_000_000_000 + ros.clock.nanosec)
            for _s, _c, msg, ros in reader.iter_decoded_messages(topics=["/clock"])
        ]
    assert clocks == [(t, t) for t in range(0, 120 * MS + 1, 2 * MS)]
    assert result.end_ns == 120 * MS


def test_cli_run_prints_fingerprint_and_timeline_writes_png(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = _write(tmp_path, GRID)
    out = tmp_path / "grid.mcap"
    assert (
        main(["run", str(scenario), "--out", str(out), "--seed", "5", "--mode", "unbounded"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    expected = run_scenario(load_scenario(scenario), seed=5).fingerprint
    assert lines[-1] == f"fingerprint: {expected}"
    assert lines[1].startswith("seed 5, mode unbounded, grid 2 ms (no engine), 40 ms x 1 episode")
    assert "  sensors/imu: 6 fired, 6 delivered, 0 overrun, 0 failed" in lines
    png = tmp_path / "t.png"
    assert main(["timeline", str(out), "-o", str(png), "--span", "20 ms"]) == 0
    assert capsys.readouterr().out == f"timeline: {png} (3 samples of 1 devices, 0 s to 20 ms)\n"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _write(tmp_path, GRID.replace('latency = "3 ms"', 'latency = "3 ms"\npolicy = "strict"'))
    assert main(["run", str(bad)]) == 2
    assert capsys.readouterr().err == (
        "simclock run: error: devices.imu.period: 7 ms is not on the 2 ms grid (policy strict); "
        'use a multiple of 2 ms or policy = "next_boundary"\n'
    )
    assert main(["timeline", str(bad), "-o", str(tmp_path / "x.png")]) == 2
    assert capsys.readouterr().err.startswith("simclock timeline: error: ")


def test_C_DET_1_same_scenario_same_seed_same_fingerprint_in_3_subprocesses(
    tmp_path: Path,
) -> None:
    scenario = _pendulum(tmp_path, duration="2 s")
    prints = []
    for hashseed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        proc = subprocess.run(
            [sys.executable, "-m", "simclock", "run", str(scenario), "--seed", "11"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        prints.append(proc.stdout.splitlines()[-1])
    assert prints[0].startswith("fingerprint: ")
    assert prints == [prints[0]] * 3
    assert prints[0] == f"fingerprint: {run_scenario(load_scenario(scenario), seed=11).fingerprint}"


def test_make_demo_records_replays_and_plots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from simclock.cli._demo import main as demo

    assert demo(str(tmp_path)) == 0
    out = capsys.readouterr().out
    fingerprint = run_scenario(load_scenario(ROOT / "examples" / "pendulum.toml")).fingerprint
    assert f"fingerprint: {fingerprint}\n" in out
    assert "replay: 8931 messages replayed, fingerprint matches the run\n" in out
    assert (tmp_path / "pendulum.mcap").stat().st_size > 0
    assert (tmp_path / "timeline.png").read_bytes()[:4] == b"\x89PNG"


def test_make_demo_ends_saying_how_simclock_gets_on_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``make demo`` runs ``.venv/bin/python``; the user's shell does not have .venv/bin on PATH."""
    from simclock.cli._demo import main as demo

    scripts = tmp_path / ".venv" / "bin"
    scripts.mkdir(parents=True)
    (scripts / "activate").write_text("")
    monkeypatch.setattr(sys, "executable", str(scripts / "python"))
    monkeypatch.chdir(ROOT)  # as make runs it: the scenario path is relative to the clone
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin")
    assert demo(str(tmp_path / "out")) == 0
    assert capsys.readouterr().out.splitlines()[-3:] == [
        f"The simclock commands are in {scripts}, which is not on your PATH.",
        f"To type them as simclock ..., activate the environment: . {scripts}/activate",
        f"or run them by their path: {scripts}/simclock --help",
    ]
    monkeypatch.setenv("PATH", f"/usr/bin{os.pathsep}{scripts}")
    assert demo(str(tmp_path / "out")) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"The simclock commands are on your PATH ({scripts})."
    )


def test_make_demo_path_hint_is_relative_to_the_clone(tmp_path: Path) -> None:
    from simclock.cli._demo import path_hint

    scripts = tmp_path / ".venv" / "bin"
    scripts.mkdir(parents=True)
    assert path_hint(scripts, tmp_path, {"PATH": "/usr/bin"}) == [
        "The simclock commands are in .venv/bin, which is not on your PATH.",
        "or run them by their path: .venv/bin/simclock --help",
    ]
    (scripts / "activate").write_text("")
    assert path_hint(scripts, tmp_path, {})[1] == (
        "To type them as simclock ..., activate the environment: . .venv/bin/activate"
    )


def test_scenario_unknown_actuator_names_the_model_actuators(tmp_path: Path) -> None:
    path = _pendulum(tmp_path)
    _edit(path, ('actuator = "motor"', 'actuator = "servo"'))
    with pytest.raises(
        ScenarioError,
        match=r"^controllers.pd.actuator: actuator 'servo' is not in the MuJoCo model; "
        r"it has \['motor'\]$",
    ):
        load_scenario(path)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seed": -1}, ValueError, r"^seed must be >= 0, got -1$"),
        ({"seed": 1.5}, TypeError, r"^seed must be an int, got float 1\.5$"),
        ({"chunk_ns": 0}, ValueError, r"^chunk_ns must be > 0 ns, got 0$"),
        ({"chunk_ns": 1.5e6}, TypeError, r"^chunk_ns must be an int of nanoseconds, got float "),
        (
            {"progress": 3},
            TypeError,
            r"^progress must be callable as progress\(done_ns, total_ns\) or None, got 3$",
        ),
        ({"mode": "fast"}, ValueError, r'^mode: must be one of "unbounded", '),
    ],
)
def test_run_scenario_refuses_bad_arguments_before_writing_anything(
    tmp_path: Path, kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    scenario = load_scenario(_write(tmp_path, GRID))
    out = tmp_path / "run.mcap"
    with pytest.raises(error, match=message):
        run_scenario(scenario, out=out, **kwargs)  # type: ignore[arg-type]
    assert not out.exists()


@pytest.mark.parametrize(("step", "lines"), [(2 * MS, 21), (40_040, 1_000), (40_000, 0), (1, 0)])
def test_timeline_draws_grid_lines_only_when_they_can_be_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int, lines: int
) -> None:
    """A 1 ns grid over 40 ms would be 40 million lines: above 1 000 none are drawn."""
    from matplotlib.axes import Axes

    from simclock.sim._timeline import Recording, plot_timeline

    drawn: list[float] = []
    titles: list[str] = []
    monkeypatch.setattr(Axes, "axvline", lambda self, x, **kw: drawn.append(x))
    monkeypatch.setattr(Axes, "set_title", lambda self, text, **kw: titles.append(text))
    sample = Sample("imu", 0, 0, 0, 0, 0, 3 * MS, 4 * MS, (0.0,))
    assert plot_timeline(Recording(step, "run", [sample]), tmp_path / "t.png") == 1
    assert len(drawn) == lines
    assert titles[0].endswith("(boundaries too dense to draw)") == (lines == 0)


def test_timeline_unwritable_output_is_a_simclock_error(tmp_path: Path) -> None:
    """A SimclockError, so ``simclock timeline -o missing/t.png`` exits 2, not a traceback."""
    from simclock.sim._timeline import Recording, plot_timeline

    sample = Sample("imu", 0, 0, 0, 0, 0, 3 * MS, 4 * MS, (0.0,))
    target = tmp_path / "missing" / "t.png"
    with pytest.raises(
        ValueError,
        match=rf"^cannot write timeline '{re.escape(str(target))}': No such file or directory; "
        r"write it into an existing, writable directory$",
    ):
        plot_timeline(Recording(2 * MS, "run", [sample]), target)
    assert not target.parent.exists()


def test_timeline_malformed_sample_is_a_simclock_error(tmp_path: Path) -> None:
    """A sample payload with the right keys but wrong values is refused, not a traceback."""
    from mcap.writer import Writer

    from simclock.sim._timeline import load_samples

    bad = tmp_path / "bad.mcap"
    payload = {
        "device": "imu",
        "index": 0,
        "episode": 0,
        "episode_start_ns": 0,
        "nominal_acquisition_ns": 0,
        "acquisition_ns": 0,
        "requested_delivery_ns": 0,
        "delivery_ns": 0,
        "values": None,
    }
    with bad.open("wb") as stream:
        writer = Writer(stream)
        writer.start()
        schema = writer.register_schema("sample", "jsonschema", b"{}")
        channel = writer.register_channel("/sensors/imu", "json", schema)
        data = json.dumps({"payload": payload}).encode()
        writer.add_message(channel, log_time=0, data=data, publish_time=0)
        writer.finish()  # type: ignore[no-untyped-call]
    with pytest.raises(
        ValueError,
        match=rf"^{re.escape(repr(str(bad)))} is not a simclock MCAP recording \(.*\); "
        r"record one with simclock run SCENARIO --out run\.mcap$",
    ):
        load_samples(bad)


@pytest.mark.parametrize("topic", ["/clock", "/simclock/events", "/simclock/draws/x", "/simclock"])
def test_C_BUS_5_device_on_a_reserved_topic_is_refused_at_load_naming_the_key(
    tmp_path: Path, topic: str
) -> None:
    text = GRID.replace("dim = 2", f'dim = 2\ntopic = "{topic}"')
    assert _error(tmp_path, text) == (
        f"devices.imu.topic: {topic!r} is reserved for the library (/clock and /simclock/...); "
        "use another topic, e.g. the default '/sensors/imu'"
    )


def test_C_BUS_5_a_topic_that_only_starts_like_a_reserved_one_is_accepted(tmp_path: Path) -> None:
    text = GRID.replace("dim = 2", 'dim = 2\ntopic = "/simclockwise/imu"')
    scenario = load_scenario(_write(tmp_path, text))
    assert [d.spec.topic for d in scenario.devices] == ["/simclockwise/imu"]
