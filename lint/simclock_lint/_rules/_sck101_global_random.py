"""SCK101: global ``random`` module use.

What it does:
    Flags every call of, or reference to, a function of the stdlib ``random``
    module that draws from or reseeds its hidden global generator
    (``random.random``, ``random.seed``, ``random.choice``, ...), under any
    import alias and through ``from random import ...``; also the module
    itself used as a value (``rng = rng or random``), since every draw from
    that name is then a global one (comparing against it is fine).

Why:
    The global generator is shared by every library in the process: whatever
    else draws from it shifts your numbers, and its seed is not the scenario
    seed. A run cannot be replayed from its seed (C-RNG-1, C-RNG-6).

Example:
    import random as rnd
    delay = rnd.uniform(0.0, 1.0)

Use instead:
    noise = clock.random_source().child("/sensors/imu0/noise")
    delay = noise.uniform(0.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from simclock_lint._rule import Rule
from simclock_lint._rules._common import CallInfo, imports_module

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst

    from simclock_lint._analysis import Analysis

CODE = "SCK101"
MESSAGE = "global random module use `{name}`; draw from a seeded stream (clock.random_source())"

# Module-level functions bound to random's hidden global Random instance.
GLOBAL_FUNCTIONS = frozenset(
    {
        "betavariate", "binomialvariate", "choice", "choices", "expovariate", "gammavariate",
        "gauss", "getrandbits", "getstate", "lognormvariate", "normalvariate", "paretovariate",
        "randbytes", "randint", "random", "randrange", "sample", "seed", "setstate", "shuffle",
        "triangular", "uniform", "vonmisesvariate", "weibullvariate", "_inst",
    }
)  # fmt: skip

VALID = [
    "import random\nrng = random.Random(7)\nx = rng.random()",
    "def f(random):\n    return random.random()",
    "class A:\n    def f(self):\n        return self.random.choice([1, 2])",
    "x = 'random.random()'  # random.seed(0)",
    "import random\ndef f(rng: random.Random) -> float:\n    return rng.random()",
    "import random\ndef f():\n    random = make_rng()\n    return random.uniform(0, 1)",
    "from random import Random\nr = Random(3).choice([1, 2])",
    "import random\ndef f(rng):\n    return rng is random",
]
INVALID = [
    "import random\nx = random.random()",
    "import random\nrandom.seed(0)",
    "from random import choice\nchoice([1, 2])",
    "import random\nf = random.uniform",
    "import random as r\nr.shuffle(items)",
    "def f():\n    import random\n    return random.gauss(0, 1)",
    "from random import *\nx = randint(1, 6)",
    "import random\nx = [random.random() for _ in range(3)]",
    "import random\nlabel = f'{random.random()}'",
    "import random\ndef f(rng=None):\n    rng = rng or random\n    return rng.random()",
]


def may_match(source: bytes) -> bool:
    return imports_module(source, "random")


def flags(qualname: str, call: CallInfo | None, compared: bool) -> str | None:
    """The name to report for a reference to ``qualname``, or None (shared with the fallback)."""
    parts = qualname.split(".")
    if parts[0] != "random":
        return None
    if len(parts) == 1:
        # The module itself as a value (``rng = rng or random``): later draws are global.
        return None if compared else "random (the module bound as a generator)"
    return qualname if parts[1] in GLOBAL_FUNCTIONS else None


def check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
    for ref in analysis.references:
        name = flags(ref.qualname, None, ref.compared)
        if name is not None:
            yield ref.node, name


RULE = Rule.declared_in(globals(), modules=("random",), anchors=("random",))
