"""The rule registry: one module per rule, in code order (SPEC §13)."""

from __future__ import annotations

from simclock_lint._rule import Rule
from simclock_lint._rules import (
    _sck101_global_random,
    _sck102_global_numpy_random,
    _sck103_unseeded_generator,
    _sck104_legacy_random_state,
    _sck201_dynamic_child_label,
    _sck301_wall_clock,
    _sck401_float_time,
    _sck402_float_to_ns,
    _sck403_float_time_accumulation,
)

__all__ = ["DEFAULT_RULES", "RULES", "RULES_BY_CODE"]

RULES: tuple[Rule, ...] = (
    _sck101_global_random.RULE,
    _sck102_global_numpy_random.RULE,
    _sck103_unseeded_generator.RULE,
    _sck104_legacy_random_state.RULE,
    _sck201_dynamic_child_label.RULE,
    _sck301_wall_clock.RULE,
    _sck401_float_time.RULE,
    _sck402_float_to_ns.RULE,
    _sck403_float_time_accumulation.RULE,
)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
# What runs unless a selection names an opt-in rule by its exact code.
DEFAULT_RULES: tuple[Rule, ...] = tuple(rule for rule in RULES if rule.default)
