"""``CallInfo``: what the reference rules need of a call (a leaf module).

Built by the engine (:mod:`simclock_lint._analysis`, :mod:`simclock_lint._fallback`)
and read by the rules (``simclock_lint._rules``, which re-export it from
``_rules._common``); here, below both, so neither imports the other back.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CallInfo"]


@dataclass(frozen=True, slots=True)
class CallInfo:
    """What the reference rules need of a call, built from a libcst or an ``ast`` call.

    ``keywords`` maps each keyword to whether its value is the literal None;
    ``reads`` holds the dotted names the first positional argument (or the
    ``seed``/``entropy``/``x`` keyword) refers to, e.g. ``time.time``.
    """

    positional: int
    first_is_none: bool
    keywords: dict[str, bool]
    star_kwargs: bool
    reads: frozenset[str] = frozenset()

    def seed_given(self, keyword: str) -> bool | None:
        """Whether a seed (first positional or ``keyword``) is passed and is not None.

        None when ``**kwargs`` may carry it: cannot tell.
        """
        if self.positional:
            return not self.first_is_none
        if keyword in self.keywords:
            return not self.keywords[keyword]
        return None if self.star_kwargs else False
