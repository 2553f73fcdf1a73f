"""Private: the suite's clause families, pytest mixins of ``ClockConformance``."""
