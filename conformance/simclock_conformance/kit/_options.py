"""The suite's option values: Hypothesis profiles, shrinking, per-test time limits (C-CONF-2).

A leaf module: every other module of the package may import it, it imports
none of them, so the plugin, the argument checks and the CLI share one table.
"""

from __future__ import annotations

__all__ = ["MAX_TIMEOUT_S", "PROFILES", "SHRINK", "default_hang_budget", "default_timeout"]

PROFILES = ("ci", "thorough")
"""The Hypothesis budgets of the suite: ``ci`` (default, derandomised) and ``thorough``."""

SHRINK = [True]
"""Whether a failing example is shrunk to its minimal form; ``--simclock-no-shrink`` clears it.

Set by the plugin when pytest is configured (this module imports nothing, so the plugin
can set it where Hypothesis is not installed), read by ``hypothesis_settings``.
"""

_TIMEOUTS = {"ci": 30.0, "thorough": 300.0}
# Two tests' limits: a backend that hangs everywhere has its verdict in about a
# minute under ci (C-CONF-2), and one hang alone never stops the run.
_HANG_BUDGETS = {"ci": 60.0, "thorough": 600.0}

MAX_TIMEOUT_S = 1_000_000
"""The largest per-test time limit in seconds (about 11.6 days); the timers take no more."""


def default_timeout(profile: str) -> float:
    """The per-test time limit in seconds of ``profile`` (C-CONF-2)."""
    return _TIMEOUTS.get(profile, _TIMEOUTS["ci"])


def default_hang_budget(profile: str) -> float:
    """The run's hang budget in seconds of ``profile`` (C-CONF-2).

    The time limits of the tests that timed out add up; once they reach the
    budget, the run's later tests are not run (each is skipped, saying so),
    so a backend that hangs in every test gets its verdict in about the
    budget, not in a limit per test.
    """
    return _HANG_BUDGETS.get(profile, _HANG_BUDGETS["ci"])
