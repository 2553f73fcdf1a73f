"""Docs that stay true: ARCHITECTURE.md against the code, the API page, no project history.

* The layer table of ``docs/ARCHITECTURE.md`` is the import-linter ``layers``
  contract of pyproject.toml (same layers, same order, every package of simclock).
* Its command list is the ``simclock`` parser's sub-commands.
* Every repository path named in ARCHITECTURE.md and maintainers.md exists.
* ``docs/api.md`` documents every public name.
* No user-facing text (README, docs/ but the contract, conformance/README.md, the
  help of every command line) carries the project's own history: issue numbers,
  "engineers", "the report", "architecture review".
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import subprocess
import tomllib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`(simclock\.[a-z_]+)`\s*\|(.*)\|\s*$")


def _layer_rows() -> list[tuple[int, str, str]]:
    rows = []
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match:
            rows.append((int(match.group(1)), match.group(2), match.group(3)))
    return rows


def _layers_contract() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layers,) = [c for c in contracts if c["type"] == "layers" and c["containers"] == ["simclock"]]
    return [{f"simclock.{p.strip()}" for p in layer.split("|")} for layer in layers["layers"]]


def test_architecture_layer_table_is_the_import_linter_contract() -> None:
    rows = _layer_rows()
    by_number: dict[int, set[str]] = {}
    for number, package, _ in rows:
        by_number.setdefault(number, set()).add(package)
    table = [by_number[n] for n in sorted(by_number, reverse=True)]
    assert table == _layers_contract(), (
        "docs/ARCHITECTURE.md's layer table (highest layer first) differs from the "
        "import-linter layers contract in pyproject.toml"
    )
    packages = {f"simclock.{p.parent.name}" for p in (ROOT / "simclock").glob("*/__init__.py")}
    assert {package for _, package, _ in rows} == packages, (
        "every package of simclock/ has one row in docs/ARCHITECTURE.md's layer table"
    )


def _simclock_commands() -> set[str]:
    from simclock.cli._main import build_parser

    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(action.choices)


def test_architecture_command_list_is_the_cli_parser() -> None:
    (cli_row,) = [job for _, package, job in _layer_rows() if package == "simclock.cli"]
    listed, _, _ = cli_row.partition("(")
    assert "the `simclock` command:" in listed
    documented = set(re.findall(r"`([a-z][a-z0-9-]*)`", listed.split(":", 1)[1]))
    assert documented == _simclock_commands(), (
        "the `simclock` commands listed in docs/ARCHITECTURE.md's cli row differ from "
        "simclock/cli/_main.py's parser"
    )


_PATH = re.compile(
    r"`([A-Za-z0-9_./*-]+\.(?:py|md|toml|yaml|json)"  # a file
    r"|[A-Za-z0-9_.-]+/(?:[A-Za-z0-9_.*-]+/?)*)`"  # or a directory
)


def _named_paths(page: Path) -> Iterator[str]:
    for match in _PATH.finditer(page.read_text(encoding="utf-8")):
        token = match.group(1)
        if "/" in token and not token.startswith(("/", "http")):
            yield token


def _build_output(token: str) -> bool:
    """Whether git ignores ``token``: a file the build writes (``build/native.log``)."""
    done = subprocess.run(["git", "check-ignore", "-q", "--no-index", token], cwd=ROOT, check=False)
    return done.returncode == 0


@pytest.mark.parametrize("page", ["ARCHITECTURE.md", "maintainers.md"])
def test_paths_named_in_the_maintainer_pages_exist(page: str) -> None:
    """A path relative to the repository or to the package (``core/_heap.py``)."""
    missing = []
    for token in _named_paths(ROOT / "docs" / page):
        bases = (ROOT, ROOT / "simclock")
        exists = any(list(base.glob(token.rstrip("/"))) for base in bases)
        if not exists and not _build_output(token):
            missing.append(token)
    assert missing == [], f"docs/{page} names paths that do not exist"


def test_api_page_documents_every_public_name() -> None:
    import simclock

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: simclock\.([A-Za-z_][A-Za-z0-9_]*)\s*$", text, re.M))
    public = set(simclock.__all__) - {"__version__"}
    namespaces = {"lowlevel", "records", "sweeps"}
    assert public - documented == set(), "docs/api.md lacks these public names"
    assert namespaces - documented == set(), "docs/api.md lacks these public namespaces"
    assert documented - public - namespaces == set(), "docs/api.md documents non-public names"


# -- no project history in user-facing text -------------------------------------------------

_HISTORY = [
    (re.compile(r"\b[Ii]ssues? #?\d+"), "an issue number"),
    (re.compile(r"(?<![\w/])#\d+\b(?<!message #\d)(?<!message #\d\d)"), "an issue or PR number"),
    (re.compile(r"\b(?:PR|pull request) #?\d+"), "a pull request"),
    (re.compile(r"\b[Ee]ngineers?\b"), "the project's engineers"),
    (re.compile(r"\bsee the report\b|\bthe report says\b"), "a report users never see"),
    (re.compile(r"\b[Aa]rchitecture review\b"), "an internal review"),
    (re.compile(r"\bwhat the issue wanted\b|\bthe issue's\b|\bthe issue names\b"), "an issue"),
    (re.compile(r"\bthe lead\b"), "the project's roles"),
    (re.compile(r"\bissue\d+[a-z]*\b"), "a branch name"),
]


def history(text: str) -> list[str]:
    """Each line of ``text`` that carries project history, with what it carries."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for pattern, what in _HISTORY:
            match = pattern.search(line)
            if match:
                found.append(f"{number}: {what}: {match.group(0)!r} in {line.strip()!r}")
    return found


def _user_pages() -> list[Path]:
    pages = [ROOT / "README.md", ROOT / "conformance" / "README.md"]
    pages += sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "SPEC.md")
    return pages


@pytest.mark.parametrize("page", _user_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_project_history_in_user_pages(page: Path) -> None:
    assert history(page.read_text(encoding="utf-8")) == []


def _command_options() -> dict[str, set[str]]:
    """``"simclock sweep run" -> {"--seeds", ...}``: every command of the parser, fully built."""
    from simclock.cli._main import COMMANDS, build_parser

    found: dict[str, set[str]] = {}

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subcommands:
            found[path] = {
                option
                for action in parser._actions
                for option in action.option_strings
                if option not in ("-h", "--help")
            }
        for action in subcommands:
            for name, sub in action.choices.items():
                walk(sub, f"{path} {name}")

    for command in COMMANDS:
        (action,) = [
            a for a in build_parser(command)._actions if isinstance(a, argparse._SubParsersAction)
        ]
        walk(action.choices[command], f"simclock {command}")
    return found


def _documented_options() -> dict[str, set[str]]:
    """The options listed under each ``### `simclock ...``` heading of docs/cli.md."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("## Every command and its options", 1)[1].split("\n## ", 1)[0]
    found: dict[str, set[str]] = {}
    for block in section.split("\n### ")[1:]:
        heading, _, body = block.partition("\n")
        words = re.fullmatch(r"`(simclock(?: [a-z][a-z0-9-]*)+)(?: [A-Z].*)?`", heading.strip())
        assert words is not None, f"docs/cli.md: a heading that names no command: {heading!r}"
        found[words.group(1)] = {
            option
            for line in body.splitlines()
            if line.startswith("- ")
            for option in re.findall(r"`(--?[a-z][a-z0-9-]*)\b", line.split(":", 1)[0])
        }
    return found


def test_cli_page_documents_every_command_and_option_of_the_parser() -> None:
    parser = _command_options()
    assert "simclock export ros2" in parser and "--ros2" in parser["simclock run"]
    assert _documented_options() == parser


# simclock has no public repository URL: installs are from a clone or a built wheel, and a
# placeholder owner in a URL would be copied and fail.
_PLACEHOLDER_URL = re.compile(r"\bOWNER\b|\bgit\+(?:https?|ssh)://|github\.com/[A-Z_-]+/")


@pytest.mark.parametrize(
    "page",
    [*_user_pages(), ROOT / "pyproject.toml"],
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_no_placeholder_repository_url(page: Path) -> None:
    lines = page.read_text(encoding="utf-8").splitlines()
    found = [f"{n}: {line}" for n, line in enumerate(lines, 1) if _PLACEHOLDER_URL.search(line)]
    assert found == []


def test_placeholder_url_pattern() -> None:
    assert _PLACEHOLDER_URL.search('pip install "simclock @ git+https://github.com/OWNER/simclock"')
    assert _PLACEHOLDER_URL.search("  - repo: https://github.com/OWNER/simclock")
    assert not _PLACEHOLDER_URL.search('pip install "/path/to/simclock[all]"')


def _help_of(main: Callable[[Sequence[str]], object], argv: Sequence[str]) -> str:
    out = io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(out),
        contextlib.suppress(SystemExit),
    ):
        main(list(argv))
    return out.getvalue()


def _cli_help_texts() -> Iterator[tuple[str, str]]:
    from simclock.cli._main import main as simclock_main
    from simclock_conformance.entry._run import main as conformance_main
    from simclock_lint._cli import main as lint_main

    yield "simclock --help", _help_of(simclock_main, ["--help"])
    for command in sorted(_simclock_commands()):
        yield f"simclock {command} --help", _help_of(simclock_main, [command, "--help"])
    yield "simclock-lint --help", _help_of(lint_main, ["--help"])
    yield "python -m simclock_conformance --help", _help_of(conformance_main, ["--help"])


def test_no_project_history_in_command_line_help() -> None:
    texts = list(_cli_help_texts())
    assert all(len(text) > 100 for _, text in texts), "a --help printed (almost) nothing"
    found = {name: history(text) for name, text in texts if history(text)}
    assert found == {}


@pytest.mark.parametrize(
    ("line", "carries"),
    [
        ("fixed in issue 11", True),
        ("see #17 for why", True),
        ("five other engineers", True),
        ("details: see the report", True),
        ("architecture review item 7", True),
        ("more than what the issue wanted", True),
        ("### What changed (issue16b)", True),
        ("first divergence at message #3 (0-based)", False),
        ("the JSON report is written", False),
        ("C-TIE-1 and §18", False),
    ],
)
def test_history_patterns(line: str, carries: bool) -> None:
    assert bool(history(line)) is carries
