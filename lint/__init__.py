"""The simclock determinism linter (SPEC §13)."""

__all__: list[str] = []
