"""``python -m lint``: the same command line as ``simclock-lint``."""

from lint._cli import main

raise SystemExit(main())
