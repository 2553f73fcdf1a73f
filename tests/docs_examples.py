"""Run the examples of README.md and docs/*.md (Sybil): the machinery of test_docs_examples.py.

What runs, in document order, in one fresh directory per document (a copy of
``examples/`` in it, so the commands read as they do in a clone):

* ```` ```python ```` blocks: executed in-process (a block starting with
  ``>>>`` is a doctest, its shown output compared with ``...`` as a wildcard);
* ```` ```console ```` (or ``bash``/``sh``) blocks: shell sessions. Each line
  starting with ``$ `` is a command (continued by a trailing ``\\`` or a line
  starting with ``> ``); the lines after it, up to the next ``$ ``, are its
  output (stdout and stderr together, as in a terminal) and are compared when
  shown; a line ``...`` matches any number of lines, ``...`` inside a line any
  text. A command must exit 0 (show a non-zero status with ``; echo "exit $?"``);
* a block with ``title="PATH"`` (```` ```toml title="grid.toml" ````): its text is
  written to PATH, so the commands after it read it; it is not executed;
* ``text``, ``toml``, ``yaml``, ``json`` blocks are data and only shown.

``<!-- skip: next "why" -->`` before a block skips it, with the reason.
Commands run with the interpreter running the tests first on ``PATH`` and the
tree under test first on ``PYTHONPATH``; the console scripts (``simclock``,
``simclock-lint``) are shims that run this tree's entry points, as pyproject's
``[project.scripts]`` names them, whatever else is installed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from doctest import ELLIPSIS, NORMALIZE_WHITESPACE
from pathlib import Path

from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

ROOT = Path(__file__).resolve().parents[1]
SHELL_LANGUAGES = frozenset({"console", "bash", "sh", "shell"})
DATA_LANGUAGES = frozenset({"text", "toml", "yaml", "json", "ini"})
RUN_LANGUAGES = frozenset({"python"}) | SHELL_LANGUAGES
COMMAND_TIMEOUT_S = 300

_TITLE = re.compile(r'title="([^"]+)"')
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")


def documents() -> list[Path]:
    """README.md and every page of docs/ but the contract (SPEC.md has no examples to run)."""
    pages = sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "SPEC.md")
    return [ROOT / "README.md", *pages]


def fence_languages(text: str) -> Iterator[tuple[int, str]]:
    """``(line, info)`` of every opening fence of ``text`` (1-based line)."""
    open_fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(line)
        if match is None:
            continue
        fence, info = match.group(1), match.group(2).strip()
        if open_fence is None:
            open_fence = fence
            yield number, info
        elif fence[0] == open_fence[0] and len(fence) >= len(open_fence) and not info:
            open_fence = None


# -- shell sessions ---------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """One ``$ `` command of a session and the output shown after it."""

    text: str
    expected: tuple[str, ...]
    line: int


def parse_session(source: str, first_line: int) -> list[Command]:
    """The commands of a console block; ``ValueError`` when it has none (a script is no session)."""
    commands: list[Command] = []
    text: list[str] = []
    expected: list[str] = []
    start = 0

    def flush() -> None:
        if text:
            commands.append(Command("\n".join(text), tuple(expected), start))

    for offset, line in enumerate(source.splitlines()):
        continued = bool(text) and not expected and (text[-1].endswith("\\"))
        if line.startswith("$ ") or line == "$":
            flush()
            text, expected, start = [line[2:]], [], first_line + offset
        elif text and not expected and line.startswith("> "):
            text.append(line[2:])
        elif continued:
            text.append(line)
        elif text:
            expected.append(line)
        elif line.strip():
            raise ValueError(
                f"line {first_line + offset}: output before any '$ ' command: {line!r}"
            )
    flush()
    if not commands:
        raise ValueError(f"line {first_line}: a shell block needs '$ ' prompts before commands")
    return commands


def _output_pattern(expected: Iterable[str]) -> re.Pattern[str]:
    pieces = []
    for line in expected:
        if line.strip() == "...":
            pieces.append(r"(?:[^\n]*\n)*?")
        else:
            escaped = re.escape(line.rstrip()).replace(re.escape("..."), ".*?")
            pieces.append(escaped + r"\n")
    return re.compile("".join(pieces))


def _normalise(output: str) -> str:
    lines = [line.rstrip() for line in output.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "".join(line + "\n" for line in lines)


def output_matches(expected: Iterable[str], actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows (``...`` wildcards, trailing blanks aside)."""
    shown = list(expected)
    while shown and not shown[-1].strip():
        shown.pop()
    return _output_pattern(shown).fullmatch(_normalise(actual)) is not None


def _shims(directory: Path) -> None:
    """One script per console script of pyproject, running this tree's entry point."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "scripts"
    ]
    directory.mkdir(parents=True, exist_ok=True)
    for name, target in scripts.items():
        module, _, func = target.partition(":")
        code = f"import sys; sys.argv[0] = {name!r}; from {module} import {func} as main; "
        code += "sys.exit(main())"
        script = directory / name
        script.write_text(
            f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -c {shlex.quote(code)} "$@"\n',
            encoding="utf-8",
        )
        script.chmod(0o755)


def shell_environment(workdir: Path) -> dict[str, str]:
    """The environment of a session: this tree first, its console scripts, quiet terminals."""
    shim_dir = workdir / ".bin"
    _shims(shim_dir)
    env = dict(os.environ)
    paths = [str(ROOT), *(str(ROOT / d) for d in ("conformance", "lint", "oracles"))]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PATH"] = os.pathsep.join(
        [str(shim_dir), str(Path(sys.executable).parent), env.get("PATH", "")]
    )
    # Unbuffered: stdout and stderr interleave in the order written, as on a terminal.
    env.update({"COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb", "PYTHONUNBUFFERED": "1"})
    # Every installed pytest plugin autoloads into the pages' pytest runs, looptime's
    # included (a dev dependency that fails fixtures without pytest-asyncio), as in a
    # user's environment: the suite's pytest routes must work beside them.
    # A reader has a git identity; pre-commit keeps its store out of the home directory.
    env.update(
        {
            "GIT_AUTHOR_NAME": "Docs Reader",
            "GIT_AUTHOR_EMAIL": "reader@example.com",
            "GIT_COMMITTER_NAME": "Docs Reader",
            "GIT_COMMITTER_EMAIL": "reader@example.com",
            "PRE_COMMIT_HOME": str(workdir / ".pre-commit-home"),
        }
    )
    env.pop("FORCE_COLOR", None)
    return env


def evaluate_session(example: Example) -> str | None:
    """Run each command of the block in the document's directory; compare shown output."""
    workdir: Path = example.namespace["workdir"]
    env: dict[str, str] = example.namespace["shell_env"]
    for command in example.parsed:
        try:
            done = subprocess.run(
                ["bash", "-c", command.text],
                cwd=workdir,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=COMMAND_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"line {command.line}: `{command.text}` ran longer than {COMMAND_TIMEOUT_S} s"
        where = f"line {command.line}: `{command.text}`"
        if done.returncode != 0:
            hint = '(show a non-zero status with `; echo "exit $?"`)'
            return f"{where} exited {done.returncode} {hint}:\n{done.stdout}"
        if command.expected and not output_matches(command.expected, done.stdout):
            shown = "\n".join(command.expected)
            return f"{where}: output differs\n--- shown\n{shown}\n--- actual\n{done.stdout}"
    return None


def write_file(example: Example) -> None:
    """A ``title="PATH"`` block: write its text to PATH in the document's directory."""
    title, text = example.parsed
    path: Path = example.namespace["workdir"] / title
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


class BlockParser:
    """Shell sessions and titled file blocks (Python blocks are Sybil's own parser)."""

    def __init__(self) -> None:
        self.lexer = FencedCodeBlockLexer(
            language=r".+", mapping={"language": "info", "source": "source"}
        )

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in self.lexer(document):
            info = str(region.lexemes["info"]).strip()
            language = info.split()[0] if info else ""
            title = _TITLE.search(info)
            source = region.lexemes["source"]
            line = document.text.count("\n", 0, region.start) + 2
            if title is not None:
                region.parsed = (title.group(1), str(source))
                region.evaluator = write_file
            elif language in SHELL_LANGUAGES:
                region.parsed = parse_session(str(source), line)
                region.evaluator = evaluate_session
            else:
                continue
            yield region


def make_sybil() -> Sybil:
    """The parsers of every page, in one Sybil."""
    return Sybil(
        parsers=[
            PythonCodeBlockParser(doctest_optionflags=ELLIPSIS | NORMALIZE_WHITESPACE),
            BlockParser(),
            SkipParser(),
        ],
        path=str(ROOT),
        patterns=["*.md"],
    )


def prepare_workdir(workdir: Path) -> dict[str, str]:
    """A fresh directory as a clone would have it (``examples/``); returns the session env."""
    shutil.copytree(ROOT / "examples", workdir / "examples")
    return shell_environment(workdir)


# -- commands the pages show but the runner cannot execute here ---------------------------
#
# Install lines (``pip install``) change the environment and fetch dependencies: they are
# checked here against pyproject's extras and the forms pip accepts for a project no index
# has (a clone's path, a wheel's file, a ``file://`` URL), and executed with ``pip install
# --dry-run`` in a fresh environment by tests/test_install.py. The other commands of blocks
# marked ``skip`` and of ``text`` blocks are checked against the parser of the command
# they call (``simclock``'s, ``python -m simclock_conformance``'s, the Makefile's targets).

CLONE_PLACEHOLDERS = ("/path/to/simclock", "/home/me/simclock")
"""How the pages write the path of the user's clone."""

_SPAN = re.compile(r"`(pip install [^`]+)`")
_CONSOLE_INSTALL = re.compile(r"^\$ (pip install .*?)(?:\s+#.*)?$", re.M)
_MESSAGE_INSTALL = re.compile(r"install it with: (pip install .+)$", re.M)


def install_commands() -> list[tuple[str, str]]:
    """``(where, command)`` of every ``pip install`` the pages show, in page order."""
    found: list[tuple[str, str]] = []
    for page in documents():
        text = page.read_text(encoding="utf-8")
        hits: list[tuple[int, str]] = []
        for pattern in (_SPAN, _CONSOLE_INSTALL, _MESSAGE_INSTALL):
            hits.extend((m.start(), " ".join(m.group(1).split())) for m in pattern.finditer(text))
        for start, command in sorted(hits):
            found.append((f"{page.name}:{text.count(chr(10), 0, start) + 1}", command))
    return found


def extras() -> set[str]:
    """The extras pyproject declares."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return set(project["optional-dependencies"])


def install_problem(command: str) -> str | None:
    """Why ``command`` cannot work as written for simclock, or None.

    No package index has simclock: each requirement must be a clone's path (``PATH`` or
    ``"PATH[extra,...]"``), a wheel file (``.../simclock-*.whl``, with extras too) or
    ``"simclock[extra] @ file://..."``; every extra named must be one pyproject declares.
    """
    from packaging.requirements import InvalidRequirement, Requirement

    words = shlex.split(command)
    if words[:2] != ["pip", "install"] or len(words) < 3:
        return "not a pip install of a requirement"
    known = extras()
    for word in words[2:]:
        if word.startswith("-"):
            return f"option {word!r}: the pages install with plain requirements"
        if " @ " in word:
            try:
                requirement = Requirement(word)
            except InvalidRequirement as exc:
                return f"{word!r} is not a requirement pip reads: {exc}"
            if requirement.name != "simclock" or not str(requirement.url).startswith("file://"):
                return f"{word!r}: only simclock from a file:// URL installs without an index"
            named = set(requirement.extras)
        else:
            path, _, rest = word.partition("[")
            named = set(filter(None, rest.rstrip("]").split(","))) if rest else set()
            if rest and not rest.endswith("]"):
                return f"{word!r}: unclosed extras"
            if not path.startswith(("/", "./", "../")):
                return f"{word!r} needs a package index, and no index has simclock"
            clone = next((c for c in CLONE_PLACEHOLDERS if path.startswith(c)), None)
            if clone is None:
                return f"{word!r}: write the clone as one of {CLONE_PLACEHOLDERS}"
            inside = path[len(clone) :]
            if inside not in ("", "/") and not re.fullmatch(
                r"/dist/simclock-(\*|[0-9][\w.]*-py3-none-any)\.whl", inside
            ):
                return f"{word!r}: neither the clone nor a wheel in its dist/"
        unknown = sorted(named - known)
        if unknown:
            return f"{word!r} names extras pyproject does not declare: {unknown}"
    return None


def _skip_marked(text: str, start: int) -> bool:
    before = text[:start].rstrip().splitlines()
    return bool(before) and before[-1].startswith("<!-- skip:")


def unexecuted_commands() -> list[tuple[str, str]]:
    """``(where, command)`` of each command line of a ``skip`` console block or a text block.

    Console blocks give their ``$ `` lines; text blocks the lines that start with a
    command of the project (``simclock``, ``python -m ...``, ``make``). Comments after
    ``#`` and lines showing output (``...: error: ...``) are left out.
    """
    starts = ("simclock ", "python ", "make ", "PYTHONPATH=", ".venv/bin/")
    found: list[tuple[str, str]] = []
    for page in documents():
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r"^```(\w+)[^\n]*\n(.*?)^```", text, re.S | re.M):
            language, body = match.group(1), match.group(2)
            if language in SHELL_LANGUAGES and not _skip_marked(text, match.start()):
                continue  # executed by test_every_example_of_the_page_runs
            if language not in SHELL_LANGUAGES and language != "text":
                continue
            line_no = text.count("\n", 0, match.start()) + 2
            for offset, shown in enumerate(body.splitlines()):
                if language in SHELL_LANGUAGES:
                    if not shown.startswith("$ "):
                        continue
                    line = shown[2:]
                elif not shown.startswith(starts) or ": error:" in shown:
                    continue
                else:
                    line = shown
                command = re.sub(r"\s+#.*$", "", line).strip()
                if command:
                    found.append((f"{page.name}:{line_no + offset}", command))
    return found


_INLINE = re.compile(r"`((?:simclock|python -m simclock\w*|make|PYTHONPATH=\S+ python) [^`]+)`")


def inline_commands() -> list[tuple[str, str]]:
    """``(where, command)`` of each inline code span of the pages that is a project command.

    Spans with a placeholder (a word in capitals, ``[...]``, ``...``, ``<...>``), a pipe
    or shown output are synopses, not commands, and are left out.
    """
    found: list[tuple[str, str]] = []
    for page in documents():
        text = page.read_text(encoding="utf-8")
        for match in _INLINE.finditer(text):
            command = " ".join(match.group(1).split())
            if any(mark in command for mark in ("[", "...", "|", "<", ": error")):
                continue
            if re.search(r"(?<![\w-])[A-Z]+(?![\w-])", command):
                continue
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{page.name}:{line}", command))
    return found
