"""Hypothesis profiles: ``ci`` (bounded, derandomised) by default, ``thorough`` on request.

``make test`` runs ``ci``; ``make test-thorough`` sets ``HYPOTHESIS_PROFILE=thorough``
(1000 random examples a property instead of 60 fixed ones).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")
