"""``python -m simclock_lint``: the same command line as ``simclock-lint``."""

from simclock_lint._cli import main

raise SystemExit(main())
