"""A recorded run carries its scenario and model; ``info`` shows them, ``diff`` compares them.

C-MCAP-2 (run metadata stored in the MCAP file) and C-X-FP (``diff`` compares
traces): ``scenario_text``, ``scenario_sha256`` and ``model_sha256`` are user
metadata of ``simclock run --out``. Recordings without them read, replay and
diff exactly as before.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from simclock import Bus, Recorder, load_scenario, run_scenario
from simclock.cli._main import main
from simclock.cli._mcap import scenario_changes

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

GRID = """\
# a comment, which the canonical text does not keep
name = "g"
seed = 3
duration = "10 ms"

[physics]
step = "1 ms"

[devices.a]
period = "2 ms"
noise_std = {noise}

[controllers.t]
kind = "tick"
period = "2 ms"
"""

GRID_TEXT = (
    '{"controllers":{"t":{"kind":"tick","period":"2 ms"}},"devices":{"a":{"noise_std":0.5,'
    '"period":"2 ms"}},"duration":"10 ms","name":"g","physics":{"step":"1 ms"},"seed":3}'
)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _grid(tmp_path: Path, name: str, noise: str = "0.5") -> Path:
    path = tmp_path / name
    path.write_text(GRID.format(noise=noise), encoding="utf-8")
    return path


def test_C_MCAP_2_scenario_canonical_text_and_hashes(tmp_path: Path) -> None:
    scenario = load_scenario(_grid(tmp_path, "g.toml"))
    assert scenario.text == GRID_TEXT
    assert scenario.text_sha256 == hashlib.sha256(GRID_TEXT.encode()).hexdigest()
    assert scenario.model_sha256 is None
    # Comments, key order, whitespace and quoting are not the scenario.
    other = tmp_path / "h.toml"
    other.write_text(
        "seed=3\nname='g'\nduration='10 ms'\n[physics]\nstep='1 ms'\n"
        "[controllers.t]\nperiod='2 ms'\nkind='tick'\n[devices.a]\nnoise_std=0.5\nperiod='2 ms'\n",
        encoding="utf-8",
    )
    assert load_scenario(other).text_sha256 == scenario.text_sha256

    pendulum = load_scenario(EXAMPLES / "pendulum.toml")
    xml = (EXAMPLES / "pendulum.xml").read_bytes()
    assert pendulum.model_sha256 == hashlib.sha256(xml).hexdigest()


def test_C_MCAP_2_info_shows_the_scenario_and_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("pendulum.toml", "pendulum.xml"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    toml = tmp_path / "pendulum.toml"
    toml.write_text(toml.read_text().replace('duration = "10 s"', 'duration = "20 ms"'))
    scenario = load_scenario(toml)
    out = tmp_path / "p.mcap"
    run_scenario(scenario, out=out)
    code, text, err = _run(capsys, "info", str(out))
    assert (code, err) == (0, "")
    assert text.splitlines()[-7:] == [
        'metadata:    devices = {"imu0": "/sensors/imu0", "encoder0": "/sensors/encoder0"}',
        "metadata:    mode = deterministic_ci",
        "metadata:    scenario = pendulum",
        "metadata:    step_ns = 2000000",
        f"scenario:    sha256 {scenario.text_sha256} of its canonical text:",
        f"             {scenario.text}",
        f"model:       sha256 {scenario.model_sha256} of the MJCF file",
    ]
    code, text, _ = _run(capsys, "info", str(out), "--json")
    meta = json.loads(text)["metadata"]
    assert (meta["scenario_text"], meta["scenario_sha256"], meta["model_sha256"]) == (
        scenario.text,
        scenario.text_sha256,
        scenario.model_sha256,
    )


def test_C_X_FP_diff_names_the_changed_scenario_keys_before_the_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = load_scenario(_grid(tmp_path, "a.toml"))
    b = load_scenario(_grid(tmp_path, "b.toml", "0.25"))
    ra = run_scenario(a, out=tmp_path / "a.mcap")
    rb = run_scenario(b, out=tmp_path / "b.mcap")
    code, out, err = _run(capsys, "diff", str(tmp_path / "a.mcap"), str(tmp_path / "b.mcap"))
    assert (code, err) == (1, "")
    sample = (
        '{"acquisition_ns":0,"delivery_ns":0,"device":"a","episode":0,"episode_start_ns":0,'
        '"index":0,"nominal_acquisition_ns":0,"requested_delivery_ns":0,"values":[%r]}'
    )
    # Same seed, half the noise: the same normal draw, halved (exactly: a power of two).
    assert out.splitlines() == [
        f"scenarios differ: A sha256 {a.text_sha256} | B sha256 {b.text_sha256}",
        "  devices.a.noise_std: 0.5 -> 0.25",
        "recordings differ at message #0 (0-based, in total order):",
        "  time:      A 0 ns | B 0 ns",
        "  sequence:  A 0 | B 0",
        "  topic:     A /sensors/a | B /sensors/a",
        "  payload A: " + sample % 0.20141275720202717,
        "  payload B: " + sample % (0.20141275720202717 / 2),
        f"  fingerprints: A {ra.fingerprint} | B {rb.fingerprint}",
    ]


def test_C_X_FP_diff_of_one_scenario_says_nothing_more(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = load_scenario(_grid(tmp_path, "a.toml"))
    run = run_scenario(scenario, out=tmp_path / "a.mcap")
    run_scenario(scenario, out=tmp_path / "b.mcap")
    assert _run(capsys, "diff", str(tmp_path / "a.mcap"), str(tmp_path / "b.mcap")) == (
        0,
        f"identical: fingerprint {run.fingerprint} ({run.messages} messages)\n",
        "",
    )


def test_C_X_FP_diff_reports_a_changed_scenario_even_when_the_traces_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = load_scenario(_grid(tmp_path, "a.toml"))
    path = _grid(tmp_path, "b.toml")
    path.write_text(path.read_text().replace('name = "g"', 'name = "renamed"'))
    b = load_scenario(path)
    run = run_scenario(a, out=tmp_path / "a.mcap")
    run_scenario(b, out=tmp_path / "b.mcap")
    assert _run(capsys, "diff", str(tmp_path / "a.mcap"), str(tmp_path / "b.mcap")) == (
        0,
        "recordings' metadata differ:\n"
        "  metadata scenario: A g | B renamed\n"
        f"scenarios differ: A sha256 {a.text_sha256} | B sha256 {b.text_sha256}\n"
        '  name: "g" -> "renamed"\n'
        f"identical: fingerprint {run.fingerprint} ({run.messages} messages)\n",
        "",
    )


def test_C_X_FP_diff_reports_a_changed_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
        shutil.copy(EXAMPLES / "pendulum.toml", tmp_path / side / "pendulum.toml")
        toml = tmp_path / side / "pendulum.toml"
        toml.write_text(toml.read_text().replace('duration = "10 s"', 'duration = "20 ms"'))
        xml = (EXAMPLES / "pendulum.xml").read_text()
        if side == "b":
            xml = xml.replace('damping="0.01"', 'damping="0.02"')
        (tmp_path / side / "pendulum.xml").write_text(xml)
    a = load_scenario(tmp_path / "a" / "pendulum.toml")
    b = load_scenario(tmp_path / "b" / "pendulum.toml")
    assert a.text_sha256 == b.text_sha256
    run_scenario(a, out=tmp_path / "a.mcap")
    run_scenario(b, out=tmp_path / "b.mcap")
    code, out, _ = _run(capsys, "diff", str(tmp_path / "a.mcap"), str(tmp_path / "b.mcap"))
    assert code == 1
    assert out.splitlines()[:2] == [
        f"models differ: A sha256 {a.model_sha256} | B sha256 {b.model_sha256}",
        "recordings differ at message #2 (0-based, in total order):",
    ]


def _old_style(path: Path, payload: object) -> str:
    """A recording made without the scenario keys (as by a Recorder of your own)."""
    bus = Bus()
    meta = {"scenario": "g", "mode": "unbounded", "step_ns": "1000000", "devices": "{}"}
    with Recorder(path, bus, seed=3, metadata=meta) as rec:
        bus.publish("/a", payload, stamp_ns=0)
    return rec.fingerprint()


def test_C_X_FP_recordings_without_the_scenario_keys_info_and_diff_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.mcap", tmp_path / "b.mcap"
    fa, fb = _old_style(a, 1), _old_style(b, 2)
    code, out, _ = _run(capsys, "info", str(a))
    assert code == 0
    assert out.splitlines()[-4:] == [
        "metadata:    devices = {}",
        "metadata:    mode = unbounded",
        "metadata:    scenario = g",
        "metadata:    step_ns = 1000000",
    ]
    code, out, _ = _run(capsys, "diff", str(a), str(b))
    assert (code, out.splitlines()[0], out.splitlines()[-1]) == (
        1,
        "recordings differ at message #0 (0-based, in total order):",
        f"  fingerprints: A {fa} | B {fb}",
    )
    # One side with its scenario, the other without: said, not compared.
    scenario = load_scenario(_grid(tmp_path, "g.toml"))
    run_scenario(scenario, out=tmp_path / "c.mcap")
    code, out, _ = _run(capsys, "diff", str(a), str(tmp_path / "c.mcap"))
    lines = out.splitlines()
    assert code == 1
    # The metadata lines first (the seeds differ), then the scenario line, then messages.
    at = lines.index("scenario: only B stores its scenario (A does not); not compared")
    assert lines[:at] == [
        "recordings' metadata differ:",
        "  clock period:     A (no /clock) | B 1000000",
        "  draws:            A false | B true",
        '  metadata devices: A {} | B {"a": "/sensors/a"}',
    ]
    assert lines[at + 1] == "recordings differ at message #0 (0-based, in total order):"
    assert _run(capsys, "replay", str(a)) == (0, "0 0 /a 1\n", "")


def test_scenario_changes_lists_every_differing_leaf() -> None:
    a = '{"a":{"b":1,"c":[1,2],"e":{}},"x":"s"}'
    b = '{"a":{"b":1.0,"c":[1,3],"d":true},"y":null}'
    assert scenario_changes(a, b) == [
        "a.b: 1 -> 1.0",
        "a.c: [1,2] -> [1,3]",
        "a.d: (absent) -> true",
        "a.e: {} -> (absent)",
        'x: "s" -> (absent)',
        "y: (absent) -> null",
    ]
    assert scenario_changes("not json", a)[0] == '(scenario): "not json" -> (absent)'
