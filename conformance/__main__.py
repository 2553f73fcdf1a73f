"""``python -m conformance MODULE:FACTORY``: see :func:`conformance._run.main`.

A closed stdout (``| head``) ends the run quietly with exit status 141
(128 + SIGPIPE, what a shell reports for ``cat``), not a traceback.
"""

import os
import sys

from conformance._run import main

try:
    status = main()
    sys.stdout.flush()
except BrokenPipeError:
    # The recipe of the Python docs' note on SIGPIPE: stdout to devnull, so the
    # interpreter's last flush cannot fail again.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 141
sys.exit(status)
