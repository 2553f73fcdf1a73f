"""Every example of README.md and docs/*.md runs and shows what it prints (tests/docs_examples.py).

One test per page: its blocks share one namespace and one directory and run
in order, as a reader would run them.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import unittest
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from docs_examples import (
    DATA_LANGUAGES,
    ROOT,
    RUN_LANGUAGES,
    documents,
    extras,
    fence_languages,
    inline_commands,
    install_commands,
    install_problem,
    make_sybil,
    output_matches,
    parse_session,
    prepare_workdir,
    unexecuted_commands,
)
from sybil.example import NotEvaluated


@pytest.mark.parametrize("page", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_example_of_the_page_runs(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = prepare_workdir(tmp_path)
    monkeypatch.chdir(tmp_path)
    document = make_sybil().parse(page)
    document.namespace.update(workdir=tmp_path, shell_env=env)
    for example in document:
        try:
            example.evaluate()
        except (unittest.SkipTest, NotEvaluated):
            continue


@pytest.mark.parametrize("page", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_block_says_whether_it_runs(page: Path) -> None:
    """A block without a language, or of one the runner does not know, would never run."""
    known = RUN_LANGUAGES | DATA_LANGUAGES
    unknown = [
        f"{page.name}:{line}: {info or '(no language)'}"
        for line, info in fence_languages(page.read_text(encoding="utf-8"))
        if (info.split()[0] if info else "") not in known
    ]
    assert unknown == [], f"give these blocks one of {sorted(known)}"


def test_shell_session_parsing() -> None:
    source = (
        "$ simclock run a.toml \\\n"
        "    --seed 8\n"
        "seed 8\n"
        "...\n"
        '$ python -c "\n'
        '> print(1)"\n'
        "1\n"
        "$ true\n"
    )
    commands = parse_session(source, 10)
    assert [(c.text, c.expected, c.line) for c in commands] == [
        ("simclock run a.toml \\\n    --seed 8", ("seed 8", "..."), 10),
        ('python -c "\nprint(1)"', ("1",), 14),
        ("true", (), 17),
    ]
    with pytest.raises(
        ValueError, match=r"^line 3: output before any '\$ ' command: 'simclock run a.toml'$"
    ):
        parse_session("simclock run a.toml\n", 3)
    with pytest.raises(ValueError, match=r"^line 3: a shell block needs '\$ ' prompts"):
        parse_session("\n", 3)


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        (["a", "b"], "a\nb\n", True),
        (["a", "b"], "a\nb  \n\n", True),
        (["a", "..."], "a\nb\nc\n", True),
        (["a", "...", "c"], "a\nc\n", True),
        (["fingerprint: ..."], "fingerprint: 86b2\n", True),
        (["a"], "a\nb\n", False),
        (["a", "c"], "a\nb\nc\n", False),
        (["x ... z"], "x y\n", False),
    ],
)
def test_output_comparison(expected: list[str], actual: str, matches: bool) -> None:
    assert output_matches(expected, actual) is matches


# -- commands that cannot run here: checked against pyproject and the parsers ------------


def test_every_install_line_names_a_clone_wheel_or_file_url_and_real_extras() -> None:
    """No package index has simclock: ``pip install "simclock[live]"`` fails for a user.
    tests/test_install.py runs each of these lines with ``pip install --dry-run``."""
    found = install_commands()
    assert len(found) >= 10
    problems = [f"{where}: {command}: {why}" for where, command in found
                if (why := install_problem(command)) is not None]  # fmt: skip
    assert problems == []


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ('pip install "simclock[live]"', "'simclock[live]' needs a package index, and no index "
         "has simclock"),
        ("pip install simclock", "'simclock' needs a package index, and no index has simclock"),
        ('pip install "/path/to/simclock[gui]"', "'/path/to/simclock[gui]' names extras "
         "pyproject does not declare: ['gui']"),
        ('pip install "simclock[live] @ https://example.org/s.whl"', "'simclock[live] @ "
         "https://example.org/s.whl': only simclock from a file:// URL installs without an "
         "index"),
        ("pip install /opt/simclock", "'/opt/simclock': write the clone as one of "
         "('/path/to/simclock', '/home/me/simclock')"),
    ],
)  # fmt: skip
def test_install_lines_that_cannot_work_are_named(command: str, why: str) -> None:
    assert install_problem(command) == why


def test_readme_lists_every_extra() -> None:
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    sentence = text[text.index("The base install has the clock") :].split(":", 1)[0]
    assert set(re.findall(r"`(\w+)`", sentence)) == extras()


class _ParsedError(Exception):
    """Raised by the stand-ins of the runners: the command line parsed."""


def _stop(*_args: object, **_kwargs: object) -> Any:
    raise _ParsedError


def _parses(main: Callable[[list[str]], object], argv: list[str]) -> str | None:
    """None when ``main(argv)`` gets past its parser (or exits 0 for --help); else stderr."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            main(argv)
    except _ParsedError:
        return None
    except SystemExit as exc:
        return None if exc.code in (0, None) else err.getvalue().strip() or f"exit {exc.code}"
    return None


def command_problem(command: str, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Why ``command`` (a line of a page) would not run as written, or None."""
    from simclock_conformance.entry import _run, _wire_run
    from simclock_conformance.protocol import _wire_core

    for part in command.split(" && "):
        words = shlex.split(part.rstrip("\\ ").strip("()"))
        paths = [str(ROOT)]
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            name, _, value = words.pop(0).partition("=")
            if name == "PYTHONPATH":
                paths = [str(ROOT / value)]
        if words and words[0].startswith(".venv/bin/"):
            words[0] = words[0].removeprefix(".venv/bin/")
        if words[:1] == ["cd"] and not (ROOT / words[1]).is_dir():
            return f"no directory {words[1]!r} in the repository"
        if not words or words[0] in (".", "cd", "go", "g++", "cargo", "mvn", "node", "dask"):
            continue  # the shell, or a toolchain a kit's own tests drive
        if any(re.fullmatch(r"[A-Z]{2,}", w) for w in words):
            continue  # a synopsis with placeholders (simclock COMMAND --help)
        if words[:2] == ["pip", "install"]:
            why = install_problem(part)
        elif words[0] == "make":
            phony = re.search(r"^\.PHONY: (.*)$", (ROOT / "Makefile").read_text(), re.M)
            assert phony is not None
            why = None if words[1] in phony.group(1).split() else f"no make target {words[1]!r}"
        elif words[0] == "simclock" or words[:3] == ["python", "-m", "simclock"]:
            argv = words[1:] if words[0] == "simclock" else words[3:]
            why = _parses(_simclock_parse, argv)
        elif words[:3] == ["python", "-m", "simclock_conformance"]:
            monkeypatch.setattr(_run, "run", _stop)
            monkeypatch.setattr(_wire_run, "run_driver", _stop)
            monkeypatch.setattr(_wire_core, "Session", _stop)
            argv = words[3:]
            spec = next((w for w in argv if re.fullmatch(r"[\w.]+:\w+", w)), None)
            module = spec.partition(":")[0] if spec else None
            if module and not _importable(module, paths):
                why = f"{module} is not importable from {paths}"
            else:
                why = _parses(_run.main, argv)
        elif words[:2] == ["python", "-m"]:
            why = None if _importable(words[2], paths) else f"no module {words[2]!r}"
        elif words[0] == "python":
            why = None if (ROOT / words[1]).is_file() else f"no file {words[1]!r}"
        else:
            why = f"{words[0]!r} is no command this check knows"
        if why is not None:
            return why
    return None


def _simclock_parse(words: list[str]) -> None:
    """What ``simclock``'s ``main`` does before it runs the command: parse ``words``."""
    import importlib

    from simclock.cli import _main

    command = _main._command_of(words)
    if command in _main.COMMANDS:
        rewrite = getattr(importlib.import_module(_main.COMMANDS[command][0]), "rewrite_argv", None)
        if rewrite is not None:
            at = words.index(command) + 1
            words = [*words[:at], *rewrite(words[at:])]
    parser = _main.build_parser(command)
    args, extra = parser.parse_known_args(words)
    if extra:
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    raise _ParsedError


def _importable(module: str, paths: list[str]) -> bool:
    import importlib.util

    top = module.split(".", maxsplit=1)[0]
    for path in paths:
        base = Path(path) / Path(*module.split("."))
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
    return importlib.util.find_spec(top) is not None


def test_every_command_the_runner_skips_parses_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands of ``skip`` blocks and ``text`` blocks: each against its command's parser."""
    found = unexecuted_commands()
    assert len(found) > 20
    problems = [f"{where}: {command}: {why}" for where, command in found
                if (why := command_problem(command, monkeypatch)) is not None]  # fmt: skip
    assert problems == []


def test_every_command_written_inline_parses_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inline commands (``simclock export ros2 run.mcap -o run_bag``): each against its parser.

    A span that names a command without its required arguments, or ends with an option
    it names (``simclock run --out``), is a reference, not a command line: only those
    errors are let through.
    """
    found = inline_commands()
    assert len(found) > 50
    problems = []
    for where, command in found:
        why = command_problem(command, monkeypatch)
        last = command.split()[-1]
        reference = why is not None and (
            "the following arguments are required" in why
            or (last.startswith("--") and f"argument {last}: expected one argument" in why)
        )
        if why is not None and not reference:
            problems.append(f"{where}: {command}: {why.splitlines()[-1]}")
    assert problems == []


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("simclock run examples/pendulum.toml --lve", "simclock run: error: unrecognized "
         "arguments: --lve"),
        ("make tests", "no make target 'tests'"),
        ("python -m simclock_conformance --driver --json -- ./d", "python -m "
         "simclock_conformance: error: argument --json: expected one argument"),
        ("PYTHONPATH=tests python -m nowhere.table", "no module 'nowhere.table'"),
    ],
)  # fmt: skip
def test_commands_that_would_not_run_are_named(
    command: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (command_problem(command, monkeypatch) or "").splitlines()[-1:] == [why]
