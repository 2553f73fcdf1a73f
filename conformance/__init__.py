"""Backend-agnostic conformance suite for simclock clocks (SPEC §14)."""

__all__: list[str] = []
