"""The wire commands of ``python -m simclock_conformance`` (SPEC §18).

- ``--driver [--json REPORT] [--profile P] [--clause ID] [--no-vectors] [--no-shrink]
  [--require FEATURE] [--request-timeout S] -- CMD ARG...``:
  the wire profile on a driver (C-WIRE-6); exit codes as for a Python backend
  (0 CONFORMING (wire profile 1), 1 NOT CONFORMING, 2 usage, 3 PARTIAL, 4 INCOMPLETE);
- ``serve MODULE:FACTORY``: a Python backend as a driver (C-WIRE-8);
- ``vectors [--expected-failures FILE] [--require FEATURE] --driver -- CMD ARG...``:
  replay the golden vectors (C-WIRE-7); exit 0 when every vector passes but the expected
  failures, 1 otherwise (an expected failure that passes is reported and counts).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from simclock_conformance.kit._harness import BackendError, check_report_path
from simclock_conformance.kit._options import PROFILES
from simclock_conformance.protocol._backends import FEATURES
from simclock_conformance.protocol._driver import DEFAULT_DEADLINE_S

__all__ = ["wire_main"]

_EXIT = {"CONFORMING": 0, "NOT CONFORMING": 1, "PARTIAL": 3, "INCOMPLETE": 4}
_PROG = "python -m simclock_conformance"


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" not in argv:
        return argv, []
    i = argv.index("--")
    return argv[:i], argv[i + 1 :]


def _read_expected(path: str | None) -> list[str]:
    if path is None:
        return []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BackendError(
            f"--expected-failures {path!r} cannot be read ({exc.strerror})"
        ) from None
    return [
        line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()
    ]


def wire_main(argv: Sequence[str]) -> int:
    """Dispatch ``serve``, ``vectors`` and ``--driver``; usage errors are exit 2, one line."""
    args = list(argv)
    try:
        if args and args[0] == "serve":
            if len(args) != 2:
                raise BackendError("usage: python -m simclock_conformance serve MODULE:FACTORY")
            from simclock_conformance.kit._check import check_factory
            from simclock_conformance.kit._harness import load_factory
            from simclock_conformance.protocol._serve import serve

            check_factory(load_factory(args[1]), args[1])
            return serve(args[1])
        if args and args[0] == "vectors":
            return _vectors(args[1:])
        return _driver(args)
    except BackendError as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return 2


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--driver", action="store_true", help="the backend is the command after --")
    parser.add_argument(
        "--request-timeout",
        type=float,
        default=DEFAULT_DEADLINE_S,
        metavar="SECONDS",
        help="deadline of each request (default 10)",
    )
    parser.add_argument(
        "--require",
        action="append",
        default=[],
        choices=FEATURES,
        metavar="FEATURE",
        help="a feature the driver must offer (repeatable; one of "
        f"{', '.join(FEATURES)}): without it, the programs and vectors that need it fail "
        "instead of being not applicable",
    )
    return parser


def _command(rest: list[str]) -> list[str]:
    if not rest:
        raise BackendError("name the driver after --, e.g. --driver -- ./my_driver --flag")
    return rest


def _driver(argv: list[str]) -> int:
    mine, rest = _split(argv)
    parser = _parser(_PROG)
    parser.add_argument("--json", metavar="REPORT")
    parser.add_argument("--profile", choices=PROFILES, default="ci")
    parser.add_argument("--clause", action="append", default=[], metavar="ID")
    parser.add_argument("--no-vectors", action="store_true", help="skip the golden vectors")
    parser.add_argument(
        "--no-shrink",
        action="store_true",
        help="report a state machine failure with its first failing program, not its "
        "minimal one (the same verdict, sooner: every shrinking step is a round trip "
        "to the driver)",
    )
    args = parser.parse_args(mine)
    command = _command(rest)
    if args.json:
        check_report_path(args.json, "--json")
    from simclock_conformance.clauses._clauses import CLAUSES
    from simclock_conformance.entry._wire_run import WIRE_CLAUSES, run_driver, write_json

    unknown = [c for c in args.clause if c not in WIRE_CLAUSES]
    if unknown:
        raise BackendError(
            f"unknown wire-profile clause ids {unknown}; known: {', '.join(WIRE_CLAUSES)}"
        )
    del CLAUSES
    report = run_driver(
        command,
        profile=args.profile,
        clauses=args.clause,
        deadline_s=args.request_timeout,
        vectors=not args.no_vectors,
        shrink=not args.no_shrink,
        required=args.require,
    )
    report.json_path = args.json or ""
    print(report.table())
    if args.json:
        write_json(report, args.json)
    return _EXIT[report.verdict.split(" (", 1)[0]]


def _vectors(argv: list[str]) -> int:
    mine, rest = _split(argv)
    parser = _parser(f"{_PROG} vectors")
    parser.add_argument("--expected-failures", metavar="FILE")
    parser.add_argument("--json", metavar="REPORT")
    args = parser.parse_args(mine)
    command = _command(rest)
    expected = set(_read_expected(args.expected_failures))
    from simclock_conformance.entry._vectors import load, replay
    from simclock_conformance.protocol._driver import DriverError
    from simclock_conformance.protocol._wire_core import Session

    session = Session(command, args.request_timeout)
    try:
        session.start()
    except DriverError as failure:
        print(f"golden vectors: the driver failed at hello: {failure}")
        return 1
    lines = load()
    passed, failed = replay(session, lines, args.require)
    session.close()
    unexpected = {k: v for k, v in failed.items() if k not in expected}
    xpass = sorted(k for k in passed if k in expected)
    print(
        f"golden vectors: {len(passed)} passed, {len(failed)} failed "
        f"({len(failed) - len(unexpected)} expected), {len(lines) - len(passed) - len(failed)} "
        f"not applicable (features {', '.join(session.features) or 'none'})"
    )
    for case_id, why in unexpected.items():
        print(f"FAILED {case_id}: {why}")
    for case_id in xpass:
        print(f"PASSED but listed as an expected failure: {case_id}; remove it from the file")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"passed": passed, "failed": failed, "xpass": xpass}, indent=2) + "\n",
            encoding="utf-8",
        )
    return 1 if unexpected or xpass else 0
