"""``python -m conformance MODULE:FACTORY``: see :func:`conformance._run.main`."""

import sys

from conformance._run import main

sys.exit(main())
