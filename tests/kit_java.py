"""The Java driver kit of ``conformance/drivers/java/`` built once for tests (SPEC §18).

:func:`java_build` runs ``mvn -q -B -Preactor package`` on the kit, its example clocks and
its Reactor peer (the ``reactor`` profile: a plain ``mvn package`` builds the kit and the
examples only), with the build directories in the drivers' cache (``_cache_dir`` of
``tests/wire_drivers.py``) under a key hashed from every source file, the POMs, the golden
stream vectors the JUnit tests read and the ``java``/``mvn`` found, so a second run does
not rebuild. The build runs the JUnit tests too, without stopping at a failure: their
Surefire reports stay beside the jars for :func:`junit_results`.

It skips the calling test with one reason when ``mvn`` or ``java`` is missing, or when
Maven cannot download the pinned dependencies (offline), and fails it with Maven's output
when the build itself breaks.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from wire_drivers import _cache_dir

__all__ = [
    "JAVA_DIR",
    "JUnitResult",
    "careless_driver",
    "heap_driver",
    "java_build",
    "junit_results",
    "minimal_driver",
    "reactor_driver",
]

ROOT = Path(__file__).resolve().parent.parent
JAVA_DIR = ROOT / "conformance" / "drivers" / "java"
STREAM_VECTORS = ROOT / "conformance" / "simclock_conformance" / "vectors" / "v1" / "streams.jsonl"

_BUILD_TIMEOUT_S = 900
# A short-lived driver: C1 only and the serial collector start fastest.
_JVM_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
_OFFLINE_SIGNS = ("Could not resolve dependencies", "Could not transfer artifact", "Unknown host")


def _tools() -> tuple[str, str]:
    mvn, java = shutil.which("mvn"), shutil.which("java")
    if mvn is None or java is None:
        pytest.skip("mvn or java is not on PATH (the Java driver kit needs Java 17+ and Maven)")
    return mvn, java


def _sources_key(mvn: str, java: str) -> str:
    digest = hashlib.sha256(f"{mvn}\0{java}\0".encode())
    for path in sorted(JAVA_DIR.rglob("*")):
        relative = path.relative_to(JAVA_DIR)
        if path.is_file() and "target" not in relative.parts:
            digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(STREAM_VECTORS.read_bytes())
    return digest.hexdigest()[:16]


@functools.cache
def java_build() -> Path:
    """The build directory (one folder per Maven module), built if needed."""
    mvn, java = _tools()
    target = _cache_dir() / f"java-kit-{_sources_key(mvn, java)}"
    if (target / "done").exists():
        return target
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=target.name + "."))
    try:
        try:
            done = subprocess.run(
                [
                    mvn,
                    "-q",
                    "-B",
                    f"-Dsimclock.cache={work}",
                    "-Preactor",
                    "-Dmaven.test.failure.ignore=true",
                    "package",
                ],
                cwd=JAVA_DIR,
                capture_output=True,
                text=True,
                timeout=_BUILD_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"mvn package of the Java kit took over {_BUILD_TIMEOUT_S} s", pytrace=False
            )
        output = (done.stdout + done.stderr).strip()
        if done.returncode != 0:
            if any(sign in output for sign in _OFFLINE_SIGNS):
                pytest.skip(
                    "Maven could not download the Java kit's pinned dependencies (offline?)"
                )
            pytest.fail(
                f"mvn package of {JAVA_DIR} failed, exit {done.returncode}:\n{output[-6000:]}",
                pytrace=False,
            )
        (work / "done").write_text("built\n", encoding="utf-8")
        try:
            work.rename(target)
        except OSError:
            if not (target / "done").exists():  # not a concurrent build that won the race
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return target


def _command(module: str, main: str) -> list[str]:
    _, java = _tools()
    build = java_build() / module
    classpath = os.pathsep.join([str(build / f"{module}.jar"), str(build / "lib" / "*")])
    return [java, *_JVM_FLAGS, "-cp", classpath, main]


def heap_driver() -> list[str]:
    """The command line of the example heap clock on the kit."""
    return _command("simclock-driver-example", "dev.simclock.example.HeapClock")


def minimal_driver() -> list[str]:
    """The command line of the README's minimal clock on the kit."""
    return _command("simclock-driver-example", "dev.simclock.example.MinimalClock")


def careless_driver() -> list[str]:
    """The command line of the shared transcript's careless clock on the kit."""
    return _command("simclock-driver-example", "dev.simclock.example.CarelessClock")


def reactor_driver() -> list[str]:
    """The command line of the Reactor ``VirtualTimeScheduler`` peer on the kit."""
    return _command("simclock-driver-reactor", "dev.simclock.reactor.ReactorClock")


@dataclass(frozen=True)
class JUnitResult:
    """One JUnit test class as Surefire reported it."""

    name: str
    tests: int
    failures: int
    errors: int
    skipped: int
    problems: tuple[str, ...]


def junit_results() -> list[JUnitResult]:
    """Every test class the build ran, from the Surefire XML reports of every module."""
    results = []
    for report in sorted(java_build().glob("*/surefire-reports/TEST-*.xml")):
        suite = ET.parse(report).getroot()
        problems = tuple(
            f"{case.get('name')}: {(bad.get('message') or '').strip()[:500]}"
            for case in suite.iter("testcase")
            for bad in (*case.findall("failure"), *case.findall("error"))
        )
        results.append(
            JUnitResult(
                name=str(suite.get("name")),
                tests=int(suite.get("tests", "0")),
                failures=int(suite.get("failures", "0")),
                errors=int(suite.get("errors", "0")),
                skipped=int(suite.get("skipped", "0")),
                problems=problems,
            )
        )
    return results
