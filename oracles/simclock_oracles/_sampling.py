"""Batch reference for the sampling-record scheduler of SPEC §12.

Written from the SPEC text alone, with no heap and no tombstones: entries sit
in a plain list in insertion order, and each ``run_until`` filters out the
cancelled and the late ones, then sorts what is left by ``(time_us, token)``.
It raises the builtin ``ValueError`` with the §12 word so a test can compare
messages without this module importing simclock.
"""

from __future__ import annotations

import string
from collections.abc import Iterable

__all__ = ["SamplingReference", "sampling_batch"]

_FIRST = frozenset(string.ascii_letters)
_REST = frozenset(string.ascii_letters + string.digits + "_-")


def _natural(value: object) -> int | None:
    """``value`` if it is exactly an ``int`` (not bool, not numpy) and >= 0, else None."""
    if type(value) is int and value >= 0:
        return value
    return None


def _valid_sensor_id(value: object) -> bool:
    # Character sets instead of a regular expression, to be independent of
    # the implementation's pattern.
    if type(value) is not str or not 1 <= len(value) <= 16:
        return False
    return value[0] in _FIRST and all(c in _REST for c in value[1:])


def sampling_batch(
    entries: Iterable[tuple[int, int, str, int]],
    cancelled: Iterable[int],
    stop_us: int,
) -> list[dict[str, int | str]]:
    """Records due by ``stop_us`` from ``(time_us, token, sensor_id, millivolts)`` entries.

    Drops the entries whose token is in ``cancelled`` and those later than
    ``stop_us`` (the stop is inclusive), then sorts by ``(time_us, token)``.
    """
    if type(stop_us) is not int:
        raise TypeError(f"stop_us must be an int, got {type(stop_us).__name__}")
    try:
        given = list(entries)
        gone = set(cancelled)
    except TypeError:
        raise
    except Exception as exc:  # an __iter__ or __hash__ that raises something else
        raise TypeError(
            f"entries and cancelled must be iterables of plain values ({type(exc).__name__})"
        ) from None
    checked = []
    for e in given:
        if type(e) is not tuple or len(e) != 4:
            raise TypeError(
                "entries must be (time_us, token, sensor_id, millivolts) tuples, got "
                f"{type(e).__name__}"
            )
        checked.append(e)
    due = [e for e in checked if e[1] not in gone and e[0] <= stop_us]
    due.sort(key=lambda e: (e[0], e[1]))
    return [{"time_us": t, "token": k, "sensor_id": s, "millivolts": mv} for t, k, s, mv in due]


class SamplingReference:
    """Same calls as ``simclock.records.SamplingEvents``, computed in batches.

    ``schedule`` appends to a list, ``cancel`` adds to a set, ``run_until``
    calls :func:`sampling_batch` on everything not yet returned. O(n log n)
    per ``run_until``; meant for property tests, not for speed.

    ``physical_heap_count`` is predicted without a heap: an entry leaves a
    min-heap only when it is the root, i.e. the smallest ``(time_us, token)``
    left, so what ``run_until`` removes is always a prefix of the remaining
    entries in that order. The prefix ends at the first live entry after the
    stop (or takes everything if there is none): the returned entries and the
    tombstones before that entry leave, every later tombstone stays.
    """

    def __init__(self) -> None:
        self.now_us = 0
        self._entries: list[tuple[int, int, str, int]] = []
        self._cancelled: set[int] = set()
        self._returned: set[int] = set()
        # Tokens no longer physically held: returned, or tombstones that reached the root.
        self._gone: set[int] = set()

    @property
    def pending_count(self) -> int:
        """Entries neither cancelled nor returned."""
        done = self._cancelled | self._returned
        return sum(1 for e in self._entries if e[1] not in done)

    @property
    def physical_heap_count(self) -> int:
        """Entries a lazily-cancelling heap still holds, tombstones included (SPEC §12)."""
        return len(self._entries) - len(self._gone)

    def schedule(self, at_us: object, sensor_id: object, millivolts: object) -> int:
        """Append an entry; the token is the number of entries accepted before it."""
        at = _natural(at_us)
        if at is None:
            raise ValueError("time_us")
        if at < self.now_us:
            raise ValueError("past_event")
        if not _valid_sensor_id(sensor_id):
            raise ValueError("sensor_id")
        assert isinstance(sensor_id, str)
        if type(millivolts) is not int or abs(millivolts) > 5000:
            raise ValueError("millivolts")
        token = len(self._entries)
        self._entries.append((at, token, sensor_id, millivolts))
        return token

    def cancel(self, token: object) -> bool:
        """``True`` only for a token that was issued and is neither cancelled nor returned."""
        issued = _natural(token)
        if issued is None:
            raise ValueError("token")
        if issued >= len(self._entries) or issued in self._cancelled or issued in self._returned:
            return False
        self._cancelled.add(issued)
        return True

    def run_until(self, stop_us: object) -> list[dict[str, int | str]]:
        """Records due by ``stop_us`` not returned before; then ``now_us = stop_us``."""
        stop = _natural(stop_us)
        if stop is None:
            raise ValueError("time_us")
        if stop < self.now_us:
            raise ValueError("past_stop")
        out = sampling_batch(self._entries, self._cancelled | self._returned, stop)
        self._returned.update(int(r["token"]) for r in out)
        held = [(e[0], e[1]) for e in self._entries if e[1] not in self._gone]
        blockers = [k for k in held if k[0] > stop and k[1] not in self._cancelled]
        if blockers:
            first = min(blockers)
            self._gone.update(token for time_us, token in held if (time_us, token) < first)
        else:
            self._gone.update(token for _, token in held)
        self.now_us = stop
        return out
