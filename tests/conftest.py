"""Hypothesis profiles: ``ci`` (bounded, derandomised) by default, ``thorough`` on request.

``make test`` runs ``ci``; ``make test-thorough`` sets ``HYPOTHESIS_PROFILE=thorough``
(1000 random examples a property instead of 60 fixed ones).
"""

from __future__ import annotations

import gc
import os

import pytest
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

# The files that take the most CPU time, heaviest first (measured with the ci profile):
# pytest-xdist hands whole files to the workers in collection order, so starting these
# first keeps one long file from running alone at the end while the other cores idle.
# The order changes no test's outcome: each file's tests keep their own order.
_HEAVY_FIRST = (
    "test_conformance_selfcheck.py",
    "test_conformance_drivers.py",
    "test_conformance_wire.py",
    "test_conformance_cli.py",
    "test_docs_examples.py",
    "test_install.py",
    "test_sweep.py",
    "test_recording_integrity.py",
    "test_state_machine.py",
    "test_kit_java.py",
    "test_async_peers.py",
    "test_kit_rust.py",
    "test_conformance_isolation.py",
    "test_kit_js.py",
    "test_serve_equality.py",
    "test_conformance_report_text.py",
    "test_kit_go.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(_HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Leave what the imports and the collection made out of the garbage collector's scans.

    The test modules import numpy, MuJoCo, Hypothesis and the whole library: each full
    collection (Python's own, pytest's after each in-process suite run, the C-CAN-4 memory
    test's) would scan all of it again. Frozen objects are never freed, which is what
    they would be anyway: they live until the process ends.
    """
    del session
    gc.freeze()
