"""SCK104: seeded legacy ``numpy.random.RandomState`` (opt-in).

What it does:
    Flags constructions of numpy's legacy generator with a seed,
    ``np.random.RandomState(seed)``, under any alias. Off by default: select
    it by its exact code (``--select SCK104`` or ``select = ["SCK", "SCK104"]``).
    An unseeded ``RandomState()`` is SCK103; a reference without a call (a
    type check, an annotation) is never flagged.

Why:
    A seeded ``RandomState`` is private and repeatable, so it is no hazard
    for a replay; but its stream is frozen legacy (numpy keeps it only for
    old results), and it cannot be derived from a labelled stream of the
    scenario seed as a ``Generator`` can (C-RNG-1).

Example:
    import numpy as np
    rs = np.random.RandomState(seed)

Use instead:
    rng = clock.random_source().child("/terrain").numpy_rng()
    # or, outside a clock: np.random.default_rng(seed)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from simclock_lint._rule import Rule
from simclock_lint._rules._common import CallInfo, imports_module

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst

    from simclock_lint._analysis import Analysis

CODE = "SCK104"
MESSAGE = "legacy generator `{name}`; prefer numpy.random.Generator (default_rng(seed))"

CLASSES = frozenset({"numpy.random.RandomState", "numpy.random.mtrand.RandomState"})

VALID = [
    "import numpy as np\nrng = np.random.default_rng(3)",
    "import numpy as np\ndef f(rs: np.random.RandomState) -> None: ...",
    "import numpy as np\nok = isinstance(x, np.random.RandomState)",
    "import numpy as np\nmake = np.random.RandomState",
    "def RandomState(seed):\n    return seed\nrs = RandomState(1)",
]
INVALID = [
    "import numpy as np\nrs = np.random.RandomState(0)",
    "import numpy as np\nrs = np.random.RandomState(seed=seed)",
    "from numpy.random import RandomState\nrs = RandomState(7)",
    "import numpy.random as npr\nrs = npr.RandomState(seed)",
    "import numpy as np\nrs = np.random.mtrand.RandomState(1)",
]


_CLASS = re.compile(rb"\bRandomState\s*\(")


def may_match(source: bytes) -> bool:
    return _CLASS.search(source) is not None and imports_module(source, "numpy")


def flags(qualname: str, call: CallInfo | None, compared: bool) -> str | None:
    """The name to report for a reference to ``qualname``, or None (shared with the fallback)."""
    if qualname not in CLASSES or call is None or not call.seed_given("seed"):
        return None
    return f"{qualname}(seed)"


def check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
    from simclock_lint._analysis import call_info

    for ref in analysis.references:
        if ref.call is not None and ref.qualname in CLASSES:
            name = flags(ref.qualname, call_info(ref.call), ref.compared)
            if name is not None:
                yield ref.node, name


RULE = Rule.declared_in(globals(), modules=("numpy",), anchors=("RandomState",), default=False)
