"""The conformance matrix: many JSON reports as one HTML page (SPEC §14, C-CONF-1).

``python -m simclock_conformance report REPORT.json ... -o PAGE`` renders clauses by
backends with one colour per status; a failed, incomplete or not-run cell links to its
tests, a clause id to the clause table of the docs site. The committed page of the docs
site must be the rendering of the committed reports, and it is loaded in a real
headless browser, where every link must resolve.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

import pytest
from backends.matrix import (
    CLAUSES_DOC,
    MATRIX,
    SPEC_CLAUSES,
    clause_table,
    render_committed,
    spec_clause_texts,
)
from headless_browser import chromium

from simclock_conformance import BackendReport, BackendValueError, Outcome
from simclock_conformance.report._html import load_report, render_matrix, spec_clauses

ROOT = Path(__file__).resolve().parent.parent


def _report(backend: str, outcomes: dict[str, list[Outcome]], label: str = "") -> dict[str, Any]:
    report = BackendReport(backend, clause_set=list(outcomes), label=label)
    for clause, tests in outcomes.items():
        for test in tests:
            report.expect(clause, test.name.split("[", 1)[0])
            report.add(clause, test)
    data: dict[str, Any] = report.to_json()
    return data


def _ok(name: str) -> Outcome:
    return Outcome(name, "passed")


GOOD = _report(
    "good clock",
    {
        "C-TIE-1": [_ok("test_C_TIE_1_fifo")],
        "C-X-PEEK": [Outcome("test_C_X_PEEK_next", "not applicable", "no next_event_ns")],
    },
)
BAD = _report(
    "bad <clock>",
    {
        "C-TIE-1": [
            _ok("test_C_TIE_1_a"),
            Outcome(
                "test_C_TIE_1_fifo",
                "failed",
                "C-TIE-1: expected [a, b]; observed [b, a] <lifo>",
                program="schedule(5, a)\nschedule(5, b)\nadvance(5)",
            ),
        ],
        "C-ADV-1": [Outcome("test_C_ADV_1_order", "skipped", "skipped: no time")],
    },
)


class _Page(HTMLParser):
    """The cells of the matrix and every link and id of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[tuple[str, str, str]]] = []  # (class, text, href) per cell
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.scripts = 0
        self._cell: list[str] | None = None
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "script":
            self.scripts += 1
        if tag == "tbody":
            self._in_body = True
        if tag == "a" and a.get("href") is not None:
            self.links.append(str(a["href"]))
            if self._cell is not None:
                self._cell[2] = str(a["href"])
        if self._in_body and tag == "tr":
            self.rows.append([])
        if self._in_body and tag in ("td", "th"):
            self._cell = [a.get("class") or "", "", ""]

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[1] += data

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append((self._cell[0], self._cell[1], self._cell[2]))
            self._cell = None
        if tag == "tbody":
            self._in_body = False


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


def test_C_CONF_1_matrix_cells_have_their_status_class_and_links() -> None:
    page = _parse(render_matrix([GOOD, BAD], clause_url="docs/{id}.html"))
    assert page.rows == [
        [
            ("clause", "C-TIE-1", "docs/C-TIE-1.html"),
            ("summary", "equal at_ns fire in push order (FIFO)", ""),
            ("pass", "passed", ""),
            ("fail", "FAILED", "#b1-C-TIE-1"),
        ],
        [
            ("clause", "C-X-PEEK", "docs/C-X-PEEK.html"),
            ("summary", "next_event_ns() is the earliest live entry or None", ""),
            ("na", "n/a", ""),
            ("nr", "-", ""),
        ],
        [
            ("clause", "C-ADV-1", "docs/C-ADV-1.html"),
            ("summary", "advance fires due entries in (at_ns, seq) order, then now = target", ""),
            ("nr", "-", ""),
            ("inc", "incomplete", "#b1-C-ADV-1"),
        ],
    ]
    # Every in-page link has its target, and the failure block shows the test and program.
    assert {h[1:] for h in page.links if h.startswith("#")} <= page.ids
    text = render_matrix([GOOD, BAD])
    block = text[text.index('id="b1-C-TIE-1"') :]
    assert "<code>test_C_TIE_1_fifo</code>: failed" in block
    assert "observed [b, a] &lt;lifo&gt;" in block
    assert "schedule(5, a)\nschedule(5, b)\nadvance(5)" in block
    assert "test_C_TIE_1_a" not in block  # passed tests are not listed


def test_C_CONF_1_matrix_escapes_every_report_text_and_has_no_script() -> None:
    hostile = _report(
        '<script>alert("x")</script>',
        {"C-TIE-1": [Outcome("test_C_TIE_1_x", "failed", '<img src=x onerror="y">')]},
    )
    text = render_matrix([hostile])
    assert "<script>" not in text and "<img" not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in text
    assert _parse(text).scripts == 0
    assert "http://" not in text and "https://" not in text  # nothing from the network


def test_C_CONF_1_matrix_rendering_is_deterministic() -> None:
    assert render_matrix([GOOD, BAD]) == render_matrix([json.loads(json.dumps(GOOD)), BAD])


@pytest.mark.parametrize(
    ("reports", "kwargs", "message"),
    [
        ([], {}, r"^reports is empty; give at least one JSON report$"),
        (
            [GOOD],
            {"clause_url": "docs.html"},
            r"^clause_url 'docs.html' has no \{id\}; e.g. "
            r"'https://docs.example.org/clauses/#\{id\}'$",
        ),
        (
            [{"backend": "x", "clauses": []}],
            {},
            r"^reports\[0\] is not a conformance report: its 'verdict' is missing or not a str$",
        ),
        (
            [GOOD, {**GOOD, "clauses": [{"id": "C-TIE-1", "status": "great"}]}],
            {},
            r"^reports\[1\] is not a conformance report: clauses\[0\] \(C-TIE-1\) has status "
            r"'great'; expected one of passed, failed, blocked, incomplete, not applicable, "
            r"not run$",
        ),
        ([[1]], {}, r"^reports\[0\] is not a conformance report: expected a JSON object, got a "
         r"JSON list$"),
    ],
)  # fmt: skip
def test_C_CONF_1_matrix_refuses_what_is_not_a_report(
    reports: list[Any], kwargs: dict[str, str], message: str
) -> None:
    with pytest.raises(BackendValueError, match=message):
        render_matrix(reports, **kwargs)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "simclock_conformance", "report", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=120,
    )


def test_C_CONF_1_report_command_writes_the_page(tmp_path: Path) -> None:
    (tmp_path / "good.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "bad.json").write_text(json.dumps(BAD), encoding="utf-8")
    proc = _cli("good.json", "bad.json", "-o", "m.html", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "wrote m.html: 2 backends\n", "")
    assert (tmp_path / "m.html").read_text(encoding="utf-8") == render_matrix([GOOD, BAD])


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (None, "report 'r.json' cannot be read (No such file or directory)"),
        ("{", "'r.json' is not a conformance report: invalid JSON at line 1: "
         "Expecting property name enclosed in double quotes"),
        ('{"backend": 1}', "'r.json' is not a conformance report: its 'backend' is missing or "
         "not a str"),
    ],
)  # fmt: skip
def test_C_CONF_1_report_command_refuses_a_bad_report_and_writes_nothing(
    tmp_path: Path, content: str | None, why: str
) -> None:
    if content is not None:
        (tmp_path / "r.json").write_text(content, encoding="utf-8")
    proc = _cli("r.json", "-o", "m.html", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"python -m simclock_conformance report: error: {why}\n"
    assert not (tmp_path / "m.html").exists()


def test_load_report_names_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(BackendValueError, match=r"^'.*r.json' is not a conformance report: it "
                       r"is not UTF-8 text$"):  # fmt: skip
        load_report(path)


def test_the_committed_pages_are_generated() -> None:
    """docs/clauses.md and docs/conformance-matrix.html are what their generators give."""
    assert CLAUSES_DOC.read_text(encoding="utf-8") == clause_table()
    assert MATRIX.read_text(encoding="utf-8") == render_committed()
    assert SPEC_CLAUSES.read_text(encoding="utf-8") == spec_clause_texts()


def _ids(path: Path) -> set[str]:
    return _parse(path.read_text(encoding="utf-8")).ids


def test_C_CONF_1_matrix_page_loads_in_a_browser_and_every_link_resolves(tmp_path: Path) -> None:
    """Build the docs site, load the matrix in headless Chromium, resolve every link."""
    browser = chromium()
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--quiet", "-d", str(site)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    page = site / MATRIX.name
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = _parse(proc.stdout)
    # The page the browser built has the whole matrix: a row per clause of the reports.
    assert len(dom.rows) == len(_parse(page.read_text(encoding="utf-8")).rows) > 30
    targets: dict[Path, set[str]] = {}
    missing = []
    for href in dom.links:
        url, fragment = urldefrag(href)
        target = page if not url else (page.parent / url).resolve()
        if not target.is_file():
            missing.append(href)
            continue
        ids = dom.ids if target == page else targets.setdefault(target, _ids(target))
        if fragment and fragment not in ids:
            missing.append(href)
    assert missing == []
    assert len(dom.links) > 30


def test_C_CONF_1_a_page_stands_alone_with_every_clause_text_embedded(tmp_path: Path) -> None:
    """Rendered outside the docs site, every link of the page resolves in the page itself:
    a clause id to its title and contract text, a cell to its tests."""
    page = _parse(render_matrix([GOOD, BAD]))
    assert [row[0] for row in page.rows] == [
        ("clause", "C-TIE-1", "#clause-C-TIE-1"),
        ("clause", "C-X-PEEK", "#clause-C-X-PEEK"),
        ("clause", "C-ADV-1", "#clause-C-ADV-1"),
    ]
    assert all(link.startswith("#") for link in page.links), page.links
    assert {link[1:] for link in page.links} <= page.ids
    text = render_matrix([GOOD, BAD])
    block = text[text.index('id="clause-C-TIE-1"') :].split("</section>")[0]
    spec = (ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8")
    assert "C-TIE-1 equal `at_ns` fire in push order (FIFO)" in spec
    assert "<h3>C-TIE-1 (§1)</h3>" in block
    assert "<p>equal at_ns fire in push order (FIFO)</p>" in block
    assert "<blockquote>equal <code>at_ns</code> fire in push order (FIFO)" in block
    assert spec_clauses()["C-TIE-1"].startswith("equal `at_ns` fire in push order (FIFO)")
    # With a base URL, clause ids link to the published page (texts still below).
    linked = _parse(render_matrix([GOOD], clause_url="https://docs.example.org/c/#{id}"))
    assert linked.rows[0][0] == ("clause", "C-TIE-1", "https://docs.example.org/c/#C-TIE-1")


def _headers(text: str) -> list[str]:
    head = text[text.index("<thead>") : text.index("</thead>")]
    return [h.split("<span")[0] for h in head.split("<th title=")[1:]]


def test_C_CONF_1_columns_of_the_same_backend_are_labelled_apart(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "c.json").write_text(json.dumps(BAD), encoding="utf-8")
    proc = _cli("a.json", "b.json", "c.json", "-o", "m.html", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "wrote m.html: 3 backends\n", "")
    assert _headers((tmp_path / "m.html").read_text(encoding="utf-8")) == [
        '"good clock (profile ci)">good clock (a.json)',
        '"good clock (profile ci)">good clock (b.json)',
        '"bad &lt;clock&gt; (profile ci)">bad &lt;clock&gt;',
    ]
    # The same file twice: the column number tells them apart.
    assert _headers(render_matrix([GOOD, GOOD])) == [
        '"good clock (profile ci)">good clock #1',
        '"good clock (profile ci)">good clock #2',
    ]
    proc = _cli(
        "a.json", "b.json", "--label", "main", "--label", "branch", "-o", "l.html", cwd=tmp_path
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    page = (tmp_path / "l.html").read_text(encoding="utf-8")
    assert _headers(page) == [
        '"good clock (profile ci)">main',
        '"good clock (profile ci)">branch',
    ]
    assert page.count('<span class="backend">good clock</span>') == 2


@pytest.mark.parametrize(
    ("labels", "why"),
    [
        (["one"], "1 label for 2 reports; give one --label per report, in the same order"),
        (["x", "x"], "label 'x' is given twice; labels must tell the columns apart"),
        (["x", " "], "label 2 is empty; give each column a name"),
    ],
)
def test_C_CONF_1_report_command_refuses_labels_that_do_not_name_each_column(
    tmp_path: Path, labels: list[str], why: str
) -> None:
    (tmp_path / "a.json").write_text(json.dumps(GOOD), encoding="utf-8")
    words = [w for label in labels for w in ("--label", label)]
    proc = _cli("a.json", "a.json", *words, "-o", "m.html", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"python -m simclock_conformance report: error: {why}\n"
    assert not (tmp_path / "m.html").exists()


def test_C_CONF_1_a_page_made_by_the_report_command_stands_alone_in_a_browser(
    tmp_path: Path,
) -> None:
    """``report a.json b.json -o m.html`` in a directory of its own, loaded in headless
    Chromium: every link resolves inside the page, and every clause text is on it."""
    browser = chromium()
    (tmp_path / "a.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(BAD), encoding="utf-8")
    proc = _cli("a.json", "b.json", "-o", "m.html", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = tmp_path / "m.html"
    shown = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr[-2000:]
    dom = _parse(shown.stdout)
    assert len(dom.rows) == 3
    assert dom.links and all(link.startswith("#") for link in dom.links)
    assert {link[1:] for link in dom.links} <= dom.ids
    assert {"clause-C-TIE-1", "clause-C-X-PEEK", "clause-C-ADV-1"} <= dom.ids
    assert "fire in push order (FIFO), never by callback, name or identity." in shown.stdout
