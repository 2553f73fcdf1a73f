"""``python -m simclock_conformance MODULE:FACTORY``: see :func:`simclock_conformance._run.main`."""

import sys

from simclock_conformance._run import main

sys.exit(main())
