"""Component kinds of your own (SPEC §8, C-SEED-2, C-X-FP): the cart-pole example and the errors.

A ``module:Class`` or entry-point kind runs, records, fingerprints and pickles
(for sweep workers) as the built-in kinds do; a bad kind is one
:class:`~simclock.ScenarioError` line from ``load_scenario``, before anything runs.
"""

from __future__ import annotations

import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simclock import ReplayClock, ScenarioError, load_scenario, run_scenario, trace_fingerprint
from simclock.cli._main import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture
def cartpole(tmp_path: Path) -> Path:
    """The cart-pole example copied to ``tmp_path``, shortened to 1 s (metrics after 0.5 s)."""
    for name in ("cartpole.toml", "cartpole.xml", "cartpole_lqr.py"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    path = tmp_path / "cartpole.toml"
    text = path.read_text().replace('duration = "5 s"', 'duration = "1 s"')
    path.write_text(text.replace('after = "2 s"', 'after = "500 ms"'))
    return path


def test_C_X_FP_a_python_kind_runs_with_metrics_and_the_same_fingerprint_twice(
    cartpole: Path,
) -> None:
    first = run_scenario(load_scenario(cartpole))
    second = run_scenario(load_scenario(cartpole))
    assert first.fingerprint == second.fingerprint
    # 501 samples of each of 4 devices (one of pole_rate still in flight), 251 commands.
    assert first.messages == second.messages == 501 * 4 - 1 + 251
    assert list(first.metrics) == ["pole_rms", "cart_final", "pole_max"]
    assert first.metrics == second.metrics
    assert all(isinstance(v, float) for v in first.metrics.values())
    assert first.metrics["pole_rms"] < 0.05  # type: ignore[operator]  # caught: upright
    assert first.metrics["pole_max"] == pytest.approx(0.15, abs=1e-3)
    assert first.stats["controllers/balance"].fired == 251


def test_C_REP_4_a_recorded_python_kind_replays(
    cartpole: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = load_scenario(cartpole)
    unrecorded = run_scenario(scenario)
    recorded = run_scenario(scenario, out=tmp_path / "a.mcap")
    assert recorded.fingerprint == unrecorded.fingerprint
    clock = ReplayClock(tmp_path / "a.mcap")
    seen: list[object] = []
    clock.bus.subscribe(None, seen.append)
    clock.advance(clock.end_ns() - clock.now_ns())
    assert trace_fingerprint(seen) == recorded.fingerprint  # type: ignore[arg-type]
    commands = [m for m in seen if m.topic == "/controllers/balance"]  # type: ignore[attr-defined]
    assert commands[0].payload == {"u": 0.0}  # type: ignore[attr-defined]
    assert commands[1].payload["u"] > 0  # type: ignore[attr-defined]  # pushes under the pole
    run_scenario(scenario, out=tmp_path / "b.mcap")
    assert main(["diff", str(tmp_path / "a.mcap"), str(tmp_path / "b.mcap")]) == 0
    assert capsys.readouterr().out.startswith(f"identical: fingerprint {recorded.fingerprint}")


def test_C_SEED_2_a_python_kind_pickles_for_a_worker_that_never_imported_it(
    cartpole: Path, tmp_path: Path
) -> None:
    """A sweep worker unpickles the plan without the scenario's directory on its path."""
    scenario = load_scenario(cartpole)
    expected = run_scenario(scenario, seed=4).fingerprint
    blob = tmp_path / "plan.pickle"
    blob.write_bytes(pickle.dumps(scenario))
    code = (
        "import pickle, sys; import simclock\n"
        f"plan = pickle.loads(open({str(blob)!r}, 'rb').read())\n"
        "print(simclock.run_scenario(plan, seed=4).fingerprint)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,  # not tmp_path: cartpole_lqr is importable only from the scenario's directory
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr, done.stdout) == (0, "", expected + "\n")


KIND_TOML = """\
duration = "4 ms"
[physics]
step = "2 ms"
[devices.a]
period = "2 ms"
[controllers.c]
period = "2 ms"
kind = "{kind}"
{extra}
"""

MODULE = """\
import simclock

class Counter(simclock.ControllerKind):
    keys = ("start",)

    def __init__(self, start):
        self.start = start

    @classmethod
    def load(cls, params):
        return cls(params.integer("start", 0))

    def controller(self, run):
        seen = []
        return lambda latest: {"n": self.start + len(seen) + (seen.append(1) or 0)}

class NoStep(simclock.ControllerKind):
    @classmethod
    def load(cls, params):
        return cls()

class Broken(simclock.ControllerKind):
    @classmethod
    def load(cls, params):
        raise RuntimeError("the gains file is missing")

    def controller(self, run):
        return None

class Sensor(simclock.SensorKind):
    keys = ("value",)

    def __init__(self, value):
        self.value = value

    @property
    def dim(self):
        return 1

    @classmethod
    def load(cls, params):
        return cls(params.number("value"))

    def reader(self, run):
        return lambda noise: [self.value]

class Greedy(Counter):
    keys = ("start", "period")

class Loose(simclock.ControllerKind):
    keys = ("note",)

    @classmethod
    def load(cls, params):
        return cls()

    def controller(self, run):
        return lambda latest: None

NOT_A_CLASS = 3
"""


def _scenario(tmp_path: Path, kind: str, extra: str = "") -> Path:
    (tmp_path / "my_kinds.py").write_text(MODULE, encoding="utf-8")
    path = tmp_path / "s.toml"
    path.write_text(KIND_TOML.format(kind=kind, extra=extra), encoding="utf-8")
    return path


def test_C_X_FP_module_class_kinds_of_both_families_run(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "my_kinds:Counter", "start = 5")
    text = path.read_text().replace(
        '[devices.a]\nperiod = "2 ms"',
        '[devices.a]\nperiod = "2 ms"\nkind = "my_kinds:Sensor"\nvalue = 2',
    )
    path.write_text(text)
    scenario = load_scenario(path)
    assert (scenario.devices[0].kind, scenario.devices[0].dim) == ("my_kinds:Sensor", 1)
    assert scenario.controllers[0].params == {"start": 5}
    from simclock import build_session

    session = build_session(scenario)
    commands: list[object] = []
    session.bus.subscribe("/controllers/c", lambda m: commands.append(m.payload))
    session.advance(4_000_000)
    assert commands == [{"n": 5}, {"n": 6}, {"n": 7}]
    assert [s.values for s in session.samples] == [(2.0,), (2.0,), (2.0,)]


@pytest.mark.parametrize(
    ("kind", "extra", "message"),
    [
        (
            "lqr",
            "",
            'controllers.c.kind: unknown controller kind \'lqr\'; use "pd", "tick", '
            '"module:Class" for a Python class, or a name registered in the entry point '
            "group simclock.components",
        ),
        (
            "no_such_module:Lqr",
            "",
            "controllers.c.kind: cannot import module 'no_such_module' of kind "
            "'no_such_module:Lqr' (ModuleNotFoundError: No module named 'no_such_module'); "
            "put no_such_module.py beside the scenario or install it",
        ),
        (
            "my_kinds:Lqr",
            "",
            "controllers.c.kind: module 'my_kinds' has no 'Lqr' (kind 'my_kinds:Lqr'); "
            "check the class name",
        ),
        (
            "my_kinds:NoStep",
            "",
            "controllers.c.kind: 'my_kinds:NoStep' has no method controller(); a controller "
            "kind defines load() and controller() (subclass simclock.ControllerKind)",
        ),
        (
            "my_kinds:Sensor",
            "",
            "controllers.c.kind: 'my_kinds:Sensor' has no method controller(); a controller "
            "kind defines load() and controller() (subclass simclock.ControllerKind)",
        ),
        (
            "my_kinds:NOT_A_CLASS",
            "",
            "controllers.c.kind: 'my_kinds:NOT_A_CLASS' is a int, not a class; name a "
            "subclass of simclock.ControllerKind",
        ),
        (
            "my_kinds:Broken",
            "",
            "controllers.c.kind: 'my_kinds:Broken'.load() failed: RuntimeError: the gains "
            "file is missing",
        ),
        (
            "my_kinds:Counter",
            "stat = 1",
            "controllers.c.stat: unknown key; expected one of kind, period, phase, policy, start",
        ),
        (
            "my_kinds:Counter",
            'start = "5"',
            "controllers.c.start: expected an integer, got str '5'",
        ),
        (
            "my_kinds:Loose",
            "note = 2024-01-02",
            "controllers.c.note: a TOML date or time is not a scenario value; quote it: "
            "'2024-01-02'",
        ),
        (
            "my_kinds:Greedy",
            "",
            "controllers.c.kind: 'my_kinds:Greedy'.keys lists period, which every controller "
            "has; remove it from keys (the loader reads it)",
        ),
        (
            "my kinds:Counter",
            "",
            "controllers.c.kind: 'my kinds:Counter' is not \"module:Class\"; write e.g. "
            '"my_controllers:Lqr"',
        ),
    ],
)
def test_C_SEED_2_a_bad_kind_is_one_line_naming_key_value_and_fix(
    tmp_path: Path, kind: str, extra: str, message: str
) -> None:
    path = _scenario(tmp_path, kind, extra)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == message
    assert "\n" not in message


def test_C_SEED_2_a_module_that_fails_to_import_is_named(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "bad_kinds:X")
    (tmp_path / "bad_kinds.py").write_text("raise ImportError('needs scipy')\n")
    with pytest.raises(
        ScenarioError,
        match=r"^controllers\.c\.kind: cannot import module 'bad_kinds' of kind 'bad_kinds:X' "
        r"\(ImportError: needs scipy\); put bad_kinds\.py beside the scenario or install it$",
    ):
        load_scenario(path)
    assert "bad_kinds" not in sys.modules


def test_C_SEED_2_an_entry_point_kind_is_found_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    (site / "ep_kinds-1.0.dist-info").mkdir(parents=True)
    (site / "ep_kinds-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ep-kinds\nVersion: 1.0\n"
    )
    (site / "ep_kinds-1.0.dist-info" / "entry_points.txt").write_text(
        "[simclock.components]\ncounter = ep_kinds_mod:Counter\n"
    )
    (site / "ep_kinds_mod.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(site))
    path = tmp_path / "s.toml"
    path.write_text(KIND_TOML.format(kind="counter", extra="start = 2"))
    result = run_scenario(load_scenario(path))
    assert result.messages == 6
    monkeypatch.delitem(sys.modules, "ep_kinds_mod", raising=False)
