"""The release as a user installs it: sdist and wheel, a fresh virtual environment, own names only.

One session fixture builds the sdist and the wheel with ``python -m build`` (as
a release would; pure Python, ``SIMCLOCK_PURE=1``, so the test does not wait
for a C compile: the compiled wheel is checked by tests/test_native.py), checks
both with ``twine check``, and installs the wheel's *base* distribution into a
new virtual environment next to a user's project that has packages of its own
named ``conformance``, ``lint`` and ``oracles``. Everything then runs as the
user would run it, in that project's directory, with that environment's
executables: nothing of this checkout is on the path.

Needs the network or pip's cache for the base dependencies (numpy, mcap, ...);
with neither, the fixture skips with pip's own last line.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import venv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from docs_examples import CLONE_PLACEHOLDERS, install_commands

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
VERSION = re.search(
    r'^__version__ = "([^"]+)"$', (ROOT / "simclock" / "_version.py").read_text(), re.M
)[1]  # type: ignore[index]

# The user's own packages, named like simclock's helper packages used to be.
USER_FILES = {
    "conformance/__init__.py": "WHO = 'user conformance'\n",
    "lint/__init__.py": "",
    "lint/__main__.py": "print('the user lint')\n",
    "oracles/__init__.py": "WHO = 'user oracles'\n",
    "tests/test_mine.py": (
        "import conformance, oracles\n\n\n"
        "def test_own_packages_win() -> None:\n"
        "    assert conformance.WHO == 'user conformance'\n"
        "    assert oracles.WHO == 'user oracles'\n"
    ),
    "sim.py": "import random\n\nx = random.random()\n",
    # A scenario of the base install: the physics grid alone, no MuJoCo model.
    "grid.toml": (
        'name = "grid"\nseed = 3\nduration = "40 ms"\n\n[physics]\nstep = "2 ms"\n\n'
        '[devices.imu]\nperiod = "7 ms"\nlatency = "3 ms"\nnoise_std = 0.5\ndim = 2\n'
    ),
}


@dataclass(frozen=True)
class Installed:
    """A fresh environment with the base wheel installed, and the user's project."""

    bin: Path
    project: Path
    dist: Path
    src: Path

    def run(
        self, *argv: str, timeout: float = 300, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env = {**base, **(env or {})}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return subprocess.run(
            argv,
            cwd=self.project,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def dry_run(self, command: str) -> None:
        """Run ``command`` (``pip install ...`` as a page or a message shows it) as written,
        with ``--dry-run``, in this environment: the clone's and the wheel's placeholders
        replaced by this build's source tree and wheel. Fails with pip's words."""
        (wheel,) = self.dist.glob("*.whl")
        words = shlex.split(command)
        assert words[:2] == ["pip", "install"], command
        args = []
        for word in words[2:]:
            real = word
            for placeholder in CLONE_PLACEHOLDERS:
                real = re.sub(
                    rf"{re.escape(placeholder)}/dist/simclock-[^\[]*\.whl", str(wheel), real
                )
                real = real.replace(f"file://{placeholder}", self.src.as_uri())
                real = real.replace(placeholder, str(self.src))
            args.append(real)
        env = {"SIMCLOCK_PURE": "1"}
        done = self.run(
            str(self.bin / "python"), "-m", "pip", "install", "--dry-run", "-q", *args,
            timeout=900, env=env,
        )  # fmt: skip
        if done.returncode != 0 and _offline(done.stderr):
            pytest.skip(f"pip cannot reach the package index: {done.stderr.strip()[-300:]}")
        assert done.returncode == 0, f"{command} (run as {args}):\n{done.stderr[-3000:]}"

    def pip(self, *args: str) -> None:
        done = self.run(str(self.bin / "python"), "-m", "pip", "install", "-q", *args)
        if done.returncode != 0:
            pytest.skip(f"pip could not install {args}: {done.stderr.strip().splitlines()[-1:]}")


def _offline(stderr: str) -> bool:
    """Whether pip failed for want of the package index (no network, no cache)."""
    words = ("NewConnectionError", "Temporary failure in name resolution", "Network is unreachable")
    return any(w in stderr for w in words)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    top = tmp_path_factory.mktemp("release")
    dist = top / "dist"
    env = {**os.environ, "SIMCLOCK_PURE": "1"}
    env.pop("PYTHONPATH", None)
    # A copy of the tracked files: the build must not need anything untracked.
    src = top / "src"
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        rel = Path(os.fsdecode(name))
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(src)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if built.returncode != 0:
        tail = (built.stdout + built.stderr).strip().splitlines()[-3:]
        if any("pip" in line or "network" in line.lower() for line in tail):
            pytest.skip(f"python -m build could not fetch hatchling: {tail}")
        raise AssertionError("python -m build failed:\n" + built.stdout + built.stderr)
    environment = top / "venv"
    venv.create(environment, with_pip=True)
    project = top / "project"
    for file_name, text in USER_FILES.items():
        (project / file_name).parent.mkdir(parents=True, exist_ok=True)
        (project / file_name).write_text(text, encoding="utf-8")
    result = Installed(environment / "bin", project, dist, src)
    (wheel,) = dist.glob("*.whl")
    result.pip(str(wheel))
    yield result


def test_sdist_and_wheel_pass_twine_check(installed: Installed) -> None:
    names = sorted(p.name for p in installed.dist.iterdir())
    assert names == [f"simclock-{VERSION}-py3-none-any.whl", f"simclock-{VERSION}.tar.gz"]
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, installed.dist.iterdir())],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2


def test_wheel_claims_only_simclock_import_names(installed: Installed) -> None:
    """Every top-level name the wheel installs starts with ``simclock``."""
    import zipfile

    (wheel,) = installed.dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
    tops = {t.removesuffix(".py") for t in tops if not t.endswith((".dist-info", ".data"))}
    assert tops == {"simclock", "simclock_conformance", "simclock_lint", "simclock_oracles"}


def test_base_install_pulls_no_heavy_extra(installed: Installed) -> None:
    done = installed.run(str(installed.bin / "python"), "-m", "pip", "list", "--format=freeze")
    present = {line.split("==")[0].lower() for line in done.stdout.splitlines()}
    heavy = {"dask", "distributed", "pyarrow", "matplotlib", "mujoco", "hypothesis", "pytest"}
    assert present & heavy == set()
    assert {"numpy", "mcap", "libcst", "lz4", "zstandard"} <= present


def test_users_own_packages_and_simclock_commands_side_by_side(installed: Installed) -> None:
    py = str(installed.bin / "python")
    done = installed.run(py, "-m", "lint")
    assert (done.returncode, done.stdout) == (0, "the user lint\n"), done.stderr
    done = installed.run(str(installed.bin / "simclock-lint"), "sim.py")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("sim.py:3:5: SCK101 global random module use `random.random`")
    done = installed.run(py, "-m", "simclock_lint", "sim.py")
    assert done.returncode == 1
    done = installed.run(
        py, "-c", "import simclock; print(simclock.__version__, simclock.HeapSimClock.__module__)"
    )
    assert done.stdout == f"{VERSION} simclock\n", done.stderr
    done = installed.run(str(installed.bin / "simclock"), "--help")
    assert done.returncode == 0 and "usage: simclock" in done.stdout, done.stderr


def test_a_run_recorded_and_read_back_on_the_base_install(installed: Installed) -> None:
    simclock = str(installed.bin / "simclock")
    done = installed.run(simclock, "run", "grid.toml", "--out", "grid.mcap")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (installed.project / "grid.mcap").is_file()
    done = installed.run(simclock, "info", "grid.mcap")
    assert done.returncode == 0, done.stderr
    assert "seed" in done.stdout and "fingerprint" in done.stdout, done.stdout


def test_a_job_whose_extra_is_missing_says_which_to_install(installed: Installed) -> None:
    scenario = ROOT / "examples" / "pendulum.toml"
    done = installed.run(str(installed.bin / "simclock"), "sweep", str(scenario), "--seeds", "0:2")
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    # The command names the wheel this environment installed simclock from (no index has it).
    (wheel,) = installed.dist.glob("*.whl")
    command = f'pip install "simclock[sweep] @ {wheel.as_uri()}"'
    assert line.endswith(
        "simclock sweep needs the 'sweep' extra, which is not installed (missing: dask, "
        f"distributed, pyarrow, cloudpickle); install it with: {command}"
    ), line
    installed.dry_run(command)


def test_the_suite_without_its_extra_says_which_to_install(installed: Installed) -> None:
    done = installed.run(str(installed.bin / "python"), "-m", "simclock_conformance", "x:y")
    assert (done.returncode, done.stdout) == (2, "")
    (wheel,) = installed.dist.glob("*.whl")
    command = f'pip install "simclock[conformance] @ {wheel.as_uri()}"'
    assert done.stderr == (
        "python -m simclock_conformance: error: the conformance suite needs the 'conformance' "
        f"extra, which is not installed (missing: pytest, hypothesis); install it with: "
        f"{command}\n"
    )
    installed.dry_run(command)


def test_users_pytest_runs_with_simclock_and_its_plugin_installed(installed: Installed) -> None:
    """The user's pytest, with simclock's plugin registered: their tests, their packages.

    Runs after the tests that need an environment without pytest (file order).
    """
    installed.pip("pytest>=8")
    done = installed.run(
        str(installed.bin / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    # With the conformance extra the plugin runs the suite on simclock's own clock.
    installed.pip("hypothesis>=6.100")
    done = installed.run(
        str(installed.bin / "python"),
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--simclock-backend",
        "simclock_conformance:heap_factory",
        "-k",
        "C_TIE",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed" in done.stdout and "PARTIAL" in done.stdout


def test_every_install_line_of_the_pages_runs_as_written(installed: Installed) -> None:
    """Each ``pip install`` of README.md and docs/*.md (docs_examples.install_commands), with
    ``--dry-run`` in a fresh environment: the clone is this build's source tree, the wheel
    this build's wheel. Lines that name the same source are run together (pip resolves
    the extras of one project at once)."""
    from docs_examples import install_problem

    found = install_commands()
    by_source: dict[str, list[str]] = {}
    for _where, command in found:
        assert install_problem(command) is None, command
        for word in shlex.split(command)[2:]:
            key = "wheel" if (".whl" in word) else "clone"
            by_source.setdefault(key, []).append(word)
    assert set(by_source) == {"wheel", "clone"}
    for words in by_source.values():
        installed.dry_run("pip install " + " ".join(shlex.quote(w) for w in sorted(set(words))))
