"""``python -m simclock.core``: print one line naming the core build that loads (C-NATIVE-1)."""

from simclock.core._native import status_line

print(status_line())
