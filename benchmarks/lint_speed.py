"""simclock-lint against ruff on the installed numpy and hypothesis packages (SPEC §13).

Not a test. Every command runs as a subprocess from an empty directory, so
interpreter start-up and file discovery are included on both sides, and the
figure of merit is the ratio within this one run:

- cold: simclock-lint with an empty cache vs ``ruff check --no-cache``;
- warm: simclock-lint with its cache filled vs ruff with its cache filled;
- both with ``--select NPY002,S311`` for ruff (its nearest rules).

Then the robustness sweep: lint the whole stdlib + numpy + hypothesis in
process and count files, parse errors (SC000) and internal errors (SC999).

Run: ``.venv/bin/python benchmarks/lint_speed.py``. (Not ``benchmarks/lint.py``:
a script of that name puts ``benchmarks/`` first on ``sys.path`` and shadows the
``lint`` package, and mypy refuses two top-level modules named ``lint``.)
"""

from __future__ import annotations

import importlib.util
import itertools
import subprocess
import sys
import sysconfig
import tempfile
from collections import Counter
from pathlib import Path

from lint import Config, lint_paths

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, markdown_table

BIN = Path(sys.executable).parent


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, f"{name} is not installed"
    return Path(spec.origin).parent


def run(argv: list[str], cwd: Path) -> None:
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def main() -> None:
    trees = [package_dir("numpy"), package_dir("hypothesis")]
    files = [p for tree in trees for p in tree.rglob("*.py")]
    size = sum(p.stat().st_size for p in files)
    print(f"trees: {', '.join(map(str, trees))}: {len(files)} files, {size / 1e6:.1f} MB")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        targets = [str(t) for t in trees]
        ruff = [str(BIN / "ruff"), "check", "--isolated", "--exit-zero", "--select", "NPY002,S311"]
        lint = [str(BIN / "simclock-lint"), *targets]
        fresh = (work / f"cold{i}" for i in itertools.count())

        ruff_cold = best_of(lambda: run([*ruff, "--no-cache", *targets], work))
        ruff_cache = ["--cache-dir", str(work / "ruff-cache")]
        run([*ruff, *ruff_cache, *targets], work)
        ruff_warm = best_of(lambda: run([*ruff, *ruff_cache, *targets], work))

        cold = best_of(lambda: run([*lint, "--cache-dir", str(next(fresh))], work))
        cold_1 = best_of(lambda: run([*lint, "--jobs", "1", "--cache-dir", str(next(fresh))], work))
        warm_dir = ["--cache-dir", str(work / "warm")]
        run([*lint, *warm_dir], work)
        warm = best_of(lambda: run([*lint, *warm_dir], work))

        rows = [
            ["ruff --no-cache (cold)", f"{ruff_cold:.3f}", "1.0x"],
            ["ruff, cache filled (warm)", f"{ruff_warm:.3f}", f"{ruff_warm / ruff_cold:.1f}x"],
            ["simclock-lint cold", f"{cold:.3f}", f"{cold / ruff_cold:.1f}x"],
            ["simclock-lint cold, --jobs 1", f"{cold_1:.3f}", f"{cold_1 / ruff_cold:.1f}x"],
            ["simclock-lint warm", f"{warm:.3f}", f"{warm / ruff_cold:.1f}x"],
        ]
        print(
            markdown_table(["run (numpy + hypothesis)", "wall s, best of 3", "vs ruff cold"], rows)
        )
        print(
            f"\ncold / ruff cold = {cold / ruff_cold:.1f}x (target <= 20x); "
            f"warm / ruff warm = {warm / ruff_warm:.1f}x (target <= 2x)"
        )

        stdlib = Path(sysconfig.get_paths()["stdlib"])
        sweep = [stdlib, *trees]
        result = lint_paths(sweep, Config(root=work), use_cache=False)
        codes = Counter(f.code for f in result.findings)
        print(
            f"\nrobustness: {result.files} files under {', '.join(map(str, sweep))}; "
            f"parse errors (SC000) {codes['SC000']}, internal errors (SC999) {codes['SC999']}; "
            f"findings by code {dict(sorted(codes.items()))}"
        )


if __name__ == "__main__":
    main()
