"""A backend module that ends the process while it is imported (the CLI must still exit 2)."""

from __future__ import annotations

import sys

sys.exit(3)
