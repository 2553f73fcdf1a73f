"""A recording written by an earlier build of simclock reads exactly today (C-REP-1, C-X-FP).

``tests/data/recordings/pendulum_300ms_seed7.mcap`` was written by ``simclock run
pendulum_300ms.toml --seed 7 --out ...`` (format ``simclock-recording/2``) and is kept
as it was written: a change of the writer, the chunking or a reader that stops
reading it, or reads it differently, fails here. Each check compares with what
simclock said of the file when it wrote it (``.info.txt``, the fingerprint) and with a
fresh run of the same scenario, model and seed by today's build (the model is kept
beside the file too, so a change of the examples does not touch this test).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "recordings"
GOLDEN = DATA / "pendulum_300ms_seed7.mcap"
SCENARIO = DATA / "pendulum_300ms.toml"
FINGERPRINT = "a5723bccb8f533d1de0b2a63995cc9fc7c7c1c42bd7433e5c2d92aa9c0fa49f6"
BIN = Path(sys.executable).parent


def _simclock(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "simclock"), *map(str, argv)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden file, its scenario and the model; plus today's recording of the same run."""
    where = tmp_path_factory.mktemp("golden")
    shutil.copy(GOLDEN, where / GOLDEN.name)
    shutil.copy(SCENARIO, where / SCENARIO.name)
    shutil.copy(DATA / "pendulum.xml", where / "pendulum.xml")
    done = _simclock("run", SCENARIO.name, "--seed", "7", "--out", "today.mcap", cwd=where)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(f"fingerprint: {FINGERPRINT}\n"), done.stdout
    return where


def test_C_REP_6_info_of_the_golden_recording_is_what_it_was_when_written(workdir: Path) -> None:
    done = _simclock("info", GOLDEN.name, cwd=workdir)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (DATA / "pendulum_300ms_seed7.info.txt").read_text()


def test_C_REP_1_the_golden_recording_replays_as_todays_run_of_the_same_seed(
    workdir: Path,
) -> None:
    golden = _simclock("replay", "--json", GOLDEN.name, cwd=workdir)
    today = _simclock("replay", "--json", "today.mcap", cwd=workdir)
    assert (golden.returncode, golden.stderr) == (0, "")
    assert golden.stdout.count("\n") == 270  # every bus message, in total order
    assert golden.stdout == today.stdout


def test_C_X_FP_the_golden_recording_and_todays_are_identical_by_diff(workdir: Path) -> None:
    done = _simclock("diff", GOLDEN.name, "today.mcap", cwd=workdir)
    assert (done.returncode, done.stderr) == (0, "")
    *metadata, last = done.stdout.splitlines()
    assert last == f"identical: fingerprint {FINGERPRINT} (270 messages)"
    # Only the versions of the libraries that wrote them may differ (another numpy).
    if metadata:
        assert metadata[0] == "recordings' metadata differ:", metadata
        for line in metadata[1:]:
            assert re.fullmatch(r"  version \w+: +A \S+ \| B \S+", line), metadata
