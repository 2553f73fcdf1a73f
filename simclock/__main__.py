"""``python -m simclock`` runs the ``simclock`` console script."""

from simclock._cli import main

raise SystemExit(main())
