"""SCK103: generator created without a seed.

What it does:
    Flags constructions that take their seed from the operating system:
    ``random.Random()`` and ``random.Random(None)``, ``random.SystemRandom()``
    (it cannot be seeded at all), ``numpy.random.default_rng()`` /
    ``default_rng(None)``, ``numpy.random.RandomState()``, and numpy bit
    generators or ``SeedSequence`` built with no seed (``PCG64()``,
    ``SeedSequence()``, ...), under any alias; and any of these seeded from
    the wall clock (``random.Random(time.time())``). A ``Random()`` or
    ``RandomState()`` assigned to a name that the module then seeds
    (``rng = random.Random()`` ... ``rng.seed(seed)``) is fine.

Why:
    An unseeded generator draws fresh OS entropy (a clock-seeded one, the
    time of day) on every run, so no two runs agree and a failing one cannot
    be replayed from the scenario seed (C-RNG-1).

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

from simclock_lint._rule import Rule
from simclock_lint._rules._common import CallInfo, imports_module
from simclock_lint._rules._sck301_wall_clock import NOW_WHEN_BARE, WALL_CLOCK

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst

    from simclock_lint._analysis import Analysis

CODE = "SCK103"
MESSAGE = (
    "generator `{name}` is not seeded from the scenario (OS entropy or wall clock); "
    "pass the scenario seed or a stream"
)

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
    "numpy.random.RandomState": "seed",
    "numpy.random.mtrand.RandomState": "seed",
}
UNSEEDABLE = frozenset({"random.SystemRandom"})
# Constructors whose instance has a ``seed()`` method that can seed it later.
RESEEDABLE = frozenset(
    {"random.Random", "numpy.random.RandomState", "numpy.random.mtrand.RandomState"}
)
CLOCK_READS = WALL_CLOCK | NOW_WHEN_BARE

VALID = [
    "import random\nrng = random.Random(42)",
    "import numpy as np\nrng = np.random.default_rng(seed)",
    "import numpy as np\nrng = np.random.default_rng(seed=7)",
    "from numpy.random import PCG64, Generator\ng = Generator(PCG64(11))",
    "from numpy.random import SeedSequence\nss = SeedSequence(entropy=3)",
    "def default_rng():\n    return 1\nrng = default_rng()",
    "import random\nclass R(random.Random):\n    pass",
    "import random\nclass E:\n    def __init__(self):\n        self.rng = random.Random()\n"
    "    def seed(self, s):\n        self.rng.seed(s)",
    "import numpy as np\nrs = np.random.RandomState(seed)",
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
    "import numpy as np\nrs = np.random.RandomState()",
    "import random, time\nrng = random.Random(time.time())",
    "import numpy as np\nfrom time import time\nrng = np.random.default_rng(int(time() * 1000))",
    "import random\nrng = random.Random()\nrng.seed()",
]


_CONSTRUCTOR = re.compile(
    rb"\b(?:Random|SystemRandom|default_rng|PCG64|PCG64DXSM|Philox|SFC64|MT19937|SeedSequence"
    rb"|RandomState)\b"
)


def may_match(source: bytes) -> bool:
    return (
        b"random" in source
        and _CONSTRUCTOR.search(source) is not None
        and (imports_module(source, "random") or imports_module(source, "numpy"))
    )


def flags(qualname: str, call: CallInfo | None, compared: bool) -> str | None:
    """The name to report for a reference to ``qualname``, or None (shared with the fallback)."""
    if call is None:
        return None
    if qualname in UNSEEDABLE:
        return f"{qualname}()"
    keyword = SEEDED_CONSTRUCTORS.get(qualname)
    if keyword is None:
        return None
    given = call.seed_given(keyword)
    if given is False:
        return f"{qualname}()"
    if given and call.reads & CLOCK_READS:
        return f"{qualname}(<wall clock>)"
    return None


def check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
    seeded: set[str] | None = None
    for ref in analysis.references:
        call = ref.call
        if call is None or (
            ref.qualname not in SEEDED_CONSTRUCTORS and ref.qualname not in UNSEEDABLE
        ):
            continue
        info = analysis.call_info(call, SEEDED_CONSTRUCTORS.get(ref.qualname, "x"))
        name = flags(ref.qualname, info, ref.compared)
        if name is None:
            continue
        if ref.qualname in RESEEDABLE and name.endswith("()"):
            target = analysis.assigned_to.get(id(call))
            if target is not None:
                seeded = analysis.seeded_receivers() if seeded is None else seeded
                if target in seeded:
                    continue  # seeded right after construction
        yield ref.node, name


RULE = Rule.declared_in(
    globals(),
    modules=("random", "numpy", "time", "datetime", "timeit"),
    # "seed": a later ``rng.seed(s)`` must survive the cut to excuse ``rng = Random()``.
    anchors=("random", "Random", "RandomState", "default_rng", "seed"),
)
