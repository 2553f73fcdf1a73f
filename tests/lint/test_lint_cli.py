"""The command line, configuration and cache of simclock-lint (SPEC §13, C-RNG-6)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from simclock_lint import Config, LintConfigError, _runner, lint_paths, load_config, main

if TYPE_CHECKING:
    import libcst

    from simclock_lint._analysis import Analysis

SEED = "import numpy as np\nnp.random.seed(0)\n"
SEED_MESSAGE = (
    "SCK102 global numpy.random use `numpy.random.seed`; draw from a seeded "
    "numpy.random.Generator (random_source().numpy_rng())"
)
# Simulation code by default: it imports simclock.
WALL = "import simclock\nimport time\nt = time.time()\n"
WALL_MESSAGE = (
    "SCK301 wall-clock read `time.time` in simulation code; use clock.now_ns() / advance() "
    "[simulation code: imports simclock]"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project directory that is the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(root: Path, relpath: str, text: str) -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_C_RNG_6_clean_tree_exits_0(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "pkg/ok.py", "import numpy as np\nrng = np.random.default_rng(1)\n")
    assert run(capsys, "pkg") == (0, "", "simclock-lint: 0 findings in 1 files (0 from cache)\n")


def test_C_RNG_6_findings_exit_1_with_text_lines(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "pkg/a.py", SEED)
    write(project, "pkg/b.py", WALL)
    status, out, _ = run(capsys, "pkg", "--no-cache")
    assert status == 1
    assert out == f"pkg/a.py:2:1: {SEED_MESSAGE}\npkg/b.py:3:5: {WALL_MESSAGE}\n"


def test_C_RNG_6_usage_errors_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "a.py", SEED)
    assert run(capsys, "missing.py")[0] == 2
    status, out, err = run(capsys, "a.py", "--select", "SCK9")
    assert (status, out) == (2, "")
    assert err == (
        "simclock-lint: error: --select names unknown code 'SCK9'; use one of "
        "SCK101, SCK102, SCK103, SCK104, SCK201, SCK301, SCK401, SCK402, SCK403 "
        "or a prefix like 'SCK1'\n"
    )
    with pytest.raises(SystemExit) as exited:
        main(["--format", "xml"])
    assert exited.value.code == 2
    assert run(capsys, "a.py", "--jobs", "0")[0] == 2
    # An empty selection would lint nothing and pass: refused, not a silent exit 0.
    with pytest.raises(SystemExit) as exited:
        main(["a.py", "--select", " , "])
    assert exited.value.code == 2
    assert capsys.readouterr().err.endswith(
        "simclock-lint: error: argument --select: names no code, got ' , '; "
        "pass codes or prefixes such as SCK1,SCK301\n"
    )


def test_C_RNG_6_internal_error_exits_2_and_others_still_linted(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from simclock_lint import RULES

    def broken_check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
        raise KeyError("rule bug")

    rules = tuple(
        dataclasses.replace(r, check=broken_check) if r.code == "SCK101" else r for r in RULES
    )
    monkeypatch.setattr(_runner, "RULES", rules)
    write(project, "a_random.py", "import random\nx = random.random()\n")
    write(project, "b.py", SEED)
    status, out, _ = run(capsys, ".", "--no-cache", "--jobs", "1")
    assert status == 2
    assert out == (
        f"a_random.py:1:1: SCK999 internal error: KeyError: 'rule bug'\nb.py:2:1: {SEED_MESSAGE}\n"
    )


def test_C_RNG_6_unparsable_file_reported_and_others_still_linted(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "a_bad.py", "import random\nx = (\n")  # CPython's message and position
    write(project, "b.py", SEED)
    status, out, _ = run(capsys, ".", "--no-cache")
    assert status == 1
    assert out == (
        f"a_bad.py:2:5: SCK000 could not parse: '(' was never closed\nb.py:2:1: {SEED_MESSAGE}\n"
    )


def test_C_RNG_6_select_and_ignore(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "a.py", SEED + WALL)

    def codes(out: str) -> list[str]:
        return [line.split()[1] for line in out.splitlines()]

    assert codes(run(capsys, "a.py", "--no-cache")[1]) == ["SCK102", "SCK301"]
    assert codes(run(capsys, "a.py", "--no-cache", "--select", "SCK3")[1]) == ["SCK301"]
    assert codes(run(capsys, "a.py", "--no-cache", "--ignore", "SCK1")[1]) == ["SCK301"]
    assert run(capsys, "a.py", "--no-cache", "--select", "SCK102", "--ignore", "SCK102")[0] == 0


def test_C_RNG_6_json_and_github_formats(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "a.py", SEED)
    status, out, err = run(capsys, "a.py", "--no-cache", "--format", "json")
    assert (status, err) == (1, "")
    assert json.loads(out) == [
        {
            "path": "a.py",
            "line": 2,
            "col": 1,
            "code": "SCK102",
            "message": SEED_MESSAGE.removeprefix("SCK102 "),
        }
    ]
    status, out, _ = run(capsys, "a.py", "--no-cache", "--format", "github")
    assert out == f"::error file=a.py,line=2,col=1,title=SCK102::{SEED_MESSAGE}\n"


def test_C_RNG_6_show_source(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "a.py", "import simclock, time\nstart = time.monotonic()\n")
    status, out, _ = run(capsys, "a.py", "--no-cache", "--show-source")
    lines = out.splitlines()
    assert status == 1
    assert lines[1:] == ["    start = time.monotonic()", "            ^"]


def test_C_RNG_6_explain_and_list_rules(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--explain", "sc201")
    assert status == 0 and out.startswith("SCK201: ``.child()`` called with a non-constant label.")
    status, out, _ = run(capsys, "--list-rules")
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()] == [
        "SCK101",
        "SCK102",
        "SCK103",
        "SCK104",
        "SCK201",
        "SCK301",
        "SCK401",
        "SCK402",
        "SCK403",
    ]
    assert run(capsys, "--explain", "SCK999")[0] == 2
    status, out, _ = run(capsys, "--explain", "SCK301")
    assert status == 0
    assert out.endswith(
        "\nHere (defaults): simulation code = files importing simclock; "
        "simulation-code globs: none.\n"
    )


PYPROJECT = """
[tool.simclock-lint]
exclude = ["fixtures"]
simulation-code = ["sim/**"]
simulation-imports = []

[tool.simclock-lint.per-file-ignores]
"sim/realtime_*.py" = ["SCK301"]
"legacy.py" = ["SCK1"]
"""
# A benchmark's wall-clock read: no simclock import, not declared.
BENCH = "import time\nt0 = time.perf_counter()\nt = time.time()\n"


def test_C_RNG_6_pyproject_config_per_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "pyproject.toml", PYPROJECT)
    write(project, "sim/step.py", BENCH)  # declared simulation code: flagged
    write(project, "sim/realtime_bridge.py", WALL)  # per-file ignore of SCK301
    write(project, "tools/report.py", BENCH)  # not simulation code
    write(project, "tools/legacy.py", SEED)  # glob without '/' matches the name anywhere
    write(project, "fixtures/seeded.py", SEED)  # excluded directory
    status, out, _ = run(capsys, ".", "--no-cache")
    reason = "[simulation code: matches simulation-code 'sim/**']"
    assert (status, out) == (
        1,
        f"sim/step.py:2:6: {WALL_MESSAGE.replace('time.time', 'time.perf_counter')}\n"
        f"sim/step.py:3:5: {WALL_MESSAGE}\n".replace("[simulation code: imports simclock]", reason),
    )
    # Explicitly named excluded files stay excluded (pre-commit passes every staged file).
    assert run(capsys, "fixtures/seeded.py", "--no-cache")[:2] == (0, "")


def test_C_LINT_1_importing_simclock_is_simulation_code_whatever_the_config(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``simulation-imports`` adds marker modules; an importer of simclock stays simulation code."""
    for imports in ("[]", '["mysim"]'):
        write(project, "pyproject.toml", f"[tool.simclock-lint]\nsimulation-imports = {imports}\n")
        write(project, "tools/report.py", BENCH)
        write(project, "tools/uses_simclock.py", WALL)
        write(project, "tools/uses_mysim.py", "import mysim\n" + BENCH)
        status, out, _ = run(capsys, ".", "--no-cache")
        mysim = WALL_MESSAGE.replace("imports simclock", "imports mysim")
        expected = [
            *(
                [
                    f"tools/uses_mysim.py:3:6: {mysim.replace('time.time', 'time.perf_counter')}",
                    f"tools/uses_mysim.py:4:5: {mysim}",
                ]
                if imports != "[]"
                else []
            ),
            f"tools/uses_simclock.py:3:5: {WALL_MESSAGE}",
        ]
        assert (status, out.splitlines()) == (1, expected)
        status, out, _ = run(capsys, "--explain", "SCK401")
        listed = "simclock" if imports == "[]" else "simclock, mysim"
        assert out.endswith(
            f"\nHere ({project / 'pyproject.toml'}): simulation code = files importing "
            f"{listed}; simulation-code globs: none.\n"
        )


# A module handed a clock under a declared simulation package: it never imports simclock.
HANDED = """\
import time


def step(clock, root, i, dt):
    clock.advance(0.001)
    noise = root.child(f"/cam{i}")
    clock.advance(int(dt * 1e9))
    elapsed = 0.0
    elapsed += 0.5
    return time.time(), noise, elapsed
"""


def test_C_LINT_1_declared_module_that_never_imports_simclock_gets_every_simulation_rule(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "pyproject.toml", '[tool.simclock-lint]\nsimulation-code = ["src/sim/**"]\n')
    write(project, "src/sim/step.py", HANDED)
    write(project, "src/tools/step.py", HANDED)  # the same code, not declared: not checked
    status, out, _ = run(capsys, ".", "--no-cache")
    reason = "[simulation code: matches simulation-code 'src/sim/**']"
    assert (status, out.splitlines()) == (
        1,
        [
            "src/sim/step.py:5:19: SCK401 float given as a time to `advance()`; simclock takes "
            f"int nanoseconds (e.g. 1_500_000) {reason}",
            "src/sim/step.py:6:24: SCK201 non-constant label in `child()`; use a string literal "
            f"so the stream tree is static {reason}",
            "src/sim/step.py:7:19: SCK402 float seconds made into int nanoseconds by `int()` "
            "can be off by one (int(1.001 * 1e9) == 1000999999); use "
            f"simclock.seconds_to_ns(...) or int arithmetic {reason}",
            "src/sim/step.py:9:5: SCK403 float time accumulated in `elapsed`; each addition "
            "rounds and the error grows (0.1 added ten times is 0.9999999999999999): keep int "
            f'nanoseconds (simclock.seconds_to_ns("0.01")) and advance the clock {reason}',
            "src/sim/step.py:10:12: SCK301 wall-clock read `time.time` in simulation code; use "
            f"clock.now_ns() / advance() {reason}",
        ],
    )
    # Declared by import instead of by path: the same five findings, the other reason.
    write(project, "pyproject.toml", '[tool.simclock-lint]\nsimulation-imports = ["robot"]\n')
    write(project, "src/tools/step.py", "import robot\n" + HANDED)
    status, out, _ = run(capsys, "src/tools", "--no-cache")
    assert status == 1
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()] == [
        "SCK401",
        "SCK201",
        "SCK402",
        "SCK403",
        "SCK301",
    ]
    assert all(line.endswith("[simulation code: imports robot]") for line in out.splitlines())


def test_C_RNG_6_config_found_above_the_working_directory(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, "pyproject.toml", PYPROJECT)
    write(project, "tools/report.py", BENCH)
    write(project, "sim/step.py", BENCH)
    monkeypatch.chdir(project / "tools")
    assert run(capsys, "report.py", "--no-cache")[:2] == (0, "")
    monkeypatch.chdir(project / "sim")
    assert run(capsys, "step.py", "--no-cache")[0] == 1  # the globs are the config's, not cwd's


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "colour = 1",
            "[tool.simclock-lint] in {path} has unknown key 'colour'; known keys: cache-dir, "
            "exclude, ignore, per-file-ignores, select, simulation-code, simulation-imports",
        ),
        (
            'select = "SCK1"',
            "[tool.simclock-lint] select in {path} must be a list of strings, got 'SCK1'",
        ),
        (
            'ignore = ["XY1"]',
            "ignore names unknown code 'XY1'; use one of SCK101, SCK102, SCK103, SCK104, SCK201, "
            "SCK301, SCK401, SCK402, SCK403 "
            "or a prefix like 'SCK1'",
        ),
        (
            '[tool.simclock-lint.per-file-ignores]\n"sim/*.py" = ["SCK9"]',
            "per-file-ignores 'sim/*.py' in {path} names unknown code 'SCK9'; use one of "
            "SCK101, SCK102, SCK103, SCK104, SCK201, SCK301, SCK401, SCK402, SCK403 "
            "or a prefix like 'SCK1'",
        ),
    ],
)
def test_C_RNG_6_bad_config_refused(project: Path, body: str, message: str) -> None:
    path = write(project, "pyproject.toml", f"[tool.simclock-lint]\n{body}\n")
    with pytest.raises(LintConfigError) as raised:
        load_config()
    assert str(raised.value) == message.format(path=path)


def test_C_RNG_6_broken_config_is_reported_not_skipped(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A parent config that ignores everything must not take over silently.
    write(project, "pyproject.toml", '[tool.simclock-lint]\nignore = ["SCK"]\n')
    path = write(project, "sub/pyproject.toml", "[tool.simclock-lint]\nselect = [\n")
    monkeypatch.chdir(project / "sub")
    with pytest.raises(LintConfigError) as raised:
        load_config()
    assert str(raised.value).startswith(f"cannot read config {str(path)!r}: ")


def test_C_RNG_6_cache_serves_unchanged_files_and_invalidates(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "a.py", SEED)
    write(project, "b.py", "x = 1\n")
    cold = run(capsys, ".")
    assert cold[2] == "simclock-lint: 1 finding in 2 files (0 from cache)\n"
    assert (project / ".simclock-lint-cache" / ".gitignore").read_text() == (
        "# created by simclock-lint\n*\n"
    )
    warm = run(capsys, ".")
    assert warm[:2] == cold[:2]
    assert warm[2] == "simclock-lint: 1 finding in 2 files (2 from cache)\n"
    write(project, "b.py", WALL)  # content change: only b.py is linted again
    assert run(capsys, ".")[1:] == (
        f"a.py:2:1: {SEED_MESSAGE}\nb.py:3:5: {WALL_MESSAGE}\n",
        "simclock-lint: 2 findings in 2 files (1 from cache)\n",
    )
    # A selection change is part of the key: nothing stale is served.
    assert run(capsys, ".", "--select", "SCK3")[1:] == (
        f"b.py:3:5: {WALL_MESSAGE}\n",
        "simclock-lint: 1 finding in 2 files (0 from cache)\n",
    )


def test_C_RNG_6_no_cache_and_cache_dir(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "a.py", SEED)
    run(capsys, ".", "--no-cache")
    assert not (project / ".simclock-lint-cache").exists()
    run(capsys, ".", "--cache-dir", "elsewhere")
    assert (project / "elsewhere" / "v1.json").is_file()
    assert not (project / ".simclock-lint-cache").exists()
    assert run(capsys, ".", "--cache-dir", "elsewhere")[2].endswith("(1 from cache)\n")


def test_C_RNG_6_corrupt_cache_is_ignored(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "a.py", SEED)
    write(project, ".simclock-lint-cache/v1.json", "{not json")
    assert run(capsys, ".")[:2] == (1, f"a.py:2:1: {SEED_MESSAGE}\n")


def test_C_RNG_6_parallel_workers_give_the_serial_result(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(12):
        write(project, f"m{i:02}.py", (SEED if i % 3 else WALL) + f"x{i} = {i}\n")
    config = Config(root=project)
    serial = lint_paths([project], config, use_cache=False, jobs=1)
    monkeypatch.setattr(_runner, "_PARALLEL_MIN_BYTES", 0)
    parallel = lint_paths([project], config, use_cache=False, jobs=2)
    assert parallel.findings == serial.findings
    assert len(serial.findings) == 12 and serial.linted == 12


def test_C_RNG_6_python_dash_m_lint(project: Path) -> None:
    write(project, "a.py", SEED)
    done = subprocess.run(
        [sys.executable, "-m", "simclock_lint", "a.py", "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, f"a.py:2:1: {SEED_MESSAGE}\n")


def test_C_RNG_6_cache_dir_from_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, "pyproject.toml", '[tool.simclock-lint]\ncache-dir = "build/lint-cache"\n')
    write(project, "src/a.py", SEED)
    run(capsys, "src")
    assert (project / "build" / "lint-cache" / "v1.json").is_file()
    assert not (project / ".simclock-lint-cache").exists()
    assert run(capsys, "src")[2] == "simclock-lint: 1 finding in 1 files (1 from cache)\n"


def test_C_RNG_6_in_process_run_leaves_the_cycle_collector_on(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "a.py", SEED)
    assert gc.isenabled()
    run(capsys, "a.py", "--no-cache")
    lint_paths([project], Config(root=project), use_cache=False, jobs=1)
    assert gc.isenabled()


def test_C_RNG_6_exit_zero_reports_the_findings_and_exits_0(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "pkg/a.py", SEED)
    write(project, "pkg/b.py", WALL)
    write(project, "pkg/c_bad.py", "import random\nx = (\n")
    assert run(capsys, "pkg", "--no-cache", "--exit-zero") == (
        0,
        f"pkg/a.py:2:1: {SEED_MESSAGE}\npkg/b.py:3:5: {WALL_MESSAGE}\n"
        "pkg/c_bad.py:2:5: SCK000 could not parse: '(' was never closed\n",
        "simclock-lint: 3 findings in 3 files (0 from cache)\n",
    )
    # The same run without it fails; a clean run is 0 either way.
    assert run(capsys, "pkg", "--no-cache")[0] == 1
    assert run(capsys, "pkg/a.py", "--no-cache", "--ignore", "SCK1", "--exit-zero") == (
        0,
        "",
        "simclock-lint: 0 findings in 1 files (0 from cache)\n",
    )


def test_C_RNG_6_exit_zero_keeps_usage_and_internal_errors_at_2(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, "a.py", SEED)
    status, out, err = run(capsys, "a.py", "--exit-zero", "--select", "SCK9")
    assert (status, out) == (2, "")
    assert err.startswith("simclock-lint: error: --select names unknown code 'SCK9'; ")
    assert run(capsys, "missing.py", "--exit-zero")[0] == 2

    def broken(*_args: object) -> Analysis:
        raise KeyError("walk bug")

    monkeypatch.setattr("simclock_lint._analysis.analyse", broken)
    assert run(capsys, "a.py", "--no-cache", "--jobs", "1", "--exit-zero")[:2] == (
        2,
        "a.py:1:1: SCK999 internal error: KeyError: 'walk bug'\n",
    )


# The codes' former prefix: SC401 is SCK401 wherever a code is read.
OLD_CODES_PYPROJECT = """
[tool.simclock-lint]
select = ["SC1", "SC301", "SC4"]
ignore = ["SC103"]

[tool.simclock-lint.per-file-ignores]
"quiet/**" = ["SC301", "SC10"]
"""
FLOAT = "import simclock\nclock.advance(1e6)\n"
FLOAT_MESSAGE = (
    "SCK401 float given as a time to `advance()`; simclock takes int nanoseconds "
    "(e.g. 1_500_000) [simulation code: imports simclock]"
)


def test_C_RNG_6_old_codes_in_config_select_ignore_and_per_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "pyproject.toml", OLD_CODES_PYPROJECT)
    unseeded = "import random\nrng = random.Random()\n"
    for directory in ("loud", "quiet"):
        write(project, f"{directory}/a.py", SEED)
        write(project, f"{directory}/b.py", WALL)
        write(project, f"{directory}/c.py", unseeded)
        write(project, f"{directory}/d.py", FLOAT)
    config = load_config()
    assert config.select == frozenset({"SCK101", "SCK102", "SCK301", "SCK401", "SCK402", "SCK403"})
    [(_, ignored)] = config.per_file_ignores
    assert ignored == frozenset({"SCK101", "SCK102", "SCK103", "SCK301"})
    status, out, _ = run(capsys, ".", "--no-cache")
    # The output names today's codes; SC103 is ignored, quiet/ keeps only SCK401.
    assert (status, out) == (
        1,
        f"loud/a.py:2:1: {SEED_MESSAGE}\nloud/b.py:3:5: {WALL_MESSAGE}\n"
        f"loud/d.py:2:15: {FLOAT_MESSAGE}\nquiet/d.py:2:15: {FLOAT_MESSAGE}\n",
    )


def test_C_RNG_6_old_codes_on_the_command_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, "a.py", SEED + WALL)

    def codes(out: str) -> list[str]:
        return [line.split()[1] for line in out.splitlines()]

    assert codes(run(capsys, "a.py", "--no-cache", "--select", "SC3")[1]) == ["SCK301"]
    assert codes(run(capsys, "a.py", "--no-cache", "--select", "sc102")[1]) == ["SCK102"]
    assert codes(run(capsys, "a.py", "--no-cache", "--ignore", "SC1")[1]) == ["SCK301"]
    assert codes(run(capsys, "a.py", "--no-cache", "--select", "SC")[1]) == ["SCK102", "SCK301"]
    status, out, err = run(capsys, "a.py", "--select", "SC9")
    assert (status, out) == (2, "")
    assert err == (
        "simclock-lint: error: --select names unknown code 'SC9'; use one of "
        "SCK101, SCK102, SCK103, SCK104, SCK201, SCK301, SCK401, SCK402, SCK403 "
        "or a prefix like 'SCK1'\n"
    )
    status, out, _ = run(capsys, "--explain", "SC401")
    assert status == 0 and out.startswith("SCK401: float given as a time")
    assert (
        "\nAlso accepted as SC401 (in # noqa comments, select, ignore and per-file-ignores).\n"
        in out
    )
