"""The browser tests' one skip reason, and their failure in CI (tests/headless_browser.py)."""

from __future__ import annotations

import pytest
from headless_browser import SKIP_REASON, chromium


def test_without_a_browser_the_browser_tests_skip_with_one_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"^no headless Chromium on PATH: install "):
        chromium()
    assert SKIP_REASON.endswith("(apt-get install chromium)")


def test_in_ci_a_missing_browser_fails_instead_of_skipping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"; \.ci/run installs it when it runs as "):
        chromium()
