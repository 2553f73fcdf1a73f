"""The conformance matrix: many backends' JSON reports as one static HTML page.

``python -m simclock_conformance report [-o PAGE] [--label L ...] [--clause-url TEMPLATE]
REPORT.json ...`` reads reports written by ``--json`` (in process or through a driver) and
renders a table of clauses (rows) by backends (columns), one colour per status
(C-CONF-1). A cell of a failed, blocked, incomplete or not-run clause links to a block
below the table with that clause's tests, their messages and programs.

The page stands alone: every clause's title and its text from the contract are
embedded below the table (``spec_clauses.json``, shipped with the package), and a clause
id links there; with ``TEMPLATE`` (``{id}`` in it, e.g. the published docs' clause
page) it links there instead. Each column is headed by a label that tells it apart
from the others: ``--label``, or the report's backend name, with the report's file name
(then its column number) added where two reports name the same backend.

The page is one file with inline CSS and no script or network asset, so it opens from
disk, from a CI artifact or inside the docs site alike. Rendering is deterministic: the
same reports give the same bytes.
"""

from __future__ import annotations

import html
import json
import re
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from simclock_conformance.kit._harness import BackendError, BackendValueError

__all__ = ["EXAMPLE_CLAUSE_URL", "column_labels", "load_report", "render_matrix", "report_main"]

EXAMPLE_CLAUSE_URL = "https://docs.example.org/clauses/#{id}"
"""What a ``clause_url`` looks like (named in the refusal of one without ``{id}``)."""

SPEC_CLAUSES = "spec_clauses.json"
"""The clauses' texts, ``{id: text}``, as the contract (SPEC.md) states them (package data)."""

_STATUS_CLASS = {
    "passed": "pass",
    "failed": "fail",
    "blocked": "blk",
    "incomplete": "inc",
    "not applicable": "na",
    "not run": "nr",
}
_STATUS_TEXT = {
    "passed": "passed",
    "failed": "FAILED",
    "blocked": "blocked",
    "incomplete": "incomplete",
    "not applicable": "n/a",
    "not run": "not run",
}
_DETAILED = ("failed", "blocked", "incomplete", "not run")
# A failure's message and program are cut here: the page is for reading, the JSON has it all.
_TEXT_LIMIT = 4000

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#1b1b1b}
table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #bbb;padding:.25rem .45rem;text-align:center}
th.clause,td.summary{text-align:left}
th.clause{white-space:nowrap}
thead th{position:sticky;top:0;background:#f4f4f4;vertical-align:bottom}
.pass{background:#c8ecc9}.fail{background:#f6b7b2;font-weight:600}.blk{background:#f3d2c4}
.inc{background:#fde6a6}.na{background:#e4e4e4;color:#555}.nr{background:#fff}
td a{color:inherit}
.verdict{font-weight:400;font-size:.75rem;display:block}
.legend span{display:inline-block;padding:.1rem .5rem;margin-right:.4rem;border:1px solid #bbb}
section.detail,section.clause{border-top:1px solid #ccc;margin-top:1rem;padding-top:.5rem}
.backend{font-weight:400;font-size:.75rem;display:block;color:#444}
blockquote{margin:.3rem 0 .3rem 1rem;padding-left:.6rem;border-left:3px solid #ccc}
pre{background:#f7f7f7;padding:.5rem;overflow-x:auto;white-space:pre-wrap;font-size:.8rem}
""".strip()


def _fail(source: str, why: str) -> BackendValueError:
    return BackendValueError(f"{source} is not a conformance report: {why}")


def _check_report(data: object, source: str) -> dict[str, Any]:
    """``data`` if it has the shape ``BackendReport.to_json`` writes; one-line error otherwise."""
    if not isinstance(data, dict):
        raise _fail(source, f"expected a JSON object, got a JSON {type(data).__name__}")
    for key, kind in (("backend", str), ("verdict", str), ("clauses", list)):
        if not isinstance(data.get(key), kind):
            raise _fail(source, f"its {key!r} is missing or not a {kind.__name__}")
    for i, row in enumerate(data["clauses"]):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise _fail(source, f"clauses[{i}] has no string 'id'")
        if row.get("status") not in _STATUS_CLASS:
            raise _fail(
                source,
                f"clauses[{i}] ({row['id']}) has status {row.get('status')!r}; "
                f"expected one of {', '.join(_STATUS_CLASS)}",
            )
        if row["status"] == "blocked" and not isinstance(row.get("blocked_by"), str):
            raise _fail(source, f"clauses[{i}] ({row['id']}) is blocked but has no 'blocked_by'")
        if not isinstance(row.get("tests", []), list):
            raise _fail(source, f"clauses[{i}] ({row['id']}) has 'tests' that is not a list")
    return data


def load_report(path: str | Path) -> dict[str, Any]:
    """Read and check one JSON report; ``BackendValueError`` naming the file otherwise."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BackendValueError(f"report {source!r} cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise _fail(repr(source), "it is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(repr(source), f"invalid JSON at line {exc.lineno}: {exc.msg}") from None
    return _check_report(data, repr(source))


def _clause_rows(reports: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Every clause id of the reports with its summary, in the order they first appear."""
    seen: dict[str, str] = {}
    for report in reports:
        for row in report["clauses"]:
            if row["id"] not in seen or not seen[row["id"]]:
                seen[row["id"]] = str(row.get("summary", ""))
    return list(seen.items())


@cache
def spec_clauses() -> dict[str, str]:
    """``{clause id: its text in the contract}`` (markdown as SPEC writes it)."""
    text = files("simclock_conformance.report").joinpath(SPEC_CLAUSES).read_text("utf-8")
    data: dict[str, str] = json.loads(text)
    return data


_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    """SPEC's markdown text as HTML: escaped, with ``code`` spans kept as code."""
    return _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", html.escape(text, quote=False))


def column_labels(
    reports: Sequence[Mapping[str, Any]], sources: Sequence[str] | None = None
) -> list[str]:
    """A label per report that tells the columns apart.

    The report's backend name; where two reports name the same backend, the
    report's file name (``sources``) is added in parentheses, and where that
    does not tell them apart either, the column number (``#2``).
    """
    labels = [str(r["backend"]) for r in reports]
    if sources is not None:
        labels = [
            f"{label} ({Path(source).name})" if labels.count(label) > 1 else label
            for label, source in zip(labels, sources, strict=True)
        ]
    return [
        f"{label} #{i + 1}" if labels.count(label) > 1 else label for i, label in enumerate(labels)
    ]


def _check_labels(labels: Sequence[str], count: int) -> list[str]:
    """``labels`` if there is one non-empty, distinct label per report; else a clear error."""
    if isinstance(labels, str) or not all(isinstance(x, str) for x in labels):
        raise BackendValueError(f"labels must be a list of str, got {labels!r}")
    if len(labels) != count:
        raise BackendValueError(
            f"{len(labels)} label{'' if len(labels) == 1 else 's'} for {count} report"
            f"{'' if count == 1 else 's'}; give one --label per report, in the same order"
        )
    blank = [i for i, x in enumerate(labels) if not x.strip()]
    if blank:
        raise BackendValueError(f"label {blank[0] + 1} is empty; give each column a name")
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise BackendValueError(
            f"label {twice[0]!r} is given twice; labels must tell the columns apart"
        )
    return list(labels)


def _clause_texts(
    rows: Sequence[tuple[str, str]], sections: Mapping[str, str], clause_url: str | None
) -> list[str]:
    """The block below the table: each clause's id, section, title and contract text."""
    texts = spec_clauses()
    esc = html.escape
    out = ['<h2 id="clauses">Clauses</h2>']
    for clause_id, summary in rows:
        section = sections.get(clause_id, "")
        out.append(f'<section class="clause" id="{esc(_clause_anchor(clause_id))}">')
        out.append(f"<h3>{esc(clause_id)}{esc(' (' + section + ')' if section else '')}</h3>")
        if summary:
            out.append(f"<p>{esc(summary)}</p>")
        text = texts.get(clause_id)
        if text:
            out.append(f"<blockquote>{_inline(text)}</blockquote>")
        else:
            out.append("<p>(The contract states no text of its own for this row.)</p>")
        if clause_url is not None:
            href = esc(clause_url.replace("{id}", clause_id))
            out.append(f'<p><a href="{href}">in the documentation</a></p>')
        out.append('<p><a href="#matrix">back to the matrix</a></p></section>')
    return out


def _clause_anchor(clause_id: str) -> str:
    return f"clause-{clause_id}"


def _anchor(column: int, clause_id: str) -> str:
    return f"b{column}-{clause_id}"


def _clip(text: str) -> str:
    if len(text) <= _TEXT_LIMIT:
        return text
    return text[:_TEXT_LIMIT] + f"\n... ({len(text) - _TEXT_LIMIT} more characters in the JSON)"


def _status_label(row: Mapping[str, Any]) -> str:
    """``blocked by C-...`` for a blocked clause, else its status."""
    if row["status"] == "blocked":
        return f"blocked by {row['blocked_by']}"
    return str(row["status"])


def _detail(column: int, head: str, row: Mapping[str, Any]) -> list[str]:
    """The block a failed/incomplete/not-run cell links to: each test that did not pass."""
    esc = html.escape
    status = _status_label(row)
    out = [
        f'<section class="detail" id="{_anchor(column, row["id"])}">',
        f"<h3>{esc(row['id'])} {esc(status)}: {esc(head)}</h3>",
    ]
    shown = 0
    for test in row.get("tests", []):
        if not isinstance(test, dict) or test.get("outcome") == "passed":
            continue
        shown += 1
        name = esc(str(test.get("name", "?")))
        out.append(f"<p><code>{name}</code>: {esc(str(test.get('outcome', '?')))}</p>")
        message = str(test.get("message", ""))
        if message:
            out.append(f"<pre>{esc(_clip(message))}</pre>")
        failures = test.get("failures") or []
        programs = [str(f.get("program", "")) for f in failures if isinstance(f, dict)]
        if not programs and test.get("program"):
            programs = [str(test["program"])]
        for program in programs:
            if program:
                out.append(f"<p>program:</p><pre>{esc(_clip(program))}</pre>")
    if shown == 0:
        out.append("<p>No test of this clause ran in this report.</p>")
    out.append('<p><a href="#matrix">back to the matrix</a></p></section>')
    return out


def render_matrix(
    reports: Sequence[Mapping[str, Any]],
    *,
    clause_url: str | None = None,
    labels: Sequence[str] | None = None,
    title: str = "simclock conformance matrix",
) -> str:
    """The HTML page of ``reports`` (dicts as ``BackendReport.to_json`` gives them).

    Columns keep the order of ``reports``, headed by ``labels`` (default:
    `column_labels`); rows are every clause any report has, in the order they
    first appear. A clause a report does not list shows ``-``. A clause id links
    to its text embedded below the table, or to ``clause_url`` with ``{id}``
    replaced when one is given. Every text from a report is escaped.
    ``BackendValueError`` for an empty list, a report of the wrong shape, a
    ``clause_url`` without ``{id}`` or labels that are not one distinct name per report.
    """
    if not reports:
        raise BackendValueError("reports is empty; give at least one JSON report")
    if clause_url is not None and "{id}" not in clause_url:
        raise BackendValueError(
            f"clause_url {clause_url!r} has no {{id}}; e.g. {EXAMPLE_CLAUSE_URL!r}"
        )
    checked = [_check_report(r, f"reports[{i}]") for i, r in enumerate(reports)]
    heads = column_labels(checked) if labels is None else _check_labels(labels, len(checked))
    esc = html.escape
    by_column = [{row["id"]: row for row in r["clauses"]} for r in checked]
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f"<p>{len(checked)} backend{'' if len(checked) == 1 else 's'}; each cell is a "
        "clause's status in that backend's report. A coloured cell other than green links "
        "to its tests below; a clause id links to "
        + (
            "the clause's text, below the table."
            if clause_url is None
            else "the clause's entry in the documentation (its text is below the table)."
        )
        + " A blocked clause failed only through the defect of the failed clause it names, "
        "which it relies on.</p>",
        '<p class="legend">'
        + "".join(f'<span class="{_STATUS_CLASS[s]}">{s}</span>' for s in _STATUS_CLASS)
        + "</p>",
        '<table id="matrix"><thead><tr><th class="clause">clause</th><th>summary</th>',
    ]
    for r, head in zip(checked, heads, strict=True):
        profile = r.get("profile")
        tip = f"{r['backend']}" + (f" (profile {profile})" if isinstance(profile, str) else "")
        backend = (
            "" if head == r["backend"] else f'<span class="backend">{esc(r["backend"])}</span>'
        )
        out.append(
            f'<th title="{esc(tip)}">{esc(head)}{backend}'
            f'<span class="verdict">{esc(r["verdict"])}</span></th>'
        )
    out.append("</tr></thead><tbody>")
    details: list[str] = []
    clause_rows = _clause_rows(checked)
    for clause_id, summary in clause_rows:
        if clause_url is None:
            href = "#" + esc(_clause_anchor(clause_id))
        else:
            href = esc(clause_url.replace("{id}", clause_id))
        out.append(
            f'<tr><th class="clause"><a href="{href}">{esc(clause_id)}</a></th>'
            f'<td class="summary">{esc(summary)}</td>'
        )
        for column, rows in enumerate(by_column):
            row = rows.get(clause_id)
            if row is None:
                out.append('<td class="nr" title="not in this report">-</td>')
                continue
            status = row["status"]
            text = esc(_STATUS_TEXT[status])
            if status == "blocked":
                text = esc(f"blocked by {row['blocked_by']}")
            if status in _DETAILED:
                details.extend(_detail(column, heads[column], row))
                text = f'<a href="#{_anchor(column, clause_id)}">{text}</a>'
            out.append(f'<td class="{_STATUS_CLASS[status]}">{text}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    out.extend(details)
    sections = {row["id"]: str(row.get("section", "")) for r in checked for row in r["clauses"]}
    out.extend(_clause_texts(clause_rows, sections, clause_url))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def report_main(argv: Sequence[str]) -> int:
    """``report [-o PAGE] [--label L ...] [--clause-url TEMPLATE] [--title T] REPORT.json ...``.

    Exit 0, or 2 with one line on stderr.
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m simclock_conformance report",
        description="Render JSON reports (written with --json) as one static HTML page: "
        "clauses by backends, a colour per status, each failure linked to its tests.",
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT.json")
    parser.add_argument(
        "-o", "--output", default="conformance.html", metavar="PAGE", help="default: %(default)s"
    )
    parser.add_argument(
        "--label",
        action="append",
        metavar="LABEL",
        help="the heading of a column: once per report, in the reports' order (default: the "
        "report's backend name, with its file name added where two reports name the same "
        "backend)",
    )
    parser.add_argument(
        "--clause-url",
        default=None,
        metavar="TEMPLATE",
        help="link each clause id to TEMPLATE with {id} replaced by it, e.g. the published "
        "docs' clause page (default: to the clause's text, embedded in the page)",
    )
    parser.add_argument("--title", default="simclock conformance matrix")
    args = parser.parse_args(list(argv))
    try:
        reports = [load_report(p) for p in args.reports]
        labels = args.label if args.label is not None else column_labels(reports, args.reports)
        page = render_matrix(reports, clause_url=args.clause_url, labels=labels, title=args.title)
        Path(args.output).write_text(page, encoding="utf-8")
    except BackendError as exc:
        print(f"python -m simclock_conformance report: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"python -m simclock_conformance report: error: --output {args.output!r} "
            f"cannot be written ({exc.strerror})",
            file=sys.stderr,
        )
        return 2
    count = len(args.reports)
    print(f"wrote {args.output}: {count} backend{'' if count == 1 else 's'}")
    return 0
