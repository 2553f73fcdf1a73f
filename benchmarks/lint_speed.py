"""simclock-lint against ruff on the installed numpy and hypothesis packages (SPEC §13).

Not a test. Every command runs as a subprocess from an empty directory, so
interpreter start-up and file discovery are included on both sides, and the
figure of merit is the ratio within this one run:

- cold: simclock-lint with an empty cache vs ``ruff check --no-cache``;
- warm: simclock-lint with its cache filled vs ruff with its cache filled;
- both with ``--select NPY002,S311`` for ruff (its nearest rules).

Wall time is best of 3; CPU time (user + system, children included) is best
of 3 as well and is the figure to trust on a shared, loaded machine.

Then the robustness sweep: lint the whole stdlib + numpy + hypothesis in
process and count files, parse errors (SCK000) and internal errors (SCK999).

Run: ``.venv/bin/python benchmarks/lint_speed.py``. (Not ``benchmarks/lint.py``:
a script of that name puts ``benchmarks/`` first on ``sys.path`` and shadows the
``lint`` package, and mypy refuses two top-level modules named ``lint``.)
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import itertools
import os
import resource
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from simclock_lint import Config, lint_paths

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, markdown_table

BIN = Path(sys.executable).parent


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, f"{name} is not installed"
    return Path(spec.origin).parent


def run(argv: list[str], cwd: Path) -> None:
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def runner(argv: Callable[[], list[str]], cwd: Path) -> Callable[[], None]:
    """A call that builds the command line afresh (a new cache dir for cold runs) and runs it."""
    return lambda: run(argv(), cwd)


def cpu_seconds(argv: list[str], cwd: Path) -> float:
    """CPU (user + system) of one run, children included: insensitive to other load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(argv, cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def parser_reference(files: list[Path]) -> None:
    """CPU cost of the pieces: parsers, positions, and libcst's metadata providers.

    On every 10th file: ``ast.parse`` (a reference only, the linter does not
    use it), ``libcst.parse_module``, and parse + ``QualifiedNameProvider`` (the
    issue's starting point). On the files among them with findings: how the
    finding positions are computed, libcst's ``PositionProvider`` (behind a
    ``MetadataWrapper``, without its deep copy) vs the linter's counting
    replay for the finding nodes only.
    """
    import libcst
    from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

    from simclock_lint import RULES
    from simclock_lint._analysis import analyse
    from simclock_lint._positions import start_positions

    sample = files[::10]
    sources = [p.read_bytes() for p in sample]
    size = sum(map(len, sources))

    def cpu(fn: Callable[[bytes], object], inputs: list[bytes]) -> float:
        start = time.process_time()
        for source in inputs:
            fn(source)
        return time.process_time() - start

    def qualified(source: bytes) -> object:
        return MetadataWrapper(libcst.parse_module(source)).resolve(QualifiedNameProvider)

    parsers: list[tuple[str, Callable[[bytes], object]]] = [
        ("ast.parse (reference, unused)", ast.parse),
        ("libcst.parse_module", libcst.parse_module),
        ("libcst + QualifiedNameProvider", qualified),
    ]
    rows = []
    for name, fn in parsers:
        seconds = cpu(fn, sources)
        rows.append(
            [name, f"{seconds:.2f}", f"{size / seconds / 1e6:.2f}", f"{len(sources) / seconds:.1f}"]
        )
    print(f"\nparsers, every 10th file ({len(sources)} files, {size / 1e6:.2f} MB), CPU:")
    print(markdown_table(["parser", "CPU s", "MB/s", "files/s"], rows))

    # Positions, on the files of the sample that have findings (parsed once, up front).
    found: list[tuple[libcst.Module, list[libcst.CSTNode]]] = []
    for source in sources:
        module = libcst.parse_module(source)
        nodes = [node for rule in RULES for node, _ in rule.check(analyse(module))]
        if nodes:
            found.append((module, nodes))
    start = time.process_time()
    for module, _ in found:
        MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    provider = time.process_time() - start
    start = time.process_time()
    for module, nodes in found:
        start_positions(module, nodes)
    replay = time.process_time() - start
    print(f"\npositions, the {len(found)} of those files with findings, CPU:")
    print(
        markdown_table(
            ["positions", "CPU s"],
            [
                ["MetadataWrapper(unsafe_skip_copy) + PositionProvider", f"{provider:.2f}"],
                ["simclock_lint._positions (counting replay, finding nodes only)", f"{replay:.2f}"],
            ],
        )
    )


def main() -> None:
    # No options: parsing still gives --help and refuses unknown arguments.
    argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0]).parse_args()
    trees = [package_dir("numpy"), package_dir("hypothesis")]
    files = [p for tree in trees for p in tree.rglob("*.py")]
    size = sum(p.stat().st_size for p in files)
    print(f"trees: {', '.join(map(str, trees))}: {len(files)} files, {size / 1e6:.1f} MB")
    print(f"load average before the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        targets = [str(t) for t in trees]
        ruff = [str(BIN / "ruff"), "check", "--isolated", "--exit-zero", "--select", "NPY002,S311"]
        lint = [str(BIN / "simclock-lint"), *targets]
        fresh = (["--cache-dir", str(work / f"cold{i}")] for i in itertools.count())
        ruff_cache = ["--cache-dir", str(work / "ruff-cache")]
        warm_dir = ["--cache-dir", str(work / "warm")]
        run([*ruff, *ruff_cache, *targets], work)
        run([*lint, *warm_dir], work)
        cases: list[tuple[str, Callable[[], list[str]]]] = [
            ("ruff --no-cache (cold)", lambda: [*ruff, "--no-cache", *targets]),
            ("ruff, cache filled (warm)", lambda: [*ruff, *ruff_cache, *targets]),
            ("simclock-lint cold", lambda: [*lint, *next(fresh)]),
            ("simclock-lint cold, --jobs 1", lambda: [*lint, "--jobs", "1", *next(fresh)]),
            ("simclock-lint warm", lambda: [*lint, *warm_dir]),
        ]
        wall = {name: best_of(runner(argv, work)) for name, argv in cases}
        cpu = {name: min(cpu_seconds(argv(), work) for _ in range(3)) for name, argv in cases}
        base_wall, base_cpu = wall[cases[0][0]], cpu[cases[0][0]]
        rows = [
            [
                name,
                f"{wall[name]:.3f}",
                f"{wall[name] / base_wall:.1f}x",
                f"{cpu[name]:.3f}",
                f"{cpu[name] / base_cpu:.1f}x",
            ]
            for name, _ in cases
        ]
        header = [
            "run (numpy + hypothesis)",
            "wall s",
            "wall vs ruff cold",
            "CPU s",
            "CPU vs ruff cold",
        ]
        print(markdown_table(header, rows))
        cold, warm = wall["simclock-lint cold"], wall["simclock-lint warm"]
        ruff_warm = wall["ruff, cache filled (warm)"]
        print(
            f"\nwall: cold / ruff cold = {cold / base_wall:.1f}x (target <= 20x); "
            f"warm / ruff warm = {warm / ruff_warm:.1f}x (target <= 2x)"
        )

        parser_reference(sorted(files))

        stdlib = Path(sysconfig.get_paths()["stdlib"])
        # The stdlib proper: its site-packages holds third-party code.
        stdlib_parts = [
            p
            for p in sorted(stdlib.iterdir())
            if p.name != "site-packages" and (p.is_dir() or p.suffix == ".py")
        ]
        everything = Config(root=work, exclude=())  # no default excludes: every file
        result = lint_paths([*stdlib_parts, *trees], everything, use_cache=False)
        codes = Counter(f.code for f in result.findings)
        print(
            f"\nrobustness: {result.files} files (stdlib of {stdlib} without site-packages, "
            f"numpy, hypothesis); parse errors (SCK000) {codes['SCK000']}, internal errors "
            f"(SCK999) {codes['SCK999']}; findings by code {dict(sorted(codes.items()))}"
        )
        for finding in result.findings:
            if finding.code in {"SCK000", "SCK999"}:
                print(f"  {finding.format_text()}")


if __name__ == "__main__":
    main()
