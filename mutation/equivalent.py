"""Surviving mutants shown equivalent: same behaviour under every call SPEC allows.

``key -> reason``, the key being ``path:line:operator:occurrence`` as
``mutation/campaign.py`` prints it. A mutant listed here that the campaign no
longer finds is reported as stale.
"""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {}
