"""The C++ driver kit (``conformance/drivers/cpp``): its own tests, its two example clocks.

* its GoogleTest unit tests through CMake and CTest, built once per source in the
  drivers' cache (skipped with one reason without cmake or GoogleTest);
* the reference heap clock and the minimal ``std::multimap`` clock, built with plain
  ``g++ -std=c++17 -O2 -Iinclude`` by ``tests/wire_drivers.py``: their verdicts through
  the suite (C-WIRE-6) and their golden-vector replays (C-WIRE-7), pinned line for line.
"""

from __future__ import annotations

import fcntl
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from wire_drivers import CPP_KIT, _cache_dir, _compiler, cpp_driver

from simclock_conformance.entry._wire_run import WIRE_CLAUSES

_CMAKE_TIMEOUT_S = 600
VECTORS = CPP_KIT.parent.parent / "simclock_conformance" / "vectors"
CASES = sum(len(p.read_text().splitlines()) for p in VECTORS.rglob("*.jsonl"))
"""Every golden vector: the kit's example replays each one."""
_NO_GTEST = "GoogleTest not found (install libgtest-dev): the unit tests are skipped"


def _kit_digest(cmake: str, compiler: str, cmake_args: tuple[str, ...]) -> str:
    files = [CPP_KIT / "CMakeLists.txt", *sorted((CPP_KIT / "cmake").iterdir())]
    for folder in ("include", "examples", "tests"):
        files += sorted(p for p in (CPP_KIT / folder).rglob("*") if p.is_file())
    blob = b"".join(
        f.relative_to(CPP_KIT).as_posix().encode() + b"\0" + f.read_bytes() for f in files
    )
    # A CMake build tree belongs to one source folder: a clone elsewhere builds its own.
    tools = "\0".join([cmake, compiler, str(CPP_KIT), *cmake_args]).encode()
    return hashlib.sha256(blob + b"\0" + tools).hexdigest()[:16]


def _run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=_CMAKE_TIMEOUT_S, check=False
    )


def cmake_build(*cmake_args: str, target: str | None = None) -> Path:
    """The kit configured with CMake in the cache, and ``target`` built; its build directory.

    Skips when cmake or a compiler is missing; fails with the tool's output when
    configuring or building breaks. The configure output is kept in the directory.
    """
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not on PATH (the C++ kit's unit tests need CMake >= 3.16)")
    compiler = _compiler()
    if compiler is None:
        pytest.skip("no C++ compiler (g++ or c++) on PATH")
    tree = _cache_dir() / f"cpp-kit-cmake-{_kit_digest(cmake, compiler, cmake_args)}"
    configured = tree / "simclock-configure.log"
    built = tree / f"simclock-built-{target}"
    tree.mkdir(parents=True, exist_ok=True)
    # CMake build trees cannot be moved: a lock, not a rename, keeps concurrent runs apart.
    with (tree.parent / f"{tree.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not configured.exists():
            done = _run(
                [
                    cmake,
                    *("-S", str(CPP_KIT), "-B", str(tree)),
                    f"-DCMAKE_CXX_COMPILER={compiler}",
                    *cmake_args,
                ]
            )
            if done.returncode != 0:
                pytest.fail(
                    f"cmake could not configure {CPP_KIT}, exit {done.returncode}:\n"
                    f"{(done.stdout + done.stderr)[-4000:]}",
                    pytrace=False,
                )
            configured.write_text(done.stdout)
        if target is not None and not built.exists():
            done = _run([cmake, "--build", str(tree), "-j", "2", "--target", target])
            if done.returncode != 0:
                pytest.fail(
                    f"cmake --build failed for {CPP_KIT}, exit {done.returncode}:\n"
                    f"{(done.stdout + done.stderr)[-4000:]}",
                    pytrace=False,
                )
            built.write_text("ok\n")
    return tree


def ctest_build() -> Path:
    """The unit tests built, unoptimised (they are small: the build is the cost).

    Skips with one reason when CMake found no GoogleTest.
    """
    args = ("-DCMAKE_BUILD_TYPE=Debug",)
    if _NO_GTEST in (cmake_build(*args) / "simclock-configure.log").read_text():
        pytest.skip(
            "CMake found no GoogleTest (install libgtest-dev): the kit's unit tests are skipped"
        )
    return cmake_build(*args, target="driver_tests")


def _gtest_count() -> int:
    """The number of TEST/TEST_F cases written in the kit's tests/*.cpp."""
    pattern = re.compile(r"^TEST(?:_F)?\(", re.MULTILINE)
    return sum(len(pattern.findall(p.read_text())) for p in (CPP_KIT / "tests").glob("*.cpp"))


def test_C_WIRE_6_cpp_kit_unit_tests_pass_under_ctest() -> None:
    tree = ctest_build()
    ctest = shutil.which("ctest")
    assert ctest is not None, "cmake is on PATH but ctest is not"
    done = _run([ctest, "--output-on-failure"], cwd=tree)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    total = _gtest_count()
    assert total >= 20
    assert f"100% tests passed, 0 tests failed out of {total}\n" in done.stdout, done.stdout[-2000:]


def test_cpp_kit_without_googletest_cmake_says_so_once_and_keeps_the_examples() -> None:
    tree = cmake_build("-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON")
    log = (tree / "simclock-configure.log").read_text()
    assert log.count(_NO_GTEST) == 1, log
    makefile = (tree / "Makefile").read_text()
    assert "heap_clock" in makefile and "minimal_clock" in makefile
    assert "driver_tests" not in makefile


def test_cpp_kit_skips_without_cmake(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(
        pytest.skip.Exception,
        match=r"^cmake is not on PATH \(the C\+\+ kit's unit tests need CMake >= 3\.16\)$",
    ):
        ctest_build()


def _suite(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return proc.stdout.rstrip().splitlines()[-1]


def test_C_WIRE_6_heap_clock_example_is_conforming() -> None:
    line = _suite("--driver", "--", *cpp_driver())
    assert line == (
        f"{len(WIRE_CLAUSES)} passed, 0 failed, 0 incomplete, 0 not applicable, 0 not run: "
        "CONFORMING (wire profile 1)"
    )


def test_C_WIRE_7_heap_clock_example_passes_every_golden_vector() -> None:
    line = _suite("vectors", "--driver", "--", *cpp_driver())
    assert line == (
        f"golden vectors: {CASES} passed, 0 failed (0 expected), 0 not applicable "
        "(features peek, rate, stats, start_ns, bits)"
    )


def test_C_WIRE_6_minimal_multimap_clock_is_conforming_without_peek_rate_stats() -> None:
    line = _suite("--driver", "--", *cpp_driver(example="minimal_clock"))
    assert line == (
        f"{len(WIRE_CLAUSES) - 3} passed, 0 failed, 0 incomplete, 3 not applicable, 0 not run: "
        "CONFORMING (wire profile 1)"
    )
    vectors = _suite("vectors", "--driver", "--", *cpp_driver(example="minimal_clock"))
    # Not applicable: the vectors that create a clock at a start time or draw raw bits.
    assert vectors == (
        f"golden vectors: {CASES - 6} passed, 0 failed (0 expected), 6 not applicable "
        "(features start_ns, bits)"
    )


def test_minimal_clock_is_under_80_lines_of_code() -> None:
    source = (CPP_KIT / "examples" / "minimal_clock.cpp").read_text().splitlines()
    code = [line for line in source if line.strip() and not line.strip().startswith("//")]
    assert len(code) < 80, len(code)


def test_cpp_driver_refuses_an_unknown_example() -> None:
    with pytest.raises(
        ValueError,
        match=r"^example must name a file conformance/drivers/cpp/examples/<example>\.cpp, "
        r"got 'nope'$",
    ):
        cpp_driver(example="nope")


def test_readme_shows_the_minimal_clock_verbatim() -> None:
    readme = (CPP_KIT / "README.md").read_text()
    source = (CPP_KIT / "examples" / "minimal_clock.cpp").read_text()
    assert f"```cpp\n{source}```\n" in readme
