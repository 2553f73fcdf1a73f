"""``simclock-lint`` / ``python -m simclock_lint``: the command line (SPEC §13).

Exit status: 0 no finding, 1 findings (a file that Python refuses counts as
one; a path that is not a regular file, SCK001, is only a warning), 2 usage or
configuration error, or an internal error of the linter. ``--exit-zero`` turns
the 1 into 0 (the findings are still printed); a 2 stays a 2, since the run
itself failed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from simclock_lint._config import Config, LintConfigError, load_config, resolve_codes
from simclock_lint._engine import INTERNAL_ERROR, NOT_LINTED, PARSE_ERROR, WARNINGS
from simclock_lint._rule import (
    OLD_PREFIX,
    PREFIX,
    Finding,
    canonical_code,
    simulation_imports,
)
from simclock_lint._rules import RULES, RULES_BY_CODE
from simclock_lint._runner import _read_regular, lint_paths

__all__ = ["CLOSED_PIPE_STATUS", "main"]

CLOSED_PIPE_STATUS = 141
"""Exit status when stdout's reader went away: 128 + SIGPIPE, as a shell reports for ``cat``."""


def _codes(text: str) -> list[str]:
    return [part for part in text.split(",") if part.strip()]


def _selected_codes(text: str) -> list[str]:
    codes = _codes(text)
    if not codes:
        # An empty selection would lint nothing and exit 0: a silently open gate.
        raise argparse.ArgumentTypeError(
            f"names no code, got {text!r}; pass codes or prefixes such as SCK1,SCK301"
        )
    return codes


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="simclock-lint",
        description=(
            "Keep global randomness, wall-clock reads, dynamic stream labels and float "
            "times out of simulation code."
        ),
    )
    parser.add_argument("paths", nargs="*", type=Path, help="files or directories (default: .)")
    parser.add_argument("--select", type=_selected_codes, help="codes or prefixes, comma-separated")
    parser.add_argument("--ignore", type=_codes, help="codes or prefixes to leave out")
    parser.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text")
    parser.add_argument(
        "--statistics", action="store_true", help="print a count per code instead of findings"
    )
    parser.add_argument("--show-source", action="store_true", help="print the offending line")
    parser.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when there are findings (usage and internal errors still exit 2)",
    )
    parser.add_argument("--config", type=Path, help="pyproject.toml to read (default: nearest)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--cache-dir", type=Path, help="cache location (default: from config)")
    parser.add_argument("--jobs", "-j", type=int, help="worker processes (default: CPUs)")
    parser.add_argument("--explain", metavar="CODE", help="print a rule's documentation")
    parser.add_argument("--list-rules", action="store_true", help="print every code and message")
    parser.add_argument("--version", action=_Version)
    return parser


class _Version(argparse.Action):
    """``--version``: the installed ``simclock`` distribution's version, read only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> None:
        print(f"simclock-lint {version()}")
        parser.exit()


def version() -> str:
    """The version of the ``simclock`` distribution the linter ships in; ``0+unknown`` if none.

    The same string as ``simclock --version``: one version for the whole distribution.
    """
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("simclock")
    except PackageNotFoundError:  # a source tree on sys.path, never installed
        return "0+unknown"


def _with_selection(config: Config, args: argparse.Namespace) -> Config:
    select = config.select
    if args.select is not None:
        select = resolve_codes(args.select, "--select")
    if args.ignore is not None:
        select = select - resolve_codes(args.ignore, "--ignore")
    return Config(
        root=config.root,
        select=select,
        exclude=config.exclude,
        simulation_code=config.simulation_code,
        simulation_imports=config.simulation_imports,
        per_file_ignores=config.per_file_ignores,
        cache_dir=config.cache_dir,
        source=config.source,
    )


def _source_line(finding: Finding, cache: dict[str, list[str]]) -> str:
    lines = cache.get(finding.path)
    if lines is None:
        try:
            # Never a plain read: the path may be a FIFO or a device (SCK001).
            raw = _read_regular(finding.path)
            lines = raw.decode("utf-8", errors="replace").splitlines()
        except OSError:
            lines = []
        cache[finding.path] = lines
    if 0 < finding.line <= len(lines):
        text = lines[finding.line - 1]
        return f"    {text}\n    {' ' * (finding.col - 1)}^"
    return ""


_SPECIAL = {
    PARSE_ERROR: "file Python cannot parse",
    NOT_LINTED: "path not linted (not a regular file)",
    INTERNAL_ERROR: "internal error of the linter",
}


def _summary(code: str) -> str:
    rule = RULES_BY_CODE.get(code)
    if rule is None:
        return _SPECIAL.get(code, code)
    return rule.message.format(name="...")


def _sarif(findings: list[Finding]) -> dict[str, object]:
    """SARIF 2.1.0, the format code-scanning dashboards read."""
    codes = sorted({*RULES_BY_CODE, *_SPECIAL})
    rules = []
    for code in codes:
        rule = RULES_BY_CODE.get(code)
        descriptor: dict[str, object] = {
            "id": code,
            # The same code under the former prefix, which configurations may still name.
            "deprecatedIds": [OLD_PREFIX + code.removeprefix(PREFIX)],
            "shortDescription": {"text": _summary(code)},
        }
        if rule is not None:
            descriptor["fullDescription"] = {"text": rule.doc.strip().splitlines()[0]}
            descriptor["help"] = {"text": rule.doc.strip()}
        descriptor["defaultConfiguration"] = {"level": "warning" if code in WARNINGS else "error"}
        rules.append(descriptor)
    index = {code: i for i, code in enumerate(codes)}
    results = [
        {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": "warning" if f.code in WARNINGS else "error",
            "message": {"text": f"{f.code} {f.message}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path},
                        "region": {"startLine": f.line, "startColumn": f.col},
                    }
                }
            ],
        }
        for f in findings
    ]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "simclock-lint", "rules": rules}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _statistics(findings: list[Finding]) -> None:
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.code] = counts.get(finding.code, 0) + 1
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        print(f"{count:6d}  {code}  {_summary(code)}")


def _print(findings: list[Finding], output_format: str, show_source: bool) -> None:
    out = sys.stdout
    if output_format == "sarif":
        json.dump(_sarif(findings), out, indent=2)
        out.write("\n")
        return
    if output_format == "json":
        records = [
            {"path": f.path, "line": f.line, "col": f.col, "code": f.code, "message": f.message}
            for f in findings
        ]
        json.dump(records, out, indent=2)
        out.write("\n")
        return
    sources: dict[str, list[str]] = {}
    for finding in findings:
        if output_format == "github":
            message = finding.message.replace("%", "%25").replace("\n", "%0A")
            level = "warning" if finding.code in WARNINGS else "error"
            out.write(
                f"::{level} file={finding.path},line={finding.line},col={finding.col},"
                f"title={finding.code}::{finding.code} {message}\n"
            )
        else:
            out.write(finding.format_text() + "\n")
        if show_source and output_format == "text":
            source = _source_line(finding, sources)
            if source:
                out.write(source + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the linter; returns the exit status (141 when stdout's reader has gone, ``| head``).

    A closed stdout ends the run quietly: stdout is pointed at ``os.devnull``
    (so the interpreter's last flush cannot fail again) and the status is
    141, 128 + SIGPIPE, what a shell reports for ``cat`` in the same place.
    """
    try:
        try:
            return _main(argv)
        finally:
            sys.stdout.flush()  # also when argparse exits: a closed pipe shows here at the latest
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass  # stdout is not a file (captured in-process): nothing flushes it to the pipe
        return CLOSED_PIPE_STATUS


def _main(argv: Sequence[str] | None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list_rules:
        for rule in RULES:
            print(f"{rule.code}  {rule.message.format(name='...')}")
        return 0
    if args.explain is not None:
        explained = RULES_BY_CODE.get(canonical_code(args.explain))
        if explained is None:
            print(
                f"simclock-lint: error: unknown code {args.explain!r}; see --list-rules",
                file=sys.stderr,
            )
            return 2
        print(explained.doc.strip())
        print(
            f"\nAlso accepted as {explained.alias} (in # noqa comments, select, ignore "
            "and per-file-ignores)."
        )
        if explained.simulation_only:
            try:
                config = load_config(args.config)
            except LintConfigError as error:
                print(f"simclock-lint: error: {error}", file=sys.stderr)
                return 2
            where = str(config.source) if config.source is not None else "defaults"
            imports = ", ".join(simulation_imports(config.simulation_imports))
            globs = ", ".join(g.pattern for g in config.simulation_code) or "none"
            print(
                f"\nHere ({where}): simulation code = files importing {imports}; "
                f"simulation-code globs: {globs}."
            )
        return 0
    if args.jobs is not None and args.jobs < 1:
        print(f"simclock-lint: error: --jobs must be >= 1, got {args.jobs!r}", file=sys.stderr)
        return 2
    paths: list[Path] = args.paths or [Path(".")]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        print(f"simclock-lint: error: no such file or directory: {missing[0]!r}", file=sys.stderr)
        return 2
    try:
        config = _with_selection(load_config(args.config), args)
    except LintConfigError as error:
        print(f"simclock-lint: error: {error}", file=sys.stderr)
        return 2
    # The run builds and drops many acyclic trees: the cycle collector only costs time.
    enabled = gc.isenabled()
    gc.disable()
    try:
        result = lint_paths(
            paths, config, use_cache=not args.no_cache, cache_dir=args.cache_dir, jobs=args.jobs
        )
    finally:
        if enabled:
            gc.enable()
    if args.statistics:
        _statistics(result.findings)
    else:
        _print(result.findings, args.format, args.show_source)
    if args.format == "text":
        noun = "finding" if len(result.findings) == 1 else "findings"
        print(
            f"simclock-lint: {len(result.findings)} {noun} in {result.files} files "
            f"({result.cached} from cache)",
            file=sys.stderr,
        )
    if any(f.code == INTERNAL_ERROR for f in result.findings):
        return 2
    if args.exit_zero:
        return 0
    return 1 if any(f.code not in WARNINGS for f in result.findings) else 0
