"""The headless browser of the browser tests (the docs site's search, the conformance matrix).

``chromium()`` is the path of Debian's ``chromium`` (or another Chromium-based
browser on ``PATH``). Where there is none, a test skips with one reason, the
same for every browser test; in CI (``CI=true``), where ``.ci/run`` installs
Chromium from Debian's packages before ``make test``, a missing browser fails
the test instead, so CI's log never shows a browser test skipped.
"""

from __future__ import annotations

import os
import shutil

import pytest

__all__ = ["BROWSERS", "SKIP_REASON", "chromium"]

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
SKIP_REASON = "no headless Chromium on PATH: install Debian's chromium (apt-get install chromium)"


def chromium() -> str:
    """The browser's path; skip (fail under ``CI=true``) with `SKIP_REASON` when there is none."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"{SKIP_REASON}; .ci/run installs it when it runs as root")
    pytest.skip(SKIP_REASON)
