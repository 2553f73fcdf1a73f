"""Each kit from outside the checkout, as a user depends on it, to a CONFORMING verdict (SPEC §18).

For every language a scratch project in the drivers' cache (``_cache_dir`` of
``tests/wire_drivers.py``, never the checkout) depends on the kit the way its README
says, with the kit's minimal example clock as its only source, and the suite must call
it ``CONFORMING (wire profile 1)``:

- Go: a module with ``require`` + ``replace simclock.example/driver => <clone>``;
- Rust: a crate with a path dependency on ``simclock-driver``;
- Java: the kit ``mvn install``-ed from the clone, a Maven project depending on
  ``dev.simclock:simclock-driver:1.0.0``;
- JavaScript: the ``npm pack`` tarball installed in a scratch npm project;
- C++: ``find_package(simclock_driver)`` from an install prefix, and ``FetchContent``
  from the clone.

Each build is kept under a key hashed from the kit's sources and the toolchain, so a
second run only runs the suite. ``git status`` of ``conformance/drivers`` must be the
same after the build as before. Each language skips with one reason where its toolchain
is missing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from kit_go import GO_DIR
from kit_java import JAVA_DIR
from kit_rust import KIT_DIR as RUST_DIR
from kit_rust import rust_target_dir
from wire_drivers import CPP_KIT, DRIVERS, JS_DIR, _cache_dir

ROOT = Path(__file__).resolve().parent.parent
_BUILD_TIMEOUT_S = 600
_SUITE_TIMEOUT_S = 300
_JVM_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
_OFFLINE = (
    "dial tcp",
    "no such host",
    "Could not transfer artifact",
    "Could not resolve dependencies",
    "failed to download",
    "Unable to update registry",
    "ENOTFOUND",
    "EAI_AGAIN",
)


def _tool(name: str, why: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not on PATH ({why})")
    return path


def _key(*parts: object, sources: tuple[Path, ...]) -> str:
    """A hash of ``parts`` (tool versions) and the files a scratch build uses.

    ``sources`` are files, or folders taken whole: the kit's code, its build files and the
    example copied, not its READMEs or tests, so editing those rebuilds nothing.
    """
    digest = hashlib.sha256("\0".join(map(str, parts)).encode())
    for source in sources:
        files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
        for path in files:
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _version(tool: str, *args: str) -> str:
    done = subprocess.run([tool, *args], capture_output=True, text=True, check=False)
    return (done.stdout + done.stderr).strip()


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    """Run one documented command; skip when offline, fail with its output otherwise."""
    try:
        done = subprocess.run(
            args,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=_BUILD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args)} took over {_BUILD_TIMEOUT_S} s", pytrace=False)
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-4000:]
        if any(mark in output for mark in _OFFLINE):
            pytest.skip(f"{args[0]} could not download what the kit needs (offline?)")
        pytest.fail(
            f"{' '.join(args)} (in {cwd}) failed, exit {done.returncode}:\n{output}",
            pytrace=False,
        )


def _built(name: str, key: str, build: Callable[[Path], list[str]]) -> list[str]:
    """The command ``build`` makes in a fresh scratch folder, kept under ``key``.

    ``build`` returns the driver's command line with the scratch folder's path in it;
    the folder is renamed into place whole (a concurrent run sees all of it or none), so
    the command is written relative to a ``{dir}`` placeholder.
    """
    folder = _cache_dir() / "outside" / f"{name}-{key}"
    command_file = folder / "command"
    if command_file.exists():
        return [part.replace("{dir}", str(folder)) for part in command_file.read_text().split("\n")]
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=folder.name + "."))
    try:
        command = build(work)
        relative = [part.replace(str(work), "{dir}") for part in command]
        (work / "command").write_text("\n".join(relative))
        try:
            work.rename(folder)
        except OSError:
            if not command_file.exists():
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return [part.replace("{dir}", str(folder)) for part in relative]


# -- the five kits, as their READMEs say --------------------------------------------------


def _go() -> list[str]:
    go = _tool("go", "the Go driver kit needs Go >= 1.21")

    def build(work: Path) -> list[str]:
        env = {**os.environ, "GOFLAGS": "-mod=mod"}
        shutil.copy2(GO_DIR / "examples" / "minimal" / "main.go", work / "main.go")
        _run([go, "mod", "init", "example.com/myclock"], work, env)
        _run(
            [
                go,
                "mod",
                "edit",
                "-require=simclock.example/driver@v0.0.0",
                f"-replace=simclock.example/driver={GO_DIR}",
            ],
            work,
            env,
        )
        _run([go, "build", "-o", str(work / "myclock"), "."], work, env)
        return [str(work / "myclock")]

    kit = tuple(p for p in GO_DIR.glob("*.go") if not p.name.endswith("_test.go"))
    sources = (*kit, GO_DIR / "go.mod", GO_DIR / "examples" / "minimal" / "main.go")
    return _built("go", _key(_version(go, "version"), sources=sources), build)


def _rust() -> list[str]:
    cargo = _tool("cargo", "the Rust driver kit needs a Rust toolchain >= 1.74")

    def build(work: Path) -> list[str]:
        (work / "src").mkdir()
        shutil.copy2(
            RUST_DIR / "simclock-driver" / "examples" / "minimal_clock.rs", work / "src" / "main.rs"
        )
        kit = (RUST_DIR / "simclock-driver").as_posix()
        (work / "Cargo.toml").write_text(
            '[package]\nname = "myclock"\nversion = "0.1.0"\nedition = "2021"\n\n'
            f"[dependencies]\nsimclock-driver = {{ path = '{kit}' }}\n"
        )
        # The kit's pinned versions, so that nothing new is resolved (cargo adds myclock).
        shutil.copy2(RUST_DIR / "Cargo.lock", work / "Cargo.lock")
        target = rust_target_dir()  # shared with the kit's own build
        env = {**os.environ, "CARGO_TARGET_DIR": str(target)}
        _run([cargo, "build", "--release"], work, env)
        shutil.copy2(target / "release" / "myclock", work / "myclock")
        return [str(work / "myclock")]

    crate = RUST_DIR / "simclock-driver"
    sources: tuple[Path, ...] = (
        crate / "src",
        crate / "Cargo.toml",
        RUST_DIR / "Cargo.toml",
        RUST_DIR / "Cargo.lock",
    )
    sources += (crate / "examples" / "minimal_clock.rs",)
    return _built("rust", _key(_version(cargo, "--version"), sources=sources), build)


_APP_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>myclock</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>dev.simclock</groupId>
      <artifactId>simclock-driver</artifactId>
      <version>1.0.0</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.14.0</version></plugin>
      <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.5.4</version></plugin>
      <plugin><artifactId>maven-jar-plugin</artifactId><version>3.4.2</version></plugin>
      <plugin>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>3.8.1</version>
        <executions>
          <execution>
            <phase>package</phase>
            <goals><goal>copy-dependencies</goal></goals>
            <configuration><outputDirectory>${project.build.directory}/lib</outputDirectory></configuration>
          </execution>
        </executions>
      </plugin>
    </plugins>
  </build>
</project>
"""


def _java() -> list[str]:
    mvn = _tool("mvn", "the Java driver kit needs Java 17+ and Maven")
    java = _tool("java", "the Java driver kit needs Java 17+ and Maven")

    def build(work: Path) -> list[str]:
        # The README's install (into ~/.m2, as a user does), built outside the checkout.
        _run(
            [mvn, "-q", "-B", "-pl", "simclock-driver", "-am", "-DskipTests",
             f"-Dsimclock.cache={work / 'kit'}", "install"],
            JAVA_DIR,
        )  # fmt: skip
        app = work / "app"
        sources = app / "src" / "main" / "java" / "dev" / "simclock" / "example"
        sources.mkdir(parents=True)
        example = JAVA_DIR / "example" / "src" / "main" / "java" / "dev" / "simclock" / "example"
        shutil.copy2(example / "MinimalClock.java", sources / "MinimalClock.java")
        (app / "pom.xml").write_text(_APP_POM)
        _run([mvn, "-q", "-B", "package"], app)
        classpath = os.pathsep.join(
            [str(app / "target" / "classes"), str(app / "target" / "lib" / "*")]
        )
        return [java, *_JVM_FLAGS, "-cp", classpath, "dev.simclock.example.MinimalClock"]

    example = JAVA_DIR / "example" / "src" / "main" / "java" / "dev" / "simclock" / "example"
    sources: tuple[Path, ...] = (JAVA_DIR / "pom.xml", JAVA_DIR / "simclock-driver" / "pom.xml")
    sources += (JAVA_DIR / "simclock-driver" / "src" / "main", example / "MinimalClock.java")
    key = _key(_version(mvn, "-v"), _version(java, "-version"), sources=sources)
    return _built("java", key, build)


def _js() -> list[str]:
    node = _tool("node", "the JavaScript driver kit needs Node.js >= 20")
    npm = _tool("npm", "npm packs and installs the JavaScript driver kit")

    def build(work: Path) -> list[str]:
        _run([npm, "pack", "--silent", "--pack-destination", str(work)], JS_DIR)
        (tarball,) = work.glob("simclock-driver-*.tgz")
        app = work / "app"
        app.mkdir()
        _run([npm, "init", "-y"], app)
        _run([npm, "install", "--offline", "--no-audit", "--no-fund", str(tarball)], app)
        shutil.copy2(JS_DIR / "examples" / "minimal_clock.mjs", app / "clock.mjs")
        return [node, str(app / "clock.mjs")]

    sources = (JS_DIR / "src", JS_DIR / "package.json", JS_DIR / "examples" / "minimal_clock.mjs")
    return _built("js", _key(_version(node, "--version"), sources=sources), build)


_CMAKE_APP = """cmake_minimum_required(VERSION 3.16)
project(myclock LANGUAGES CXX)
{how}
add_executable(myclock minimal_clock.cpp)
target_link_libraries(myclock PRIVATE simclock::driver)
"""
_FIND_PACKAGE = "find_package(simclock_driver 1 REQUIRED)"
_FETCH_CONTENT = f"""include(FetchContent)
FetchContent_Declare(simclock_driver SOURCE_DIR {CPP_KIT.as_posix()})
FetchContent_MakeAvailable(simclock_driver)"""


def _cpp(how: str) -> list[str]:
    cmake = _tool("cmake", "the C++ kit's CMake package needs CMake >= 3.16")
    if shutil.which("g++") is None and shutil.which("c++") is None:
        pytest.skip("no C++ compiler (g++ or c++) on PATH")

    def build(work: Path) -> list[str]:
        app = work / "app"
        app.mkdir()
        shutil.copy2(CPP_KIT / "examples" / "minimal_clock.cpp", app / "minimal_clock.cpp")
        configure = [cmake, "-S", str(app), "-B", str(app / "build"), "-DCMAKE_BUILD_TYPE=Release"]
        if how == "find_package":
            # The kit configured and installed from the clone into a prefix, as a package is.
            _run([cmake, "-S", str(CPP_KIT), "-B", str(work / "kit-build")], work)
            _run(
                [cmake, "--install", str(work / "kit-build"), "--prefix", str(work / "prefix")],
                work,
            )
            (app / "CMakeLists.txt").write_text(_CMAKE_APP.format(how=_FIND_PACKAGE))
            configure.append(f"-DCMAKE_PREFIX_PATH={work / 'prefix'}")
        else:
            (app / "CMakeLists.txt").write_text(_CMAKE_APP.format(how=_FETCH_CONTENT))
        _run(configure, work)
        _run([cmake, "--build", str(app / "build"), "-j", "1"], work)
        return [str(app / "build" / "myclock")]

    sources: tuple[Path, ...] = (CPP_KIT / "include", CPP_KIT / "cmake", CPP_KIT / "CMakeLists.txt")
    sources += (CPP_KIT / "examples" / "minimal_clock.cpp",)
    return _built(f"cpp-{how}", _key(_version(cmake, "--version"), sources=sources), build)


KITS: dict[str, Callable[[], list[str]]] = {
    "go": _go,
    "rust": _rust,
    "java": _java,
    "js": _js,
    "cpp-find_package": lambda: _cpp("find_package"),
    "cpp-FetchContent": lambda: _cpp("FetchContent"),
}


def _git_status() -> str:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", str(DRIVERS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else f"(git status failed: {done.stderr})"


@pytest.mark.parametrize("kit", sorted(KITS))
def test_C_WIRE_6_a_scratch_project_outside_the_checkout_gets_CONFORMING(kit: str) -> None:
    before = _git_status()
    command = KITS[kit]()
    assert _git_status() == before, f"building the {kit} kit changed the checkout"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "simclock_conformance", "--driver", "--", *command],
            capture_output=True,
            text=True,
            timeout=_SUITE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the suite on the {kit} scratch project took over {_SUITE_TIMEOUT_S} s")
    verdicts = [line for line in done.stdout.splitlines() if "CONFORMING" in line]
    assert done.returncode == 0 and verdicts, done.stdout[-3000:] + done.stderr[-2000:]
    assert verdicts[-1].endswith(": CONFORMING (wire profile 1)"), verdicts[-1]
    assert " 0 failed, 0 incomplete" in verdicts[-1], verdicts[-1]


# What each kit's documented build and test commands write into the checkout, when they
# write there at all (the READMEs send builds outside it): git must ignore all of it.
DOCUMENTED_OUTPUTS = [
    "rust/target/release/examples/heap_clock",  # cargo build / cargo test without CARGO_TARGET_DIR
    "java/simclock-driver/target/simclock-driver.jar",  # mvn -Dsimclock.cache=target
    "java/example/target/lib/jackson-core.jar",
    "js/node_modules/@sinonjs/fake-timers/package.json",  # npm ci for the peers
    "js/simclock-driver-0.1.0.tgz",  # npm pack without --pack-destination
    "cpp/build/CMakeCache.txt",  # cmake -B build
]


def test_the_kits_documented_build_outputs_leave_git_status_clean() -> None:
    paths = [str(DRIVERS / p) for p in DOCUMENTED_OUTPUTS]
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    ignored = {Path(line).relative_to(DRIVERS).as_posix() for line in done.stdout.splitlines()}
    assert sorted(set(DOCUMENTED_OUTPUTS) - ignored) == []


def test_the_rust_kit_is_a_crate_cargo_package_accepts() -> None:
    """``cargo package`` builds the ``.crate`` that would be published, from it alone."""
    cargo = _tool("cargo", "the Rust driver kit needs a Rust toolchain >= 1.74")
    crate = RUST_DIR / "simclock-driver"
    sources: tuple[Path, ...] = (crate / "src", crate / "Cargo.toml", crate / "README.md")
    sources += (
        crate / "examples",
        crate / "tests",
        RUST_DIR / "Cargo.toml",
        RUST_DIR / "Cargo.lock",
    )

    def build(work: Path) -> list[str]:
        env = {**os.environ, "CARGO_TARGET_DIR": str(rust_target_dir())}
        args = [cargo, "package", "-p", "simclock-driver", "--locked", "--allow-dirty"]
        _run(args, RUST_DIR, env)  # packs, then builds the packed sources alone
        packed = rust_target_dir() / "package" / "simclock-driver-0.1.0.crate"
        shutil.copy2(packed, work / packed.name)
        return [str(work / packed.name)]

    (packed,) = _built("rust-crate", _key(_version(cargo, "--version"), sources=sources), build)
    listing = subprocess.run(
        ["tar", "-tzf", packed], capture_output=True, text=True, check=True
    ).stdout.split()
    for name in ("Cargo.toml", "README.md", "src/lib.rs", "src/driver.rs"):
        assert f"simclock-driver-0.1.0/{name}" in listing, listing
