"""SCK301: wall-clock read in simulation code.

What it does:
    Flags calls of, and references to, functions that read or wait on the
    host's clocks: ``time.time``, ``time.monotonic``, ``time.perf_counter``
    (and their ``_ns`` forms), ``time.process_time``, ``time.thread_time``,
    ``time.clock_gettime``, ``time.sleep``, ``timeit.default_timer``,
    ``datetime.datetime.now`` / ``utcnow`` / ``today`` and
    ``datetime.date.today``, under any alias. ``time.localtime`` / ``gmtime``
    / ``ctime`` / ``asctime`` are flagged only when called with no time
    argument, ``time.strftime`` only with a format alone (then they read the
    clock).

    Applies only to simulation code, the one definition SCK201 and SCK401
    share (C-LINT-1): a file is simulation code when it imports simclock or
    one of the ``simulation-imports`` modules, or matches a
    ``simulation-code`` glob (default: none). Every finding says which,
    e.g. ``[simulation code: imports simclock]``.
    The default keeps benchmarks, training loops, loggers, examples and
    tests that time themselves out of the rule; a project marks its own
    simulation packages with ``simulation-code = ["src/sim/**"]``.

Why:
    Simulated time is ``clock.now_ns()``. A wall-clock read makes behaviour
    depend on host speed and load, so two runs with the same seed diverge and
    a recording cannot be replayed; ``time.sleep`` stalls the run without
    advancing simulated time.

Example:
    import time
    started = time.monotonic()

Use instead:
    started_ns = clock.now_ns()
    # real-time pacing and benchmarks: configure their paths out of
    # ``simulation-code`` or add a per-file ignore for SCK301.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from simclock_lint._rule import DECLARED, Rule
from simclock_lint._rules._common import CallInfo, imports_module

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst

    from simclock_lint._analysis import Analysis

CODE = "SCK301"
MESSAGE = "wall-clock read `{name}` in simulation code; use clock.now_ns() / advance()"

WALL_CLOCK = frozenset(
    {
        "time.time", "time.time_ns", "time.monotonic", "time.monotonic_ns",
        "time.perf_counter", "time.perf_counter_ns", "time.process_time",
        "time.process_time_ns", "time.thread_time", "time.thread_time_ns",
        "time.clock_gettime", "time.clock_gettime_ns", "time.sleep",
        "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
        "datetime.date.today", "timeit.default_timer",
    }
)  # fmt: skip
# Pure conversions when given a time; clock reads when called without one
# (value: how many positional arguments leave the time out).
BARE_ARGS = {"time.localtime": 0, "time.gmtime": 0, "time.ctime": 0, "time.asctime": 0,
             "time.strftime": 1}  # fmt: skip
NOW_WHEN_BARE = frozenset(BARE_ARGS)

VALID = [
    DECLARED + "now = clock.now_ns()",
    DECLARED + "import time\nstamp = time.strftime('%Y', time.gmtime(0))",
    DECLARED + "def f(time):\n    return time.time()",
    DECLARED + "import datetime\nd = datetime.datetime(2020, 1, 1)",
    DECLARED + "from datetime import timedelta\nx = timedelta(seconds=1)",
    DECLARED + "msg = 'time.time()'  # time.sleep(1)",
    DECLARED + "class A:\n    def f(self):\n        return self.time.monotonic()",
    DECLARED + "import time\nstamp = time.asctime(time.gmtime(0))",
    DECLARED + "import timeit\nt = timeit.timeit('x = 1', number=10)",
    # Not simulation code: no simclock import, not declared (a benchmark, a logger).
    "import time\nt = time.time()",
]
INVALID = [
    "import simclock\nimport time\nt = time.time()",
    DECLARED + "import time\nt = time.time()",
    DECLARED + "import time\nt = time.monotonic_ns()",
    DECLARED + "from time import perf_counter as pc\nt = pc()",
    DECLARED + "import time as t\nt.sleep(0.1)",
    DECLARED + "from datetime import datetime\nnow = datetime.now()",
    DECLARED + "import datetime\nnow = datetime.datetime.utcnow()",
    DECLARED + "from datetime import date\ntoday = date.today()",
    DECLARED + "import time\nclock_fn = time.perf_counter",
    DECLARED + "import time\nlocal = time.localtime()",
    DECLARED + "import datetime as dt\nnow = dt.datetime.now(tz=dt.timezone.utc)",
    DECLARED + "import time\nstamp = time.strftime('%H:%M')",
    DECLARED + "import timeit\nstart = timeit.default_timer()",
    DECLARED + "from timeit import default_timer as timer\nt0 = timer()",
]


# A finding's text names the function (`t.sleep`) or imports it under an alias.
_LAST_NAMES = tuple(sorted({name.rpartition(".")[2] for name in WALL_CLOCK | NOW_WHEN_BARE}))
_NAMES = rb"(?:" + b"|".join(name.encode() for name in _LAST_NAMES) + rb")\b"
# Every finding reads `<alias>.<name>` or imports the name itself.
_USE = re.compile(
    rb"\.\s*" + _NAMES + rb"|\bimport\b[^\n]*\b" + _NAMES + rb"|\bimport\s*\([^)]*\b" + _NAMES
)


def may_match(source: bytes) -> bool:
    return (
        b"time" in source
        and (
            imports_module(source, "time")
            or imports_module(source, "datetime")
            or imports_module(source, "timeit")
        )
        and _USE.search(source) is not None
    )


def flags(qualname: str, call: CallInfo | None, compared: bool) -> str | None:
    """The name to report for a reference to ``qualname``, or None (shared with the fallback)."""
    if qualname in WALL_CLOCK:
        return qualname
    bare = call is not None and call.positional <= BARE_ARGS.get(qualname, -1)
    if bare and call is not None and not call.keywords and not call.star_kwargs:
        return qualname
    return None


def check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
    from simclock_lint._analysis import call_info

    for ref in analysis.references:
        if ref.qualname in WALL_CLOCK or ref.qualname in BARE_ARGS:
            info = call_info(ref.call) if ref.call is not None else None
            name = flags(ref.qualname, info, ref.compared)
            if name is not None:
                yield ref.node, name


RULE = Rule.declared_in(
    globals(), simulation_only=True, modules=("time", "datetime", "timeit"), anchors=_LAST_NAMES
)
