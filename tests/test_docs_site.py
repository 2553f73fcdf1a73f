"""The documentation site as a reader gets it: built by ``mkdocs build --strict`` into a tmp dir.

The API page renders its docstrings (no Sphinx role left as text, protocols with
their methods).
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mkdocs", reason="mkdocs not installed (the dev extra has it)")

# What Sphinx would have rendered and Markdown shows as text: a role, a `\ ` escape.
_SPHINX = re.compile(r":(?:py:)?(?:class|func|meth|data|attr|exc|mod|obj|const):|\\ ")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for this module from the tree under test."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
         "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _page(site: Path, name: str) -> str:
    """The built page of ``docs/NAME.md`` (whether or not URLs are directories)."""
    for path in (site / f"{name}.html", site / name / "index.html"):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise AssertionError(f"no built page for {name}.md in {sorted(os.listdir(site))}")


class _Text(HTMLParser):
    """The text a reader sees (scripts and styles left out)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _text(page: str) -> str:
    parser = _Text()
    parser.feed(page)
    return html.unescape("".join(parser.parts))


@pytest.mark.parametrize("name", ["api", "public-api"])
def test_api_pages_show_no_sphinx_roles(site: Path, name: str) -> None:
    text = _text(_page(site, name))
    shown = [text[max(0, m.start() - 40) : m.end() + 30] for m in _SPHINX.finditer(text)]
    assert shown == []


def test_api_page_cross_references_resolve_to_its_own_anchors(site: Path) -> None:
    page = _page(site, "api")
    anchors = set(re.findall(r'\bid="([^"]+)"', page))
    targets = re.findall(r'<a class="autorefs autorefs-internal"[^>]*href="[^"#]*#([^"]+)"', page)
    assert len(targets) >= 40
    assert sorted(set(targets) - anchors) == []


@pytest.mark.parametrize(
    ("protocol", "methods"),
    [
        ("SimClock", ["now_ns", "step_ns", "advance", "schedule", "schedule_periodic",
                      "random_source"]),
        ("SystemClock", ["now_ns", "random_source"]),
        ("RandomSource", ["seed", "label", "child", "uniform", "normal", "integers",
                          "numpy_rng"]),
    ],
)  # fmt: skip
def test_api_page_lists_every_method_of_the_protocols(
    site: Path, protocol: str, methods: list[str]
) -> None:
    page = _page(site, "api")
    listed = re.findall(rf'\bid="simclock\.{protocol}\.(\w+)"', page)
    assert listed == methods
