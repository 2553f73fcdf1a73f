"""``python -m simclock`` runs the ``simclock`` console script."""

from simclock.cli._main import main

raise SystemExit(main())
