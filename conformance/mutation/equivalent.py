"""Surviving mutants that are not counted against the suite, each with its reason.

:data:`EQUIVALENT`: ``path:line:operator:occurrence -> reason`` (the key
``conformance/mutation/campaign.py`` prints): the mutant behaves the same under every call
SPEC allows. A listed mutant the campaign no longer finds is reported as stale.

:data:`UNDECIDED`: ``path:function -> reason`` (or a mutant's key, for one site of
a function whose other lines a clause decides): code whose behaviour no clause of
the conformance suite decides (it is outside the protocol a backend offers); the
library's own tests check it. Survivors there are reported apart from the score.
"""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    "oracles/simclock_oracles/_reference.py:190:core/NumberReplacer:20": (
        "the first seq is 1, not 0: seqs are only compared with each other (C-TIE-1), never "
        "shown, so every order and every reply is the same"
    ),
    "oracles/simclock_oracles/_reference.py:314:core/ReplaceBinaryOperator_Mul_LShift:2": (
        "the exponential search quadruples instead of doubling: lo_k still only takes grid "
        "indexes below now, so the binary search that follows finds the same first index"
    ),
    "simclock/core/_heapclock.py:215:core/ReplaceComparisonOperator_IsNot_NotEq:1": (
        "kind is a type object: `kind != _FUNCTION` is `kind is not _FUNCTION` (types compare "
        "by identity)"
    ),
    "simclock/core/_heap.py:285:core/ReplaceBinaryOperator_Sub_Div:8": (
        "_TupleHeap.tombstoned compacts on size > 2*size/dead + threshold (dead >= 1 there): "
        "earlier or later than the original, but whenever tombstones exceed 2*live + 1024 "
        "(dead > 1024 makes 2*size/dead < size - 64) it still compacts, and `stored` is "
        "compared only against C-CAN-4's bound, never exactly"
    ),
    "simclock/core/_heap.py:207:core/ReplaceComparisonOperator_Gt_IsNot:3": (
        "LazyHeap.restore_bound compacts whenever size is not exactly 2*live + threshold: "
        "more often, never less when the bound is exceeded; compaction keeps the (at, seq) "
        "order and `stored` is compared only against C-CAN-4's bound"
    ),
    "simclock/core/_entry.py:89:core/ReplaceComparisonOperator_Gt_GtE:1": (
        "first_rate_index steps down while k >= 0 instead of k > 0: the function returns 0 "
        "before the loops when elapsed <= 0, so at k == 0 rate_offset_ns(-1) < 0 < elapsed "
        "and the loop stops there either way"
    ),
    "simclock/core/_entry.py:271:core/ReplaceComparisonOperator_Eq_Is:9": (
        "state is _SKIPPED for state == _SKIPPED: both are small ints (0..6), which the "
        "interpreter keeps one object each of, so identity is equality"
    ),
    "simclock/core/_heap.py:285:core/ReplaceBinaryOperator_Mul_BitAnd:5": (
        "_TupleHeap.tombstoned compacts when size > (2 & live) + threshold: at every cancel "
        "once the heap holds more than threshold + 2 items, so more often, never less; "
        "compaction keeps the (at, seq) order and `stored` is compared only against "
        "C-CAN-4's bound (a cost, not a behaviour)"
    ),
    "simclock/core/_heap.py:285:core/ReplaceComparisonOperator_Gt_IsNot:4": (
        "_TupleHeap.tombstoned compacts whenever size is not exactly 2*live + threshold: more "
        "often, never less when the bound is exceeded; `stored` is only bounded (C-CAN-4)"
    ),
    "oracles/simclock_oracles/_reference.py:65:core/NumberReplacer:9": (
        "the reference clock accepting -1 as a time: equivalent as the suite uses it, since "
        "every time it hands the oracle was parsed from a digit string (C-WIRE-2) or is a "
        "schedule time the protocol engine checked; the oracle's own refusal of a negative "
        "time (C-TIME-3) is checked by tests/test_oracle_reference.py"
    ),
}

_NOT_PROTOCOL = (
    "not part of the SimClock protocol (SPEC §1) or its extensions (§15): no backend "
    "offers it, so no conformance program calls it; tests/test_sec1_simclock.py and "
    "the Session tests check it"
)
_SELF_CHECK = (
    "the invariant check the library's state machine calls (tests/test_state_machine.py); "
    "the conformance suite never calls it"
)

_NO_FAILED_COUNT = (
    "the count of raising firings in a repeating entry's stats(): C-X-STATS names fired, "
    "skipped and overrun only, and the wire's `stats` reply carries those three"
)

_DRAW_ARGUMENTS = (
    "which arguments a draw refuses (integers() bounds, a size's limit, a NaN, infinite or "
    "negative parameter): no clause decides it; the clauses draw with valid arguments only, "
    "so a mutant refusing one of those is killed, one accepting a bad one survives"
)
_OVERRUN = (
    "the overrun count of a quantised entry, a firing at or after the next nominal time: "
    "only a period shorter than the clock's step has one (GridClock, C-GRID-2, checked by "
    "the library's tests); a backend following SPEC §1's 1 ns semantics never overruns, "
    "so the second backend (quantised.py), which follows it exactly, never does either"
)

UNDECIDED: dict[str, str] = {
    # Single sites (a mutant key) in functions whose other lines a clause decides.
    "simclock/core/_entry.py:174:core/NumberReplacer:49": _NO_FAILED_COUNT,
    "simclock/core/_entry.py:40:core/NumberReplacer:11": (
        "_FAILED equal to _FIRED: only a one-shot's stats().failed changes; " + _NO_FAILED_COUNT
    ),
    "simclock/core/_heapclock.py:523:core/ReplaceComparisonOperator_GtE_Eq:1": _OVERRUN,
    "simclock/core/_random.py:261:core/ReplaceComparisonOperator_LtE_NotEq:0": (
        "uniform(a, b) refusing a == b and accepting a > b: " + _DRAW_ARGUMENTS
    ),
    "oracles/simclock_oracles/_reference.py:122:core/ExceptionReplacer:1": (
        "the name of a callback whose __qualname__ raises: C-ERR-1 names the callback's "
        "qualified name and says nothing of a callback that has none; the suite's callbacks "
        "(in process and over the wire) all have one"
    ),
    # Whole functions and module constants.
    "simclock/core/_random.py:check_real": _DRAW_ARGUMENTS,
    "simclock/core/_random.py:check_size": _DRAW_ARGUMENTS,
    "simclock/core/_random.py:check_sigma": _DRAW_ARGUMENTS,
    "simclock/core/_random.py:check_bounds": _DRAW_ARGUMENTS,
    "simclock/core/_random.py:MAX_DRAW_ELEMENTS": _DRAW_ARGUMENTS,
    "simclock/core/_random.py:_INT64_MIN": _DRAW_ARGUMENTS,
    "simclock/core/_random.py:_INT64_END": _DRAW_ARGUMENTS,
    "oracles/simclock_oracles/_reference.py:_show": (
        "the text of the oracle's refusal messages (and its guard against a raising repr): "
        "a reply's message is never compared (C-WIRE-3), a refused call's kind is"
    ),
    "simclock/core/_heapclock.py:HeapSimClock.run_until": _NOT_PROTOCOL,
    "simclock/core/_heapclock.py:HeapSimClock.run_steps": _NOT_PROTOCOL,
    "simclock/core/_heapclock.py:HeapSimClock._run_to": _NOT_PROTOCOL,
    "simclock/core/_heapclock.py:HeapSimClock.skip_to": _NOT_PROTOCOL,
    "simclock/core/_heapclock.py:HeapSimClock.schedule_repeating": (
        "its own argument checks: the library API behind GridClock's repeating schedules; the "
        "second backend (quantised.py) reaches it only through GridClock, which has checked "
        "the arguments already, and what it schedules is _repeating's, which is judged"
    ),
    "simclock/core/_heapclock.py:HeapSimClock._check": _SELF_CHECK,
    "simclock/core/_heapclock.py:HeapSimClock.__init__": (
        "the constructor's own arguments (step_ns, compact_threshold, bus) are HeapSimClock's, "
        "not the protocol's: the suite makes every clock with FACTORY(seed, bus)"
    ),
    "simclock/core/_entry.py:_Entry.first_k_at_or_after": "used by skip_to only; " + _NOT_PROTOCOL,
    "simclock/core/_entry.py:_Entry.missed_last_before": "used by skip_to only; " + _NOT_PROTOCOL,
    "simclock/core/_entry.py:_Entry.at_index": "used by skip_to only; " + _NOT_PROTOCOL,
    "simclock/core/_heap.py:_check_heap": _SELF_CHECK,
    "simclock/core/_heap.py:LazyHeap.live": (
        "pending_count(): not part of the protocol; the suite reads it only as `stored` of a "
        "backend without heap_size() (the second backend), where C-CAN-4 bounds it and "
        "nothing compares it"
    ),
    "simclock/core/_heap.py:_TupleHeap.live": (
        "pending_count(): not part of the protocol; the suite reads it only as `stored` of a "
        "backend without heap_size() (the second backend), where C-CAN-4 bounds it and "
        "nothing compares it"
    ),
    "simclock/core/_heapclock.py:HeapSimClock.pending_count": (
        "pending_count(): not part of the protocol; the suite reads it only as `stored` of a "
        "backend without heap_size() (the second backend), where C-CAN-4 bounds it and "
        "nothing compares it"
    ),
    "simclock/core/_heap.py:LazyHeap._check": _SELF_CHECK,
    "simclock/core/_heap.py:LazyHeap.live_items": _SELF_CHECK,
    "simclock/core/_heap.py:_TupleHeap._check": _SELF_CHECK,
    "simclock/core/_heap.py:_TupleHeap.live_items": _SELF_CHECK,
}
