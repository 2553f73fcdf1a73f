"""Version of the contract (SPEC.md) this implementation follows."""

from __future__ import annotations

__all__ = ["CONTRACT_VERSION"]

CONTRACT_VERSION = "1.0"
"""Version of SPEC.md this implementation follows; stored in recordings (C-MCAP-2)."""
