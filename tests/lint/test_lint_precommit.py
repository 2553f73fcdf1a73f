"""The pre-commit hook: a valid manifest, and a commit with global numpy seeding blocked.

The blocking test runs pre-commit's own git hook in a throwaway repository. It
declares the hook from this checkout's manifest as ``repo: local`` with
``language: system`` pointing at the installed console script: the
``language: python`` install that a user's ``repo: <url>`` triggers has to
fetch simclock's dependencies from the package index, which a test must not
need (the check of that path is the manifest validation).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml  # type: ignore[import-untyped,unused-ignore]

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / ".pre-commit-hooks.yaml"
BIN = Path(sys.executable).parent


def pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [str(BIN / "pre-commit"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_C_RNG_6_precommit_manifest_validates_and_names_the_console_script(tmp_path: Path) -> None:
    done = pre_commit("validate-manifest", str(MANIFEST), cwd=ROOT, home=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    [hook] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert (hook["id"], hook["language"], hook["types"]) == ("simclock-lint", "python", ["python"])
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "scripts"
    ]
    assert scripts[hook["entry"]] == "simclock_lint._cli:main"


def test_C_RNG_6_precommit_blocks_a_commit_with_global_numpy_seed(tmp_path: Path) -> None:
    git = shutil.which("git")
    assert git is not None
    repo = tmp_path / "user-project"
    repo.mkdir()
    home = tmp_path / "pre-commit-home"
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(home),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }

    def git_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [git, *args], cwd=repo, env=env, capture_output=True, text=True, check=False
        )

    assert git_run("init", "-q").returncode == 0
    [hook] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    hook.update(language="system", entry=str(BIN / "simclock-lint"))
    # YAML is a superset of JSON: the config a user writes, with the hook inlined.
    config = {"repos": [{"repo": "local", "hooks": [hook]}]}
    (repo / ".pre-commit-config.yaml").write_text(json.dumps(config), encoding="utf-8")
    assert pre_commit("install", cwd=repo, home=home).returncode == 0

    (repo / "sim.py").write_text("import numpy as np\nnp.random.seed(0)\n", encoding="utf-8")
    git_run("add", "sim.py", ".pre-commit-config.yaml")
    blocked = git_run("commit", "-q", "-m", "seed globally")
    assert blocked.returncode == 1
    output = blocked.stdout + blocked.stderr  # git shows hook output on stderr
    assert re.search(r"^simclock-lint\.+Failed$", output, re.MULTILINE)
    assert "sim.py:2:1: SCK102 global numpy.random use `numpy.random.seed`" in output
    assert git_run("rev-parse", "--verify", "-q", "HEAD").returncode == 1  # nothing committed

    (repo / "sim.py").write_text(
        "import numpy as np\nrng = np.random.default_rng(0)\n", encoding="utf-8"
    )
    git_run("add", "sim.py")
    allowed = git_run("commit", "-q", "-m", "seeded generator")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert git_run("rev-parse", "--verify", "-q", "HEAD").returncode == 0
