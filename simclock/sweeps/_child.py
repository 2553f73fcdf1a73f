"""``python -m simclock.sweeps._child OUT``: one audit run in a fresh process (C-SWEEP-4).

Reads ``(seed, job, runner, trace)`` pickled on stdin (``job``: a shipped scenario), runs the seed
(`simclock.sweeps._task.run_seed`) and writes the pickled
`Outcome` to ``OUT`` (a file, so anything the run prints on stdout
cannot corrupt it).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    """Run the pickled job on stdin and write its outcome to ``argv[0]``."""
    from simclock.sweeps._task import run_seed

    seed, job, runner, trace = pickle.loads(sys.stdin.buffer.read())
    outcome = run_seed(seed, job, runner, "none", trace)
    Path(argv[0]).write_bytes(pickle.dumps(outcome))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
