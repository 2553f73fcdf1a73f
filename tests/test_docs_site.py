"""The documentation site as a reader gets it: built by ``mkdocs build --strict`` into a tmp dir.

The API pages render their docstrings (no Sphinx role left as text, protocols
with their methods). ``make docs`` says "open site/index.html": opened from
disk, every link must open a page (not a folder), nothing may be loaded from
the network, and search must work (checked in headless Chromium when it is
installed). No page shows an empty code box.
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
from headless_browser import chromium

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


class _Refs(HTMLParser):
    """Every ``(tag, attribute, URL)`` of a page that a browser follows or loads."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is not None and (tag, name) in _FOLLOWED:
                self.refs.append((tag, name, value))


_FOLLOWED = {("a", "href"), ("link", "href"), ("script", "src"), ("img", "src")}
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def _refs(page: Path) -> list[tuple[str, str, str]]:
    parser = _Refs()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.refs


def _pages(site: Path) -> list[Path]:
    """The pages a reader opens (404.html is for web servers, with site-root URLs)."""
    return sorted(p for p in site.rglob("*.html") if p.name != "404.html")


def test_every_internal_link_of_the_site_opens_a_file_from_disk(site: Path) -> None:
    """Opened as site/index.html, a link to a folder shows a listing, not the page."""
    broken = []
    count = 0
    for page in _pages(site):
        for tag, _, url in _refs(page):
            if _EXTERNAL.match(url):
                continue
            path = url.split("#", 1)[0].split("?", 1)[0]
            if not path:  # the page itself
                continue
            count += 1
            target = (page.parent / path).resolve()
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: <{tag}> {url}")
    assert count > 500
    assert broken == []


def test_no_page_loads_anything_from_the_network(site: Path) -> None:
    """No Google Fonts, no CDN script: the site works offline."""
    remote = [
        f"{page.relative_to(site)}: <{tag} {attr}={url}>"
        for page in _pages(site)
        for tag, attr, url in _refs(page)
        if tag != "a" and _EXTERNAL.match(url)
    ]
    assert remote == []
    assert not [p for p in _pages(site) if re.search(r"fonts\.(googleapis|gstatic)", p.read_text())]


def test_search_index_is_inlined_for_pages_opened_from_disk(site: Path) -> None:
    config = re.search(r'<script id="__config"[^>]*>(.*?)</script>', _page(site, "index"), re.S)
    assert config is not None
    worker = re.search(r'"search": "([^"]+)"', config.group(1))
    assert worker is not None and (site / worker.group(1)).is_file()
    assert (
        (site / "search" / "search_index.js")
        .read_text(encoding="utf-8")
        .startswith("var __index = {")
    )


def test_search_works_from_disk_without_network_in_chromium(site: Path) -> None:
    browser = chromium()
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=15000",
         # Every host name fails to resolve: anything loaded from the network would fail.
         "--host-resolver-rules=MAP * ~NOTFOUND",
         "--dump-dom", (site / "index.html").as_uri() + "?q=HeapSimClock"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r'class="md-search-result__meta">(\d+) matching documents<', proc.stdout)
    assert found is not None, proc.stdout[-2000:]
    assert int(found.group(1)) >= 3


def test_no_page_shows_an_empty_code_box(site: Path) -> None:
    empty = []
    for page in _pages(site):
        for code in re.findall(r"<pre[^>]*>(.*?)</pre>", page.read_text(encoding="utf-8"), re.S):
            if not _text(code).strip():
                empty.append(f"{page.relative_to(site)}: {code[:80]!r}")
    assert empty == []
