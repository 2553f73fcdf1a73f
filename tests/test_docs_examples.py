"""Every example of README.md and docs/*.md runs and shows what it prints (tests/docs_examples.py).

One test per page: its blocks share one namespace and one directory and run
in order, as a reader would run them.
"""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest
from docs_examples import (
    DATA_LANGUAGES,
    ROOT,
    RUN_LANGUAGES,
    documents,
    fence_languages,
    make_sybil,
    output_matches,
    parse_session,
    prepare_workdir,
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
