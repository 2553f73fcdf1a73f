"""Every rule's VALID/INVALID examples, scope awareness, noqa and positions (SPEC §13, C-RNG-6)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from simclock_lint import DEFAULT_RULES, PARSE_ERROR, RULES, RULES_BY_CODE, Finding
from simclock_lint import lint_source as _lint_source
from simclock_lint._rule import DECLARED, Rule


def lint_source(
    source: str, path: str = "<string>", rules: Iterable[Rule] = DEFAULT_RULES
) -> list[Finding]:
    """The engine with every snippet taken as simulation code (SCK301 applies), suffix dropped."""
    return [
        Finding(f.path, f.line, f.col, f.code, f.message.removesuffix(" [simulation code: test]"))
        for f in _lint_source(source, path, rules, simulation="test")
    ]


EXAMPLES = [
    pytest.param(rule.code, source, valid, id=f"{rule.code}-{'valid' if valid else 'invalid'}-{i}")
    for rule in RULES
    for valid, examples in ((True, rule.valid), (False, rule.invalid))
    for i, source in enumerate(examples)
]


@pytest.mark.parametrize(("code", "source", "valid"), EXAMPLES)
def test_C_RNG_6_C_LINT_1_rule_examples(code: str, source: str, valid: bool) -> None:
    """An example starting with ``DECLARED`` is declared simulation code; others: the defaults."""
    rules = [*DEFAULT_RULES, *([] if RULES_BY_CODE[code].default else [RULES_BY_CODE[code]])]
    simulation = "matches simulation-code 'sim/**'" if source.startswith(DECLARED) else ()
    codes = [f.code for f in _lint_source(source, "example.py", rules, simulation=simulation)]
    if valid:
        assert codes == []
    else:
        assert codes and set(codes) == {code}


@pytest.mark.parametrize("code", sorted(RULES_BY_CODE))
def test_C_RNG_6_rule_documentation_shape(code: str) -> None:
    doc = RULES_BY_CODE[code].doc
    assert doc.startswith(f"{code}: ")
    positions = [doc.index(head) for head in ("What it does:", "Why:", "Example:", "Use instead:")]
    assert positions == sorted(positions)
    message = RULES_BY_CODE[code].message
    assert "\n" not in message and "{name}" in message
    assert len(RULES_BY_CODE[code].valid) >= 5 and len(RULES_BY_CODE[code].invalid) >= 5


def test_C_RNG_6_rule_module_must_declare_every_part() -> None:
    from simclock_lint._rules import _sck101_global_random as module

    namespace = dict(vars(module))
    rebuilt = Rule.declared_in(namespace, modules=("random",), anchors=("random",))
    assert rebuilt == module.RULE
    del namespace["VALID"], namespace["check"]
    with pytest.raises(
        TypeError, match=r"^rule module '.*_sck101_global_random' does not define VALID, check$"
    ):
        Rule.declared_in(namespace)
    namespace = dict(vars(module), __doc__="  ")
    with pytest.raises(
        TypeError, match=r"^rule module '.*' has no docstring; every rule needs a doc$"
    ):
        Rule.declared_in(namespace)


def test_C_RNG_6_codes_are_unique_and_prefixed() -> None:
    codes = [rule.code for rule in RULES]
    assert codes == sorted(set(codes))
    assert all(c.startswith("SCK") and len(c) == 6 for c in codes)


def test_C_RNG_6_finding_position_and_text() -> None:
    source = "import numpy as np\n\ndef f():\n    x = 1; np.random.seed(0)\n"
    assert lint_source(source, "sim.py") == [
        Finding(
            "sim.py",
            4,
            12,
            "SCK102",
            "global numpy.random use `numpy.random.seed`; draw from a seeded "
            "numpy.random.Generator (random_source().numpy_rng())",
        )
    ]


def test_C_RNG_6_column_counts_characters_not_bytes() -> None:
    source = "import time\nlabel = 'é→'; t = time.time()\n"
    [finding] = lint_source(source, "sim.py")
    assert (finding.line, finding.col, finding.code) == (2, 19, "SCK301")


def test_C_RNG_6_shadowing_by_parameter_local_and_class_attribute() -> None:
    source = (
        "import random\n"
        "import numpy as np\n"
        "def a(random):\n"
        "    return random.random()\n"  # parameter: not the module
        "def b():\n"
        "    np = load()\n"
        "    return np.random.rand()\n"  # local rebinding for the whole function
        "class C:\n"
        "    random = None\n"
        "    def m(self):\n"
        "        return random.random()\n"  # class scope does not enclose methods
        "lam = lambda np: np.random.rand()\n"
        "xs = [random.random() for random in gens]\n"  # comprehension variable
    )
    assert [(f.line, f.code) for f in lint_source(source)] == [(11, "SCK101")]


def test_C_RNG_6_global_and_nonlocal_declarations() -> None:
    source = (
        "import numpy as np\n"
        "def f():\n"
        "    global np\n"
        "    return np.random.rand()\n"
        "def g():\n"
        "    np = object()\n"
        "    def h():\n"
        "        nonlocal np\n"
        "        return np.random.rand()\n"
        "    return h\n"
    )
    assert [(f.line, f.code) for f in lint_source(source)] == [(4, "SCK102")]


def test_C_RNG_6_strings_comments_and_annotations_never_flagged() -> None:
    source = (
        "import numpy as np\n"
        "import random\n"
        "'''np.random.seed(0) random.random()'''\n"
        "# np.random.seed(0)\n"
        "def f(r: np.random.RandomState, s: 'random.Random') -> np.random.RandomState:\n"
        "    x: np.random.RandomState = r\n"
        "    return x\n"
    )
    assert lint_source(source) == []


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        ("# noqa", []),
        ("# noqa: SCK102", []),
        ("# NOQA:SCK101,SCK102", []),
        ("# noqa: E501, SCK102", []),
        ("# noqa: SCK101", ["SCK102"]),
        ("# noqa: E501", ["SCK102"]),
        ("# not a noqa marker", ["SCK102"]),
        # The former prefix names the same codes; flake8-spellcheck's SC100 is not one of them.
        ("# noqa: SC102", []),
        ("# noqa: sc101, SC102", []),
        ("# noqa: SC101", ["SCK102"]),
        ("# noqa: SC100", ["SCK102"]),
    ],
)
def test_C_RNG_6_noqa_suppresses_named_codes(comment: str, expected: list[str]) -> None:
    source = f"import numpy as np\nnp.random.seed(0)  {comment}\n"
    assert [f.code for f in lint_source(source)] == expected


def test_C_RNG_6_noqa_inside_a_string_does_not_suppress() -> None:
    source = "import numpy as np\nx = ('# noqa', np.random.rand())\n"
    assert [f.code for f in lint_source(source)] == ["SCK102"]


def test_C_RNG_6_unparsable_source_reports_the_parser_message() -> None:
    # libcst refuses it, so CPython's parser decides and names the offending token.
    assert lint_source("import random\na = 1\nb = = random.random()\n", "bad.py") == [
        Finding("bad.py", 3, 5, PARSE_ERROR, "could not parse: invalid syntax")
    ]


def test_C_RNG_6_unrelated_file_is_not_parsed() -> None:
    # No selected rule can match: no parse, so even a syntax error goes unseen (pre-filter).
    assert lint_source("def f(:\n", "other.py") == []


def test_C_RNG_6_statements_that_cannot_matter_are_cut_before_the_parse() -> None:
    # The cut text is parsed, not the whole file: an error in a function that
    # never mentions a trigger word goes unseen, as in a file the pre-filter skips.
    source = "import random\ndef g():\n    b = = 2\ndef f():\n    return random.random()\n"
    assert [(f.line, f.col, f.code) for f in lint_source(source)] == [(5, 12, "SCK101")]


def test_C_RNG_6_rule_subset_only_reports_selected_codes() -> None:
    source = "import numpy as np\nimport time\nnp.random.seed(0)\nt = time.time()\n"
    assert [f.code for f in lint_source(source, rules=[RULES_BY_CODE["SCK301"]])] == ["SCK301"]
    assert [f.code for f in lint_source(source)] == ["SCK102", "SCK301"]


def test_C_RNG_6_star_import_of_tracked_module_resolves_unbound_names() -> None:
    source = "from numpy.random import *\nfrom os import *\nx = rand(2)\ny = len(x)\n"
    assert [(f.line, f.code) for f in lint_source(source)] == [(3, "SCK102")]


def test_C_RNG_6_dense_and_sparse_files_give_the_same_findings() -> None:
    # `np` on every line (uses, never bindings) or on none: the cut keeps the finding either way.
    body = "".join(f"a{i} = np.zeros({i})\n" for i in range(400))
    dense = "import numpy as np\n" + body + "np.random.seed(1)\n"
    sparse = "import numpy as np\n" + body.replace("np.zeros", "zeros") + "np.random.seed(1)\n"
    assert [(f.line, f.code) for f in lint_source(dense)] == [(402, "SCK102")]
    assert [(f.line, f.code) for f in lint_source(sparse)] == [(402, "SCK102")]


KITCHEN_SINK = """
import asyncio
import random as rnd
import time
import numpy as np

T = time.time()  # flagged


@decorate(rnd.random())  # flagged: decorators run in the enclosing scope
class Box(Base, metaclass=Meta, key=np.random.rand()):  # flagged
    rnd = None
    items = [rnd for _ in range(3)]

    # the default runs in the class body, where rnd is None; annotations are types
    def method(self, x=rnd.random(), *args, y: np.random.RandomState = None, **kw):
        nonlocal_target = 1

        def inner():
            nonlocal nonlocal_target
            nonlocal_target = rnd.random()  # flagged: the class body does not enclose
            return nonlocal_target

        return inner


async def worker(queue):
    async with lock:
        async for item in queue:
            await asyncio.sleep(0)
    if (n := len(queue)) > 2:
        # np and rnd are bound by the match below: local to the whole function
        print(f"{n!r:>{width}} {np.random.rand()}")
    try:
        pass
    except* ValueError as group:
        del group
    match command:
        case {"seed": rnd, **rest}:
            rnd.random()
        case [np, *others]:
            pass
        case Point(x=0) | None:
            pass
    lam = lambda a, /, b=rnd.random(), *, c: a
    values = {k: v for k, v in zip(keys, values) if (total := k)}
    return total


def fmt(width):
    return f"{width:>{width}} {np.random.rand()}"  # flagged: inside an f-string
"""


def test_C_RNG_6_kitchen_sink_syntax_and_scopes() -> None:
    findings = lint_source(KITCHEN_SINK, "sink.py")
    assert [(f.line, f.code) for f in findings] == [
        (7, "SCK301"),
        (10, "SCK101"),
        (11, "SCK102"),
        (13, "SCK101"),  # a comprehension in a class body sees the module, not the class
        (21, "SCK101"),
        (51, "SCK102"),
    ]


def test_C_RNG_6_form_feed_does_not_shift_lines_or_noqa() -> None:
    source = "import numpy as np\n\x0c\nnp.random.seed(0)  # noqa: SCK102\nnp.random.rand()\n"
    assert [(f.line, f.col, f.code) for f in lint_source(source)] == [(4, 1, "SCK102")]


def test_C_RNG_6_import_split_by_backslashes_is_seen() -> None:
    source = "from numpy.random \\\n    import (\n    rand)\nx = rand(3)\n"
    assert [(f.line, f.code) for f in lint_source(source)] == [(4, "SCK102")]
    source = "import os, \\\n    time as clock_module\nt = clock_module.time()\n"
    assert [(f.line, f.code) for f in lint_source(source)] == [(3, "SCK301")]


def test_C_RNG_6_cut_keeps_global_declarations_and_shadowing_definitions() -> None:
    # Neither function mentions `random`, yet each changes what a later load means.
    source = (
        "np = None\n"
        "def setup():\n"
        "    global np\n"
        "    import numpy as np\n"
        "def f():\n"
        "    return np.random.rand()\n"
        "import numpy\n"
        "def g():\n"
        "    def numpy():\n"
        "        pass\n"
        "    return numpy.random.rand()\n"
    )
    assert [(f.line, f.code) for f in lint_source(source)] == [(6, "SCK102")]


def test_C_RNG_6_cut_body_and_lines_after_it() -> None:
    # The trigger is only in the decorator: the body is cut to a `pass`.
    source = (
        "import random\n"
        "@register(random.random())\n"
        "def f():\n"
        "    x = 1\n"
        "    return x\n"
        "\n"
        "def g():\n"
        "    return 2\n"
        "class C:\n"
        "    y = 3\n"
        "    def h(self):\n"
        "        '''text'''\n"
        "        return (\n"
        "            random.seed(0))\n"
    )
    assert [(f.line, f.col, f.code) for f in lint_source(source)] == [
        (2, 11, "SCK101"),
        (14, 13, "SCK101"),
    ]


def test_C_RNG_6_cut_is_not_fooled_by_strings_comments_and_brackets() -> None:
    # Brackets, quotes and `def` lines inside strings and comments do not
    # delimit statements; a bracket left open makes the scanner give up (whole parse).
    source = (
        "import random\n"
        'DOC = """(((\n'
        "def fake():\n"
        '    random.seed(0)\n"""\n'
        "x = ')'  # (((\n"
        "def f(a=(1,\n"
        "  2)):\n"
        "    return [random.random(),\n"
        "# ]]]\n"
        "    1]\n"
        "def g():\n"
        "    s = 'a\\\n"
        "random.seed(1)'\n"
        "    return s\n"
    )
    assert [(f.line, f.col, f.code) for f in lint_source(source)] == [(9, 13, "SCK101")]
    unbalanced = source + "y = (\n"
    assert [f.code for f in lint_source(unbalanced)] == ["SCK000"]


def test_C_RNG_6_crlf_line_ends_keep_positions() -> None:
    source = "import time\r\n\r\ndef f():\r\n    return time.time()  # noqa: SCK101\r\n"
    assert [(f.line, f.col, f.code) for f in lint_source(source)] == [(4, 12, "SCK301")]


SCK402_MESSAGE = (
    "float seconds made into int nanoseconds by `{name}` can be off by one "
    "(int(1.001 * 1e9) == 1000999999); use simclock.seconds_to_ns(...) or int arithmetic"
)


def test_C_RNG_6_float_seconds_to_int_ns_position_message_and_nesting() -> None:
    """SCK402: the off-by-one ``int(1.001 * 1e9)``; a nested conversion is one finding."""
    # The bug the rule exists for, as Python computes it.
    assert int(1.001 * 1e9) == 1_000_999_999  # noqa: SCK402 - the bug itself
    source = (
        "import math\n"
        "import simclock\n"
        "from math import floor as round_down\n"
        "clock.advance(int(1.001 * 1e9))\n"
        "clock.advance(int(math.ceil(dt * 1e9)))\n"
        "x_ns = round_down(t * 1e9)\n"
        "ok = int(1.5 * 1e9)\n"
    )
    assert lint_source(source, "sim.py") == [
        Finding("sim.py", 4, 15, "SCK402", SCK402_MESSAGE.format(name="int()")),
        Finding("sim.py", 5, 15, "SCK402", SCK402_MESSAGE.format(name="int()")),
        Finding("sim.py", 6, 8, "SCK402", SCK402_MESSAGE.format(name="floor()")),
    ]


def test_C_RNG_6_float_seconds_to_int_ns_milli_and_micro_only_into_times() -> None:
    """SCK402: 1e6 and 1e3 scales count where the result is a time, 1e9 anywhere."""
    source = (
        "import simclock\n"
        "samples = int(duration * 1e6)\n"  # a count, not a time
        "delay_ns = int(delay_ms * 1e6)\n"
        "clock.schedule(start_ns + int(delay_ms * 1e6), cb)\n"
        "Timer(offset_ns=int(offset_us * 1e3))\n"
        "Timer(offset=int(offset_us * 1e3))\n"  # not a *_ns keyword
        "stamp = int(t * 1e9)\n"
    )
    assert [(f.line, f.code) for f in lint_source(source)] == [
        (3, "SCK402"),
        (4, "SCK402"),
        (5, "SCK402"),
        (7, "SCK402"),
    ]


def test_C_RNG_6_float_time_accumulation_position_and_message() -> None:
    """SCK403: ``t += 0.01`` and ``now = now + DT`` on time names; other float state is fine."""
    source = (
        "import simclock\n"
        "DT = 0.01\n"
        "t = 0.0\n"
        "while t < 1.0:\n"
        "    t += 0.01\n"
        "    self.now = self.now + DT\n"
        "    x += v * 0.01\n"
        "    DT_LATER = 1\n"
    )
    message = (
        "float time accumulated in `{name}`; each addition rounds and the error grows "
        "(0.1 added ten times is 0.9999999999999999): keep int nanoseconds "
        '(simclock.seconds_to_ns("0.01")) and advance the clock'
    )
    assert lint_source(source, "sim.py") == [
        Finding("sim.py", 5, 5, "SCK403", message.format(name="t")),
        Finding("sim.py", 6, 5, "SCK403", message.format(name="self.now")),
    ]
    # The drift the message names, as Python computes it.
    total = 0.0
    for _ in range(10):
        total += 0.1
    assert total == 0.9999999999999999


def test_C_RNG_6_a_name_bound_twice_is_not_a_float_constant() -> None:
    source = "import simclock\nDT = 0.01\nDT = load()\nt += DT\nclock.advance(int(DT * 10**9))\n"
    assert lint_source(source) == []
    source = "import simclock\ndef f(DT):\n    t += DT\nDT = 0.01\nt += DT\n"
    assert [(f.line, f.code) for f in lint_source(source)] == [(5, "SCK403")]
