"""``python -m simclock_conformance MODULE:FACTORY``: see :func:`simclock_conformance._run.main`."""

import importlib.util
import sys

# The suite runs on pytest and Hypothesis, the 'conformance' extra: without
# them, one line naming it (exit 2, a usage error), not an ImportError traceback.
_missing = [name for name in ("pytest", "hypothesis") if importlib.util.find_spec(name) is None]
if _missing:
    print(
        "python -m simclock_conformance: error: the conformance suite needs the 'conformance' "
        f"extra, which is not installed (missing: {', '.join(_missing)}); install it with: "
        "pip install 'simclock[conformance]'",
        file=sys.stderr,
    )
    sys.exit(2)

from simclock_conformance._run import main  # noqa: E402

sys.exit(main())
