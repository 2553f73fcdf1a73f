"""README's quick start: what ``make demo`` runs, run as the Makefile and README spell it.

An exit status of 0 is not a demo: these tests read what the command printed
and what it wrote. The in-process tests of the demo's steps are in
tests/test_scenario.py; these run the command itself.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from simclock.sim._scenario import run_scenario
from simclock.sim._scenario_file import load_scenario

ROOT = Path(__file__).resolve().parent.parent
PENDULUM = ROOT / "examples" / "pendulum.toml"


def _recipe(target: str) -> list[str]:
    """The recipe lines of ``target`` in the Makefile, without the leading tab and ``@``."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"^{target}:", line))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line[1:].removeprefix("@"))
    return recipe


def _clean_env() -> dict[str, str]:
    # A test run under `make test` inherits make's job-server flags; the demo is a new command.
    return {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}


def _check_demo_output(out: str, cwd: Path, scripts: Path) -> None:
    """What the demo must show: the run, the replay that matches it, the timeline, the PATH hint."""
    fingerprint = run_scenario(load_scenario(PENDULUM)).fingerprint
    lines = out.splitlines()
    shown = PENDULUM.relative_to(cwd) if PENDULUM.is_relative_to(cwd) else PENDULUM
    assert lines[0] == f"$ simclock run {shown} --out out/pendulum.mcap"
    assert f"fingerprint: {fingerprint}" in lines
    assert "replay: 8931 messages replayed, fingerprint matches the run" in lines
    assert "$ simclock timeline out/pendulum.mcap -o out/timeline.png" in lines
    assert "timeline: out/timeline.png (27 samples of 2 devices, 0 s to 40 ms)" in lines
    hint = scripts.relative_to(cwd) if scripts.is_relative_to(cwd) else scripts
    assert lines[-1] in {
        f"or run them by their path: {hint}/simclock --help",
        f"The simclock commands are on your PATH ({scripts}).",
    }
    assert (cwd / "out" / "pendulum.mcap").stat().st_size > 0
    assert (cwd / "out" / "timeline.png").read_bytes()[:4] == b"\x89PNG"


def test_make_demo_recipe_runs_the_pendulum_records_replays_and_plots(tmp_path: Path) -> None:
    """The Makefile's own demo command, run from another directory, does the whole demo."""
    recipe = _recipe("demo")
    assert recipe, "the Makefile has no demo recipe"
    scripts = Path(sys.executable).parent
    command = recipe[-1].replace("$(BIN)", str(scripts))
    proc = subprocess.run(
        ["bash", "-c", command],
        check=False,
        cwd=tmp_path,
        env={**_clean_env(), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip(), f"the demo's command {command!r} printed nothing"
    _check_demo_output(proc.stdout, tmp_path, scripts)
    if scripts in (Path("/usr/bin"), Path("/bin")):
        on_path = f"The simclock commands are on your PATH ({scripts})."
        assert proc.stdout.splitlines()[-1] == on_path
    else:
        activate = [f"To type them as simclock ..., activate the environment: . {scripts}/activate"]
        assert (
            proc.stdout.splitlines()[-3:]
            == [
                f"The simclock commands are in {scripts}, which is not on your PATH.",
                *(activate if (scripts / "activate").is_file() else []),
                f"or run them by their path: {scripts}/simclock --help",
            ][-3:]
        )


def test_readme_quick_start_make_demo_runs_as_written() -> None:
    """README's first command, typed in the clone: ``make demo``."""
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^\$ (make \w+)", readme, flags=re.MULTILINE)
    assert commands[:2] == ["make demo", "make test"]
    venv = ROOT / ".venv"
    if Path(sys.prefix).resolve() != venv.resolve() or not (venv / ".installed").is_file():
        pytest.skip("make demo runs the clone's .venv, and these tests run in another environment")
    proc = subprocess.run(
        ["make", "--no-print-directory", "demo"],
        check=False,
        cwd=ROOT,
        env={**_clean_env(), "PATH": f"/usr/bin:/bin:{os.environ.get('PATH', '')}"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # make echoes the recipe's command first; the demo's own output follows it.
    out = proc.stdout.split("python -m simclock.cli._demo\n", 1)[-1]
    _check_demo_output(out, ROOT, ROOT / ".venv" / "bin")
