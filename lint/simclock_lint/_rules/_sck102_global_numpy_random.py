"""SCK102: global ``numpy.random`` use.

What it does:
    Flags every call of, or reference to, numpy's legacy global random API:
    the module-level samplers (``np.random.rand``, ``np.random.normal``, ...),
    ``seed``, ``get_state``/``set_state`` and the hidden instance
    (``np.random.mtrand._rand``), under any alias (``import numpy as np``,
    ``import numpy.random as npr``, ``from numpy import random as nr``,
    ``from numpy.random import rand``), and the module ``numpy.random`` used
    as a value (``random_state = random_state or np.random``), since every
    draw from that name is a global one. Comparing against it is fine, and
    type annotations are not uses. A ``RandomState(seed)`` is a seeded,
    private generator, not global use: an unseeded one is SCK103, and the
    opt-in SCK104 nudges seeded ones towards ``Generator``.

Why:
    The module-level functions share one hidden ``RandomState`` for the whole
    process, so any library drawing from it changes your numbers, and its
    seed is not the scenario seed (C-RNG-1, C-RNG-6).

Example:
    import numpy as np
    np.random.seed(0)
    noise = np.random.normal(0.0, 0.05, size=3)

Use instead:
    rng = clock.random_source().child("/sensors/imu0/noise").numpy_rng()
    noise = rng.normal(0.0, 0.05, size=3)
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

CODE = "SCK102"
MESSAGE = (
    "global numpy.random use `{name}`; draw from a seeded numpy.random.Generator "
    "(random_source().numpy_rng())"
)

# The new-style API: seedable generators and bit generators are fine.
ALLOWED = frozenset(
    {
        "Generator", "BitGenerator", "PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937",
        "SeedSequence", "default_rng", "bit_generator",
    }
)  # fmt: skip
LEGACY = frozenset(
    {
        "beta", "binomial", "bytes", "chisquare", "choice", "dirichlet",
        "exponential", "f", "gamma", "geometric", "get_state", "gumbel", "hypergeometric",
        "laplace", "logistic", "lognormal", "logseries", "multinomial", "multivariate_normal",
        "negative_binomial", "noncentral_chisquare", "noncentral_f", "normal", "pareto",
        "permutation", "poisson", "power", "rand", "randint", "randn", "random",
        "random_integers", "random_sample", "ranf", "rayleigh", "sample", "seed", "set_state",
        "shuffle", "standard_cauchy", "standard_exponential", "standard_gamma",
        "standard_normal", "standard_t", "triangular", "uniform", "vonmises", "wald", "weibull",
        "zipf", "mtrand", "_rand", "get_bit_generator", "set_bit_generator",
    }
)  # fmt: skip

VALID = [
    "import numpy as np\nrng = np.random.default_rng(7)\nx = rng.normal()",
    "import numpy as np\ng = np.random.Generator(np.random.PCG64(3))",
    "from numpy.random import SeedSequence\nss = SeedSequence(5)",
    "import numpy as np\ndef f(rs: np.random.RandomState) -> None: ...",
    "import numpy as np\nx: np.random.RandomState | None = None",
    "import numpy as np\ndef f(np):\n    return np.random.rand()",
    "s = 'np.random.seed(0)'  # np.random.seed(0)",
    "import numpy as np\nclass A:\n    def f(self):\n        return self.np.random.rand()",
    "import numpy as np\nrs = np.random.RandomState(0)",
    "import numpy as np\ndef f(rs):\n"
    "    return rs is np.random or isinstance(rs, np.random.RandomState)",
]
INVALID = [
    "import numpy as np\nnp.random.seed(0)",
    "import numpy\nx = numpy.random.rand(3)",
    "import numpy.random as npr\nx = npr.normal()",
    "from numpy import random as nr\nx = nr.randint(0, 3)",
    "from numpy.random import rand\nx = rand(2)",
    "import numpy as np\nstate = np.random.get_state()",
    "import numpy as np\ndef f(random_state=None):\n"
    "    random_state = random_state or np.random\n    return random_state.randn()",
    "import numpy as np\nsampler = np.random.uniform",
    "from numpy.random import *\nx = standard_normal()",
    "import numpy.random\nnumpy.random.shuffle(items)",
]


# Every finding reads `<alias>.random.<name>`, `<alias>.random` as a value, or
# imports from numpy.random.
_USE = re.compile(
    rb"\.\s*random\b(?!\s*[.(])|\.\s*random\s*\.\s*(?:"
    + b"|".join(sorted(name.encode() for name in LEGACY))
    + rb")\b|\bfrom\s+numpy\s*\.\s*random\b|\bimport\b[^\n]*\brandom\b|\bimport\s*\([^)]*\brandom\b"
)


def may_match(source: bytes) -> bool:
    return (
        b"random" in source and imports_module(source, "numpy") and _USE.search(source) is not None
    )


def flags(qualname: str, call: CallInfo | None, compared: bool) -> str | None:
    """The name to report for a reference to ``qualname``, or None (shared with the fallback)."""
    parts = qualname.split(".")
    if len(parts) < 2 or parts[0] != "numpy" or parts[1] != "random":
        return None
    if len(parts) == 2:
        return None if compared else "numpy.random (the module bound as a generator)"
    if parts[2] == "mtrand" and len(parts) > 3 and parts[3] != "_rand":
        return None  # np.random.mtrand.RandomState: a class, as above
    return qualname if parts[2] in LEGACY else None


def check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
    for ref in analysis.references:
        name = flags(ref.qualname, None, ref.compared)
        if name is not None:
            yield ref.node, name


RULE = Rule.declared_in(globals(), modules=("numpy",), anchors=("random",))
