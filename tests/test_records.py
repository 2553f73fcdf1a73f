"""SPEC §12: the sampling-record scheduler ``simclock.records.SamplingEvents``.

§12 has no clause ids, so the tests carry ``S12`` and the behaviour they pin.
"""

from __future__ import annotations

import operator
import string
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simclock.records._sampling as records_impl
from simclock import SimclockValueError
from simclock.records import SamplingEvents
from simclock_oracles import SamplingReference, sampling_batch

# -- helpers -----------------------------------------------------------------------


def _state(ev: SamplingEvents) -> tuple[Any, ...]:
    """Everything a refused call must leave alone (the next token is probed separately)."""
    return (
        ev.now_us,
        ev.pending_count,
        ev.physical_heap_count,
        list(ev._heap),
        set(ev._live),
    )


def _assert_refused(
    ev: SamplingEvents, word: str, call: Any, *args: Any, next_token: int | None = None
) -> None:
    """``call(*args)`` raises ValueError(word) exactly, and ``ev`` is unchanged."""
    before = _state(ev)
    with pytest.raises(SimclockValueError, match=rf"^{word}$") as info:
        call(*args)
    assert isinstance(info.value, ValueError)
    assert not isinstance(info.value, TypeError)
    assert _state(ev) == before
    ev._check()
    if next_token is not None:
        # The refused call took no token: the next accepted one gets the expected number.
        assert ev.schedule(ev.now_us, "Probe", 0) == next_token
        assert ev.cancel(next_token) is True


def _rec(time_us: int, token: int, sensor_id: str, millivolts: int) -> dict[str, Any]:
    return {"time_us": time_us, "token": token, "sensor_id": sensor_id, "millivolts": millivolts}


# -- scope and basics --------------------------------------------------------------


def test_S12_module_documents_scope() -> None:
    doc = records_impl.__doc__ or ""
    for phrase in ("no callbacks", "no wall clock", "no deadline guarantee"):
        assert phrase in doc
    assert "ValueError" in doc and "TypeError" in doc


def test_S12_public_module_exports() -> None:
    import simclock.records as public

    assert public.__all__ == [
        "MILLIVOLTS_MAX",
        "MILLIVOLTS_MIN",
        "SENSOR_ID_PATTERN",
        "SamplingEvents",
        "SamplingRecord",
    ]
    assert public.SamplingEvents is records_impl.SamplingEvents


def test_S12_starts_at_zero_and_now_is_read_only() -> None:
    ev = SamplingEvents()
    assert ev.now_us == 0
    assert type(ev.now_us) is int
    assert ev.pending_count == 0
    assert ev.physical_heap_count == 0
    with pytest.raises(AttributeError):
        ev.now_us = 5  # type: ignore[misc]
    assert ev.now_us == 0


def test_S12_tokens_count_from_zero_in_insertion_order() -> None:
    ev = SamplingEvents()
    tokens = [ev.schedule(t, "S01", 0) for t in (30, 10, 20, 10)]
    assert tokens == [0, 1, 2, 3]
    assert ev.pending_count == 4
    assert ev.physical_heap_count == 4
    ev._check()


def test_S12_record_keys_and_types() -> None:
    ev = SamplingEvents()
    ev.schedule(3, "Imu_0-a", -5000)
    (record,) = ev.run_until(3)
    assert list(record) == ["time_us", "token", "sensor_id", "millivolts"]
    assert record == _rec(3, 0, "Imu_0-a", -5000)
    assert type(record) is dict


# -- order ---------------------------------------------------------------------------


def test_S12_stop_boundary_is_inclusive() -> None:
    ev = SamplingEvents()
    ev.schedule(10, "S01", 1)
    ev.schedule(11, "S02", 2)
    assert ev.run_until(9) == []
    assert ev.now_us == 9
    assert ev.run_until(10) == [_rec(10, 0, "S01", 1)]
    assert ev.now_us == 10
    assert ev.pending_count == 1
    assert ev.run_until(11) == [_rec(11, 1, "S02", 2)]
    ev._check()


def test_S12_event_at_now_is_allowed_and_returned_by_next_run() -> None:
    ev = SamplingEvents()
    ev.run_until(7)
    token = ev.schedule(7, "S01", 5)
    assert ev.run_until(7) == [_rec(7, token, "S01", 5)]
    assert ev.run_until(7) == []


def test_S12_ties_go_by_insertion_not_sensor_name() -> None:
    ev = SamplingEvents()
    # Sensor names in reverse alphabetical order, and millivolts descending, so
    # any ordering by name or value would show.
    ev.schedule(5, "Zeta", 300)
    ev.schedule(5, "Alpha", 200)
    ev.schedule(4, "Mid", 999)
    ev.schedule(5, "Beta", 100)
    assert ev.run_until(5) == [
        _rec(4, 2, "Mid", 999),
        _rec(5, 0, "Zeta", 300),
        _rec(5, 1, "Alpha", 200),
        _rec(5, 3, "Beta", 100),
    ]


def test_S12_times_above_2_53_stay_exact() -> None:
    big = 2**60
    assert float(big) == float(big + 1)  # a float clock could not tell them apart
    ev = SamplingEvents()
    ev.schedule(big + 1, "Late", 1)
    ev.schedule(big, "Early", 2)
    assert ev.run_until(big) == [_rec(big, 1, "Early", 2)]
    assert ev.now_us == big
    (record,) = ev.run_until(big + 1)
    assert record == _rec(big + 1, 0, "Late", 1)
    assert type(record["time_us"]) is int
    assert ev.now_us == big + 1
    ev._check()


def test_S12_run_until_moves_now_even_when_nothing_is_due() -> None:
    ev = SamplingEvents()
    assert ev.run_until(0) == []
    assert ev.now_us == 0
    assert ev.run_until(1234) == []
    assert ev.now_us == 1234
    ev.schedule(2000, "S01", 0)
    assert ev.run_until(1999) == []
    assert ev.now_us == 1999
    assert ev.pending_count == 1


# -- cancellation ----------------------------------------------------------------


def test_S12_cancel_results() -> None:
    ev = SamplingEvents()
    a = ev.schedule(1, "A", 1)
    b = ev.schedule(2, "B", 2)
    c = ev.schedule(3, "C", 3)
    assert ev.cancel(b) is True
    assert ev.pending_count == 2
    assert ev.physical_heap_count == 3  # lazy: b is a tombstone
    assert ev.cancel(b) is False  # repeated
    assert ev.cancel(99) is False  # never issued
    assert ev.cancel(2**100) is False  # far beyond any token: unknown, not an error
    assert ev.cancel(c + 1) is False  # the next token, not issued yet
    assert ev.run_until(1) == [_rec(1, a, "A", 1)]
    assert ev.cancel(a) is False  # already returned
    assert ev.pending_count == 1
    # The next token is still 3: cancel never consumes or frees a token.
    assert ev.schedule(5, "D", 4) == 3
    assert ev.run_until(5) == [_rec(3, c, "C", 3), _rec(5, 3, "D", 4)]
    ev._check()


def test_S12_tombstone_stays_until_it_reaches_the_root() -> None:
    ev = SamplingEvents()
    ev.schedule(10, "Live", 0)
    dead = ev.schedule(20, "Dead", 0)
    assert ev.cancel(dead) is True
    assert (ev.pending_count, ev.physical_heap_count) == (1, 2)
    # The live root at 10 is not due: the tombstone under it is not reached.
    assert ev.run_until(5) == []
    assert (ev.pending_count, ev.physical_heap_count) == (1, 2)
    ev._check()


def test_S12_many_tombstones_behind_a_live_root_are_not_compacted() -> None:
    """§12 has no compaction: tombstones outnumbering live entries still wait for the root."""
    ev = SamplingEvents()
    early = ev.schedule(3, "Early", 0)
    ev.schedule(10, "Live", 0)
    late = [ev.schedule(t, "Dead", 0) for t in (20, 30, 40, 50, 60)]
    for token in (early, *late):
        assert ev.cancel(token) is True
    assert (ev.pending_count, ev.physical_heap_count) == (1, 7)
    # The tombstone at 3 is the root and leaves; the live entry at 10 then
    # blocks the root, so the five later tombstones stay.
    assert ev.run_until(5) == []
    assert (ev.pending_count, ev.physical_heap_count) == (1, 6)
    ev._check()
    assert ev.run_until(10) == [_rec(10, 1, "Live", 0)]
    assert (ev.pending_count, ev.physical_heap_count) == (0, 0)


def test_S12_tombstone_behind_returned_root_is_discarded() -> None:
    ev = SamplingEvents()
    ev.schedule(10, "Live", 0)
    dead = ev.schedule(20, "Dead", 0)
    assert ev.cancel(dead) is True
    assert ev.run_until(5) == []
    # Returning the root brings the tombstone to the root, where it is discarded
    # although its time (20) is after the stop.
    assert ev.run_until(10) == [_rec(10, 0, "Live", 0)]
    assert (ev.pending_count, ev.physical_heap_count) == (0, 0)
    ev._check()


def test_S12_all_cancelled_schedule_drains_to_empty_heap() -> None:
    ev = SamplingEvents()
    tokens = [ev.schedule(t, f"S{t:02d}", t) for t in (5, 1, 9, 1, 30)]
    assert [ev.cancel(t) for t in tokens] == [True] * 5
    assert (ev.pending_count, ev.physical_heap_count) == (0, 5)
    ev._check()
    assert ev.run_until(30) == []
    assert (ev.pending_count, ev.physical_heap_count) == (0, 0)
    assert ev.now_us == 30
    ev._check()


# -- rejected inputs -------------------------------------------------------------------


class _IntSubclass(int):
    """An ``int`` that is not exactly ``int``: §12 asks for ``type(x) is int``."""


BAD_TIMES = [
    _IntSubclass(3),
    True,
    False,
    1.0,
    0.0,
    float("nan"),
    "1",
    None,
    -1,
    np.int64(3),
    Decimal(1),
    Fraction(1),
]
BAD_SENSOR_IDS = [
    "",
    "A" * 17,
    "1abc",
    "_abc",
    "-abc",
    "S 01",
    "S.01",
    "Sé",
    "É01",
    "S\u0663",  # an Arabic-Indic digit: a Unicode digit, not ASCII
    "\uff3301",  # fullwidth S
    "S01\n",
    None,
    1,
    b"S01",
]
GOOD_SENSOR_IDS = ["A", "z", "A" * 16, "a_b-9", "Z9", "S-", "x_"]
BAD_MILLIVOLTS = [5001, -5001, 10**30, True, False, 1.0, "1", None, np.int32(1)]
BAD_TOKENS = [True, False, -1, 1.0, "0", None, np.int64(0)]


@pytest.mark.parametrize("bad", BAD_TIMES, ids=repr)
def test_S12_schedule_refuses_bad_time(bad: Any) -> None:
    ev = SamplingEvents()
    ev.schedule(4, "S01", 0)
    _assert_refused(ev, "time_us", ev.schedule, bad, "S01", 0, next_token=1)


@pytest.mark.parametrize("bad", BAD_TIMES, ids=repr)
def test_S12_run_until_refuses_bad_stop(bad: Any) -> None:
    ev = SamplingEvents()
    ev.schedule(0, "S01", 0)
    _assert_refused(ev, "time_us", ev.run_until, bad, next_token=1)


def test_S12_past_event_and_past_stop() -> None:
    ev = SamplingEvents()
    ev.schedule(50, "S01", 0)
    ev.run_until(10)
    _assert_refused(ev, "past_event", ev.schedule, 9, "S01", 0)
    _assert_refused(ev, "past_stop", ev.run_until, 9)
    _assert_refused(ev, "past_event", ev.schedule, 0, "S01", 0, next_token=1)
    assert ev.now_us == 10


@pytest.mark.parametrize("bad", BAD_SENSOR_IDS, ids=repr)
def test_S12_schedule_refuses_bad_sensor_id(bad: Any) -> None:
    ev = SamplingEvents()
    _assert_refused(ev, "sensor_id", ev.schedule, 0, bad, 0, next_token=0)


def test_S12_schedule_refuses_str_subclass_sensor_id() -> None:
    class Name(str):
        pass

    ev = SamplingEvents()
    _assert_refused(ev, "sensor_id", ev.schedule, 0, Name("S01"), 0, next_token=0)


@pytest.mark.parametrize("good", GOOD_SENSOR_IDS)
def test_S12_schedule_accepts_good_sensor_id(good: str) -> None:
    ev = SamplingEvents()
    assert ev.schedule(0, good, 0) == 0
    assert ev.run_until(0) == [_rec(0, 0, good, 0)]


@pytest.mark.parametrize("bad", BAD_MILLIVOLTS, ids=repr)
def test_S12_schedule_refuses_bad_millivolts(bad: Any) -> None:
    ev = SamplingEvents()
    _assert_refused(ev, "millivolts", ev.schedule, 0, "S01", bad, next_token=0)


@pytest.mark.parametrize("good", [-5000, -1, 0, 1, 5000])
def test_S12_schedule_accepts_millivolts_bounds(good: int) -> None:
    ev = SamplingEvents()
    ev.schedule(0, "S01", good)
    assert ev.run_until(0) == [_rec(0, 0, "S01", good)]


@pytest.mark.parametrize("bad", BAD_TOKENS, ids=repr)
def test_S12_cancel_refuses_bad_token(bad: Any) -> None:
    ev = SamplingEvents()
    ev.schedule(0, "S01", 0)
    _assert_refused(ev, "token", ev.cancel, bad, next_token=1)
    assert ev.pending_count == 1


@pytest.mark.parametrize(
    ("args", "word"),
    [
        # Every argument wrong: the time is checked first.
        ((-1, "", 9999), "time_us"),
        ((None, None, None), "time_us"),
        # Time fine but in the past: past_event before sensor_id and millivolts.
        ((3, "", 9999), "past_event"),
        # Time fine and not past: sensor_id before millivolts.
        ((5, "", 9999), "sensor_id"),
        ((5, "S01", 9999), "millivolts"),
    ],
)
def test_S12_schedule_validation_order(args: tuple[Any, Any, Any], word: str) -> None:
    ev = SamplingEvents()
    ev.schedule(8, "S01", 0)
    ev.run_until(5)
    _assert_refused(ev, word, ev.schedule, *args, next_token=1)


def test_S12_refused_calls_consume_no_token() -> None:
    ev = SamplingEvents()
    assert ev.schedule(0, "S01", 0) == 0
    bad_calls: list[tuple[Any, Any, Any]] = [
        (1.0, "S01", 0),
        (1, "", 0),
        (1, "S01", 5001),
        (True, "S01", 0),
    ]
    for bad_args in bad_calls:
        with pytest.raises(ValueError):
            ev.schedule(*bad_args)
    assert ev.schedule(1, "S01", 0) == 1
    assert ev.run_until(1) == [_rec(0, 0, "S01", 0), _rec(1, 1, "S01", 0)]


# -- property tests against the batch oracle ----------------------------------------------


def _mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` most of the time (``bad`` about one draw in ten), so most calls pass validation."""
    # one_of() picks its branches about evenly, which would make half the calls fail.
    return st.integers(0, 99).flatmap(lambda k: bad if k < 10 else good)


_ID_REST = string.ascii_letters + string.digits + "_-"
_bad_ints = st.sampled_from([True, False, -1, 1.5, "3", None, np.int64(2)])
_sensor_ids = _mostly(
    st.one_of(
        st.sampled_from(["S01", "S02", "Zeta", "A", "B" * 16]),
        # Built from characters rather than from_regex(), which is slow to draw.
        st.builds(
            operator.add,
            st.sampled_from(string.ascii_letters),
            st.text(alphabet=_ID_REST, max_size=15),
        ),
    ),
    st.one_of(st.sampled_from(["", "9a", "S\u00e9", "A" * 17, None]), st.text(max_size=18)),
)
_millivolts = _mostly(st.integers(-5000, 5000), st.sampled_from([5001, -5001, True, 2.0, None]))
_kinds = st.sampled_from(["schedule", "schedule", "schedule", "cancel", "run_until"])
# ("after", d): now + d, many ties; ("before", d): now - d, past (or -1 at now == 0);
# ("as is", x): a huge time above 2**53 or a value that is not an int.
_time_specs = _mostly(
    st.tuples(st.just("after"), st.integers(0, 12)),
    st.one_of(
        st.tuples(st.just("before"), st.integers(1, 40)),
        st.tuples(st.just("as is"), st.one_of(_bad_ints, st.sampled_from([2**60, 2**60 + 1]))),
    ),
)


def _time_from(spec: tuple[str, Any], now: int) -> Any:
    kind, value = spec
    if kind == "after":
        return now + value
    if kind == "before":
        return now - value if value <= now else -1
    return value


@given(st.data())
def test_S12_matches_batch_oracle_on_random_calls(data: st.DataObject) -> None:
    """Random schedules, cancels (unknown, repeated, returned, invalid) and stops agree.

    Every call goes to the implementation and to the batch oracle; results,
    error words, ``now_us``, ``pending_count`` and ``physical_heap_count``
    (tombstones leave only at the root) must agree, a refused call
    must change nothing, and the invariants must hold after every call.
    """
    ev = SamplingEvents()
    ref = SamplingReference()
    issued = 0
    for _ in range(data.draw(st.integers(0, 50), label="calls")):
        name = data.draw(_kinds)
        args: tuple[Any, ...]
        if name == "schedule":
            args = (
                _time_from(data.draw(_time_specs), ref.now_us),
                data.draw(_sensor_ids),
                data.draw(_millivolts),
            )
        elif name == "cancel":
            # Up to two tokens past the last one issued: unknown tokens are cancelled too.
            args = (data.draw(_mostly(st.integers(0, issued + 1), _bad_ints)),)
        else:
            args = (_time_from(data.draw(_time_specs), ref.now_us),)
        try:
            expected = getattr(ref, name)(*args)
        except ValueError as exc:
            before = _state(ev)
            with pytest.raises(SimclockValueError) as info:
                getattr(ev, name)(*args)
            assert str(info.value) == str(exc)
            assert _state(ev) == before
        else:
            assert getattr(ev, name)(*args) == expected
            if name == "schedule":
                assert expected == issued
                issued += 1
        ev._check()
        assert ev.now_us == ref.now_us
        assert ev.pending_count == ref.pending_count
        # Lazy cancellation, exactly: a tombstone leaves only when it reaches the root.
        assert ev.physical_heap_count == ref.physical_heap_count
    # Past every time drawn (at most 2**60 + 1 + 12 per call): this drains everything.
    final = 2**62
    assert ev.run_until(final) == ref.run_until(final)
    assert (ev.pending_count, ev.physical_heap_count) == (0, 0)


_entries = st.lists(
    st.tuples(st.integers(0, 60), st.sampled_from(["S01", "S02", "S03"]), st.integers(-5, 5)),
    max_size=30,
)


@given(
    _entries,
    st.lists(st.integers(0, 35), max_size=15),
    st.lists(st.integers(0, 70), min_size=1, max_size=6),
)
def test_S12_split_horizons_give_the_same_trace(
    entries: list[tuple[int, str, int]], cancels: list[int], stops: list[int]
) -> None:
    """Several increasing stops return, concatenated, what one run to the last stop returns."""
    stops.sort()

    def prepared() -> SamplingEvents:
        ev = SamplingEvents()
        for at, sensor, mv in entries:
            ev.schedule(at, sensor, mv)
        for token in cancels:  # repeats and never-issued tokens included
            ev.cancel(token)
        return ev

    split = prepared()
    concatenated = []
    for stop in stops:
        concatenated.extend(split.run_until(stop))
        split._check()
        assert split.now_us == stop
    whole = prepared()
    single = whole.run_until(stops[-1])
    assert concatenated == single
    assert (split.pending_count, split.physical_heap_count) == (
        whole.pending_count,
        whole.physical_heap_count,
    )
    tokened = [(at, token, sensor, mv) for token, (at, sensor, mv) in enumerate(entries)]
    assert single == sampling_batch(tokened, cancels, stops[-1])
