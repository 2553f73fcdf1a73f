"""``python -m simclock_conformance MODULE:FACTORY``: see ``simclock_conformance.entry._run.main``.

A closed stdout (``| head``) ends the run quietly with exit status 141
(128 + SIGPIPE, what a shell reports for ``cat``), not a traceback.
"""

import importlib.util
import os
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

from simclock_conformance.entry._run import main  # noqa: E402

try:
    status = main()
    sys.stdout.flush()
except BrokenPipeError:
    # The recipe of the Python docs' note on SIGPIPE: stdout to devnull, so the
    # interpreter's last flush cannot fail again.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 141
sys.exit(status)
