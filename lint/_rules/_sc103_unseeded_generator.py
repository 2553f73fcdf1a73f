"""SC103: generator created without a seed.

What it does:
    Flags constructions that take their seed from the operating system:
    ``random.Random()`` and ``random.Random(None)``, ``random.SystemRandom()``
    (it cannot be seeded at all), ``numpy.random.default_rng()`` /
    ``default_rng(None)``, and numpy bit generators or ``SeedSequence`` built
    with no seed (``PCG64()``, ``SeedSequence()``, ...), under any alias.

Why:
    An unseeded generator draws fresh OS entropy on every run, so no two runs
    agree and a failing one cannot be replayed from the scenario seed
    (C-RNG-1).

Example:
    import numpy as np
    rng = np.random.default_rng()

Use instead:
    rng = clock.random_source().child("/planner/sampling").numpy_rng()
    # or, outside a clock, an explicit seed: np.random.default_rng(scenario_seed)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from lint._rule import Rule
from lint._rules._common import imports_module

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst

    from lint._analysis import Analysis

CODE = "SC103"
MESSAGE = "unseeded generator `{name}()` draws OS entropy; pass the scenario seed or a stream"

# Constructor -> name of its seed keyword (the first positional is the seed).
SEEDED_CONSTRUCTORS = {
    "random.Random": "x",
    "numpy.random.default_rng": "seed",
    "numpy.random.PCG64": "seed",
    "numpy.random.PCG64DXSM": "seed",
    "numpy.random.Philox": "seed",
    "numpy.random.SFC64": "seed",
    "numpy.random.MT19937": "seed",
    "numpy.random.SeedSequence": "entropy",
}
UNSEEDABLE = frozenset({"random.SystemRandom"})

VALID = [
    "import random\nrng = random.Random(42)",
    "import numpy as np\nrng = np.random.default_rng(seed)",
    "import numpy as np\nrng = np.random.default_rng(seed=7)",
    "from numpy.random import PCG64, Generator\ng = Generator(PCG64(11))",
    "from numpy.random import SeedSequence\nss = SeedSequence(entropy=3)",
    "def default_rng():\n    return 1\nrng = default_rng()",
    "import random\nclass R(random.Random):\n    pass",
]
INVALID = [
    "import random\nrng = random.Random()",
    "import random\nrng = random.Random(None)",
    "import numpy as np\nrng = np.random.default_rng()",
    "import numpy as np\nrng = np.random.default_rng(seed=None)",
    "from numpy.random import default_rng as mk\nrng = mk()",
    "import numpy as np\ng = np.random.Generator(np.random.PCG64())",
    "from numpy.random import SeedSequence\nss = SeedSequence()",
    "import random\nrng = random.SystemRandom()",
    "from random import Random\nrng = Random()",
]


_CONSTRUCTOR = re.compile(
    rb"\b(?:Random|SystemRandom|default_rng|PCG64|PCG64DXSM|Philox|SFC64|MT19937|SeedSequence)\b"
)


def may_match(source: bytes) -> bool:
    return (
        b"random" in source
        and _CONSTRUCTOR.search(source) is not None
        and (imports_module(source, "random") or imports_module(source, "numpy"))
    )


def _is_none(expr: libcst.BaseExpression) -> bool:
    import libcst

    return isinstance(expr, libcst.Name) and expr.value == "None"


def check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
    from lint._analysis import keyword_args, positional_args

    for ref in analysis.references:
        call = ref.call
        if call is None:
            continue
        if ref.qualname in UNSEEDABLE:
            yield ref.node, ref.qualname
            continue
        keyword = SEEDED_CONSTRUCTORS.get(ref.qualname)
        if keyword is None:
            continue
        positional = positional_args(call)
        if positional:
            seed: libcst.BaseExpression | None = positional[0].value
        else:
            keywords = keyword_args(call)
            seed = next(
                (k.value for k in keywords if k.keyword is not None and k.keyword.value == keyword),
                None,
            )
            if seed is None and any(k.keyword is None for k in keywords):
                continue  # **kwargs may carry the seed: cannot tell.
        if seed is None or _is_none(seed):
            yield ref.node, ref.qualname


RULE = Rule.declared_in(globals(), modules=("random", "numpy"), anchors=("random",))
